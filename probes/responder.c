/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "net-client.h"
#include "proto-bulk.h"
#include "proto-identity.h"
#include "responder-conn.h"
#include "responder-session.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "sysfs/sysfs.h"

#define SOURCE_TABLE_MIN 1024
#define ACCEPT_BUDGET 64

int responder_limits_validate(const ResponderLimits *l, const char **ret_problem) {
        const char *p = NULL;

        if (l->max_frame < PROTO_FRAME_MAX_MIN || l->max_frame > PROTO_FRAME_MAX_MAX)
                p = "maximum frame size must be between 4K and 16M";
        else if (l->handshake_timeout_usec == 0 || l->idle_timeout_usec == 0)
                p = "timeouts must be positive";
        else if (l->max_test_bytes == 0 || l->max_test_usec == 0)
                p = "test limits must be positive";
        else if (l->burst == 0)
                p = "the burst must be at least 1";
        else if (l->max_connections == 0 || l->max_connections > 65536)
                p = "maximum connections must be between 1 and 65536";
        else if (l->max_connections_per_source == 0)
                p = "maximum connections per source must be at least 1";
        else if (l->max_streams == 0 || l->max_streams > PROTO_STREAMS_MAX)
                p = "maximum streams must be between 1 and 8";
        if (p) {
                if (ret_problem)
                        *ret_problem = p;
                return -EINVAL;
        }
        return 0;
}

/* Refuses a connection with a one-shot error frame; the socket is non-blocking, so this never waits. */
static void refuse(int fd, ProtoErrorCode code, const char *message) {
        uint8_t buf[PROTO_HEADER_SIZE + 4 + PROTO_ERROR_MESSAGE_MAX];
        ssize_t n = proto_encode_error(buf, sizeof(buf), code, message);
        if (n > 0)
                (void) send(fd, buf, (size_t) n, MSG_NOSIGNAL | MSG_DONTWAIT);
        safe_close(fd);
}

/* At the connection cap, the oldest connection still in its handshake makes room (as sshd's
 * MaxStartups does), so idle floods cannot lock out a client that completes its handshake. */
static bool evict_one(Responder *r) {
        for (Conn *c = r->conns; c; c = c->next)
                if (c->state == CONN_HELLO || c->state == CONN_AUTH) {
                        r->stats.evicted++;
                        log_debug("%s: evicted to make room", c->name);
                        conn_free(c);
                        return true;
                }
        return false;
}

int responder_add_connection(Responder *r, int fd, const struct sockaddr *peer) {
        _cleanup_(closep) int sfd = fd;
        struct in6_addr address = {};
        uint16_t port = 0;
        uint64_t now = now_mono();
        int one = 1, k;

        if (peer)
                (void) source_address_from_sockaddr(peer, &address, &port);

        SourceEntry *source = source_table_get(r->sources, &address, now);
        if (!source) {
                r->stats.rejected_connections++;
                refuse(TAKE_FD(sfd), PROTO_ERROR_TOO_MANY_CONNECTIONS, "too many connections");
                return -EBUSY;
        }
        if (!token_bucket_take(&source->bucket, 1, now)) {
                r->stats.rejected_rate++;
                refuse(TAKE_FD(sfd), PROTO_ERROR_RATE_LIMITED, "too many connections from this address");
                return -EBUSY;
        }
        if (source->connections >= r->limits.max_connections_per_source) {
                r->stats.rejected_connections++;
                refuse(TAKE_FD(sfd), PROTO_ERROR_TOO_MANY_CONNECTIONS, "too many connections from this address");
                return -EBUSY;
        }
        if (r->stats.connections >= r->limits.max_connections && !evict_one(r)) {
                r->stats.rejected_connections++;
                refuse(TAKE_FD(sfd), PROTO_ERROR_TOO_MANY_CONNECTIONS, "too many connections");
                return -EBUSY;
        }

        Conn *c = calloc(1, sizeof(Conn));
        if (!c)
                return -ENOMEM;
        *c = (Conn) {
                .responder = r,
                .fd = TAKE_FD(sfd),
                .source = source,
                .address = address,
                .port = port,
                .state = CONN_HELLO,
                .accepted_usec = now,
        };
        struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_addr = address, .sin6_port = htons(port) };
        net_format_address((const struct sockaddr *) &sa, true, c->name, sizeof(c->name));

        c->prev = r->conns_tail;
        if (r->conns_tail)
                r->conns_tail->next = c;
        else
                r->conns = c;
        r->conns_tail = c;
        r->stats.connections++;
        r->stats.accepted++;
        source->connections++;

        (void) setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        k = sd_event_add_io(r->event, &c->io, c->fd, EPOLLIN, on_conn_io, c);
        if (k >= 0)
                k = sd_event_add_time_relative(r->event, &c->timer, CLOCK_MONOTONIC, r->limits.handshake_timeout_usec,
                                               10 * USEC_PER_MSEC, on_conn_timer, c);
        if (k < 0) {
                conn_free(c);
                return k;
        }
        log_debug("%s: accepted", c->name);
        return 0;
}

