/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-session.c — one connection's conversation with a client: the handshake (HELLO, AUTH,
 * IDENTITY), reading and dispatching its frames, and its timers. responder.c accepts the connection
 * and hands it the callbacks below. */
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
#include "shared/log.h"
#include "shared/time-util.h"
#include "sysfs/sysfs.h"
#include "responder-session.h"

static void conn_handle_hello(Conn *c) {
        Responder *r = c->responder;
        ProtoHello hello;
        ProtoHelloReply reply = {
                .version = PROTO_VERSION,
                .capabilities = PROTO_CAP_ECHO | PROTO_CAP_UPLOAD | PROTO_CAP_DOWNLOAD |
                                (r->rdma.available ? PROTO_CAP_RDMA : 0) |
                                (responder_identity_get(&r->identity) ? PROTO_CAP_IDENTITY : 0) |
                                (r->limits.max_streams > 1 ? PROTO_CAP_STREAMS : 0) | PROTO_CAP_TEST_STATS,
                .max_frame = r->limits.max_frame,
                .observed = c->address,
                .observed_port = c->port,
        };

        if (c->frame.type != PROTO_HELLO || proto_decode_hello(c->payload, c->frame.length, &hello) < 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "expected hello");
        if (hello.version < PROTO_VERSION_MIN)
                return conn_fail(c, PROTO_ERROR_VERSION, "responder speaks protocol version 1");
        reply.version = MIN(hello.version, (uint16_t) PROTO_VERSION);
        memcpy(c->client_nonce, hello.nonce, sizeof(c->client_nonce));
        /* Longer results only for a client that said it reads them: an older one takes them at their
         * version 1 size and would count a longer one as a protocol error. */
        c->want_stats = hello.capabilities & PROTO_CAP_TEST_STATS;

        if (r->have_key) {
                if (proto_random_bytes(c->nonce, sizeof(c->nonce)) < 0)
                        return conn_fail(c, PROTO_ERROR_INTERNAL, "no random bytes");
                memcpy(reply.nonce, c->nonce, sizeof(reply.nonce));
                reply.flags |= PROTO_HELLO_FLAG_AUTH_REQUIRED;
                c->state = CONN_AUTH;
        } else
                conn_enter_ready(c);
        (void) conn_queue(c, proto_encode_hello_reply(c->out, sizeof(c->out), &reply));
}

static void conn_handle_auth(Conn *c) {
        Responder *r = c->responder;

        if (c->frame.type != PROTO_AUTH)
                return conn_fail(c, PROTO_ERROR_AUTH_REQUIRED, "authenticate first");
        if (!proto_auth_verify(&r->key, c->nonce, c->client_nonce, c->payload)) {
                r->stats.auth_failed++;
                log_info("%s: wrong pre-shared key", c->name);
                return conn_fail(c, PROTO_ERROR_AUTH_FAILED, "wrong key");
        }
        conn_enter_ready(c);
        (void) conn_queue(c, proto_encode_empty(c->out, sizeof(c->out), PROTO_AUTH_OK));
}

/* Who this node is, proved with the key when there is one (the nonces are this session's: with no key
 * the server nonce is all zeroes and so is the proof). */
static void conn_send_identity(Conn *c) {
        Responder *r = c->responder;
        const NodeIdentity *id = responder_identity_get(&r->identity);
        ssize_t n;

        if (c->frame.length != 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "malformed identity request");
        if (!id)
                return conn_reply_error(c, PROTO_ERROR_UNSUPPORTED, "this responder has no identity");
        n = proto_encode_identity(c->out, sizeof(c->out), id, r->have_key ? &r->key : NULL, c->nonce, c->client_nonce);
        if (n < 0)
                return conn_reply_error(c, PROTO_ERROR_INTERNAL, "cannot encode the identity");
        (void) conn_queue(c, n);
}

