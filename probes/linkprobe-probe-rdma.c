/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobe-probe-rdma — RDMA-write bandwidth each way and send/recv latency over an RC queue pair. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>

#include "net-client.h"
#include "probe-util.h"
#include "rdma-engine.h"
#include "rtt-stats.h"
#include "shared/parse-util.h"
#include "shared/time-util.h"

#define PROBE_NAME "rdma"
#define DEADLINE_MARGIN_USEC (300 * USEC_PER_MSEC)

static const char *arg_sink;
static const char *arg_source;
static const char *arg_interface;
static const char *arg_psk_file;
static const char *arg_device;
static uint64_t arg_port = 1;
static int arg_gid_index = -1;
static uint64_t arg_duration = 1 * USEC_PER_SEC;
static uint64_t arg_max_bytes = UINT64_C(64) << 30;
static uint64_t arg_message_size = RDMA_MESSAGE_DEFAULT;
static uint64_t arg_iterations = 1000;
static uint64_t arg_latency_size = 64;
static uint64_t arg_deadline = 10 * USEC_PER_SEC;
static bool arg_upload = true, arg_download = true, arg_latency = true;

#define usage(...) probe_exit_error(PROBE_NAME, PROBE_EXIT_USAGE, "usage", __VA_ARGS__)

static void help(void) {
        printf("Usage: linkprobe-probe-rdma [OPTIONS] SINK[:PORT]\n"
               "Measures RDMA-write bandwidth each way and send/recv latency to a linkprobe-responder.\n\n"
               "     --device=NAME        local RDMA device (default: the first with an active port)\n"
               "     --port=N             local port (default 1)\n"
               "     --gid-index=N        local GID index (default: 0 on InfiniBand, IPv4-mapped on RoCE)\n"
               "     --source=ADDR        control connection from this address\n"
               "     --interface=IFNAME   control connection through this interface\n"
               "     --duration=TIME      time per direction (default 1s)\n"
               "     --max-bytes=SIZE     bytes per direction (default 64G)\n"
               "     --message-size=SIZE  bytes per RDMA write (default 64K)\n"
               "     --iterations=N       send/recv round trips (default 1000)\n"
               "     --latency-size=SIZE  send/recv message size (default 64)\n"
               "     --tests=LIST         upload,download,latency (default all)\n"
               "     --psk-file=FILE      pre-shared key for the responder\n"
               "     --deadline=TIME      give up after this long (default 10s)\n"
               "  -h --help  --version\n");
}

static void parse_tests(const char *s) {
        _cleanup_(freep) char *copy = strdup(s);
        char *save = NULL;

        if (!copy)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
        arg_upload = arg_download = arg_latency = false;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (streq(t, "upload"))
                        arg_upload = true;
                else if (streq(t, "download"))
                        arg_download = true;
                else if (streq(t, "latency"))
                        arg_latency = true;
                else
                        usage("unknown test \"%s\" (upload, download, latency)", t);
        }
        if (!arg_upload && !arg_download && !arg_latency)
                usage("no test selected");
}

