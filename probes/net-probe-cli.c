/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <signal.h>

#include "net-probe-cli.h"
#include "probe-util.h"
#include "rtt-stats.h"
#include "shared/parse-util.h"
#include "shared/time-util.h"

static void parse_tests(NetProbe *p, const char *s) {
        _cleanup_(freep) char *copy = strdup(s), *names = NULL;
        char *save = NULL;
        size_t len = 0;
        FILE *f;

        /* "rtt, upload, download": what the error message offers. */
        f = open_memstream(&names, &len);
        if (!copy || !f)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
        for (size_t i = 0; i < p->n_tests; i++) {
                fprintf(f, "%s%s", i > 0 ? ", " : "", p->tests[i].name);
                *p->tests[i].selected = false;
        }
        if (fclose(f) != 0 || !names)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");

        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                size_t i;
                for (i = 0; i < p->n_tests; i++)
                        if (streq(t, p->tests[i].name))
                                break;
                if (i == p->n_tests)
                        net_probe_usage(p, "unknown test \"%s\" (%s)", t, names);
                *p->tests[i].selected = true;
        }
        for (size_t i = 0; i < p->n_tests; i++)
                if (*p->tests[i].selected)
                        return;
        net_probe_usage(p, "no test selected");
}

void net_probe_parse_argv(NetProbe *p, int argc, char *argv[], const struct option *options,
                          void (*parse_option)(int c, const char *arg)) {
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        p->help();
                        exit(0);
                case NET_PROBE_ARG_VERSION:
                        printf("%s %s (protocol %u)\n", p->program, VERSION, PROTO_VERSION);
                        exit(0);
                case NET_PROBE_ARG_SINK:
                        p->sink = optarg;
                        break;
                case NET_PROBE_ARG_SOURCE:
                        p->source = optarg;
                        break;
                case NET_PROBE_ARG_INTERFACE:
                        p->interface = optarg;
                        break;
                case NET_PROBE_ARG_DURATION:
                        if (parse_duration_usec(optarg, &p->duration) < 0 || p->duration == 0)
                                net_probe_usage(p, "invalid --duration \"%s\"", optarg);
                        break;
                case NET_PROBE_ARG_MAX_BYTES:
                        if (parse_size(optarg, &p->max_bytes) < 0 || p->max_bytes == 0)
                                net_probe_usage(p, "invalid --max-bytes \"%s\"", optarg);
                        break;
                case NET_PROBE_ARG_TESTS:
                        parse_tests(p, optarg);
                        break;
                case NET_PROBE_ARG_PSK:
                        p->psk_file = optarg;
                        break;
                case NET_PROBE_ARG_DEADLINE:
                        if (parse_duration_usec(optarg, &p->deadline) < 0 || p->deadline == 0)
                                net_probe_usage(p, "invalid --deadline \"%s\"", optarg);
                        break;
                case '?':
                        net_probe_usage(p, "invalid option (see --help)");
                default:
                        parse_option(c, optarg);
                }
        if (optind < argc && !p->sink)
                p->sink = argv[optind++];
        if (optind < argc)
                net_probe_usage(p, "unexpected argument \"%s\"", argv[optind]);
        if (!p->sink)
                net_probe_usage(p, "no sink address given");
}

void net_probe_start(NetProbe *p, uint64_t margin) {
        int r;

        signal(SIGPIPE, SIG_IGN);
        p->start = now_usec(CLOCK_MONOTONIC);
        p->start_realtime = now_usec(CLOCK_REALTIME);
        r = probe_arm_deadline(p->name, p->deadline);
        if (r < 0)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, "internal", "cannot arm the deadline: %s", strerror(-r));
        p->soft_deadline = p->start + (p->deadline > 2 * margin ? p->deadline - margin : p->deadline / 2);
}

