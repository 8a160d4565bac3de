/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobe-probe-tcp — RTT, jitter and goodput each way to a linkprobe responder; one JSON document. */
#include <fcntl.h>

#include "net-probe-cli.h"
#include "net-streams.h"
#include "probe-util.h"
#include "rtt-stats.h"
#include "shared/parse-util.h"
#include "shared/tcp-ramp.h"
#include "shared/time-util.h"
#include "sysfs/sysfs.h"
#include "tcp-report.h"

#define WARMUP_SAMPLES 10
/* Kept back from the hard deadline so that a late phase fails with a named error, not a kill. */
#define DEADLINE_MARGIN_USEC (200 * USEC_PER_MSEC)

static uint64_t arg_samples = 50;
static uint64_t arg_connect_timeout = 1 * USEC_PER_SEC;
static uint64_t arg_busy_retries = 3;
static uint64_t arg_streams = 0; /* 0: as many as still raise goodput */
static const char *arg_lock_file;
static int lock_fd = -EBADF;
static uint64_t lock_wait_usec;
static int lock_error; /* errno of opening --lock-file: measured without it, and said so */
static bool arg_rtt = true, arg_upload = true, arg_download = true;

/* Adding streams goes on while a step raises goodput by this much over the best so far, or the step
 * after it does. */
#define RAMP_GAIN 1.10
#define RAMP_MISSES 2


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
               "     --streams=N          parallel TCP streams, 1..8; 0 adds streams while goodput\n"
               "                          still rises by 10%% (default 0)\n"
               "     --lock-file=FILE     the node's measure lock, shared with its responder: wait while\n"
               "                          it serves a test, hold it while measuring\n"
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
        .deadline = 8 * USEC_PER_SEC,
};

enum {
        ARG_SAMPLES = _NET_PROBE_ARG_MAX,
        ARG_CONNECT_TIMEOUT,
        ARG_BUSY,
        ARG_STREAMS,
        ARG_LOCK,
};

static const struct option options[] = {
        NET_PROBE_OPTIONS,
        { "samples", required_argument, NULL, ARG_SAMPLES },
        { "connect-timeout", required_argument, NULL, ARG_CONNECT_TIMEOUT },
        { "busy-retries", required_argument, NULL, ARG_BUSY },
        { "streams", required_argument, NULL, ARG_STREAMS },
        { "lock-file", required_argument, NULL, ARG_LOCK },
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
        case ARG_LOCK:
                arg_lock_file = arg;
                break;
        case ARG_STREAMS:
                if (parse_u64(arg, &arg_streams) < 0 || arg_streams > PROTO_STREAMS_MAX)
                        net_probe_usage(&probe, "--streams must be 0..%d, not \"%s\"", PROTO_STREAMS_MAX, arg);
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
        if (per <= TCP_PHASE_OVERHEAD_USEC)
                return 0;
        return MIN(probe.duration, per - TCP_PHASE_OVERHEAD_USEC);
}

/* Takes the node's measure lock (with --lock-file), waiting while the node's responder serves a test,
 * at most until wait_end; the time waited is reported. Exits with "busy" when the wait is too long. */
static void lock_take(uint64_t wait_end) {
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        int r;

        if (lock_fd < 0)
                return;
        r = net_lock_wait(lock_fd, wait_end);
        lock_wait_usec += now_usec(CLOCK_MONOTONIC) - start;
        if (r == -ETIME)
                probe_exit_error(probe.name, PROBE_EXIT_ERROR, "busy",
                                 "this node's responder served tests for %.1f s: no time left to measure",
                                 (double) lock_wait_usec / USEC_PER_SEC);
        if (r < 0)
                probe_exit_error(probe.name, PROBE_EXIT_ERROR, "internal", "cannot take the lock %s: %s", arg_lock_file,
                                 strerror(-r));
}

/* A busy responder, or one that wants this address to slow down, is asked again a little later. */
static bool busy_retry(const NetClient *c, int r, uint64_t *retries, uint64_t soft_deadline) {
        uint64_t wait = net_client_retry_wait(c, r, retries, arg_busy_retries);

        if (wait == 0 || now_usec(CLOCK_MONOTONIC) + wait + TCP_PHASE_OVERHEAD_USEC >= soft_deadline)
                return false;
        /* The far node may be measuring us: our responder serves it while we wait. */
        net_lock_release(lock_fd);
        usleep((useconds_t) wait);
        lock_take(soft_deadline - TCP_PHASE_OVERHEAD_USEC);
        return true;
}