static void parse_argv(int argc, char *argv[]) {
        enum {
                ARG_SINK = 0x100, ARG_SOURCE, ARG_INTERFACE, ARG_DEVICE, ARG_PORT, ARG_GID, ARG_DURATION,
                ARG_MAX_BYTES, ARG_MESSAGE, ARG_ITER, ARG_LAT_SIZE, ARG_TESTS, ARG_PSK, ARG_DEADLINE, ARG_VERSION,
        };
        static const struct option options[] = {
                { "sink", required_argument, NULL, ARG_SINK },
                { "source", required_argument, NULL, ARG_SOURCE },
                { "interface", required_argument, NULL, ARG_INTERFACE },
                { "device", required_argument, NULL, ARG_DEVICE },
                { "port", required_argument, NULL, ARG_PORT },
                { "gid-index", required_argument, NULL, ARG_GID },
                { "duration", required_argument, NULL, ARG_DURATION },
                { "max-bytes", required_argument, NULL, ARG_MAX_BYTES },
                { "message-size", required_argument, NULL, ARG_MESSAGE },
                { "iterations", required_argument, NULL, ARG_ITER },
                { "latency-size", required_argument, NULL, ARG_LAT_SIZE },
                { "tests", required_argument, NULL, ARG_TESTS },
                { "psk-file", required_argument, NULL, ARG_PSK },
                { "deadline", required_argument, NULL, ARG_DEADLINE },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        uint64_t u;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        exit(0);
                case ARG_VERSION:
                        printf("linkprobe-probe-rdma %s (protocol %u)\n", VERSION, PROTO_VERSION);
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
                case ARG_DEVICE:
                        if (isempty(optarg) || strlen(optarg) >= 64)
                                usage("invalid --device \"%s\"", optarg);
                        arg_device = optarg;
                        break;
                case ARG_PORT:
                        if (parse_u64(optarg, &arg_port) < 0 || arg_port < 1 || arg_port > 255)
                                usage("--port must be 1..255, not \"%s\"", optarg);
                        break;
                case ARG_GID:
                        if (parse_u64(optarg, &u) < 0 || u > 255)
                                usage("--gid-index must be 0..255, not \"%s\"", optarg);
                        arg_gid_index = (int) u;
                        break;
                case ARG_DURATION:
                        if (parse_duration_usec(optarg, &arg_duration) < 0 || arg_duration == 0)
                                usage("invalid --duration \"%s\"", optarg);
                        break;
                case ARG_MAX_BYTES:
                        if (parse_size(optarg, &arg_max_bytes) < 0 || arg_max_bytes == 0)
                                usage("invalid --max-bytes \"%s\"", optarg);
                        break;
                case ARG_MESSAGE:
                        if (parse_size(optarg, &arg_message_size) < 0 || arg_message_size == 0 ||
                            arg_message_size > RDMA_BUFFER_DEFAULT)
                                usage("--message-size must be 1..8M, not \"%s\"", optarg);
                        break;
                case ARG_ITER:
                        if (parse_u64(optarg, &arg_iterations) < 0 || arg_iterations == 0 ||
                            arg_iterations > RDMA_LATENCY_ITERATIONS_MAX)
                                usage("--iterations must be 1..%u, not \"%s\"", RDMA_LATENCY_ITERATIONS_MAX, optarg);
                        break;
                case ARG_LAT_SIZE:
                        if (parse_size(optarg, &arg_latency_size) < 0 || arg_latency_size == 0 ||
                            arg_latency_size > RDMA_LATENCY_MESSAGE_MAX)
                                usage("--latency-size must be 1..%u, not \"%s\"", RDMA_LATENCY_MESSAGE_MAX, optarg);
                        break;
                case ARG_TESTS:
                        parse_tests(optarg);
                        break;
                case ARG_PSK:
                        arg_psk_file = optarg;
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
        if (r == -EREMOTEIO && c->remote_error.code == PROTO_ERROR_UNSUPPORTED)
                probe_exit_unsupported(PROBE_NAME, "responder: %s", c->remote_error.message);
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

static int rdma_request(NetClient *c, const ProtoRdmaTest *t, ProtoType expect, ProtoTestResult *ret, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], reply[PROTO_CONTROL_MAX];
        uint32_t length;
        ssize_t n;
        int r;

        n = proto_encode_rdma_test(buf, sizeof(buf), t);
        if (n < 0)
                return (int) n;
        r = net_client_request(c, buf, (size_t) n, expect, reply, &length, deadline);
        if (r < 0)
                return r;
        if (ret && proto_decode_test_result(reply, length, ret) < 0)
                return -EPROTO;
        return 0;
}

static int read_result(NetClient *c, ProtoTestResult *ret, uint64_t deadline) {
        uint8_t reply[PROTO_CONTROL_MAX];
        uint32_t length;
        int r = net_client_read_reply(c, PROTO_RDMA_RESULT, reply, &length, deadline);
        if (r < 0)
                return r;
        return proto_decode_test_result(reply, length, ret) < 0 ? -EPROTO : 0;
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
        _cleanup_(rdma_endpoint_freep) RdmaEndpoint *e = NULL;
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], reply[PROTO_CONTROL_MAX];
        NetTarget target = {};
        ProtoRdmaInfo local, remote;
        ProtoKey key;
        bool have_key = false;
        char name[64], reason[128], addr[128];
        uint32_t length;
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
        if (arg_interface && net_target_set_interface(&target, arg_interface) < 0)
                usage("no such interface \"%s\"", arg_interface);
        if (arg_psk_file) {
                r = proto_key_load(AT_FDCWD, arg_psk_file, &key);
                if (r == -EPERM)
                        usage("%s must not be readable or writable by others", arg_psk_file);
                if (r < 0)
                        usage("cannot use the key file %s: %s", arg_psk_file, strerror(-r));
                have_key = true;
        }

        /* The control channel comes first: it tells whether the far side can do RDMA at all, which
         * is the more useful answer when neither side can. */
        r = net_client_connect(&client, &target, have_key ? &key : NULL, soft_deadline);
        explicit_bzero(&key, sizeof(key));
        if (r < 0)
                fail(&client, r, "connect");
        int local_r = rdma_device_find(arg_device, (uint8_t) arg_port, name, reason);
        if (!(client.capabilities & PROTO_CAP_RDMA))
                probe_exit_unsupported(PROBE_NAME, "%s%s%sresponder at %s does not serve RDMA (no active device there, or disabled)",
                                       local_r < 0 ? "this host: " : "", local_r < 0 ? reason : "", local_r < 0 ? "; " : "",
                                       net_format_address((const struct sockaddr *) &target.sink, true, addr, sizeof(addr)));
        if (local_r < 0)
                probe_exit_unsupported(PROBE_NAME, "this host: %s", reason);

        size_t size = (size_t) MAX(arg_message_size, (uint64_t) RDMA_BUFFER_DEFAULT);
        r = rdma_endpoint_open(name, (uint8_t) arg_port, arg_gid_index, size, &e);
        if (r < 0)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, strerrorname_np(-r) ?: "error",
                                 "cannot set up a queue pair on %s port %" PRIu64 ": %s", name, arg_port, strerror(-r));
        rdma_endpoint_info(e, &local);

        ssize_t n = proto_encode_rdma_info(buf, sizeof(buf), PROTO_RDMA_CONNECT, &local);
        r = net_client_request(&client, buf, (size_t) n, PROTO_RDMA_CONNECT_REPLY, reply, &length, soft_deadline);
        if (r < 0)
                fail(&client, r, "rdma-connect");
        if (proto_decode_rdma_info(reply, length, &remote) < 0)
                fail(&client, -EPROTO, "rdma-connect");
        r = rdma_endpoint_connect(e, &remote);
        if (r < 0)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "qp-connect", "cannot connect the queue pair: %s",
                                 strerror(-r));

        json_object *result = probe_result_new(PROBE_NAME);
        json_object_object_add(result, "sink", json_object_new_string(
                net_format_address((const struct sockaddr *) &target.sink, true, addr, sizeof(addr))));
        json_object_object_add(result, "source", json_object_new_string(
                net_format_address((const struct sockaddr *) &client.local, false, addr, sizeof(addr))));
        json_object_object_add(result, "device", json_object_new_string(name));
        json_object_object_add(result, "port", json_object_new_uint64(arg_port));
        json_object_object_add(result, "gid_index", json_object_new_int(local.gid_index));

        unsigned phases = (unsigned) arg_upload + (unsigned) arg_download + (unsigned) arg_latency;
        if (arg_upload) {
                ProtoTestResult up;
                uint64_t d = MIN(arg_duration, (soft_deadline - now_usec(CLOCK_MONOTONIC)) / (phases + 1));
                r = rdma_endpoint_write_bw(e, arg_max_bytes, d, (uint32_t) MIN(arg_message_size, (uint64_t) remote.size),
                                           soft_deadline, NULL, &up);
                if (r < 0)
                        fail(&client, r, "upload");
                phases--;
                json_object_object_add(result, "upload_gbps", json_object_new_double(goodput_gbps(up.bytes, up.usec)));
                json_object_object_add(result, "upload", transfer_json(up.bytes, up.usec, "probe"));
        }
        if (arg_download) {
                ProtoTestResult down;
                uint64_t d = MIN(arg_duration, (soft_deadline - now_usec(CLOCK_MONOTONIC)) / (phases + 1));
                ProtoRdmaTest t = { .op = PROTO_RDMA_OP_WRITE_DOWNLOAD, .max_bytes = arg_max_bytes, .max_usec = d,
                                    .message_size = (uint32_t) MIN(arg_message_size, (uint64_t) local.size) };
                r = rdma_request(&client, &t, PROTO_RDMA_RESULT, &down, soft_deadline);
                if (r < 0)
                        fail(&client, r, "download");
                phases--;
                json_object_object_add(result, "download_gbps",
                                       json_object_new_double(goodput_gbps(down.bytes, down.usec)));
                json_object_object_add(result, "download", transfer_json(down.bytes, down.usec, "responder"));
        }
        if (arg_latency) {
                _cleanup_(freep) double *samples = calloc(arg_iterations, sizeof(double));
                ProtoRdmaTest t = { .op = PROTO_RDMA_OP_SEND_LATENCY, .max_usec = arg_duration,
                                    .iterations = (uint32_t) arg_iterations, .message_size = (uint32_t) arg_latency_size };
                ProtoTestResult done;
                RttStats st;

                if (!samples)
                        probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
                r = rdma_endpoint_post_recv(e, (uint32_t) arg_latency_size);
                if (r >= 0)
                        r = rdma_request(&client, &t, PROTO_RDMA_READY, NULL, soft_deadline);
                if (r >= 0)
                        r = rdma_endpoint_pingpong(e, true, (uint32_t) arg_iterations, (uint32_t) arg_latency_size,
                                                   soft_deadline, NULL, samples);
                if (r >= 0)
                        r = read_result(&client, &done, soft_deadline);
                if (r >= 0)
                        r = rtt_stats_compute(samples, (size_t) arg_iterations, &st);
                if (r < 0)
                        fail(&client, r, "latency");
                /* perftest's ib_send_lat reports half the round trip; both are given. */
                json_object *o = json_object_new_object();
                json_object_object_add(o, "iterations", json_object_new_uint64(arg_iterations));
                json_object_object_add(o, "message_size", json_object_new_uint64(arg_latency_size));
                json_object_object_add(o, "rtt_median_usec", json_object_new_double(st.median_usec));
                json_object_object_add(o, "median_usec", json_object_new_double(st.median_usec / 2));
                json_object_object_add(o, "min_usec", json_object_new_double(st.min_usec / 2));
                json_object_object_add(o, "max_usec", json_object_new_double(st.max_usec / 2));
                json_object_object_add(o, "jitter_usec", json_object_new_double(st.jitter_usec));
                json_object_object_add(result, "latency_usec", json_object_new_double(st.median_usec / 2));
                json_object_object_add(result, "rtt_usec", json_object_new_double(st.median_usec));
                json_object_object_add(result, "jitter_usec", json_object_new_double(st.jitter_usec));
                json_object_object_add(result, "latency", o);
        }

        char ts[ISO8601_MAX];
        json_object_object_add(result, "measured_at", json_object_new_string(format_iso8601(ts, start_realtime)));
        json_object_object_add(result, "wall_usec", json_object_new_uint64(now_usec(CLOCK_MONOTONIC) - start));
        (void) probe_arm_deadline(PROBE_NAME, 0);
        r = probe_print(result);
        json_object_put(result);
        return r < 0 ? PROBE_EXIT_ERROR : PROBE_EXIT_OK;
}
