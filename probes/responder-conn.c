/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The responder's connections: their output, events and timers, and how they end, with the groups of
 * streams they own or joined and the tests they carry (a stream that goes fails its test). */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "responder-conn.h"
#include "shared/log.h"
#include "shared/time-util.h"

/* How long an error reply may take to leave before the connection is cut anyway. */
#define LINGER_USEC (1 * USEC_PER_SEC)
/* How long the echo thread keeps a connection that asks nothing; then the loop has it back. */
#define ECHO_QUIET_USEC (100 * USEC_PER_MSEC)

static void bulk_conn_gone(Conn *c);

uint64_t now_mono(void) {
        return now_usec(CLOCK_MONOTONIC);
}

int timer_arm(Conn *c, uint64_t usec_from_now) {
        uint64_t when = now_mono() + usec_from_now;

        if (c->timer) {
                int r = sd_event_source_set_time(c->timer, when);
                if (r < 0)
                        return r;
                return sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
        }
        return -ENOENT;
}

/* How long the measure lock stays with a client after its test: the next test of its measurement
 * follows within the probe's phase overhead. */
#define LOCK_LINGER_USEC (500 * USEC_PER_MSEC)

static void lock_release(Responder *r) {
        if (r->lock_held)
                net_lock_release(r->lock_fd);
        r->lock_held = false;
        r->lock_conn = NULL;
}

static int on_lock_linger(sd_event_source *s, uint64_t usec, void *userdata) {
        Responder *r = userdata;

        if (!r->bulk_owner)
                lock_release(r);
        return 0;
}

/* Lets the lock go after LOCK_LINGER_USEC (or at once: 0), unless a test runs then. */
static void lock_linger(Responder *r, uint64_t usec) {
        int k = 0;

        if (!r->lock_held)
                return;
        if (!r->lock_linger)
                k = sd_event_add_time_relative(r->event, &r->lock_linger, CLOCK_MONOTONIC, usec, 0, on_lock_linger, r);
        else {
                k = sd_event_source_set_time_relative(r->lock_linger, usec);
                if (k >= 0)
                        k = sd_event_source_set_enabled(r->lock_linger, SD_EVENT_ONESHOT);
        }
        if (k < 0 && !r->bulk_owner)
                lock_release(r); /* no timer: never keep the node's probe out */
}

bool responder_lock_take(Conn *c) {
        Responder *r = c->responder;

        if (r->lock_fd < 0)
                return true;
        if (!r->lock_held) {
                if (net_lock_try(r->lock_fd) <= 0)
                        return false;
                r->lock_held = true;
        }
        r->lock_conn = owner_of(c);
        return true;
}

void conn_release_bulk(Conn *c) {
        Responder *r = c->responder;

        if (r->bulk_owner == c) {
                r->bulk_owner = NULL;
                lock_linger(r, LOCK_LINGER_USEC);
        }
}

/* Queues one control frame. Only one is ever pending: replies are sent before the next request is read. */
int conn_queue(Conn *c, ssize_t n) {
        if (n < 0)
                return (int) n;
        c->out_len = (size_t) n;
        c->out_sent = 0;
        return 0;
}

static int conn_flush(Conn *c) {
        while (c->out_sent < c->out_len) {
                ssize_t k = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return -errno;
                }
                c->out_sent += (size_t) k;
        }
        c->out_len = c->out_sent = 0;
        return 1;
}

/* Queues an error and marks the connection for closing; conn_kick() closes it once the error has left
 * (or LINGER_USEC later). Never frees c, so callers deep in the read path need no care. */
void conn_fail(Conn *c, ProtoErrorCode code, const char *message) {
        log_debug("%s: closing: %s: %s", c->name, proto_error_code_to_string(code), message);
        conn_release_bulk(c);
        /* In the middle of a DATA frame an error frame would be read as data: just close. */
        if (c->state == CONN_DOWNLOAD && c->data_frame_sent > 0)
                c->out_len = c->out_sent = 0;
        else
                (void) conn_queue(c, proto_encode_error(c->out, sizeof(c->out), code, message));
        c->state = CONN_CLOSING;
        /* With nothing to say the connection goes on the next turn of the loop (not here: callers
         * may be deep in its read path, or in another connection's). */
        (void) timer_arm(c, c->out_len > 0 ? LINGER_USEC : 1);
}