static int transfer(NetStreams *s, bool upload, unsigned streams, uint64_t usec, uint64_t slice_usec, uint64_t deadline,
                    NetTransfer *ret) {
        return upload ? net_streams_upload(s, streams, probe.max_bytes, usec, slice_usec, deadline, ret)
                      : net_streams_download(s, streams, probe.max_bytes, usec, slice_usec, deadline, ret);
}

/*
 * Short tests with 1, 2, 4, 8 streams (up to what the responder granted), while a step, or the one
 * after it, raises goodput by RAMP_GAIN over the best so far; the best count is the one for the
 * measurement. Steps are compared by their median slice (net-streams.c): a step's total can catch a
 * flow's start-up or one of its bursts, which a one-stream step then reads as a rate that more
 * streams do not beat, while the measurement, ten times longer, averages them away. Stops early,
 * with a warning, when a stream cannot be had or a step fails, and when the time left is needed for
 * the measurement (ends before ramp_end).
 */
static unsigned ramp(NetStreams *s, bool upload, uint64_t ramp_end, json_object *steps, json_object *warnings) {
        const char *direction = upload ? "upload" : "download";
        uint64_t step = tcp_ramp_step_usec(probe.duration);
        unsigned best = 1, n = 1, misses = 0;
        double best_gbps = 0;

        for (;;) {
                NetTransfer t;
                int r;

                if (now_usec(CLOCK_MONOTONIC) + step + TCP_PHASE_OVERHEAD_USEC > ramp_end)
                        break;
                r = net_streams_join(s, &probe.target, net_probe_key(&probe), n, ramp_end);
                if (r < 0) {
                        probe_warn(warnings, "%s: cannot open stream %u: %s", direction, n,
                             r == -EREMOTEIO ? s->control->remote_error.message : strerror(-r));
                        break;
                }
                uint64_t retries = 0;
                do
                        r = transfer(s, upload, n, step, tcp_ramp_slice_usec(probe.duration), ramp_end, &t);
                while (r < 0 && busy_retry(s->control, r, &retries, ramp_end));
                if (r < 0) {
                        probe_warn(warnings, "%s: the test with %u streams failed (%s)%s%s", direction, n,
                             net_client_error_name(s->control, r), r == -EREMOTEIO ? ": " : "",
                             r == -EREMOTEIO ? s->control->remote_error.message : "");
                        break;
                }
                /* Without slices (sockets that do not say), the step's total. */
                double gbps = t.steady_gbps > 0 ? t.steady_gbps : goodput_gbps(t.bytes, t.usec);
                json_object *o = json_object_new_object();
                json_object_object_add(o, "streams", json_object_new_int((int) n));
                json_object_object_add(o, "gbps", json_object_new_double(goodput_gbps(t.bytes, t.usec)));
                json_object_object_add(o, "duration_usec", json_object_new_uint64(t.usec));
                json_object_object_add(o, "steady_gbps", t.steady_gbps > 0 ? json_object_new_double(t.steady_gbps) : NULL);
                json_object_array_add(steps, o);
                /* A short step on a busy machine can be unlucky: the ramp gives up after two steps in a
                 * row that did not beat the best so far by RAMP_GAIN, and keeps the best. */
                if (n > 1 && gbps < best_gbps * RAMP_GAIN) {
                        if (++misses >= RAMP_MISSES)
                                break;
                } else {
                        best = n;
                        best_gbps = gbps;
                        misses = 0;
                }
                if (n >= s->granted)
                        break;
                n = MIN(n * 2, s->granted);
        }
        return best;
}