static int on_accept_resume(sd_event_source *s, uint64_t usec, void *userdata) {
        Responder *r = userdata;
        for (size_t i = 0; i < r->n_listeners; i++)
                (void) sd_event_source_set_enabled(r->listeners[i], SD_EVENT_ON);
        return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Responder *r = userdata;

        for (unsigned i = 0; i < ACCEPT_BUDGET; i++) {
                struct sockaddr_storage peer;
                socklen_t len = sizeof(peer);
                int cfd = accept4(fd, (struct sockaddr *) &peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
                                return 0;
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                                /* Out of descriptors: stop accepting for a moment instead of spinning. */
                                log_warning_errno(errno, "Cannot accept connections, pausing: %m");
                                for (size_t j = 0; j < r->n_listeners; j++)
                                        (void) sd_event_source_set_enabled(r->listeners[j], SD_EVENT_OFF);
                                (void) sd_event_source_set_time_relative(r->accept_pause, 100 * USEC_PER_MSEC);
                                (void) sd_event_source_set_enabled(r->accept_pause, SD_EVENT_ONESHOT);
                                return 0;
                        }
                        log_debug_errno(errno, "accept() failed: %m");
                        return 0;
                }
                (void) responder_add_connection(r, cfd, (const struct sockaddr *) &peer);
        }
        return 0;
}

static int on_echo_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Responder *r = userdata;
        uint64_t v;

        (void) read(fd, &v, sizeof(v));
        /* What the thread left is served now; the socket's own events wake the loop from here on. */
        Conn *c = conn_echo_finished(r);
        if (c)
                (void) conn_continue(c);
        return 0;
}

static int fd_set_nonblock(int fd) {
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0)
                return -errno;
        return RET_NERRNO(fcntl(fd, F_SETFL, flags | O_NONBLOCK));
}

