/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Memory bandwidth: a streaming read of a buffer well past every cache that could answer, the way
 * clpeak's global-bandwidth test reads. Which load width and which access pattern a device streams
 * fastest differs (a CPU wants a 64-byte line per load, many GPUs a 16-byte load; some coalesce better
 * with block-strided loads, some with grid-strided ones), so every width from uint to uint16 is tried
 * in both of clpeak's patterns, on slices of the buffer, and the fastest is timed over the whole buffer
 * as many times as the plan asks. A width the driver cannot build or run is left out; the rest measure.
 */
#include <inttypes.h>
#include <sys/random.h>

#include "probe-gpu-json.h"
#include "probe-gpu-kernels.h"
#include "probe-gpu-session.h"
#include "shared/time-util.h"

#define MIB (UINT64_C(1) << 20)
/* The buffer is read in eighths: a sweep launch reads one, a timed run as many (1, 2, 4 or all 8) as
 * last about the plan's launch time, and every launch starts where the last one ended, so a slice was
 * last read at least seven eighths of the buffer (3.5x the cache) earlier and comes from memory as the
 * whole buffer would. The sweep's three passes over ten candidates read the buffer 3.75 times. */
#define SLICES 8

static const char *const patterns[] = { "block", "grid" };
static const unsigned widths[] = GPU_BANDWIDTH_WIDTHS;
#define N_CANDIDATES (ELEMENTSOF(widths) * ELEMENTSOF(patterns))

/* The most cache that could answer the bandwidth test's reads: the device's own
 * (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE) or, where the device's memory is the host's, the host's last-level
 * cache: all of its instances for a CPU device, which runs on every core, and the largest for an
 * integrated GPU, which shares one. Drivers report a CPU device's cache inconsistently (one core's L2,
 * or nothing), so the larger of the two counts. */
static uint64_t bandwidth_cache_bytes(const Session *s, const char **ret_source) {
        const GpuDevice *d = s->device;
        const SysfsCpuCache *host = s->host_cache;
        uint64_t host_bytes = 0;

        if (host && (d->type & CL_DEVICE_TYPE_CPU))
                host_bytes = host->total_bytes;
        else if (host && d->host_unified_memory)
                host_bytes = host->bytes;
        *ret_source = host_bytes > d->global_memory_cache_bytes ? "host-last-level-cache" : "device";
        return MAX(host_bytes, (uint64_t) d->global_memory_cache_bytes);
}

/* Well past any cache that could answer (8x, never less than 4x), within one allocation, half the
 * device's memory and, where the buffer lives in host RAM, a quarter of what the host has free. */
static int bandwidth_buffer_bytes(Session *s, uint64_t granule, uint64_t *ret, uint64_t *ret_cache,
                                  const char **ret_cache_source, GpuError *e) {
        const GpuDevice *d = s->device;
        uint64_t cache = bandwidth_cache_bytes(s, ret_cache_source);
        uint64_t want = MIN(MAX(s->plan->buffer_min, 8 * cache), MAX(s->plan->buffer_max, 4 * cache));
        uint64_t cap = MIN(d->max_allocation_bytes, d->global_memory_bytes / 2);

        if ((d->type & CL_DEVICE_TYPE_CPU) || d->host_unified_memory) {
                uint64_t avail = mem_available_bytes();
                if (avail > 0)
                        cap = MIN(cap, avail / 4);
        }
        uint64_t bytes = MIN(want, cap) / granule * granule;
        if (bytes == 0)
                return gpu_error_set(e, ENOMEM, "ENOMEM",
                                     "no room for a bandwidth buffer (max allocation %" PRIu64
                                     " bytes, %" PRIu64 " bytes usable)",
                                     (uint64_t) d->max_allocation_bytes, cap);
        if (bytes < 4 * cache)
                session_warn(s,
                             "memory_bandwidth: the %" PRIu64 " MiB buffer is less than 4x the %" PRIu64
                             " MiB of cache that could hold it, so the figure may include cache bandwidth",
                             bytes / MIB, cache / MIB);
        *ret = bytes;
        *ret_cache = cache;
        return 0;
}

/* One way of reading the buffer: a load width and a pattern, and its name for errors. */
typedef struct Candidate {
        unsigned width;
        const char *pattern;
        char name[48];
} Candidate;

static void load_type_name(unsigned width, char buf[static 16]) {
        if (width == 1)
                snprintf(buf, 16, "uint");
        else
                snprintf(buf, 16, "uint%u", width);
}

/* Where the next launch starts, shared by every candidate's launches and the timed runs. */
typedef struct Rotation {
        uint64_t slice_bytes;
        unsigned fetches;
        unsigned next; /* a slice */
} Rotation;

/* Points a launch (argument 3, in loads) at the slices after the last launch's. A launch of k slices
 * starts at a multiple of k, so that it never runs off the buffer's end. */
