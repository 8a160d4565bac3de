/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "net-client.h"
#include "proto-identity.h"
#include "responder-identity.h"
#include "source-table.h"
#include "responder-rdma.h"
#include "responder.h"
#include "shared/log.h"
#include "shared/time-util.h"

/* One buffer serves every connection: received DATA is discarded into it and sent DATA comes from it,
 * so bulk tests cost no memory per connection. */
#define SCRATCH_SIZE PROTO_FRAME_MAX_DEFAULT
/* How much one wake-up may move before other connections get their turn. */
#define PUMP_BUDGET (8U * 1024U * 1024U)
/* A test gets this much (or as long again as granted) past its granted time to drain buffers. */
#define TEST_GRACE_USEC (3 * USEC_PER_SEC)
/* How long an error reply may take to leave before the connection is cut anyway. */
#define LINGER_USEC (1 * USEC_PER_SEC)
#define SOURCE_TABLE_MIN 1024
#define ACCEPT_BUDGET 64

typedef enum ConnState {
        CONN_HELLO,
        CONN_AUTH,
        CONN_READY,
        CONN_UPLOAD,
        CONN_DOWNLOAD,
        CONN_RDMA,      /* handed to an RDMA session thread */
        CONN_CLOSING,   /* flushing a final error */
} ConnState;

typedef struct Conn Conn;
struct Conn {
        Responder *responder;
        Conn *prev, *next;
        int fd;
        sd_event_source *io, *timer;
        SourceEntry *source;
        struct in6_addr address;
        uint16_t port;
        char name[INET6_ADDRSTRLEN + 8];
        ConnState state;
        uint64_t accepted_usec;
        uint64_t last_frame_usec;   /* when the last complete frame arrived (idle timeout) */

        /* Input: a header, then a control payload into payload[] or DATA bytes into the scratch. */
        uint8_t header[PROTO_HEADER_SIZE];
        size_t header_len;
        bool have_header;
        ProtoHeader frame;
        uint8_t payload[PROTO_CONTROL_MAX];
        size_t payload_len;
        uint32_t data_left;

        /* Output: at most one control frame is pending; nothing is read until it has left. */
        uint8_t out[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        size_t out_len, out_sent;

        uint8_t nonce[PROTO_NONCE_SIZE];
        uint8_t client_nonce[PROTO_CLIENT_NONCE_SIZE];

        /* The bulk test of this connection. */
        uint64_t granted_bytes, granted_usec;
        uint64_t test_bytes, test_start_usec, test_last_usec;
        uint32_t frame_size;
        uint8_t data_header[PROTO_HEADER_SIZE];
        uint32_t data_frame_len, data_frame_sent;

        RdmaSession *rdma;
};

struct Responder {
        sd_event *event;
        ResponderLimits limits;
        bool have_key;
        ProtoKey key;
        ResponderRdma rdma;
        ResponderIdentity identity;
        SourceTable *sources;
        sd_event_source **listeners;
        size_t n_listeners;
        sd_event_source *accept_pause;
        int rdma_done_fd;
        sd_event_source *rdma_done;
        Conn *conns, *conns_tail;
        Conn *bulk_owner;
        ResponderStats stats;
        uint8_t *scratch;
};

static void conn_free(Conn *c);
static void conn_update_events(Conn *c);

static uint64_t now_mono(void) {
        return now_usec(CLOCK_MONOTONIC);
}

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
        if (p) {
                if (ret_problem)
                        *ret_problem = p;
                return -EINVAL;
        }
        return 0;
}

static int timer_arm(Conn *c, uint64_t usec_from_now) {
        uint64_t when = now_mono() + usec_from_now;

        if (c->timer) {
                int r = sd_event_source_set_time(c->timer, when);
                if (r < 0)
                        return r;
                return sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
        }
        return -ENOENT;
}

static void conn_release_bulk(Conn *c) {
        if (c->responder->bulk_owner == c)
                c->responder->bulk_owner = NULL;
}