/* Sends what is pending and updates the poll mask. Returns false when c was freed. */
bool conn_kick(Conn *c) {
        if (c->out_len > 0) {
                int k = conn_flush(c);
                if (k < 0) {
                        conn_free(c);
                        return false;
                }
        }
        if (c->state == CONN_CLOSING && c->out_len == 0) {
                conn_free(c);
                return false;
        }
        conn_update_events(c);
        return true;
}

void conn_reply_error(Conn *c, ProtoErrorCode code, const char *message) {
        (void) conn_queue(c, proto_encode_error(c->out, sizeof(c->out), code, message));
}

void conn_enter_ready(Conn *c) {
        c->state = CONN_READY;
        c->last_frame_usec = now_mono();
        (void) timer_arm(c, c->responder->limits.idle_timeout_usec);
}

/* Whether the connection takes frames in its state. */
bool conn_reads(const Conn *c) {
        return IN_SET(c->state, CONN_HELLO, CONN_AUTH, CONN_READY, CONN_JOINED, CONN_UPLOAD);
}

/* A joined stream of a download waits for the asking connection's READY to leave before it sends. */
bool conn_may_send(const Conn *c) {
        return c->state == CONN_DOWNLOAD && (!c->owner || c->owner->test.sending);
}

void conn_update_events(Conn *c) {
        uint32_t events = 0;

        if (!c->io)
                return;
        if (c->out_len > 0 || conn_may_send(c))
                events = EPOLLOUT;
        else if (conn_reads(c))
                events = EPOLLIN;
        (void) sd_event_source_set_io_events(c->io, events);
}

void conn_echo_begin(Conn *c) {
        Responder *r = c->responder;
        int k;

        /* A connection that just had an echo answered, with nothing pending or half read (the thread
         * starts at a frame's first byte), no test of its own running and no receive threshold. */
        if (c->state != CONN_READY || !c->echoed || r->echo_done_fd < 0 || r->echo_conn || r->bulk_owner == c ||
            c->out_len > 0 || c->ahead_len > 0 || c->have_header || c->header_len > 0 || c->lowat > 1)
                return;
        (void) sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
        k = echo_session_start(c->fd, r->limits.max_frame, MIN(ECHO_QUIET_USEC, r->limits.idle_timeout_usec),
                               r->echo_done_fd, &r->echo);
        if (k < 0) {
                log_debug_errno(k, "%s: cannot start an echo thread, echoing from the loop: %m", c->name);
                (void) sd_event_source_set_enabled(c->io, SD_EVENT_ON);
                (void) timer_arm(c, r->limits.idle_timeout_usec);
                c->echoed = false;
                return;
        }
        c->state = CONN_ECHO;
        r->echo_conn = c;
        r->stats.echo_sessions++;
}

/* Takes c back from the echo thread, with what it read and did not answer and what it could not
 * send; l NULL: c is going, the thread is stopped. */
static void conn_echo_end(Conn *c, EchoLeftover *l) {
        Responder *r = c->responder;

        r->echo = echo_session_join(r->echo, l);
        r->echo_conn = NULL;
        c->echoed = false;
        if (!l)
                return;
        c->state = CONN_READY;
        memcpy(c->ahead, l->in, l->in_len);
        c->ahead_start = 0;
        c->ahead_len = l->in_len;
        memcpy(c->out, l->out, l->out_len);
        c->out_len = l->out_len;
        c->out_sent = l->out_sent;
        if (l->echoes > 0)
                c->last_frame_usec = l->last_usec;
        uint64_t idle_end = c->last_frame_usec + r->limits.idle_timeout_usec, now = now_mono();
        (void) timer_arm(c, idle_end > now ? idle_end - now : 1);
        (void) sd_event_source_set_enabled(c->io, SD_EVENT_ON);
}

Conn *conn_echo_finished(Responder *r) {
        EchoLeftover l;
        Conn *c = r->echo_conn;

        if (!echo_session_finished(r->echo))
                return NULL;
        conn_echo_end(c, &l);
        return c;
}