static void conn_start_rdma(Conn *c) {
        Responder *r = c->responder;
        ProtoRdmaInfo info;
        int k;

        if (proto_decode_rdma_info(c->payload, c->frame.length, &info) < 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "malformed RDMA connection data");
        if (!r->rdma.available)
                return conn_reply_error(c, PROTO_ERROR_UNSUPPORTED, r->rdma.reason);
        if (c->ahead_len > 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "more frames before the RDMA connection reply");
        if (!bulk_may_start(c))
                return;

        /* The session thread owns the socket from here; the loop only waits for it to finish. */
        c->io = sd_event_source_disable_unref(c->io);
        c->timer = sd_event_source_disable_unref(c->timer);
        k = rdma_session_start(c->fd, &info, &r->rdma, &r->limits, r->rdma_done_fd, &c->rdma);
        if (k < 0) {
                /* The lock bulk_may_start() took lingers with this connection and goes with it. */
                log_warning_errno(k, "%s: cannot start RDMA session: %m", c->name);
                /* Without its event sources the connection can only say so once and go. */
                ssize_t n = proto_encode_error(c->out, sizeof(c->out), PROTO_ERROR_INTERNAL, "cannot start RDMA");
                if (n > 0)
                        (void) send(c->fd, c->out, (size_t) n, MSG_NOSIGNAL | MSG_DONTWAIT);
                c->state = CONN_CLOSING;
                return;
        }
        c->fd = -EBADF;
        c->state = CONN_RDMA;
        r->bulk_owner = c;
        r->stats.tests++;
}

static void conn_dispatch(Conn *c) {
        switch (c->state) {
        case CONN_HELLO:
                return conn_handle_hello(c);
        case CONN_AUTH:
                return conn_handle_auth(c);
        case CONN_READY:
                /* The idle timer is not moved here: re-arming it per frame would cost a timerfd
                 * update per echo. It checks last_frame_usec when it fires instead. */
                c->last_frame_usec = now_mono();
                c->echoed = c->frame.type == PROTO_ECHO_REQUEST;
                switch (c->frame.type) {
                case PROTO_ECHO_REQUEST:
                        (void) conn_queue(c, proto_encode_echo(c->out, sizeof(c->out), PROTO_ECHO_REPLY, c->payload,
                                                               c->frame.length));
                        return;
                case PROTO_UPLOAD_START:
                case PROTO_DOWNLOAD_START:
                        return bulk_start(c);
                case PROTO_RDMA_CONNECT:
                        return conn_start_rdma(c);
                case PROTO_IDENTITY_REQUEST:
                        return conn_send_identity(c);
                case PROTO_STREAMS_REQUEST:
                        return bulk_streams_request(c);
                case PROTO_JOIN:
                        return bulk_join(c);
                case PROTO_HELLO:
                case PROTO_HELLO_REPLY:
                case PROTO_AUTH:
                case PROTO_AUTH_OK:
                case PROTO_ERROR:
                case PROTO_ECHO_REPLY:
                case PROTO_UPLOAD_READY:
                case PROTO_DATA:
                case PROTO_UPLOAD_END:
                case PROTO_UPLOAD_RESULT:
                case PROTO_DOWNLOAD_READY:
                case PROTO_DOWNLOAD_END:
                case PROTO_RDMA_CONNECT_REPLY:
                case PROTO_RDMA_TEST:
                case PROTO_RDMA_READY:
                case PROTO_RDMA_RESULT:
                case PROTO_IDENTITY:
                case PROTO_STREAMS_REPLY:
                case PROTO_JOIN_OK:
                case _PROTO_TYPE_MAX:
                        break;
                }
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "unexpected frame");
        case CONN_JOINED:
                /* A joined stream carries tests its group asks for, and says nothing itself. */
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "unexpected frame on a joined stream");
        case CONN_UPLOAD:
                if (c->frame.type == PROTO_UPLOAD_END)
                        return bulk_upload_end(c);
                return bulk_fail(c, PROTO_ERROR_PROTOCOL, "unexpected frame during upload");
        case CONN_UPLOAD_WAIT:
        case CONN_DOWNLOAD:
        case CONN_RDMA:
        case CONN_ECHO:
        case CONN_CLOSING:
                return;
        }
}

