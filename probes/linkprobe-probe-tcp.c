/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobe-probe-tcp — RTT, jitter and goodput each way to a linkprobe responder; one JSON document. */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>

#include "net-client.h"
#include "probe-util.h"
#include "rtt-stats.h"
#include "shared/parse-util.h"
#include "shared/time-util.h"

#define PROBE_NAME "tcp"
#define WARMUP_SAMPLES 2
/* What the end of each phase may need beyond its granted time: the last frames and the result. */
#define PHASE_OVERHEAD_USEC (150 * USEC_PER_MSEC)
/* Kept back from the hard deadline so that a late phase fails with a named error, not a kill. */
#define DEADLINE_MARGIN_USEC (200 * USEC_PER_MSEC)

static const char *arg_sink;
static const char *arg_source;
static const char *arg_interface;
static const char *arg_psk_file;
static uint64_t arg_samples = 50;
static uint64_t arg_duration = 1 * USEC_PER_SEC;
static uint64_t arg_max_bytes = UINT64_C(16) << 30;
static uint64_t arg_deadline = 5 * USEC_PER_SEC;
static uint64_t arg_connect_timeout = 1 * USEC_PER_SEC;
static uint64_t arg_busy_retries = 3;
static bool arg_rtt = true, arg_upload = true, arg_download = true;

#define usage(...) probe_exit_error(PROBE_NAME, PROBE_EXIT_USAGE, "usage", __VA_ARGS__)

static void help(void) {
        printf("Usage: linkprobe-probe-tcp [OPTIONS] SINK[:PORT]\n"
               "Measures RTT, jitter and goodput each way to a linkprobe-responder; prints one JSON document.\n\n"
               "     --source=ADDR        connect from this local address\n"
               "     --interface=IFNAME   connect through this interface (SO_BINDTODEVICE)\n"
               "     --samples=N          RTT samples (default 50)\n"
               "     --duration=TIME      time per direction (default 1s)\n"
               "     --max-bytes=SIZE     bytes per direction (default 16G)\n"
               "     --tests=LIST         rtt,upload,download (default all)\n"
               "     --psk-file=FILE      pre-shared key for the responder\n"
               "     --connect-timeout=TIME (default 1s)\n"
               "     --busy-retries=N     retries when the responder is busy (default 3)\n"
               "     --deadline=TIME      give up after this long (default 5s)\n"
               "  -h --help  --version\n");
}

static void parse_tests(const char *s) {
        _cleanup_(freep) char *copy = strdup(s);
        char *save = NULL;

        if (!copy)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
        arg_rtt = arg_upload = arg_download = false;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (streq(t, "rtt"))
                        arg_rtt = true;
                else if (streq(t, "upload"))
                        arg_upload = true;
                else if (streq(t, "download"))
                        arg_download = true;
                else
                        usage("unknown test \"%s\" (rtt, upload, download)", t);
        }
        if (!arg_rtt && !arg_upload && !arg_download)
                usage("no test selected");
}