/* One direction: the ramp (with --streams=0), then the measurement with the streams it chose. */
static json_object *measure_direction(NetStreams *s, bool upload, unsigned phases, uint64_t soft_deadline,
                                      json_object *warnings, double *cross_gbps) {
        const char *direction = upload ? "upload" : "download";
        json_object *steps = json_object_new_array();
        unsigned streams = MIN((unsigned) MAX(arg_streams, UINT64_C(1)), s->granted);
        uint64_t retries = 0;
        NetTransfer t;
        int r;

        if (arg_streams == 0 && s->granted > 1) {
                /* The ramp may use what this phase's share leaves after the measurement itself. */
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                uint64_t share = soft_deadline > now ? (soft_deadline - now) / phases : 0;
                uint64_t final = MIN(probe.duration, share) + TCP_PHASE_OVERHEAD_USEC;
                streams = ramp(s, upload, share > final ? now + share - final : now, steps, warnings);
        }
        r = net_streams_join(s, &probe.target, net_probe_key(&probe), streams, soft_deadline);
        if (r < 0)
                net_probe_fail(&probe, s->control, r, direction);
        for (;;) {
                uint64_t d = phase_budget(soft_deadline, phases);
                if (d == 0)
                        net_probe_fail(&probe, s->control, -ETIME, direction);
                r = transfer(s, upload, streams, d, 0, soft_deadline, &t);
                if (r >= 0 || !busy_retry(s->control, r, &retries, soft_deadline))
                        break;
        }
        if (r < 0)
                net_probe_fail(&probe, s->control, r, direction);

        json_object *o = net_probe_transfer_json(t.bytes, t.usec, upload ? "responder" : "probe");
        if (!upload)
                json_object_object_add(o, "responder_duration_usec", json_object_new_uint64(t.remote_usec));
        json_object_object_add(o, "streams", json_object_new_int((int) t.streams));
        json_object_object_add(o, "ramp", steps);
        double cross = tcp_report_direction(o, warnings, upload, &t, s->host);
        *cross_gbps = MAX(*cross_gbps, cross);
        return o;
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

        /* Our end: the interface to the sink and the CPUs near its device, for the data threads. */
        NetHost host;
        _cleanup_(closep) int sysfs_fd = sysfs_root_open("/sys");
        net_host_setup((const struct sockaddr *) &p->target.sink, p->interface, sysfs_fd, NULL, &host);

        /* Held from the first round trip to the end: neither the RTT nor the goodput is measured while
         * this node's responder serves another node. The wait may take what the measurement can spare:
         * each bulk phase keeps at least half its duration. A sink on this host is this node's own
         * responder: it serves us, and must not find the lock taken by us. */
        if (arg_lock_file && !host.peer_is_local) {
                unsigned phases = (unsigned) arg_upload + (unsigned) arg_download;
                uint64_t need = phases * (p->duration / 2 + TCP_PHASE_OVERHEAD_USEC) + 100 * USEC_PER_MSEC;
                lock_fd = net_lock_open(arg_lock_file);
                if (lock_fd >= 0)
                        lock_take(soft_deadline > need ? soft_deadline - need : now_usec(CLOCK_MONOTONIC));
                else
                        lock_error = -lock_fd;
        }

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
        json_object *warnings = json_object_new_array();
        _cleanup_(net_streams_done) NetStreams streams = { .payload_fd = -EBADF };
        double cross_gbps = 0;
        if (phases > 0) {
                json_object *h = json_object_new_object();
                json_object_object_add(h, "interface", host.ifindex > 0 ? json_object_new_string(host.ifname) : NULL);
                json_object_object_add(h, "cpus", json_object_new_string(net_host_format_cpus(&host, buf, sizeof(buf))));
                json_object_object_add(h, "cpus_local", json_object_new_boolean(host.cpus_local));
                json_object_object_add(result, "host", h);

                unsigned wanted = arg_streams == 0 ? PROTO_STREAMS_MAX : (unsigned) arg_streams;
                r = net_streams_open(&streams, &client, wanted, soft_deadline);
                if (r < 0)
                        net_probe_fail(p, &client, r, "streams");
                if (arg_streams > 1 && !(client.capabilities & PROTO_CAP_STREAMS))
                        probe_warn(warnings, "the responder has no parallel streams (protocol version 1): one stream "
                                       "measured, not %u", wanted);
                else if (arg_streams > 1 && streams.granted < wanted)
                        probe_warn(warnings, "the responder allowed %u of the %u streams asked for", streams.granted, wanted);
                json_object_object_add(result, "streams_granted", json_object_new_int((int) streams.granted));
                streams.host = &host;
        }
        if (arg_upload) {
                json_object *o = measure_direction(&streams, true, phases--, soft_deadline, warnings, &cross_gbps);
                json_object_object_add(result, "upload_gbps", json_object_get(json_object_object_get(o, "gbps")));
                json_object_object_add(result, "upload_streams", json_object_get(json_object_object_get(o, "streams")));
                json_object_object_add(result, "upload", o);
        }
        if (arg_download) {
                json_object *o = measure_direction(&streams, false, phases--, soft_deadline, warnings, &cross_gbps);
                json_object_object_add(result, "download_gbps", json_object_get(json_object_object_get(o, "gbps")));
                json_object_object_add(result, "download_streams",
                                       json_object_get(json_object_object_get(o, "streams")));
                json_object_object_add(result, "download", o);
        }
        if (arg_upload || arg_download)
                json_object_object_add(result, "cross_traffic_gbps", json_object_new_double(cross_gbps));
        if (lock_fd >= 0)
                json_object_object_add(result, "lock_wait_usec", json_object_new_uint64(lock_wait_usec));
        if (lock_error != 0)
                probe_warn(warnings, "cannot open the lock file %s (%s): measured without waiting for this node's "
                                     "responder", arg_lock_file, strerror(lock_error));
        json_object_object_add(result, "warnings", warnings);

        return net_probe_finish(p, result);
}
