/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobe-probe-rdma — RDMA-write bandwidth each way and send/recv latency over an RC queue pair. */
#include <inttypes.h>

#include "net-probe-cli.h"
#include "probe-util.h"
#include "proto-bulk.h"
#include "rdma-engine.h"
#include "rtt-stats.h"
#include "shared/parse-util.h"
#include "shared/time-util.h"

#define DEADLINE_MARGIN_USEC (300 * USEC_PER_MSEC)
#define LATENCY_WARMUP_ROUND_TRIPS 16U

static const char *arg_device;
static uint64_t arg_port = 1;
static int arg_gid_index = -1;
static uint64_t arg_message_size = RDMA_MESSAGE_DEFAULT;
static uint64_t arg_iterations = 1000;
static uint64_t arg_latency_size = 64;
static uint64_t arg_busy_retries = 3;
static bool arg_upload = true, arg_download = true, arg_latency = true;

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
               "     --iterations=N       send/recv round trips, as many as fit the time (default 1000)\n"
               "     --latency-size=SIZE  send/recv message size (default 64)\n"
               "     --tests=LIST         upload,download,latency (default all)\n"
               "     --busy-retries=N     retries when the responder is busy (default 3)\n"
               "     --psk-file=FILE      pre-shared key for the responder\n"
               "     --deadline=TIME      give up after this long (default 10s)\n"
               "  -h --help  --version\n");
}

static const NetProbeTest tests[] = {
        { "upload", &arg_upload },
        { "download", &arg_download },
        { "latency", &arg_latency },
};

static NetProbe probe = {
        .name = "rdma",
        .program = "linkprobe-probe-rdma",
        .help = help,
        .tests = tests,
        .n_tests = ELEMENTSOF(tests),
        .duration = 1 * USEC_PER_SEC,
        .max_bytes = UINT64_C(64) << 30,
        .deadline = 10 * USEC_PER_SEC,
        .remote_unsupported_is_status = true,
};

enum {
        ARG_DEVICE = _NET_PROBE_ARG_MAX,
        ARG_PORT,
        ARG_GID,
        ARG_MESSAGE,
        ARG_ITER,
        ARG_LAT_SIZE,
        ARG_BUSY,
};

static const struct option options[] = {
        NET_PROBE_OPTIONS,
        { "device", required_argument, NULL, ARG_DEVICE },
        { "port", required_argument, NULL, ARG_PORT },
        { "gid-index", required_argument, NULL, ARG_GID },
        { "message-size", required_argument, NULL, ARG_MESSAGE },
        { "iterations", required_argument, NULL, ARG_ITER },
        { "latency-size", required_argument, NULL, ARG_LAT_SIZE },
        { "busy-retries", required_argument, NULL, ARG_BUSY },
        {}
};

static void parse_option(int c, const char *arg) {
        uint64_t u;

        switch (c) {
        case ARG_DEVICE:
                if (isempty(arg) || strlen(arg) >= 64)
                        net_probe_usage(&probe, "invalid --device \"%s\"", arg);
                arg_device = arg;
                break;
        case ARG_PORT:
                if (parse_u64(arg, &arg_port) < 0 || arg_port < 1 || arg_port > 255)
                        net_probe_usage(&probe, "--port must be 1..255, not \"%s\"", arg);
                break;
        case ARG_GID:
                if (parse_u64(arg, &u) < 0 || u > 255)
                        net_probe_usage(&probe, "--gid-index must be 0..255, not \"%s\"", arg);
                arg_gid_index = (int) u;
                break;
        case ARG_MESSAGE:
                if (parse_size(arg, &arg_message_size) < 0 || arg_message_size == 0 ||
                    arg_message_size > RDMA_BUFFER_DEFAULT)
                        net_probe_usage(&probe, "--message-size must be 1..8M, not \"%s\"", arg);
                break;
        case ARG_ITER:
                if (parse_u64(arg, &arg_iterations) < 0 || arg_iterations == 0 ||
                    arg_iterations > RDMA_LATENCY_ITERATIONS_MAX)
                        net_probe_usage(&probe, "--iterations must be 1..%u, not \"%s\"", RDMA_LATENCY_ITERATIONS_MAX,
                                        arg);
                break;
        case ARG_BUSY:
                if (parse_u64(arg, &arg_busy_retries) < 0 || arg_busy_retries > 100)
                        net_probe_usage(&probe, "--busy-retries must be 0..100, not \"%s\"", arg);
                break;
        case ARG_LAT_SIZE:
                if (parse_size(arg, &arg_latency_size) < 0 || arg_latency_size == 0 ||
                    arg_latency_size > RDMA_LATENCY_MESSAGE_MAX)
                        net_probe_usage(&probe, "--latency-size must be 1..%u, not \"%s\"", RDMA_LATENCY_MESSAGE_MAX,
                                        arg);
                break;
        }
}

/* A failed phase: a failed work completion is named for what failed (retry-exceeded, remote-access, ...),
 * anything else as any network probe's failure. */
