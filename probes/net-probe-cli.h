/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* net-probe-cli.h — what the TCP and RDMA probes share: responder options, deadline, connection, result */
#pragma once

#include <getopt.h>
#include <json-c/json.h>

#include "net-client.h"

/* getopt values of the shared options; a probe numbers its own from _NET_PROBE_ARG_MAX on. */
enum {
        NET_PROBE_ARG_SINK = 0x100,
        NET_PROBE_ARG_SOURCE,
        NET_PROBE_ARG_INTERFACE,
        NET_PROBE_ARG_DURATION,
        NET_PROBE_ARG_MAX_BYTES,
        NET_PROBE_ARG_TESTS,
        NET_PROBE_ARG_PSK,
        NET_PROBE_ARG_DEADLINE,
        NET_PROBE_ARG_VERSION,
        _NET_PROBE_ARG_MAX,
};

/* The shared entries of a probe's struct option table (it adds its own and the terminating {}). */
#define NET_PROBE_OPTIONS                                                        \
        { "sink", required_argument, NULL, NET_PROBE_ARG_SINK },                 \
        { "source", required_argument, NULL, NET_PROBE_ARG_SOURCE },             \
        { "interface", required_argument, NULL, NET_PROBE_ARG_INTERFACE },       \
        { "duration", required_argument, NULL, NET_PROBE_ARG_DURATION },         \
        { "max-bytes", required_argument, NULL, NET_PROBE_ARG_MAX_BYTES },       \
        { "tests", required_argument, NULL, NET_PROBE_ARG_TESTS },               \
        { "psk-file", required_argument, NULL, NET_PROBE_ARG_PSK },              \
        { "deadline", required_argument, NULL, NET_PROBE_ARG_DEADLINE },         \
        { "help", no_argument, NULL, 'h' },                                      \
        { "version", no_argument, NULL, NET_PROBE_ARG_VERSION }

/* One measurement --tests= can select. */
typedef struct NetProbeTest {
        const char *name;
        bool *selected;
} NetProbeTest;

typedef struct NetProbe {
        /* Set by the probe before parsing. */
        const char *name;    /* the document's "probe" member: "tcp", "rdma" */
        const char *program; /* for --version */
        void (*help)(void);
        const NetProbeTest *tests; /* all selected until --tests= says otherwise */
        size_t n_tests;
        uint64_t duration;   /* defaults, replaced by --duration=, --max-bytes=, --deadline= */
        uint64_t max_bytes;
        uint64_t deadline;
        /* The responder's "unsupported" error makes the probe's "unsupported" status (RDMA). */
        bool remote_unsupported_is_status;

        /* From the command line. */
        const char *sink;
        const char *source;
        const char *interface;
        const char *psk_file;

        /* Set by net_probe_start() and net_probe_connect(). */
        uint64_t start;          /* CLOCK_MONOTONIC */
        uint64_t start_realtime;
        uint64_t soft_deadline;  /* the deadline less a margin, so a late phase fails with a named error */
        NetTarget target;
        ProtoKey key;            /* from psk_file, while the probe runs */
} NetProbe;

/* Prints a "usage" error document for p and exits 2. */
#define net_probe_usage(p, ...) probe_exit_error((p)->name, PROBE_EXIT_USAGE, "usage", __VA_ARGS__)

/**
 * net_probe_parse_argv() - parse the command line of a network probe
 * @p: the probe, with its name, help, tests and defaults set
 * @options: the probe's option table, NET_PROBE_OPTIONS plus its own
 * @parse_option: called for every option that is not a shared one (c, optarg); exits on bad input
 *
 * Handles the shared options, --help and --version, then takes SINK from the first positional
 * argument when --sink= was not given. Exits with a usage error on anything it does not accept.
 */
void net_probe_parse_argv(NetProbe *p, int argc, char *argv[], const struct option *options,
                          void (*parse_option)(int c, const char *arg));

/* Arms the hard deadline and sets the soft one, margin before it (half the time when it is short). */
void net_probe_start(NetProbe *p, uint64_t margin);

/**
 * net_probe_connect() - reach the responder
 * @p: the started probe
 * @c: an unconnected client
 * @timeout: how long connecting may take at most, 0 for up to the soft deadline
 *
 * Parses the sink, source and interface (a link-local sink without a scope is reached through
 * --interface), loads the pre-shared key, connects and authenticates. Exits with a usage error for
 * bad options and with the named error when connecting fails.
 */
void net_probe_connect(NetProbe *p, NetClient *c, uint64_t timeout);

/* The pre-shared key for more connections to the responder, or NULL without --psk-file. */
const ProtoKey *net_probe_key(const NetProbe *p);

/* Exits with the error document for a failed phase ("connect", "upload", ...) of client c. */
_noreturn_ void net_probe_fail(const NetProbe *p, const NetClient *c, int r, const char *phase);

/* A new result with "sink" and "source" filled in; exits when out of memory. */
json_object *net_probe_result_new(const NetProbe *p, const NetClient *c);

/* {"bytes", "duration_usec", "gbps", "bytes_per_sec", "timed_by"} of one bulk transfer. */
json_object *net_probe_transfer_json(uint64_t bytes, uint64_t usec, const char *timed_by);

/* Adds "measured_at" and "wall_usec", disarms the deadline, prints and frees result; the exit code. */
int net_probe_finish(NetProbe *p, json_object *result);