/* Queues one control frame. Only one is ever pending: replies are sent before the next request is read. */
static int conn_queue(Conn *c, ssize_t n) {
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
static void conn_fail(Conn *c, ProtoErrorCode code, const char *message) {
        log_debug("%s: closing: %s: %s", c->name, proto_error_code_to_string(code), message);
        conn_release_bulk(c);
        /* In the middle of a DATA frame an error frame would be read as data: just close. */
        if (c->state == CONN_DOWNLOAD && c->data_frame_sent > 0)
                c->out_len = c->out_sent = 0;
        else
                (void) conn_queue(c, proto_encode_error(c->out, sizeof(c->out), code, message));
        c->state = CONN_CLOSING;
        (void) timer_arm(c, LINGER_USEC);
}

/* Sends what is pending and updates the poll mask. Returns false when c was freed. */
static bool conn_kick(Conn *c) {
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

static void conn_reply_error(Conn *c, ProtoErrorCode code, const char *message) {
        (void) conn_queue(c, proto_encode_error(c->out, sizeof(c->out), code, message));
}

static void conn_enter_ready(Conn *c) {
        c->state = CONN_READY;
        c->last_frame_usec = now_mono();
        (void) timer_arm(c, c->responder->limits.idle_timeout_usec);
}

static void conn_handle_hello(Conn *c) {
        Responder *r = c->responder;
        ProtoHello hello;
        ProtoHelloReply reply = {
                .version = PROTO_VERSION,
                .capabilities = PROTO_CAP_ECHO | PROTO_CAP_UPLOAD | PROTO_CAP_DOWNLOAD |
                                (r->rdma.available ? PROTO_CAP_RDMA : 0) |
                                (responder_identity_get(&r->identity) ? PROTO_CAP_IDENTITY : 0),
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

/* Costs of the token bucket: a connection takes one token, a bulk test two. */
#define TEST_TOKENS 2

static bool conn_may_start_test(Conn *c) {
        Responder *r = c->responder;

        if (r->bulk_owner) {
                r->stats.busy++;
                conn_reply_error(c, PROTO_ERROR_BUSY, "another test is running");
                return false;
        }
        if (!token_bucket_take(&c->source->bucket, TEST_TOKENS, now_mono())) {
                r->stats.rejected_rate++;
                conn_reply_error(c, PROTO_ERROR_RATE_LIMITED, "too many requests from this address");
                return false;
        }
        return true;
}

static void conn_start_test(Conn *c) {
        Responder *r = c->responder;
        bool upload = c->frame.type == PROTO_UPLOAD_START;
        ProtoTestRequest req;

        if (proto_decode_test_request(c->payload, c->frame.length, &req) < 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "malformed test request");
        if (!conn_may_start_test(c))
                return;

        c->granted_bytes = MIN(req.max_bytes, r->limits.max_test_bytes);
        c->granted_usec = MIN(req.max_usec, r->limits.max_test_usec);
        c->frame_size = MIN(MIN(req.frame_size, r->limits.max_frame), (uint32_t) SCRATCH_SIZE);
        c->test_bytes = 0;
        c->data_frame_sent = c->data_frame_len = 0;
        c->test_start_usec = c->test_last_usec = now_mono();
        c->state = upload ? CONN_UPLOAD : CONN_DOWNLOAD;
        r->bulk_owner = c;
        r->stats.tests++;

        ProtoTestResult granted = { .bytes = c->granted_bytes, .usec = c->granted_usec };
        (void) conn_queue(c, proto_encode_test_result(c->out, sizeof(c->out),
                                                      upload ? PROTO_UPLOAD_READY : PROTO_DOWNLOAD_READY, &granted));
        (void) timer_arm(c, c->granted_usec + MAX(TEST_GRACE_USEC, c->granted_usec));
}

static void conn_finish_upload(Conn *c) {
        uint64_t usec = c->test_bytes > 0 ? c->test_last_usec - c->test_start_usec : 0;
        ProtoTestResult result = { .bytes = c->test_bytes, .usec = usec };

        log_info("%s: upload: %" PRIu64 " bytes in %" PRIu64 " us", c->name, result.bytes, result.usec);
        conn_release_bulk(c);
        conn_enter_ready(c);
        (void) conn_queue(c, proto_encode_test_result(c->out, sizeof(c->out), PROTO_UPLOAD_RESULT, &result));
}

static void conn_finish_download(Conn *c) {
        ProtoTestResult result = { .bytes = c->test_bytes, .usec = now_mono() - c->test_start_usec };

        log_info("%s: download: %" PRIu64 " bytes in %" PRIu64 " us", c->name, result.bytes, result.usec);
        conn_release_bulk(c);
        conn_enter_ready(c);
        (void) conn_queue(c, proto_encode_test_result(c->out, sizeof(c->out), PROTO_DOWNLOAD_END, &result));
}

static void conn_start_rdma(Conn *c) {
        Responder *r = c->responder;
        ProtoRdmaInfo info;
        int k;

        if (proto_decode_rdma_info(c->payload, c->frame.length, &info) < 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "malformed RDMA connection data");
        if (!r->rdma.available)
                return conn_reply_error(c, PROTO_ERROR_UNSUPPORTED, r->rdma.reason);
        if (!conn_may_start_test(c))
                return;

        /* The session thread owns the socket from here; the loop only waits for it to finish. */
        c->io = sd_event_source_disable_unref(c->io);
        c->timer = sd_event_source_disable_unref(c->timer);
        k = rdma_session_start(c->fd, &info, &r->rdma, &r->limits, r->rdma_done_fd, &c->rdma);
        if (k < 0) {
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
                switch (c->frame.type) {
                case PROTO_ECHO_REQUEST:
                        (void) conn_queue(c, proto_encode_echo(c->out, sizeof(c->out), PROTO_ECHO_REPLY, c->payload,
                                                               c->frame.length));
                        return;
                case PROTO_UPLOAD_START:
                case PROTO_DOWNLOAD_START:
                        return conn_start_test(c);
                case PROTO_RDMA_CONNECT:
                        return conn_start_rdma(c);
                case PROTO_IDENTITY_REQUEST:
                        return conn_send_identity(c);
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
                case _PROTO_TYPE_MAX:
                        break;
                }
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "unexpected frame");
        case CONN_UPLOAD:
                if (c->frame.type == PROTO_UPLOAD_END)
                        return conn_finish_upload(c);
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "unexpected frame during upload");
        case CONN_DOWNLOAD:
        case CONN_RDMA:
        case CONN_CLOSING:
                return;
        }
}

/* Reads until a reply is pending, the socket is empty or the budget is spent. Returns false when the
 * peer closed or the socket failed and c was freed. */
static bool conn_read(Conn *c) {
        Responder *r = c->responder;
        size_t moved = 0;
        ssize_t k;

        while (moved < PUMP_BUDGET && c->out_len == 0 &&
               (c->state == CONN_HELLO || c->state == CONN_AUTH || c->state == CONN_READY || c->state == CONN_UPLOAD)) {
                if (!c->have_header) {
                        k = recv(c->fd, c->header + c->header_len, sizeof(c->header) - c->header_len, MSG_DONTWAIT);
                } else if (c->frame.type == PROTO_DATA) {
                        k = recv(c->fd, r->scratch, MIN((size_t) c->data_left, (size_t) SCRATCH_SIZE), MSG_DONTWAIT);
                } else
                        k = recv(c->fd, c->payload + c->payload_len, c->frame.length - c->payload_len, MSG_DONTWAIT);
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
                                continue;
                        }
                        if (c->frame.length > 0) {
                                c->have_header = true;
                                continue;
                        }
                } else if (c->frame.type == PROTO_DATA) {
                        c->data_left -= (uint32_t) k;
                        c->test_bytes += (uint64_t) k;
                        c->test_last_usec = now_mono();
                        if (c->test_bytes > c->granted_bytes) {
                                conn_fail(c, PROTO_ERROR_LIMIT, "more data than granted");
                                return true;
                        }
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

/* Sends DATA frames until the grant is used up, the socket is full or the budget is spent. */
static bool conn_pump_download(Conn *c) {
        Responder *r = c->responder;
        size_t moved = 0;

        while (moved < PUMP_BUDGET && c->out_len == 0 && c->state == CONN_DOWNLOAD) {
                if (c->data_frame_len == 0) {
                        if (c->test_bytes >= c->granted_bytes ||
                            now_mono() - c->test_start_usec >= c->granted_usec) {
                                conn_finish_download(c);
                                return true;
                        }
                        c->data_frame_len = (uint32_t) MIN((uint64_t) c->frame_size, c->granted_bytes - c->test_bytes);
                        c->data_frame_sent = 0;
                        proto_header_encode(c->data_header, PROTO_DATA, c->data_frame_len);
                }

                struct iovec iov[2];
                int n = 0;
                if (c->data_frame_sent < PROTO_HEADER_SIZE)
                        iov[n++] = (struct iovec) { .iov_base = c->data_header + c->data_frame_sent,
                                                    .iov_len = PROTO_HEADER_SIZE - c->data_frame_sent };
                uint32_t body_sent = c->data_frame_sent > PROTO_HEADER_SIZE ? c->data_frame_sent - PROTO_HEADER_SIZE : 0;
                iov[n++] = (struct iovec) { .iov_base = r->scratch, .iov_len = c->data_frame_len - body_sent };

                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t) n };
                ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return true;
                        log_debug("%s: send failed: %m", c->name);
                        conn_free(c);
                        return false;
                }
                moved += (size_t) k;
                c->data_frame_sent += (uint32_t) k;
                if (c->data_frame_sent == PROTO_HEADER_SIZE + c->data_frame_len) {
                        c->test_bytes += c->data_frame_len;
                        c->data_frame_len = c->data_frame_sent = 0;
                }
        }
        return true;
}