/* An upload's payload wakes the loop once NET_RCVLOWAT_MAX of it is there (net-host.h). */
static void conn_set_lowat(Conn *c, uint32_t want) {
        net_set_rcvlowat(c->fd, &c->lowat, want);
}

/* recv() from what was read ahead first. Between tests a client waits for each reply before it says
 * more, so a header and its payload come in one segment: reading up to a control frame's size takes
 * both with one system call (an echo costs epoll_wait, recv and send, as sockperf's server's does).
 * A client that says more at once has it kept here and served in order. */
static ssize_t conn_recv(Conn *c, void *buf, size_t n, int flags) {
        if (c->ahead_len > 0) {
                n = MIN(n, c->ahead_len);
                memcpy(buf, c->ahead + c->ahead_start, n);
                c->ahead_start += n;
                c->ahead_len -= n;
                return (ssize_t) n;
        }
        if (!c->have_header && c->header_len == 0 && c->state != CONN_UPLOAD) {
                ssize_t k = recv(c->fd, c->ahead, sizeof(c->ahead), flags & ~MSG_TRUNC);
                if (k <= 0)
                        return k;
                c->ahead_start = 0;
                c->ahead_len = (size_t) k;
                return conn_recv(c, buf, n, flags);
        }
        return recv(c->fd, buf, n, flags);
}

/* Reads until a reply is pending, the socket is empty or the budget is spent. Returns false when the
 * peer closed or the socket failed and c was freed. */
static bool conn_read(Conn *c) {
        Responder *r = c->responder;
        size_t moved = 0;
        ssize_t k;

        while (moved < PUMP_BUDGET && c->out_len == 0 && conn_reads(c)) {
                if (!c->have_header) {
                        k = conn_recv(c, c->header + c->header_len, sizeof(c->header) - c->header_len, MSG_DONTWAIT);
                } else if (c->frame.type == PROTO_DATA) {
                        /* MSG_TRUNC: on TCP the kernel frees the payload without copying it here and
                         * says how much it was (the receiver's CPU time per byte halves); a socket
                         * type that ignores it copies into the scratch buffer instead. */
                        k = conn_recv(c, r->scratch, MIN((size_t) c->data_left, (size_t) SCRATCH_SIZE),
                                      MSG_DONTWAIT | MSG_TRUNC);
                } else
                        k = conn_recv(c, c->payload + c->payload_len, c->frame.length - c->payload_len, MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return true;
                        log_debug("%s: receive failed: %m", c->name);
                        conn_free(c);
                        return false;
                }
                if (k == 0) {
                        log_debug("%s: closed by peer", c->name);
                        conn_free(c);
                        return false;
                }
                moved += (size_t) k;

                if (!c->have_header) {
                        c->header_len += (size_t) k;
                        if (c->header_len < sizeof(c->header))
                                continue;
                        int e = proto_header_decode(c->header, r->limits.max_frame, &c->frame);
                        if (e < 0) {
                                r->stats.closed_protocol++;
                                conn_fail(c, PROTO_ERROR_PROTOCOL,
                                          e == -EMSGSIZE ? "frame size out of bounds" : "malformed frame header");
                                return true;
                        }
                        c->header_len = 0;
                        c->payload_len = 0;
                        if (c->frame.type == PROTO_DATA) {
                                if (c->state != CONN_UPLOAD) {
                                        r->stats.closed_protocol++;
                                        conn_fail(c, PROTO_ERROR_PROTOCOL, "data outside an upload");
                                        return true;
                                }
                                c->have_header = true;
                                c->data_left = c->frame.length;
                                conn_set_lowat(c, MIN(c->data_left, NET_RCVLOWAT_MAX));
                                continue;
                        }
                        if (c->frame.length > 0) {
                                c->have_header = true;
                                continue;
                        }
                } else if (c->frame.type == PROTO_DATA) {
                        c->data_left -= (uint32_t) k;
                        /* The next header, or the end of the test, is small: it must wake us as it is. */
                        if (c->data_left < c->lowat)
                                conn_set_lowat(c, c->data_left);
                        if (!bulk_received(c, (size_t) k))
                                return true;
                        if (c->data_left > 0)
                                continue;
                        c->have_header = false;
                        continue;
                } else {
                        c->payload_len += (size_t) k;
                        if (c->payload_len < c->frame.length)
                                continue;
                }

                /* A complete control frame; the loop condition stops after a reply or a hand-over. */
                c->have_header = false;
                conn_dispatch(c);
        }
        return true;
}