static void parse_argv(int argc, char *argv[]) {
        enum {
                ARG_SINK = 0x100, ARG_SOURCE, ARG_INTERFACE, ARG_SAMPLES, ARG_DURATION, ARG_MAX_BYTES, ARG_TESTS,
                ARG_PSK, ARG_CONNECT_TIMEOUT, ARG_BUSY, ARG_DEADLINE, ARG_VERSION,
        };
        static const struct option options[] = {
                { "sink", required_argument, NULL, ARG_SINK },
                { "source", required_argument, NULL, ARG_SOURCE },
                { "interface", required_argument, NULL, ARG_INTERFACE },
                { "samples", required_argument, NULL, ARG_SAMPLES },
                { "duration", required_argument, NULL, ARG_DURATION },
                { "max-bytes", required_argument, NULL, ARG_MAX_BYTES },
                { "tests", required_argument, NULL, ARG_TESTS },
                { "psk-file", required_argument, NULL, ARG_PSK },
                { "connect-timeout", required_argument, NULL, ARG_CONNECT_TIMEOUT },
                { "busy-retries", required_argument, NULL, ARG_BUSY },
                { "deadline", required_argument, NULL, ARG_DEADLINE },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        exit(0);
                case ARG_VERSION:
                        printf("linkprobe-probe-tcp %s (protocol %u)\n", VERSION, PROTO_VERSION);
                        exit(0);
                case ARG_SINK:
                        arg_sink = optarg;
                        break;
                case ARG_SOURCE:
                        arg_source = optarg;
                        break;
                case ARG_INTERFACE:
                        arg_interface = optarg;
                        break;
                case ARG_SAMPLES:
                        if (parse_u64(optarg, &arg_samples) < 0 || arg_samples < 1 || arg_samples > 10000)
                                usage("--samples must be 1..10000, not \"%s\"", optarg);
                        break;
                case ARG_DURATION:
                        if (parse_duration_usec(optarg, &arg_duration) < 0 || arg_duration == 0)
                                usage("invalid --duration \"%s\"", optarg);
                        break;
                case ARG_MAX_BYTES:
                        if (parse_size(optarg, &arg_max_bytes) < 0 || arg_max_bytes == 0)
                                usage("invalid --max-bytes \"%s\"", optarg);
                        break;
                case ARG_TESTS:
                        parse_tests(optarg);
                        break;
                case ARG_PSK:
                        arg_psk_file = optarg;
                        break;
                case ARG_CONNECT_TIMEOUT:
                        if (parse_duration_usec(optarg, &arg_connect_timeout) < 0 || arg_connect_timeout == 0)
                                usage("invalid --connect-timeout \"%s\"", optarg);
                        break;
                case ARG_BUSY:
                        if (parse_u64(optarg, &arg_busy_retries) < 0 || arg_busy_retries > 100)
                                usage("--busy-retries must be 0..100, not \"%s\"", optarg);
                        break;
                case ARG_DEADLINE:
                        if (parse_duration_usec(optarg, &arg_deadline) < 0 || arg_deadline == 0)
                                usage("invalid --deadline \"%s\"", optarg);
                        break;
                case '?':
                        usage("invalid option (see --help)");
                }
        if (optind < argc && !arg_sink)
                arg_sink = argv[optind++];
        if (optind < argc)
                usage("unexpected argument \"%s\"", argv[optind]);
        if (!arg_sink)
                usage("no sink address given");
}

static _noreturn_ void fail(const NetClient *c, int r, const char *phase) {
        if (r == -EREMOTEIO)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, net_client_error_name(c, r), "%s: responder: %s", phase,
                                 c->remote_error.message);
        if (r == -EKEYREJECTED)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "auth-required",
                                 "%s: the responder requires a pre-shared key (--psk-file)", phase);
        if (r == -ETIME)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "deadline", "%s: deadline reached", phase);
        if (r == -EPROTO)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "protocol", "%s: malformed reply from the responder",
                                 phase);
        probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, net_client_error_name(c, r), "%s: %s", phase, strerror(-r));
}

/* The time one bulk phase may take, leaving room for the phases after it. */
static uint64_t phase_budget(uint64_t soft_deadline, unsigned phases_left) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        if (now >= soft_deadline)
                return 0;
        uint64_t left = soft_deadline - now;
        uint64_t per = left / phases_left;
        if (per <= PHASE_OVERHEAD_USEC)
                return 0;
        return MIN(arg_duration, per - PHASE_OVERHEAD_USEC);
}

static bool busy_retry(const NetClient *c, int r, uint64_t *retries, uint64_t soft_deadline) {
        if (r != -EREMOTEIO || c->remote_error.code != PROTO_ERROR_BUSY || *retries >= arg_busy_retries)
                return false;
        (*retries)++;
        /* 100..300 ms, random so that two probes waiting for the same responder do not collide again. */
        uint32_t rnd = 0;
        (void) proto_random_bytes(&rnd, sizeof(rnd));
        uint64_t wait = 100 * USEC_PER_MSEC + rnd % (200 * USEC_PER_MSEC);
        if (now_usec(CLOCK_MONOTONIC) + wait + PHASE_OVERHEAD_USEC >= soft_deadline)
                return false;
        usleep((useconds_t) wait);
        return true;
}