static void conn_update_events(Conn *c) {
        uint32_t events = 0;

        if (!c->io)
                return;
        if (c->out_len > 0 || c->state == CONN_DOWNLOAD)
                events = EPOLLOUT;
        else if (c->state != CONN_CLOSING)
                events = EPOLLIN;
        (void) sd_event_source_set_io_events(c->io, events);
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Conn *c = userdata;

        if (c->out_len > 0 && !conn_kick(c))
                return 0;
        if (c->out_len == 0 && c->state == CONN_DOWNLOAD) {
                if (!conn_pump_download(c))
                        return 0;
        } else if (c->out_len == 0 && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
                if (!conn_read(c))
                        return 0;
        }
        /* A reply produced by reading goes out at once if the socket takes it. */
        (void) conn_kick(c);
        return 0;
}

static int on_conn_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Conn *c = userdata;
        Responder *r = c->responder;

        switch (c->state) {
        case CONN_HELLO:
        case CONN_AUTH:
                r->stats.closed_timeout++;
                conn_fail(c, PROTO_ERROR_TIMEOUT, "handshake timeout");
                break;
        case CONN_READY: {
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
        case CONN_DOWNLOAD:
                r->stats.closed_timeout++;
                conn_fail(c, PROTO_ERROR_LIMIT, "test ran past its granted time");
                break;
        case CONN_CLOSING:
                /* The error did not leave within LINGER_USEC: the peer does not read. */
                conn_free(c);
                return 0;
        case CONN_RDMA:
                return 0;
        }
        (void) conn_kick(c);
        return 0;
}

