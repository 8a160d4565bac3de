/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * linkprobe-probe-gpu: lists the OpenCL devices of this machine and, with --measure, measures their
 * memory bandwidth and FP32/FP16 throughput. Prints one JSON document (linkprobe-probe-gpu(8)).
 * The daemon runs it as a child so that vendor drivers are never loaded into the daemon itself.
 */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>

#include "probe-gpu-inventory.h"
#include "probe-gpu-json.h"
#include "probe-gpu-kernels.h"
#include "probe-gpu-measure.h"
#include "probe-gpu-nvml.h"
#include "probe-util.h"
#include "shared/time-util.h"
#include "sysfs/sysfs.h"

#define PROBE_NAME "gpu"

/* Of the time --deadline allows, measurements plan to use this share; the rest is for compiling
 * kernels, slow drivers and printing, so the document is out well before the deadline. */
#define DEADLINE_WORK_SHARE 0.6

typedef struct Arguments {
        bool measure;
        bool quick;
        bool has_device;
        unsigned device;
        uint64_t deadline_usec;
        const char *sysfs_root;
} Arguments;

static void help(void) {
        printf("Usage: linkprobe-probe-gpu [OPTIONS]\n"
               "\n"
               "Lists OpenCL platforms and devices as one JSON document; with --measure, also measures\n"
               "memory bandwidth and FP32/FP16 throughput of each device.\n"
               "\n"
               "  --measure           measure every device (or the one --device= names)\n"
               "  --device=N          measure only device N (its \"index\" in the document)\n"
               "  --quick             small buffers and few runs (for tests; figures are rough)\n"
               "  --deadline=SECONDS  fail with a \"deadline\" error after this long (2.5, 500ms)\n"
               "  --print-kernels     print the OpenCL C source of the measurement kernels\n"
               "  --sysfs-root=DIR    read the CPUs' caches below DIR instead of /sys\n"
               "  -h --help           show this help\n"
               "  --version           show the version\n"
               "\n"
               "See linkprobe-probe-gpu(8).\n");
}

_noreturn_ _printf_(1, 2) static void usage_error(const char *format, ...) {
        char message[512];
        va_list ap;

        va_start(ap, format);
        vsnprintf(message, sizeof(message), format, ap);
        va_end(ap);
        probe_exit_error(PROBE_NAME, PROBE_EXIT_USAGE, "usage", "%s (see --help)", message);
}

/* "2", "0.25" (seconds, fractions allowed) or anything parse_duration_usec() takes ("500ms"). */
static int parse_deadline(const char *s, uint64_t *ret) {
        char *end = NULL;
        double v;

        if (parse_duration_usec(s, ret) >= 0)
                return *ret > 0 ? 0 : -ERANGE;
        if (isempty(s) || !strchr("0123456789.", s[0]))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || !end || *end != '\0' || !isfinite(v))
                return -EINVAL;
        if (v <= 0 || v > 86400.0)
                return -ERANGE;
        *ret = (uint64_t) (v * USEC_PER_SEC);
        return *ret > 0 ? 0 : -ERANGE;
}

static void parse_arguments(int argc, char *argv[], Arguments *args) {
        enum {
                ARG_MEASURE = 0x100,
                ARG_DEVICE,
                ARG_QUICK,
                ARG_DEADLINE,
                ARG_VERSION,
                ARG_PRINT_KERNELS,
                ARG_SYSFS_ROOT,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "measure", no_argument, NULL, ARG_MEASURE },
                { "device", required_argument, NULL, ARG_DEVICE },
                { "quick", no_argument, NULL, ARG_QUICK },
                { "deadline", required_argument, NULL, ARG_DEADLINE },
                { "version", no_argument, NULL, ARG_VERSION },
                { "print-kernels", no_argument, NULL, ARG_PRINT_KERNELS },
                { "sysfs-root", required_argument, NULL, ARG_SYSFS_ROOT },
                {},
        };
        int c;

        opterr = 0; /* our own messages, as JSON */
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        exit(PROBE_EXIT_OK);
                case ARG_VERSION:
                        printf("linkprobe-probe-gpu %s\n", VERSION);
                        exit(PROBE_EXIT_OK);
                case ARG_PRINT_KERNELS:
                        fputs(gpu_kernel_source, stdout);
                        exit(PROBE_EXIT_OK);
                case ARG_MEASURE:
                        args->measure = true;
                        break;
                case ARG_QUICK:
                        args->quick = true;
                        break;
                case ARG_DEVICE:
                        if (parse_u32(optarg, &args->device) < 0)
                                usage_error("--device=%s: not a device index", optarg);
                        args->has_device = true;
                        break;
                case ARG_SYSFS_ROOT:
                        if (isempty(optarg))
                                usage_error("--sysfs-root= needs a directory");
                        args->sysfs_root = optarg;
                        break;
                case ARG_DEADLINE:
                        if (parse_deadline(optarg, &args->deadline_usec) < 0)
                                usage_error("--deadline=%s: not a positive duration", optarg);
                        break;
                case ':':
                        usage_error("%s needs an argument", argv[optind - 1]);
                case '?':
                        /* optopt: a short option's letter; a long option's value, or 0 if unknown. */
                        if (optopt > 0 && optopt < 0x100)
                                usage_error("unknown option -%c", optopt);
                        if (optopt != 0)
                                usage_error("%s takes no argument", argv[optind - 1]);
                        usage_error("unknown option %s", argv[optind - 1]);
                default:
                        usage_error("unexpected option");
                }

        if (optind < argc)
                usage_error("unexpected argument \"%s\"", argv[optind]);
        if ((args->has_device || args->quick) && !args->measure)
                usage_error("--device= and --quick need --measure");
}