static json_object *transfer_json(uint64_t bytes, uint64_t usec, const char *timed_by) {
        json_object *o = json_object_new_object();
        double gbps = goodput_gbps(bytes, usec);
        json_object_object_add(o, "bytes", json_object_new_uint64(bytes));
        json_object_object_add(o, "duration_usec", json_object_new_uint64(usec));
        json_object_object_add(o, "gbps", json_object_new_double(gbps));
        json_object_object_add(o, "bytes_per_sec", json_object_new_uint64((uint64_t) (gbps * 1e9 / 8)));
        json_object_object_add(o, "timed_by", json_object_new_string(timed_by));
        return o;
}

int main(int argc, char *argv[]) {
        _cleanup_(net_client_done) NetClient client = NET_CLIENT_NULL;
        NetTarget target = {};
        ProtoKey key;
        bool have_key = false;
        char buf[128];
        int r;

        parse_argv(argc, argv);
        signal(SIGPIPE, SIG_IGN);

        uint64_t start = now_usec(CLOCK_MONOTONIC), start_realtime = now_usec(CLOCK_REALTIME);
        r = probe_arm_deadline(PROBE_NAME, arg_deadline);
        if (r < 0)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "internal", "cannot arm the deadline: %s", strerror(-r));
        uint64_t soft_deadline = start + (arg_deadline > 2 * DEADLINE_MARGIN_USEC ? arg_deadline - DEADLINE_MARGIN_USEC
                                                                                  : arg_deadline / 2);

        if (net_target_parse_sink(&target, arg_sink, PROTO_DEFAULT_PORT) < 0)
                usage("invalid sink address \"%s\" (ADDR, ADDR:PORT or [IPV6]:PORT)", arg_sink);
        if (arg_source && net_target_parse_source(&target, arg_source) < 0)
                usage("invalid source address \"%s\"", arg_source);
        if (arg_interface) {
                r = net_target_set_interface(&target, arg_interface);
                if (r < 0)
                        usage("no such interface \"%s\"", arg_interface);
                /* A link-local sink without a scope is reached through the given interface. */
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &target.sink;
                if (in6->sin6_family == AF_INET6 && in6->sin6_scope_id == 0 && IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
                        in6->sin6_scope_id = if_nametoindex(arg_interface);
        }
        if (target.source_len > 0 && target.source.ss_family != target.sink.ss_family)
                usage("source and sink must be of the same address family (%s)", arg_source);
        if (arg_psk_file) {
                r = proto_key_load(AT_FDCWD, arg_psk_file, &key);
                if (r == -EPERM)
                        usage("%s must not be readable or writable by others", arg_psk_file);
                if (r == -EINVAL)
                        usage("%s must hold a key of %d to %d bytes", arg_psk_file, PROTO_KEY_MIN, PROTO_KEY_MAX);
                if (r < 0)
                        usage("cannot read the key file %s: %s", arg_psk_file, strerror(-r));
                have_key = true;
        }

        r = net_client_connect(&client, &target, have_key ? &key : NULL,
                               MIN(soft_deadline, now_usec(CLOCK_MONOTONIC) + arg_connect_timeout));
        explicit_bzero(&key, sizeof(key));
        if (r < 0)
                fail(&client, r, "connect");

        json_object *result = probe_result_new(PROBE_NAME);
        if (!result)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
        json_object_object_add(result, "sink", json_object_new_string(
                net_format_address((const struct sockaddr *) &target.sink, true, buf, sizeof(buf))));
        json_object_object_add(result, "source", json_object_new_string(
                net_format_address((const struct sockaddr *) &client.local, false, buf, sizeof(buf))));
        json_object_object_add(result, "observed_source", json_object_new_string(
                net_format_address((const struct sockaddr *) &client.observed, false, buf, sizeof(buf))));
        json_object_object_add(result, "interface", arg_interface ? json_object_new_string(arg_interface) : NULL);
        json_object_object_add(result, "protocol_version", json_object_new_int(client.version));
        json_object_object_add(result, "authenticated", json_object_new_boolean(client.authenticated));

        if (arg_rtt) {
                size_t n = (size_t) arg_samples + WARMUP_SAMPLES;
                _cleanup_(freep) double *samples = calloc(n, sizeof(double));
                RttStats st;
                if (!samples)
                        probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
                r = net_client_echo(&client, n, samples, soft_deadline);
                if (r < 0)
                        fail(&client, r, "rtt");
                /* The first round trips pay for cold caches and the connection's first ACKs. */
                r = rtt_stats_compute(samples + WARMUP_SAMPLES, (size_t) arg_samples, &st);
                if (r < 0)
                        fail(&client, r, "rtt");
                json_object *o = json_object_new_object();
                json_object_object_add(o, "samples", json_object_new_uint64(st.samples));
                json_object_object_add(o, "median_usec", json_object_new_double(st.median_usec));
                json_object_object_add(o, "min_usec", json_object_new_double(st.min_usec));
                json_object_object_add(o, "max_usec", json_object_new_double(st.max_usec));
                json_object_object_add(o, "mean_usec", json_object_new_double(st.mean_usec));
                json_object_object_add(o, "jitter_usec", json_object_new_double(st.jitter_usec));
                json_object_object_add(o, "jitter_rfc3550_usec", json_object_new_double(st.jitter_rfc3550_usec));
                json_object_object_add(result, "rtt_usec", json_object_new_double(st.median_usec));
                json_object_object_add(result, "jitter_usec", json_object_new_double(st.jitter_usec));
                json_object_object_add(result, "jitter_rfc3550_usec", json_object_new_double(st.jitter_rfc3550_usec));
                json_object_object_add(result, "rtt", o);
        }

        unsigned phases = (unsigned) arg_upload + (unsigned) arg_download;
        if (arg_upload) {
                ProtoTestResult up;
                uint64_t retries = 0;
                for (;;) {
                        uint64_t d = phase_budget(soft_deadline, phases);
                        if (d == 0)
                                fail(&client, -ETIME, "upload");
                        r = net_client_upload(&client, arg_max_bytes, d, soft_deadline, &up);
                        if (r >= 0 || !busy_retry(&client, r, &retries, soft_deadline))
                                break;
                }
                if (r < 0)
                        fail(&client, r, "upload");
                phases--;
                json_object_object_add(result, "upload_gbps", json_object_new_double(goodput_gbps(up.bytes, up.usec)));
                json_object_object_add(result, "upload", transfer_json(up.bytes, up.usec, "responder"));
        }
        if (arg_download) {
                ProtoTestResult down, remote;
                uint64_t retries = 0;
                for (;;) {
                        uint64_t d = phase_budget(soft_deadline, phases);
                        if (d == 0)
                                fail(&client, -ETIME, "download");
                        r = net_client_download(&client, arg_max_bytes, d, soft_deadline, &down, &remote);
                        if (r >= 0 || !busy_retry(&client, r, &retries, soft_deadline))
                                break;
                }
                if (r < 0)
                        fail(&client, r, "download");
                json_object *o = transfer_json(down.bytes, down.usec, "probe");
                json_object_object_add(o, "responder_duration_usec", json_object_new_uint64(remote.usec));
                json_object_object_add(result, "download_gbps",
                                       json_object_new_double(goodput_gbps(down.bytes, down.usec)));
                json_object_object_add(result, "download", o);
        }

        char ts[ISO8601_MAX];
        json_object_object_add(result, "measured_at", json_object_new_string(format_iso8601(ts, start_realtime)));
        json_object_object_add(result, "wall_usec", json_object_new_uint64(now_usec(CLOCK_MONOTONIC) - start));

        (void) probe_arm_deadline(PROBE_NAME, 0);
        r = probe_print(result);
        json_object_put(result);
        return r < 0 ? PROBE_EXIT_ERROR : PROBE_EXIT_OK;
}