_noreturn_ static void rdma_fail(const NetProbe *p, NetClient *c, const RdmaEndpoint *e, int r, const char *phase,
                                 const char *what) {
        char message[256];
        const char *name;

        /* The responder said why it stopped (or hung up): its word is the answer. */
        if (r == -ECONNABORTED) {
                r = net_client_read_result(c, PROTO_RDMA_RESULT, NULL, p->soft_deadline);
                net_probe_fail(p, c, r < 0 ? r : -EPROTO, phase);
        }
        if (r == -EIO && rdma_endpoint_failure(e, &name, message, sizeof(message)) >= 0)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, name, "%s: %s failed: %s", phase, what, message);
        net_probe_fail(p, c, r, phase);
}

/* The responder runs one test at a time, and other nodes' probes (or this node's TCP probe) may hold it:
 * busy, or asked to slow down, is asked again a little later (net_client_retry_wait()), --busy-retries
 * times, as linkprobe-probe-tcp does. */
static bool busy_retry(const NetClient *c, int r, uint64_t *retries, uint64_t soft_deadline) {
        uint64_t wait = net_client_retry_wait(c, r, retries, arg_busy_retries);

        if (wait == 0 || now_usec(CLOCK_MONOTONIC) + wait >= soft_deadline)
                return false;
        usleep((useconds_t) wait);
        return true;
}

static int rdma_request(NetClient *c, const ProtoRdmaTest *t, ProtoType expect, ProtoTestResult *ret, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        ssize_t n = proto_encode_rdma_test(buf, sizeof(buf), t);
        if (n < 0)
                return (int) n;
        return net_client_request_result(c, buf, (size_t) n, expect, ret, deadline);
}

/* One send/receive test of n round trips, each timed into samples (NULL: not kept). */
static int pingpong_test(NetClient *c, RdmaEndpoint *e, uint32_t n, double *samples, uint64_t deadline) {
        ProtoRdmaTest t = { .op = PROTO_RDMA_OP_SEND_LATENCY, .max_usec = probe.duration, .iterations = n,
                            .message_size = (uint32_t) arg_latency_size };
        ProtoTestResult done;
        int r;

        r = rdma_endpoint_post_recv(e, (uint32_t) arg_latency_size);
        if (r >= 0)
                r = rdma_request(c, &t, PROTO_RDMA_READY, NULL, deadline);
        if (r >= 0)
                r = rdma_endpoint_pingpong(e, true, n, (uint32_t) arg_latency_size, deadline, NULL, samples);
        if (r >= 0)
                r = net_client_read_result(c, PROTO_RDMA_RESULT, &done, deadline);
        return r;
}

/* The round trips fit the phase's share of the time: a short first run (perftest's warm-up, not counted)
 * tells how long one takes, then as many as fit the share, up to --iterations. A fixed count on a slow
 * fabric (or on busy CPUs) would run into the deadline and lose the bandwidth figures measured already. */
