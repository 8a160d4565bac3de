/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "config-peers.h"
#include "status.h"
#include "shared/peer-address.h"
#include "probe-runner.h"
#include "responder-supervisor.h"
#include "shared/log.h"
#include "shared/time-util.h"

#define RESPONDER_PROGRAM "linkprobe-responder"
#define RESPONDER_ARGS_MAX 32
#define RESPONDER_SOCKETS_MAX 16
#define DEGRADED_REASON "responder-failed"

struct ResponderSupervisor {
        sd_event *event;
        const PeersConfig *config;
        DaemonStatus *status;
        int fds[RESPONDER_SOCKETS_MAX];
        size_t n_fds;
        char *args[RESPONDER_ARGS_MAX];
        ProbeRun *run;
        sd_event_source *restart_timer;
        uint64_t backoff;
        uint64_t started_at; /* CLOCK_MONOTONIC */
        unsigned n_restarts;
};

ResponderSupervisor *responder_supervisor_free(ResponderSupervisor *s) {
        if (!s)
                return NULL;
        s->run = probe_run_free(s->run);
        sd_event_source_disable_unref(s->restart_timer);
        for (size_t i = 0; i < s->n_fds; i++)
                safe_close(s->fds[i]);
        for (size_t i = 0; s->args[i]; i++)
                free(s->args[i]);
        return mfree(s);
}

static int open_listener(const char *spec, int *ret) {
        _cleanup_(closep) int fd = -EBADF;
        struct sockaddr_storage ss = {};
        socklen_t len;
        PeerAddress a;
        int one = 1, zero = 0;

        if (peer_address_parse(spec, PEER_ADDRESS_ALLOW_ANY, &a, NULL) < 0)
                return -EINVAL;
        if (a.family == AF_INET) {
                struct sockaddr_in *in = (struct sockaddr_in *) &ss;
                in->sin_family = AF_INET;
                in->sin_port = htons(a.port);
                memcpy(&in->sin_addr, a.bytes, 4);
                len = sizeof(*in);
        } else {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(a.port);
                memcpy(&in6->sin6_addr, a.bytes, 16);
                if (a.scope[0]) {
                        in6->sin6_scope_id = if_nametoindex(a.scope);
                        if (in6->sin6_scope_id == 0)
                                return -ENODEV;
                }
                len = sizeof(*in6);
        }

        fd = socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
        if (fd < 0)
                return -errno;
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        /* "[::]" serves IPv4 as well, whatever net.ipv6.bindv6only says; a given address only itself. */
        if (a.family == AF_INET6)
                (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, peer_address_is_any(&a) ? &zero : &one, sizeof(int));
        if (bind(fd, (struct sockaddr *) &ss, len) < 0 || listen(fd, 128) < 0)
                return -errno;
        *ret = TAKE_FD(fd);
        return 0;
}

