/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobe-probe-tcp — RTT, jitter and goodput each way to a linkprobe responder; one JSON document. */
#include "net-probe-cli.h"
#include "probe-util.h"
#include "rtt-stats.h"
#include "shared/parse-util.h"
#include "shared/time-util.h"

#define WARMUP_SAMPLES 2
/* What the end of each phase may need beyond its granted time: the last frames and the result. */
#define PHASE_OVERHEAD_USEC (150 * USEC_PER_MSEC)
/* Kept back from the hard deadline so that a late phase fails with a named error, not a kill. */
#define DEADLINE_MARGIN_USEC (200 * USEC_PER_MSEC)

static uint64_t arg_samples = 50;
static uint64_t arg_connect_timeout = 1 * USEC_PER_SEC;
static uint64_t arg_busy_retries = 3;
static bool arg_rtt = true, arg_upload = true, arg_download = true;

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

static const NetProbeTest tests[] = {
        { "rtt", &arg_rtt },
        { "upload", &arg_upload },
        { "download", &arg_download },
};

static NetProbe probe = {
        .name = "tcp",
        .program = "linkprobe-probe-tcp",
        .help = help,
        .tests = tests,
        .n_tests = ELEMENTSOF(tests),
        .duration = 1 * USEC_PER_SEC,
        .max_bytes = UINT64_C(16) << 30,
        .deadline = 5 * USEC_PER_SEC,
};

enum {
        ARG_SAMPLES = _NET_PROBE_ARG_MAX,
        ARG_CONNECT_TIMEOUT,
        ARG_BUSY,
};

static const struct option options[] = {
        NET_PROBE_OPTIONS,
        { "samples", required_argument, NULL, ARG_SAMPLES },
        { "connect-timeout", required_argument, NULL, ARG_CONNECT_TIMEOUT },
        { "busy-retries", required_argument, NULL, ARG_BUSY },
        {}
};

static void parse_option(int c, const char *arg) {
        switch (c) {
        case ARG_SAMPLES:
                if (parse_u64(arg, &arg_samples) < 0 || arg_samples < 1 || arg_samples > 10000)
                        net_probe_usage(&probe, "--samples must be 1..10000, not \"%s\"", arg);
                break;
        case ARG_CONNECT_TIMEOUT:
                if (parse_duration_usec(arg, &arg_connect_timeout) < 0 || arg_connect_timeout == 0)
                        net_probe_usage(&probe, "invalid --connect-timeout \"%s\"", arg);
                break;
        case ARG_BUSY:
                if (parse_u64(arg, &arg_busy_retries) < 0 || arg_busy_retries > 100)
                        net_probe_usage(&probe, "--busy-retries must be 0..100, not \"%s\"", arg);
                break;
        }
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
        return MIN(probe.duration, per - PHASE_OVERHEAD_USEC);
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

int main(int argc, char *argv[]) {
        _cleanup_(net_client_done) NetClient client = NET_CLIENT_NULL;
        NetProbe *p = &probe;
        char buf[128];
        int r;

        net_probe_parse_argv(p, argc, argv, options, parse_option);
        net_probe_start(p, DEADLINE_MARGIN_USEC);
        net_probe_connect(p, &client, arg_connect_timeout);
        uint64_t soft_deadline = p->soft_deadline;

        json_object *result = net_probe_result_new(p, &client);
        json_object_object_add(result, "observed_source", json_object_new_string(
                net_format_address((const struct sockaddr *) &client.observed, false, buf, sizeof(buf))));
        json_object_object_add(result, "interface", p->interface ? json_object_new_string(p->interface) : NULL);
        json_object_object_add(result, "protocol_version", json_object_new_int(client.version));
        json_object_object_add(result, "authenticated", json_object_new_boolean(client.authenticated));

        if (arg_rtt) {
                size_t n = (size_t) arg_samples + WARMUP_SAMPLES;
                _cleanup_(freep) double *samples = calloc(n, sizeof(double));
                RttStats st;
                if (!samples)
                        probe_exit_error(p->name, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
                r = net_client_echo(&client, n, samples, soft_deadline);
                if (r < 0)
                        net_probe_fail(p, &client, r, "rtt");
                /* The first round trips pay for cold caches and the connection's first ACKs. */
                r = rtt_stats_compute(samples + WARMUP_SAMPLES, (size_t) arg_samples, &st);
                if (r < 0)
                        net_probe_fail(p, &client, r, "rtt");
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
                                net_probe_fail(p, &client, -ETIME, "upload");
                        r = net_client_upload(&client, p->max_bytes, d, soft_deadline, &up);
                        if (r >= 0 || !busy_retry(&client, r, &retries, soft_deadline))
                                break;
                }
                if (r < 0)
                        net_probe_fail(p, &client, r, "upload");
                phases--;
                json_object_object_add(result, "upload_gbps", json_object_new_double(goodput_gbps(up.bytes, up.usec)));
                json_object_object_add(result, "upload", net_probe_transfer_json(up.bytes, up.usec, "responder"));
        }
        if (arg_download) {
                ProtoTestResult down, remote;
                uint64_t retries = 0;
                for (;;) {
                        uint64_t d = phase_budget(soft_deadline, phases);
                        if (d == 0)
                                net_probe_fail(p, &client, -ETIME, "download");
                        r = net_client_download(&client, p->max_bytes, d, soft_deadline, &down, &remote);
                        if (r >= 0 || !busy_retry(&client, r, &retries, soft_deadline))
                                break;
                }
                if (r < 0)
                        net_probe_fail(p, &client, r, "download");
                json_object *o = net_probe_transfer_json(down.bytes, down.usec, "probe");
                json_object_object_add(o, "responder_duration_usec", json_object_new_uint64(remote.usec));
                json_object_object_add(result, "download_gbps",
                                       json_object_new_double(goodput_gbps(down.bytes, down.usec)));
                json_object_object_add(result, "download", o);
        }

        return net_probe_finish(p, result);
}