int responder_add_listener(Responder *r, int fd) {
        _cleanup_(closep) int sfd = fd;
        sd_event_source **l;
        int k;

        l = reallocarray(r->listeners, r->n_listeners + 1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        r->listeners = l;
        k = fd_set_nonblock(sfd);
        if (k < 0)
                return k;
        k = sd_event_add_io(r->event, &r->listeners[r->n_listeners], sfd, EPOLLIN, on_accept, r);
        if (k < 0)
                return k;
        (void) sd_event_source_set_io_fd_own(r->listeners[r->n_listeners], true);
        TAKE_FD(sfd);
        r->n_listeners++;
        return 0;
}

int responder_new(sd_event *event, const ResponderLimits *limits, const ProtoKey *key, const ResponderRdma *rdma,
                  Responder **ret) {
        _cleanup_(responder_freep) Responder *r = NULL;
        int k;

        k = responder_limits_validate(limits, NULL);
        if (k < 0)
                return k;

        r = calloc(1, sizeof(Responder));
        if (!r)
                return -ENOMEM;
        r->event = sd_event_ref(event);
        r->limits = *limits;
        r->rdma_done_fd = -EBADF;
        r->pump_done_fd = -EBADF;
        r->echo_done_fd = -EBADF;
        r->lock_fd = -EBADF;
        /* Without a memfd DATA is sent from the scratch buffer, copied as before. sendfile() has no
         * MSG_NOSIGNAL: a client that goes mid-download must not end the process with SIGPIPE. */
        r->payload_fd = net_payload_fd(SCRATCH_SIZE);
        struct sigaction sa;
        if (sigaction(SIGPIPE, NULL, &sa) >= 0 && sa.sa_handler == SIG_DFL)
                (void) signal(SIGPIPE, SIG_IGN);
        /* Without /sys (a container) tests run on whatever CPUs the responder has. */
        r->sysfs_fd = sysfs_root_open("/sys");
        CPU_ZERO(&r->allowed_cpus);
        if (sched_getaffinity(0, sizeof(r->allowed_cpus), &r->allowed_cpus) < 0)
                CPU_SET(0, &r->allowed_cpus);
        if (key) {
                r->key = *key;
                r->have_key = true;
        }
        if (rdma)
                r->rdma = *rdma;
        if (!r->rdma.available && isempty(r->rdma.reason))
                snprintf(r->rdma.reason, sizeof(r->rdma.reason), "RDMA is not enabled on this responder");

        r->scratch = malloc(SCRATCH_SIZE);
        if (!r->scratch)
                return -ENOMEM;
        memset(r->scratch, 0x5a, SCRATCH_SIZE);
        r->sources = source_table_new(MAX((size_t) SOURCE_TABLE_MIN, (size_t) limits->max_connections), limits->rate,
                                      limits->burst);
        if (!r->sources)
                return -ENOMEM;

        k = sd_event_add_time(event, &r->accept_pause, CLOCK_MONOTONIC, UINT64_MAX, 0, on_accept_resume, r);
        if (k < 0)
                return k;
        (void) sd_event_source_set_enabled(r->accept_pause, SD_EVENT_OFF);

        k = responder_threads_init(r, on_echo_done);
        if (k >= 0)
                k = responder_pump_init(r);
        if (k < 0)
                return k;

        *ret = TAKE_PTR(r);
        return 0;
}

Responder *responder_free(Responder *r) {
        if (!r)
                return NULL;
        /* The pump's threads write to the streams' sockets: they stop before those close. */
        r->pump = pump_join(r->pump);
        while (r->conns)
                conn_free(r->conns);
        for (size_t i = 0; i < r->n_listeners; i++)
                sd_event_source_disable_unref(r->listeners[i]);
        free(r->listeners);
        sd_event_source_disable_unref(r->accept_pause);
        responder_threads_done(r);
        safe_close(r->sysfs_fd);
        safe_close(r->payload_fd);
        sd_event_source_disable_unref(r->lock_linger);
        safe_close(r->lock_fd);
        responder_pump_done(r);
        source_table_free(r->sources);
        responder_identity_done(&r->identity);
        free(r->scratch);
        explicit_bzero(&r->key, sizeof(r->key));
        sd_event_unref(r->event);
        free(r);
        return NULL;
}

int responder_set_identity_file(Responder *r, const char *path) {
        return responder_identity_set_file(&r->identity, path);
}

void responder_set_identity(Responder *r, const NodeIdentity *id) {
        responder_identity_set(&r->identity, id);
}

int responder_set_lock_file(Responder *r, const char *path) {
        int fd = net_lock_open(path);
        if (fd < 0)
                return fd;
        safe_close(r->lock_fd);
        r->lock_fd = fd;
        return 0;
}

void responder_get_stats(const Responder *r, ResponderStats *ret) {
        *ret = r->stats;
}