static int add_arg(ResponderSupervisor *s, size_t *n, const char *format, ...) _printf_(3, 4);
static int add_arg(ResponderSupervisor *s, size_t *n, const char *format, ...) {
        va_list ap;
        int r;

        if (*n + 1 >= RESPONDER_ARGS_MAX)
                return -E2BIG;
        va_start(ap, format);
        r = vasprintf(&s->args[*n], format, ap);
        va_end(ap);
        if (r < 0) {
                s->args[*n] = NULL;
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

static int build_args(ResponderSupervisor *s, const char *identity_file, const char *measure_lock) {
        const PeersConfig *c = s->config;
        size_t n = 0;
        int r = 0;

        /* Only what is configured: the responder's own defaults are documented in one place. */
        if (c->responder_psk_file)
                r = add_arg(s, &n, "--psk-file=%s", c->responder_psk_file);
        if (r >= 0 && c->max_connections > 0)
                r = add_arg(s, &n, "--max-connections=%u", c->max_connections);
        if (r >= 0 && c->rate > 0)
                r = add_arg(s, &n, "--rate=%u", c->rate);
        if (r >= 0 && c->burst > 0)
                r = add_arg(s, &n, "--burst=%u", c->burst);
        if (r >= 0 && c->max_streams > 0)
                r = add_arg(s, &n, "--max-streams=%u", c->max_streams);
        if (r >= 0 && c->max_test_usec > 0)
                r = add_arg(s, &n, "--max-test-duration=%" PRIu64 "ms", c->max_test_usec / USEC_PER_MSEC);
        if (r >= 0 && c->max_test_bytes > 0)
                r = add_arg(s, &n, "--max-test-bytes=%" PRIu64, c->max_test_bytes);
        if (r >= 0 && c->handshake_timeout_usec > 0)
                r = add_arg(s, &n, "--handshake-timeout=%" PRIu64 "ms", c->handshake_timeout_usec / USEC_PER_MSEC);
        if (r >= 0 && c->idle_timeout_usec > 0)
                r = add_arg(s, &n, "--idle-timeout=%" PRIu64 "ms", c->idle_timeout_usec / USEC_PER_MSEC);
        if (r >= 0 && c->rdma >= 0)
                r = add_arg(s, &n, "--rdma=%s", c->rdma ? "yes" : "no");
        if (r >= 0 && log_get_max_level() >= LOG_DEBUG)
                r = add_arg(s, &n, "--log-level=debug");
        /* Who this node is, for the handshake; linkprobed keeps the file current. */
        if (r >= 0 && identity_file)
                r = add_arg(s, &n, "--identity-file=%s", identity_file);
        /* Tests of other nodes wait while this node's probes measure, and the reverse. */
        if (r >= 0 && measure_lock)
                r = add_arg(s, &n, "--lock-file=%s", measure_lock);
        return r;
}

static void on_responder_exit(ProbeRun *run, const siginfo_t *si, void *userdata);

static int responder_spawn(ResponderSupervisor *s) {
        int r;

        r = probe_service_start(s->event, probe_directory(), RESPONDER_PROGRAM, s->args, s->fds, s->n_fds,
                                on_responder_exit, s, &s->run);
        if (r < 0)
                return log_error_errno(r, "Cannot start %s: %m", RESPONDER_PROGRAM);
        s->started_at = now_usec(CLOCK_MONOTONIC);
        log_info("Started %s (pid %d) on %zu socket(s).", RESPONDER_PROGRAM, (int) probe_run_pid(s->run), s->n_fds);
        return 0;
}

static void schedule_restart(ResponderSupervisor *s) {
        int r;

        r = sd_event_source_set_time_relative(s->restart_timer, s->backoff);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->restart_timer, SD_EVENT_ONESHOT);
        if (r < 0) {
                log_error_errno(r, "Cannot schedule the responder's restart: %m");
                daemon_status_set_degraded(s->status, DEGRADED_REASON, true);
        }
}

static void next_backoff(ResponderSupervisor *s) {
        s->backoff = s->backoff == 0 ? RESPONDER_RESTART_MIN_USEC : MIN(s->backoff * 2, RESPONDER_RESTART_MAX_USEC);
}

static int on_restart(sd_event_source *source, uint64_t usec, void *userdata) {
        ResponderSupervisor *s = userdata;

        s->n_restarts++;
        if (responder_spawn(s) >= 0) {
                daemon_status_set_degraded(s->status, DEGRADED_REASON, false);
                return 0;
        }
        /* fork() or exec() failing may pass (memory, a package upgrade): keep trying, slower. */
        daemon_status_set_degraded(s->status, DEGRADED_REASON, true);
        next_backoff(s);
        schedule_restart(s);
        return 0;
}

static void on_responder_exit(ProbeRun *run, const siginfo_t *si, void *userdata) {
        ResponderSupervisor *s = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        s->run = NULL; /* freed by the runner after we return */

        if (si->si_code == CLD_EXITED && IN_SET(si->si_status, 1, 2)) {
                /* Its configuration is wrong; starting it again would fail the same way. */
                log_error("%s exited with status %d (%s); not restarting it. Check [Responder] in linkprobed.conf.",
                          RESPONDER_PROGRAM, si->si_status, si->si_status == 1 ? "configuration error" : "bad arguments");
                daemon_status_set_degraded(s->status, DEGRADED_REASON, true);
                return;
        }

        /* Ran long enough to call it healthy: start over with the shortest wait. */
        if (now - s->started_at >= RESPONDER_RESTART_MAX_USEC)
                s->backoff = 0;
        next_backoff(s);
        if (si->si_code == CLD_EXITED)
                log_warning("%s exited with status %d, restarting in %" PRIu64 " s.", RESPONDER_PROGRAM, si->si_status,
                            s->backoff / USEC_PER_SEC);
        else
                log_warning("%s was killed by SIG%s, restarting in %" PRIu64 " s.", RESPONDER_PROGRAM,
                            strna(sigabbrev_np(si->si_status)), s->backoff / USEC_PER_SEC);

        schedule_restart(s);
}

int responder_supervisor_start(sd_event *event, const PeersConfig *config, DaemonStatus *status, int *passed_fds,
                               size_t n_passed, const char *identity_file, const char *measure_lock,
                               ResponderSupervisor **ret) {
        _cleanup_(responder_supervisor_freep) ResponderSupervisor *s = NULL;
        const PeersConfig *c = config;
        int r;

        *ret = NULL;
        if (strv_length(c->listen) == 0 && n_passed == 0)
                return 0;

        s = new0(ResponderSupervisor, 1);
        if (!s)
                return log_oom();
        s->event = event;
        s->config = config;
        s->status = status;
        for (size_t i = 0; i < n_passed; i++) {
                if (s->n_fds >= RESPONDER_SOCKETS_MAX) {
                        safe_close(passed_fds[i]);
                        continue;
                }
                s->fds[s->n_fds++] = passed_fds[i];
        }
        STRV_FOREACH(spec, c->listen) {
                int fd = -EBADF;
                if (s->n_fds >= RESPONDER_SOCKETS_MAX) {
                        log_warning("More than %d responder sockets, ignoring %s.", RESPONDER_SOCKETS_MAX, *spec);
                        continue;
                }
                r = open_listener(*spec, &fd);
                if (r < 0) {
                        log_error_errno(r, "Cannot listen on %s for the responder: %m", *spec);
                        daemon_status_set_degraded(status, DEGRADED_REASON, true);
                        continue;
                }
                log_info("Responder listening on %s.", *spec);
                s->fds[s->n_fds++] = fd;
        }
        if (s->n_fds == 0)
                return 0;

        r = build_args(s, identity_file, measure_lock);
        if (r < 0)
                return log_error_errno(r, "Cannot build the responder's arguments: %m");
        r = sd_event_add_time(event, &s->restart_timer, CLOCK_MONOTONIC, UINT64_MAX, 0, on_restart, s);
        if (r < 0)
                return log_error_errno(r, "Cannot create the responder's restart timer: %m");
        (void) sd_event_source_set_enabled(s->restart_timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(s->restart_timer, "responder-restart");

        r = responder_spawn(s);
        if (r < 0) {
                daemon_status_set_degraded(status, DEGRADED_REASON, true);
                next_backoff(s);
                schedule_restart(s);
        }
        *ret = TAKE_PTR(s);
        return 0;
}