static int rotation_prepare(Test *t, GpuError *e) {
        Rotation *rot = t->userdata;
        unsigned k = (unsigned) ((uint64_t) t->work / rot->slice_bytes);
        unsigned slice = (rot->next + k - 1) / k * k % SLICES;
        uint64_t load_bytes = (uint64_t) t->work / ((uint64_t) t->global * rot->fetches);
        cl_ulong first = slice * rot->slice_bytes / load_bytes;

        rot->next = slice + k;
        return kernel_set_arg(t->kernel, 3, sizeof(first), &first, t->name, e);
}

/* How many slices a timed run reads: the fewest (a power of two) that last the plan's launch time at
 * the rate the sweep found, so that a shared host's bursts fall on few runs; the whole buffer on a
 * device as fast as a GPU. */
static unsigned slices_per_run(const Session *s, uint64_t slice_bytes, double gb_s) {
        double slice_sec = (double) slice_bytes / (gb_s * 1e9);
        unsigned k = 1;

        while (k < SLICES && k * slice_sec < (double) s->plan->launch_usec * 1e-6)
                k *= 2;
        return k;
}

/* Builds the bandwidth program of one width (0: of every width). */
static int bandwidth_build(Session *s, unsigned width, cl_program *ret, GpuError *e) {
        char options[128];
        int r = gpu_bandwidth_options(&s->config, width, options, sizeof(options));
        if (r < 0)
                return gpu_error_set(e, r, "ENOBUFS", "kernel options do not fit");
        return session_build(s, options, ret, e);
}

/* Makes one width's candidates from program, or records why there is no program for them. */
static void candidates_prepare(Session *s, size_t w, cl_program program, const GpuError *build, cl_mem buf,
                               cl_mem out, cl_uint sentinel, Rotation *rot, Test *t, Candidate *c,
                               GpuError *errors) {
        for (size_t p = 0; p < ELEMENTSOF(patterns); p++) {
                size_t i = w * ELEMENTSOF(patterns) + p;
                char kernel_name[32], type[16];

                load_type_name(widths[w], type);
                c[i] = (Candidate) { .width = widths[w], .pattern = patterns[p] };
                snprintf(c[i].name, sizeof(c[i].name), "memory_bandwidth %s %s", type, patterns[p]);
                t[i] = (Test) {
                        .name = c[i].name,
                        .global = rot->slice_bytes / (widths[w] * sizeof(cl_uint)) / s->config.fetches,
                        .work = (double) rot->slice_bytes,
                        .prepare = rotation_prepare,
                        .userdata = rot,
                };
                if (!program) {
                        errors[i] = *build;
                        continue;
                }
                /* A failure lands in errors[i], and the sweep leaves the candidate out. */
                snprintf(kernel_name, sizeof(kernel_name), "stream_read_%s_%u", patterns[p], widths[w]);
                (void) (session_kernel(s, program, kernel_name, &t[i].kernel, &t[i].local, &errors[i]) < 0 ||
                        kernel_set_arg(t[i].kernel, 0, sizeof(buf), &buf, c[i].name, &errors[i]) < 0 ||
                        kernel_set_arg(t[i].kernel, 1, sizeof(out), &out, c[i].name, &errors[i]) < 0 ||
                        kernel_set_arg(t[i].kernel, 2, sizeof(sentinel), &sentinel, c[i].name, &errors[i]) < 0);
        }
}

/* The "candidates" array: what each way read in the sweep, or why it could not; and a warning for
 * each width that failed (once for a program that did not build). */
static json_object *candidates_to_json(Session *s, const Test *t, const Candidate *c, const double *rates,
                                       const GpuError *errors) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; i < N_CANDIDATES; i++) {
                json_object *o = json_object_new_object();
                char type[16];

                load_type_name(c[i].width, type);
                json_object_object_add(o, "load_type", json_object_new_string(type));
                json_object_object_add(o, "access_pattern", json_object_new_string(c[i].pattern));
                if (isempty(errors[i].name)) {
                        json_object_object_add(o, "local_work_size", json_object_new_uint64(t[i].local));
                        json_object_object_add(o, "gb_s", json_double_rounded(rates[i], 3));
                } else {
                        /* A program that did not build fails both patterns alike: one warning. */
                        size_t p = i % ELEMENTSOF(patterns);
                        bool as_previous = p > 0 && streq(errors[i].message, errors[i - 1].message);
                        bool as_next = p + 1 < ELEMENTSOF(patterns) &&
                                       streq(errors[i].message, errors[i + 1].message);

                        json_object_object_add(o, "error", json_error_new(errors[i].name, errors[i].message));
                        if (!as_previous)
                                session_warn(s, "memory_bandwidth: %s loads%s%s%s failed with %s; measured with "
                                             "the loads that work", type, as_next ? "" : " (",
                                             as_next ? "" : c[i].pattern, as_next ? "" : ")", errors[i].name);
                }
                json_object_array_add(a, o);
        }
        return a;
}