static int on_rdma_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Responder *r = userdata;
        uint64_t v;

        (void) read(fd, &v, sizeof(v));
        /* Freeing a connection frees the streams it owns too: start over after each. */
        for (Conn *c = r->conns; c;)
                if (c->state == CONN_RDMA && rdma_session_finished(c->rdma)) {
                        conn_free(c);
                        c = r->conns;
                } else
                        c = c->next;
        return 0;
}

int responder_threads_init(Responder *r, sd_event_io_handler_t on_echo_done) {
        int k;

        r->rdma_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        r->echo_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (r->rdma_done_fd < 0 || r->echo_done_fd < 0)
                return -errno;
        k = sd_event_add_io(r->event, &r->rdma_done, r->rdma_done_fd, EPOLLIN, on_rdma_done, r);
        if (k < 0)
                return k;
        return sd_event_add_io(r->event, &r->echo_done, r->echo_done_fd, EPOLLIN, on_echo_done, r);
}

void responder_threads_done(Responder *r) {
        r->rdma_done = sd_event_source_disable_unref(r->rdma_done);
        r->rdma_done_fd = safe_close(r->rdma_done_fd);
        r->echo_done = sd_event_source_disable_unref(r->echo_done);
        r->echo_done_fd = safe_close(r->echo_done_fd);
}

void conn_free(Conn *c) {
        Responder *r;

        if (!c)
                return;
        r = c->responder;
        bulk_conn_gone(c);
        if (r->lock_conn == c)
                lock_linger(r, 0);
        c->rdma = rdma_session_join(c->rdma);
        if (c->state == CONN_ECHO)
                conn_echo_end(c, NULL);
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        safe_close(c->fd);
        if (c->source && c->source->connections > 0)
                c->source->connections--;
        if (c->prev)
                c->prev->next = c->next;
        else
                r->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        else
                r->conns_tail = c->prev;
        r->stats.connections--;
        free(c);
}


void bulk_fail(Conn *c, ProtoErrorCode code, const char *message) {
        Conn *o = owner_of(c);

        /* Every stream of the test goes, and the connection that asked for it hears why: what the
         * others moved means nothing without this one. Nothing is freed here (the caller may be deep
         * in c's read path): the errors leave, then the connections close. */
        if (c->responder->bulk_owner == o && o->state != CONN_RDMA)
                for (unsigned i = 0; i < o->test.streams && (!o->group || i < o->group->n_members); i++) {
                        Conn *s = test_stream(o, i);
                        if (s != c && (s == o || IN_SET(s->state, CONN_UPLOAD, CONN_DOWNLOAD)) &&
                            s->state != CONN_CLOSING) {
                                conn_fail(s, code, message);
                                conn_update_events(s);
                        }
                }
        conn_fail(c, code, message);
}

static void bulk_conn_gone(Conn *c) {
        Responder *r = c->responder;

        if (c->owner) {
                /* A joined stream left: a test it carried cannot finish; the group closes ranks. */
                Conn *o = c->owner;
                StreamGroup *g = o->group;
                bool carried = IN_SET(c->state, CONN_UPLOAD, CONN_DOWNLOAD) && r->bulk_owner == o;

                c->owner = NULL;
                for (unsigned i = 1; i < g->n_members; i++)
                        if (g->members[i] == c) {
                                memmove(g->members + i, g->members + i + 1, (g->n_members - i - 1) * sizeof(Conn *));
                                g->n_members--;
                                break;
                        }
                if (carried && o->state != CONN_CLOSING) {
                        bulk_fail(o, PROTO_ERROR_PROTOCOL, "a stream of the test closed");
                        conn_update_events(o);
                }
        }
        if (c->group) {
                /* The streams belong to this connection and go with it. */
                StreamGroup *g = TAKE_PTR(c->group);
                for (unsigned i = 1; i < g->n_members; i++)
                        g->members[i]->owner = NULL;
                for (unsigned i = 1; i < g->n_members; i++)
                        conn_free(g->members[i]);
                free(g);
        }
        conn_release_bulk(c);
}