/* Sends what is pending and serves what was read ahead; false when c was freed. */
bool conn_continue(Conn *c) {
        /* A reply produced by reading goes out at once if the socket takes it; what the client said
         * beyond the request it answers was read ahead, and is served now (no EPOLLIN will say so). */
        for (;;) {
                if (!conn_kick(c))
                        return false;
                if (c->ahead_len == 0 || c->out_len > 0 || !conn_reads(c))
                        return true;
                if (!conn_read(c))
                        return false;
        }
}

int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Conn *c = userdata;

        if (c->state == CONN_ECHO)
                return 0; /* the echo thread has the socket */
        if (c->out_len > 0 && !conn_kick(c))
                return 0;
        if (c->out_len == 0 && conn_may_send(c)) {
                if (!bulk_pump_download(c))
                        return 0;
        } else if (c->out_len == 0 && conn_reads(c) && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
                if (!conn_read(c))
                        return 0;
        } else if (c->out_len == 0 && (revents & (EPOLLHUP | EPOLLERR))) {
                /* Waiting for the other streams, neither reading nor sending: epoll would report the
                 * hang-up again at once, so the connection goes now. */
                log_debug("%s: closed by peer while waiting", c->name);
                conn_free(c);
                return 0;
        }
        /* Once quiet, a connection may go to a thread: its round trips to the echo thread, the upload
         * it asked for to the pump's threads. */
        if (conn_continue(c)) {
                conn_echo_begin(c);
                bulk_upload_begin(c);
        }
        return 0;
}

int on_conn_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Conn *c = userdata;
        Responder *r = c->responder;

        switch (c->state) {
        case CONN_HELLO:
        case CONN_AUTH:
                r->stats.closed_timeout++;
                conn_fail(c, PROTO_ERROR_TIMEOUT, "handshake timeout");
                break;
        case CONN_READY:
        case CONN_JOINED: {
                uint64_t idle_end = c->last_frame_usec + r->limits.idle_timeout_usec, now = now_mono();
                if (now < idle_end) {
                        (void) timer_arm(c, idle_end - now);
                        return 0;
                }
                r->stats.closed_timeout++;
                conn_fail(c, PROTO_ERROR_TIMEOUT, "idle timeout");
                break;
        }
        case CONN_UPLOAD:
        case CONN_UPLOAD_WAIT:
        case CONN_DOWNLOAD:
                if (r->pump && owner_of(c) == r->pump_owner) {
                        /* The pump's threads own the sockets and stop at the same limit by themselves. */
                        (void) timer_arm(c, 100 * USEC_PER_MSEC);
                        return 0;
                }
                r->stats.closed_timeout++;
                bulk_fail(c, PROTO_ERROR_LIMIT, "test ran past its granted time");
                break;
        case CONN_CLOSING:
                /* The error did not leave within LINGER_USEC: the peer does not read. */
                conn_free(c);
                return 0;
        case CONN_RDMA:
        case CONN_ECHO:
                return 0;
        }
        (void) conn_kick(c);
        return 0;
}