static void target_setup(NetProbe *p) {
        NetTarget *t = &p->target;

        if (net_target_parse_sink(t, p->sink) < 0)
                net_probe_usage(p, "invalid sink address \"%s\" (ADDR, ADDR:PORT or [IPV6]:PORT)", p->sink);
        if (p->source && net_target_parse_source(t, p->source) < 0)
                net_probe_usage(p, "invalid source address \"%s\"", p->source);
        if (p->interface) {
                if (net_target_set_interface(t, p->interface) < 0)
                        net_probe_usage(p, "no such interface \"%s\"", p->interface);
                /* A link-local sink without a scope is reached through the given interface. */
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &t->sink;
                if (in6->sin6_family == AF_INET6 && in6->sin6_scope_id == 0 && IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
                        in6->sin6_scope_id = if_nametoindex(p->interface);
        }
        if (t->source_len > 0 && t->source.ss_family != t->sink.ss_family)
                net_probe_usage(p, "source and sink must be of the same address family (%s)", p->source);
}

static void key_load(NetProbe *p, ProtoKey *ret) {
        int r = proto_key_load(AT_FDCWD, p->psk_file, ret);
        if (r == -EPERM)
                net_probe_usage(p, "%s must not be readable or writable by others", p->psk_file);
        if (r == -EINVAL)
                net_probe_usage(p, "%s must hold a key of %d to %d bytes", p->psk_file, PROTO_KEY_MIN, PROTO_KEY_MAX);
        if (r < 0)
                net_probe_usage(p, "cannot read the key file %s: %s", p->psk_file, strerror(-r));
}

void net_probe_connect(NetProbe *p, NetClient *c, uint64_t timeout) {
        ProtoKey key;
        int r;

        target_setup(p);
        if (p->psk_file)
                key_load(p, &key);

        uint64_t deadline = p->soft_deadline;
        if (timeout > 0)
                deadline = MIN(deadline, now_usec(CLOCK_MONOTONIC) + timeout);
        r = net_client_connect(c, &p->target, p->psk_file ? &key : NULL, deadline);
        explicit_bzero(&key, sizeof(key));
        if (r < 0)
                net_probe_fail(p, c, r, "connect");
}

void net_probe_fail(const NetProbe *p, const NetClient *c, int r, const char *phase) {
        if (r == -EREMOTEIO && p->remote_unsupported_is_status && c->remote_error.code == PROTO_ERROR_UNSUPPORTED)
                probe_exit_unsupported(p->name, "responder: %s", c->remote_error.message);
        if (r == -EREMOTEIO)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, net_client_error_name(c, r), "%s: responder: %s", phase,
                                 c->remote_error.message);
        if (r == -EKEYREJECTED)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, "auth-required",
                                 "%s: the responder requires a pre-shared key (--psk-file)", phase);
        if (r == -ETIME)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, "deadline", "%s: deadline reached", phase);
        if (r == -EPROTO)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, "protocol", "%s: malformed reply from the responder",
                                 phase);
        probe_exit_error(p->name, PROBE_EXIT_ERROR, net_client_error_name(c, r), "%s: %s", phase, strerror(-r));
}

json_object *net_probe_result_new(const NetProbe *p, const NetClient *c) {
        json_object *result = probe_result_new(p->name);
        char buf[128];

        if (!result)
                probe_exit_error(p->name, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
        json_object_object_add(result, "sink", json_object_new_string(
                net_format_address((const struct sockaddr *) &p->target.sink, true, buf, sizeof(buf))));
        json_object_object_add(result, "source", json_object_new_string(
                net_format_address((const struct sockaddr *) &c->local, false, buf, sizeof(buf))));
        /* Which node the sink reaches, as its responder says (and proved, with a key). */
        if (c->have_identity) {
                json_object *id = node_identity_to_json(&c->identity);
                if (!id)
                        probe_exit_error(p->name, PROBE_EXIT_ERROR, "ENOMEM", "out of memory");
                json_object_object_add(id, "authenticated", json_object_new_boolean(c->identity_authenticated));
                json_object_object_add(result, "peer_identity", id);
        }
        return result;
}

json_object *net_probe_transfer_json(uint64_t bytes, uint64_t usec, const char *timed_by) {
        json_object *o = json_object_new_object();
        double gbps = goodput_gbps(bytes, usec);
        json_object_object_add(o, "bytes", json_object_new_uint64(bytes));
        json_object_object_add(o, "duration_usec", json_object_new_uint64(usec));
        json_object_object_add(o, "gbps", json_object_new_double(gbps));
        json_object_object_add(o, "bytes_per_sec", json_object_new_uint64((uint64_t) (gbps * 1e9 / 8)));
        json_object_object_add(o, "timed_by", json_object_new_string(timed_by));
        return o;
}

int net_probe_finish(NetProbe *p, json_object *result) {
        char ts[ISO8601_MAX];
        int r;

        json_object_object_add(result, "measured_at", json_object_new_string(format_iso8601(ts, p->start_realtime)));
        json_object_object_add(result, "wall_usec", json_object_new_uint64(now_usec(CLOCK_MONOTONIC) - p->start));
        (void) probe_arm_deadline(p->name, 0);
        r = probe_print(result);
        json_object_put(result);
        return r < 0 ? PROBE_EXIT_ERROR : PROBE_EXIT_OK;
}