int measure_bandwidth(Session *s, json_object *j, TestFigures *ret, GpuError *e) {
        _cleanup_(cl_kernel_releasep) cl_kernel fill = NULL;
        _cleanup_(cl_mem_releasep) cl_mem buf = NULL, out = NULL;
        cl_program programs[ELEMENTSOF(widths)] = {};
        Test t[N_CANDIDATES] = {};
        Candidate c[N_CANDIDATES] = {};
        GpuError errors[N_CANDIDATES] = {};
        double rates[N_CANDIDATES] = {};
        uint64_t bytes = 0, cache = 0;
        const char *cache_source = NULL;
        cl_uint seed = 0x5eed, sentinel;
        size_t fill_local;
        cl_int err;
        double sec;
        int r, best;

        r = session_kernel(s, s->program, "fill_random", &fill, &fill_local, e);
        if (r < 0)
                return r;

        /* Every candidate's launch, a slice or the whole, is a whole number of work-groups of any
         * size up to GPU_MAX_WORK_GROUP, at any width; the fill writes 64 bytes per work-item. */
        uint64_t granule = (uint64_t) SLICES * GPU_MAX_WORK_GROUP * s->config.fetches * 64;
        r = bandwidth_buffer_bytes(s, granule, &bytes, &cache, &cache_source, e);
        if (r < 0)
                return r;

        buf = clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, bytes, NULL, &err);
        if (!buf)
                return gpu_error_cl(e, err, "clCreateBuffer(%" PRIu64 " bytes)", bytes);
        /* As many words as the narrowest loads have work-items over the whole buffer. */
        size_t out_words = bytes / sizeof(cl_uint) / s->config.fetches;
        out = clCreateBuffer(s->context, CL_MEM_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS, out_words * sizeof(cl_uint),
                             NULL, &err);
        if (!out)
                return gpu_error_cl(e, err, "clCreateBuffer(%zu bytes)", out_words * sizeof(cl_uint));

        /* Random bits, made on the device (no host copy of the buffer); a fresh seed per run. */
        if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
                seed ^= (cl_uint) now_usec(CLOCK_REALTIME);
        sentinel = ~seed;
        r = kernel_set_arg(fill, 0, sizeof(buf), &buf, "fill_random", e);
        if (r >= 0)
                r = kernel_set_arg(fill, 1, sizeof(seed), &seed, "fill_random", e);
        if (r >= 0)
                r = session_launch(s, fill, bytes / 64, 0, "fill_random", &sec, e);
        if (r < 0)
                return r;

        /* One program of every width; where the driver's compiler rejects that, one per width, so
         * that a width it cannot build costs only itself. */
        GpuError build[ELEMENTSOF(widths)] = {};
        if (bandwidth_build(s, 0, &programs[0], &build[0]) >= 0)
                for (size_t w = 1; w < ELEMENTSOF(widths); w++)
                        programs[w] = programs[0];
        else
                for (size_t w = 0; w < ELEMENTSOF(widths); w++)
                        (void) bandwidth_build(s, widths[w], &programs[w], &build[w]);
        Rotation rot = { .slice_bytes = bytes / SLICES, .fetches = s->config.fetches };
        for (size_t w = 0; w < ELEMENTSOF(widths); w++)
                candidates_prepare(s, w, programs[w], &build[w], buf, out, sentinel, &rot, t, c, errors);
        best = test_sweep(s, t, N_CANDIDATES, rates, errors, e);
        if (best < 0) {
                r = best;
                goto finish;
        }

        /* The fastest, timed over as many slices as make a launch long enough to time well. */
        Test *chosen = &t[best];
        unsigned k = slices_per_run(s, rot.slice_bytes, rates[best]);
        chosen->name = "memory_bandwidth";
        chosen->global *= k;
        chosen->work = (double) (k * rot.slice_bytes);
        r = test_run(s, chosen, "GB/s", j, ret, e);
        if (r < 0)
                goto finish;

        char type[16];
        load_type_name(c[best].width, type);
        json_object_object_add(j, "buffer_bytes", json_object_new_uint64(bytes));
        json_object_object_add(j, "cache_bytes", json_object_new_uint64(cache));
        json_object_object_add(j, "cache_source", json_object_new_string(cache_source));
        json_object_object_add(j, "bytes_read_per_run", json_object_new_uint64(k * rot.slice_bytes));
        json_object_object_add(j, "load_type", json_object_new_string(type));
        json_object_object_add(j, "access_pattern", json_object_new_string(c[best].pattern));
        json_object_object_add(j, "loads_per_work_item", json_object_new_int((int) s->config.fetches));
        json_object_object_add(j, "fill_ms", json_double_rounded(sec * 1e3, 3));
        json_object_object_add(j, "candidates", candidates_to_json(s, t, c, rates, errors));
        r = 0;

finish:
        for (size_t i = 0; i < N_CANDIDATES; i++)
                cl_kernel_releasep(&t[i].kernel);
        for (size_t w = 0; w < ELEMENTSOF(widths); w++)
                if (w == 0 || programs[w] != programs[0])
                        cl_program_releasep(&programs[w]);
        return r;
}