static json_object *host_cache_to_json(const SysfsCpuCache *c) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "level", json_object_new_int((int) c->level));
        json_object_object_add(o, "bytes", json_object_new_uint64(c->bytes));
        json_object_object_add(o, "total_bytes", json_object_new_uint64(c->total_bytes));
        json_object_object_add(o, "instances", json_object_new_int((int) c->instances));
        return o;
}

int main(int argc, char *argv[]) {
        _cleanup_(json_object_putp) json_object *result = NULL;
        json_object *platforms = NULL, *devices_json;
        GpuDevice *devices = NULL;
        size_t n_devices = 0;
        Arguments args = {};
        GpuError e = {};
        int r;

        parse_arguments(argc, argv, &args);

        uint64_t start = now_usec(CLOCK_MONOTONIC);
        uint64_t started_at = now_usec(CLOCK_REALTIME);
        if (args.deadline_usec > 0) {
                r = probe_arm_deadline(PROBE_NAME, args.deadline_usec);
                if (r < 0)
                        probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "deadline",
                                         "cannot arm the deadline: %s", strerror(-r));
        }

        r = gpu_devices_enumerate(&devices, &n_devices, &platforms, &e);
        if (r < 0)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, e.name, "%s", e.message);

        if (args.has_device && args.device >= n_devices) {
                gpu_devices_free(devices, n_devices);
                json_object_put(platforms);
                usage_error("--device=%u: no such device (%zu found)", args.device, n_devices);
        }

        /* The host's last-level cache sizes the bandwidth buffer of devices in host memory. Unknown
         * (no cacheinfo) is not an error: the device's own report is then all there is. */
        SysfsCpuCache host_cache = {};
        bool host_cache_known = false;
        if (args.measure) {
                _cleanup_(closep) int root_fd = sysfs_root_open(args.sysfs_root ?: "/sys");
                host_cache_known = root_fd >= 0 && sysfs_cpu_last_level_cache(root_fd, &host_cache) >= 0;
        }

        result = probe_result_new(PROBE_NAME);
        devices_json = json_object_new_array();
        if (!result || !devices_json)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
        json_object_object_add(result, "measured", json_object_new_boolean(args.measure));
        if (args.measure) {
                char ts[ISO8601_MAX];
                json_object_object_add(result, "measured_at",
                                       json_object_new_string(format_iso8601(ts, started_at)));
                json_object_object_add(result, "quick", json_object_new_boolean(args.quick));
                json_object_object_add(result, "host_last_level_cache",
                                       host_cache_known ? host_cache_to_json(&host_cache) : NULL);
        }
        json_object_object_add(result, "platforms", platforms);
        json_object_object_add(result, "devices", devices_json);
        /* NVLinks: OpenCL does not know them; NVML does, where the NVIDIA driver is installed. */
        json_object_object_add(result, "nvml", gpu_nvml_to_json());

        unsigned to_measure = args.measure ? (args.has_device ? 1 : (unsigned) n_devices) : 0;
        unsigned measured = 0, failed = 0;
        GpuError first_failure = {};
        unsigned first_failed_index = 0;

        for (size_t i = 0; i < n_devices; i++) {
                const GpuDevice *d = devices + i;
                json_object *dj = gpu_device_to_json(d);
                if (!dj || json_object_array_add(devices_json, dj) < 0)
                        probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");

                if (!args.measure || (args.has_device && args.device != i))
                        continue;

                /* Each device still to measure gets an equal share of what the deadline leaves. */
                GpuMeasureOptions mo = { .quick = args.quick, .host_cache = host_cache_known ? &host_cache : NULL };
                if (args.deadline_usec > 0) {
                        uint64_t left = probe_deadline_left_usec();
                        mo.budget_usec = MAX((uint64_t) (left * DEADLINE_WORK_SHARE) /
                                                     (to_measure - measured),
                                             UINT64_C(1));
                }

                json_object *m = NULL;
                r = gpu_device_measure(d, &mo, &m, &e);
                measured++;
                if (r < 0) {
                        if (failed++ == 0) {
                                first_failure = e;
                                first_failed_index = (unsigned) i;
                        }
                        m = json_object_new_object();
                        if (m) {
                                json_object_object_add(m, "status", json_object_new_string("error"));
                                json_object_object_add(m, "error", json_error_new(e.name, e.message));
                        }
                }
                json_object_object_add(dj, "measurement", m);
        }

        /* One failing device among several is reported on that device; when every device asked for
         * failed there is nothing to publish, and the document is the error. */
        if (failed > 0 && failed == measured) {
                const GpuDevice *d = devices + first_failed_index;
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, first_failure.name, "device %u (%s): %s",
                                 first_failed_index, d->name, first_failure.message);
        }

        json_object_object_add(result, "duration_ms",
                               json_double_rounded((double) (now_usec(CLOCK_MONOTONIC) - start) / 1e3, 1));
        gpu_devices_free(devices, n_devices);

        /* Printing must not race the deadline's own document. */
        (void) probe_arm_deadline(PROBE_NAME, 0);
        r = probe_print(result);
        if (r < 0) {
                fprintf(stderr, "%s: cannot write the result: %s\n", PROBE_NAME, strerror(-r));
                return PROBE_EXIT_ERROR;
        }
        return PROBE_EXIT_OK;
}