static int latency_phase(NetClient *c, RdmaEndpoint *e, uint64_t share, uint64_t deadline,
                         json_object *result) {
        uint32_t n = (uint32_t) arg_iterations;
        RttStats st;
        int r;

        if (n > LATENCY_WARMUP_ROUND_TRIPS) {
                uint64_t start = now_usec(CLOCK_MONOTONIC);
                r = pingpong_test(c, e, LATENCY_WARMUP_ROUND_TRIPS, NULL, deadline);
                if (r < 0)
                        return r;
                uint64_t took = now_usec(CLOCK_MONOTONIC) - start;
                uint64_t each = MAX(took / LATENCY_WARMUP_ROUND_TRIPS, 1u);
                uint64_t left = share > took ? share - took : 0;
                n = (uint32_t) CLAMP(left / each, (uint64_t) LATENCY_WARMUP_ROUND_TRIPS, arg_iterations);
        }
        _cleanup_(freep) double *samples = calloc(n, sizeof(double));
        if (!samples)
                return -ENOMEM;
        r = pingpong_test(c, e, n, samples, deadline);
        if (r >= 0)
                r = rtt_stats_compute(samples, n, &st);
        if (r < 0)
                return r;
        if (n < arg_iterations) {
                json_object *warnings = json_object_new_array();
                probe_warn(warnings, "latency: %" PRIu32 " of the %" PRIu64 " round trips asked for fit the time "
                           "left (one took %.0f µs)", n, arg_iterations, st.median_usec);
                json_object_object_add(result, "warnings", warnings);
        }

        /* perftest's ib_send_lat reports half the round trip; both are given. */
        json_object *o = json_object_new_object();
        json_object_object_add(o, "iterations", json_object_new_uint64(n));
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
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(net_client_done) NetClient client = NET_CLIENT_NULL;
        _cleanup_(rdma_endpoint_freep) RdmaEndpoint *e = NULL;
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], reply[PROTO_CONTROL_MAX];
        NetProbe *p = &probe;
        ProtoRdmaInfo local, remote;
        char name[64], reason[128], addr[128];
        uint32_t length;
        int r;

        net_probe_parse_argv(p, argc, argv, options, parse_option);
        net_probe_start(p, DEADLINE_MARGIN_USEC);
        uint64_t soft_deadline = p->soft_deadline;

        /* The control channel comes first: it tells whether the far side can do RDMA at all, which
         * is the more useful answer when neither side can. */
        net_probe_connect(p, &client, 0);
        int local_r = rdma_device_find(arg_device, (uint8_t) arg_port, name, reason);
        if (!(client.capabilities & PROTO_CAP_RDMA))
                probe_exit_unsupported(p->name,
                                       "%s%s%sresponder at %s does not serve RDMA (no active device there, or disabled)",
                                       local_r < 0 ? "this host: " : "", local_r < 0 ? reason : "", local_r < 0 ? "; " : "",
                                       net_format_address((const struct sockaddr *) &p->target.sink, true, addr,
                                                          sizeof(addr)));
        if (local_r < 0)
                probe_exit_unsupported(p->name, "this host: %s", reason);

        size_t size = (size_t) MAX(arg_message_size, (uint64_t) RDMA_BUFFER_DEFAULT);
        r = rdma_endpoint_open(name, (uint8_t) arg_port, arg_gid_index, size, &e);
        if (r < 0)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, strerrorname_np(-r) ?: "error",
                                 "cannot set up a queue pair on %s port %" PRIu64 ": %s", name, arg_port, strerror(-r));
        rdma_endpoint_info(e, &local);

        ssize_t n = proto_encode_rdma_info(buf, sizeof(buf), PROTO_RDMA_CONNECT, &local);
        uint64_t retries = 0;
        do
                r = net_client_request(&client, buf, (size_t) n, PROTO_RDMA_CONNECT_REPLY, reply, &length,
                                       soft_deadline);
        while (r < 0 && busy_retry(&client, r, &retries, soft_deadline));
        if (r < 0)
                net_probe_fail(p, &client, r, "rdma-connect");
        if (proto_decode_rdma_info(reply, length, &remote) < 0)
                net_probe_fail(p, &client, -EPROTO, "rdma-connect");
        /* A responder says so itself; this is for one that does not look. */
        if (rdma_endpoint_check_peer(e, &remote, reason, sizeof(reason)) < 0)
                probe_exit_unsupported(p->name, "%s", reason);
        r = rdma_endpoint_connect(e, &remote);
        if (r < 0)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, "qp-connect", "cannot connect the queue pair: %s",
                                 strerror(-r));
        rdma_endpoint_watch(e, client.fd);

        json_object *result = net_probe_result_new(p, &client);
        json_object_object_add(result, "device", json_object_new_string(name));
        json_object_object_add(result, "port", json_object_new_uint64(arg_port));
        json_object_object_add(result, "gid_index", json_object_new_int(local.gid_index));

        unsigned phases = (unsigned) arg_upload + (unsigned) arg_download + (unsigned) arg_latency;
        if (arg_upload) {
                ProtoTestResult up;
                uint64_t d = MIN(p->duration, (soft_deadline - now_usec(CLOCK_MONOTONIC)) / (phases + 1));
                r = rdma_endpoint_write_bw(e, p->max_bytes, d, (uint32_t) MIN(arg_message_size, (uint64_t) remote.size),
                                           soft_deadline, NULL, &up);
                if (r < 0)
                        rdma_fail(p, &client, e, r, "upload", "RDMA write");
                phases--;
                json_object_object_add(result, "upload_gbps", json_object_new_double(goodput_gbps(up.bytes, up.usec)));
                json_object_object_add(result, "upload", net_probe_transfer_json(up.bytes, up.usec, "probe"));
        }
        if (arg_download) {
                ProtoTestResult down;
                uint64_t d = MIN(p->duration, (soft_deadline - now_usec(CLOCK_MONOTONIC)) / (phases + 1));
                ProtoRdmaTest t = { .op = PROTO_RDMA_OP_WRITE_DOWNLOAD, .max_bytes = p->max_bytes, .max_usec = d,
                                    .message_size = (uint32_t) MIN(arg_message_size, (uint64_t) local.size) };
                r = rdma_request(&client, &t, PROTO_RDMA_RESULT, &down, soft_deadline);
                if (r < 0)
                        net_probe_fail(p, &client, r, "download");
                phases--;
                json_object_object_add(result, "download_gbps",
                                       json_object_new_double(goodput_gbps(down.bytes, down.usec)));
                json_object_object_add(result, "download", net_probe_transfer_json(down.bytes, down.usec, "responder"));
        }
        if (arg_latency) {
                uint64_t share = MIN(p->duration, (soft_deadline - now_usec(CLOCK_MONOTONIC)) / (phases + 1));
                r = latency_phase(&client, e, share, soft_deadline, result);
                if (r < 0)
                        rdma_fail(p, &client, e, r, "latency", "send/receive");
        }

        return net_probe_finish(p, result);
}