static void conn_free(Conn *c) {
        Responder *r;

        if (!c)
                return;
        r = c->responder;
        conn_release_bulk(c);
        c->rdma = rdma_session_join(c->rdma);
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

static int on_rdma_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Responder *r = userdata;
        uint64_t v;

        (void) read(fd, &v, sizeof(v));
        for (Conn *c = r->conns, *next; c; c = next) {
                next = c->next;
                if (c->state == CONN_RDMA && rdma_session_finished(c->rdma))
                        conn_free(c);
        }
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

        r->rdma_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (r->rdma_done_fd < 0)
                return -errno;
        k = sd_event_add_io(event, &r->rdma_done, r->rdma_done_fd, EPOLLIN, on_rdma_done, r);
        if (k < 0)
                return k;

        *ret = TAKE_PTR(r);
        return 0;
}

Responder *responder_free(Responder *r) {
        if (!r)
                return NULL;
        while (r->conns)
                conn_free(r->conns);
        for (size_t i = 0; i < r->n_listeners; i++)
                sd_event_source_disable_unref(r->listeners[i]);
        free(r->listeners);
        sd_event_source_disable_unref(r->accept_pause);
        sd_event_source_disable_unref(r->rdma_done);
        safe_close(r->rdma_done_fd);
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

void responder_get_stats(const Responder *r, ResponderStats *ret) {
        *ret = r->stats;
}
