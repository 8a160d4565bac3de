/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>

#include "frame-io.h"
#include "net-client.h"
#include "proto-bulk.h"
#include "proto-identity.h"
#include "shared/parse-util.h"
#include "shared/peer-address.h"
#include "shared/time-util.h"

int net_target_parse_sink(NetTarget *t, const char *s) {
        PeerAddress a;
        int r;

        r = peer_address_parse(s, 0, &a, NULL);
        if (r < 0)
                return r;
        return peer_address_to_sockaddr(&a, &t->sink, &t->sink_len);
}

int net_target_parse_source(NetTarget *t, const char *s) {
        PeerAddress a;
        int r;

        r = peer_address_parse_host(s, &a);
        if (r < 0)
                return r;
        a.port = 0; /* whatever port the kernel picks */
        return peer_address_to_sockaddr(&a, &t->source, &t->source_len);
}

int net_target_set_interface(NetTarget *t, const char *ifname) {
        if (isempty(ifname) || strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/'))
                return -EINVAL;
        if (if_nametoindex(ifname) == 0)
                return -ENODEV;
        strncpy(t->interface, ifname, sizeof(t->interface) - 1);
        return 0;
}

char *net_format_address(const struct sockaddr *sa, bool with_port, char *buf, size_t size) {
        char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2] = "?";
        uint16_t port = 0;

        if (sa->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) (const void *) sa;
                inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
                port = ntohs(in->sin_port);
        } else if (sa->sa_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) (const void *) sa;
                char ifname[IF_NAMESIZE];
                /* IPv4-mapped addresses read better as what they are. */
                if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
                        inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof(host));
                else
                        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
                if (in6->sin6_scope_id != 0 && if_indextoname(in6->sin6_scope_id, ifname))
                        snprintf(host + strlen(host), sizeof(host) - strlen(host), "%%%s", ifname);
                port = ntohs(in6->sin6_port);
                if (with_port && !IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
                        snprintf(buf, size, "[%s]:%u", host, port);
                        return buf;
                }
        }
        if (with_port)
                snprintf(buf, size, "%s:%u", host, port);
        else
                snprintf(buf, size, "%s", host);
        return buf;
}

uint64_t net_client_retry_wait(const NetClient *c, int r, uint64_t *retries, uint64_t max_retries) {
        uint64_t base, spread;
        uint32_t rnd = 0;

        if (r != -EREMOTEIO || *retries >= max_retries)
                return 0;
        if (c->remote_error.code == PROTO_ERROR_BUSY)
                base = 100 * USEC_PER_MSEC, spread = 200 * USEC_PER_MSEC;
        else if (c->remote_error.code == PROTO_ERROR_RATE_LIMITED)
                base = 500 * USEC_PER_MSEC, spread = 500 * USEC_PER_MSEC;
        else
                return 0;
        (*retries)++;
        (void) proto_random_bytes(&rnd, sizeof(rnd));
        return base + rnd % spread;
}

void net_client_done(NetClient *c) {
        c->fd = safe_close(c->fd);
        free(c->data);
        c->data = NULL;
}

/* An ERROR frame in place of the reply: -EREMOTEIO with c->remote_error set, or -EPROTO. */
static int remote_error(NetClient *c, const uint8_t *payload, uint32_t length) {
        if (proto_decode_error(payload, length, &c->remote_error) < 0)
                return -EPROTO;
        return -EREMOTEIO;
}

int net_client_read_reply(NetClient *c, ProtoType expect, uint8_t reply[static PROTO_CONTROL_MAX], uint32_t *ret_length,
                      uint64_t deadline) {
        ProtoHeader h;
        int r;

        r = fio_read_frame(c->fd, c->max_frame ?: PROTO_FRAME_MAX_DEFAULT, &h, reply, deadline);
        if (r == -EBADMSG || r == -EMSGSIZE)
                return -EPROTO;
        if (r < 0)
                return r;
        if (h.type == PROTO_ERROR)
                return remote_error(c, reply, h.length);
        if (h.type != expect)
                return -EPROTO;
        if (ret_length)
                *ret_length = h.length;
        return 0;
}

int net_client_request(NetClient *c, const uint8_t *buf, size_t n, ProtoType expect, uint8_t reply[static PROTO_CONTROL_MAX],
                       uint32_t *ret_length, uint64_t deadline) {
        int r = fio_write_all(c->fd, buf, n, deadline);
        if (r < 0)
                return r;
        return net_client_read_reply(c, expect, reply, ret_length, deadline);
}

int net_client_read_result(NetClient *c, ProtoType expect, ProtoTestResult *ret, uint64_t deadline) {
        uint8_t reply[PROTO_CONTROL_MAX];
        uint32_t length;
        int r;

        r = net_client_read_reply(c, expect, reply, &length, deadline);
        if (r < 0)
                return r;
        if (ret && proto_decode_test_result(reply, length, ret) < 0)
                return -EPROTO;
        return 0;
}

int net_client_request_result(NetClient *c, const uint8_t *buf, size_t n, ProtoType expect, ProtoTestResult *ret,
                              uint64_t deadline) {
        int r = fio_write_all(c->fd, buf, n, deadline);
        if (r < 0)
                return r;
        return net_client_read_result(c, expect, ret, deadline);
}

static int connect_socket(const NetTarget *t, uint64_t deadline, int *ret) {
        _cleanup_(closep) int fd = -EBADF;
        int one = 1, r;

        fd = socket(t->sink.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);
        if (fd < 0)
                return -errno;
        if (!isempty(t->interface) &&
            setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, t->interface, (socklen_t) strlen(t->interface)) < 0)
                return -errno;
        if (t->source_len > 0) {
                if (t->source.ss_family != t->sink.ss_family)
                        return -EAFNOSUPPORT;
                if (bind(fd, (const struct sockaddr *) &t->source, t->source_len) < 0)
                        return -errno;
        }
        /* RTT samples are single small frames: Nagle would hold them back. */
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

        if (connect(fd, (const struct sockaddr *) &t->sink, t->sink_len) < 0) {
                if (errno != EINPROGRESS)
                        return -errno;
                r = fio_wait(fd, POLLOUT, deadline);
                if (r < 0)
                        return r;
                int err = 0;
                socklen_t len = sizeof(err);
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                        return -errno;
                if (err != 0)
                        return -err;
        }
        *ret = TAKE_FD(fd);
        return 0;
}

/* Asks who the responder's node is; a proof is checked against the session's nonces when there is a key. */
static int request_identity(NetClient *c, const ProtoKey *key, const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                            const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE], uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE], reply[PROTO_CONTROL_MAX], proof[PROTO_HMAC_SIZE];
        uint32_t length;
        ssize_t n;
        int r;

        n = proto_encode_empty(buf, sizeof(buf), PROTO_IDENTITY_REQUEST);
        if (n < 0)
                return (int) n;
        r = net_client_request(c, buf, (size_t) n, PROTO_IDENTITY, reply, &length, deadline);
        if (r == -EREMOTEIO && c->remote_error.code == PROTO_ERROR_UNSUPPORTED)
                return 0; /* offered, then not there after all: a node without one */
        if (r < 0)
                return r;
        if (proto_decode_identity(reply, length, &c->identity, proof) < 0)
                return -EPROTO;
        c->have_identity = true;
        c->identity_authenticated = key && c->authenticated &&
                                    proto_identity_verify(key, server_nonce, client_nonce, reply, length);
        return 0;
}

int net_client_connect(NetClient *c, const NetTarget *t, const ProtoKey *key, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], reply[PROTO_CONTROL_MAX];
        ProtoHello hello = { .version = PROTO_VERSION,
                             .capabilities = PROTO_CAP_ECHO | PROTO_CAP_UPLOAD | PROTO_CAP_DOWNLOAD | PROTO_CAP_RDMA |
                                             PROTO_CAP_IDENTITY | PROTO_CAP_STREAMS | PROTO_CAP_TEST_STATS };
        ProtoHelloReply hr;
        uint32_t length;
        ssize_t n;
        int r;

        if (!c->data) {
                c->data = malloc(PROTO_FRAME_MAX_DEFAULT);
                if (!c->data)
                        return -ENOMEM;
                memset(c->data, 0x5a, PROTO_FRAME_MAX_DEFAULT);
        }

        r = connect_socket(t, deadline, &c->fd);
        if (r < 0)
                return r;
        socklen_t len = sizeof(c->local);
        if (getsockname(c->fd, (struct sockaddr *) &c->local, &len) < 0)
                return -errno;

        r = proto_random_bytes(hello.nonce, sizeof(hello.nonce));
        if (r < 0)
                return r;
        n = proto_encode_hello(buf, sizeof(buf), &hello);
        if (n < 0)
                return (int) n;
        r = net_client_request(c, buf, (size_t) n, PROTO_HELLO_REPLY, reply, &length, deadline);
        if (r < 0)
                return r;
        if (proto_decode_hello_reply(reply, length, &hr) < 0)
                return -EPROTO;
        if (hr.version < PROTO_VERSION_MIN || hr.version > PROTO_VERSION) {
                c->remote_error = (ProtoError) { .code = PROTO_ERROR_VERSION };
                snprintf(c->remote_error.message, sizeof(c->remote_error.message),
                         "responder chose protocol version %u, we speak %u..%u", hr.version, PROTO_VERSION_MIN,
                         PROTO_VERSION);
                return -EREMOTEIO;
        }
        c->version = hr.version;
        c->capabilities = hr.capabilities;
        c->max_frame = hr.max_frame;

        struct sockaddr_in6 obs = { .sin6_family = AF_INET6, .sin6_addr = hr.observed, .sin6_port = htons(hr.observed_port) };
        memcpy(&c->observed, &obs, sizeof(obs));

        if (hr.flags & PROTO_HELLO_FLAG_AUTH_REQUIRED) {
                uint8_t proof[PROTO_HMAC_SIZE];
                if (!key)
                        return -EKEYREJECTED;
                r = proto_auth_compute(key, hr.nonce, hello.nonce, proof);
                if (r < 0)
                        return r;
                n = proto_encode_auth(buf, sizeof(buf), proof);
                if (n < 0)
                        return (int) n;
                r = net_client_request(c, buf, (size_t) n, PROTO_AUTH_OK, reply, NULL, deadline);
                if (r < 0)
                        return r;
                c->authenticated = true;
        }
        if ((hr.capabilities & PROTO_CAP_IDENTITY) && !c->skip_identity)
                return request_identity(c, key, hr.nonce, hello.nonce, deadline);
        return 0;
}

/* Blocking reads of exactly n bytes; the receive timeout set by the caller bounds each call. */
static int recv_blocking(int fd, void *buf, size_t n) {
        uint8_t *p = buf;
        while (n > 0) {
                ssize_t k = recv(fd, p, n, MSG_WAITALL);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EAGAIN ? -ETIME : -errno;
                }
                if (k == 0)
                        return -ECONNRESET;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static int echo_one(NetClient *c, const uint8_t *frame, size_t n, const uint8_t *payload, size_t payload_size) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], *reply = buf + PROTO_HEADER_SIZE;
        size_t have;
        ProtoHeader h;
        ssize_t k;
        int r;

        if (send(c->fd, frame, n, MSG_NOSIGNAL) != (ssize_t) n)
                return errno == EAGAIN ? -ETIME : -errno;
        /* The reply's size is known: one recv() takes header and payload, which arrive together, so
         * a round trip costs the responder's answer and two system calls here, as sockperf's does. */
        do
                k = recv(c->fd, buf, PROTO_HEADER_SIZE + payload_size, 0);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return errno == EAGAIN ? -ETIME : -errno;
        if (k == 0)
                return -ECONNRESET;
        have = (size_t) k;
        if (have < PROTO_HEADER_SIZE) {
                r = recv_blocking(c->fd, buf + have, PROTO_HEADER_SIZE - have);
                if (r < 0)
                        return r;
                have = PROTO_HEADER_SIZE;
        }
        if (proto_header_decode(buf, c->max_frame, &h) < 0 || h.type == PROTO_DATA || h.length > PROTO_CONTROL_MAX ||
            have > PROTO_HEADER_SIZE + h.length)
                return -EPROTO;
        r = recv_blocking(c->fd, buf + have, PROTO_HEADER_SIZE + h.length - have);
        if (r < 0)
                return r;
        if (h.type == PROTO_ERROR)
                return remote_error(c, reply, h.length);
        if (h.type != PROTO_ECHO_REPLY || h.length != payload_size || memcmp(reply, payload, payload_size) != 0)
                return -EPROTO;
        return 0;
}

int net_client_echo(NetClient *c, size_t count, double *ret_samples, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + 16];
        int flags, r = 0;

        /* Round trips are timed in microseconds, so each costs as few system calls as possible: a
         * blocking socket with a receive timeout instead of recv-EAGAIN-poll-recv. */
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        if (now >= deadline)
                return -ETIME;
        uint64_t left = deadline == UINT64_MAX ? 3600 * USEC_PER_SEC : deadline - now;
        struct timeval tv = { .tv_sec = (time_t) (left / USEC_PER_SEC), .tv_usec = (suseconds_t) (left % USEC_PER_SEC) };
        flags = fcntl(c->fd, F_GETFL);
        if (flags < 0 || fcntl(c->fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
                return -errno;
        if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
            setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
                r = -errno;

        for (size_t i = 0; r >= 0 && i < count; i++) {
                uint64_t seq = i, t0 = now_usec(CLOCK_MONOTONIC);
                uint8_t payload[16];
                struct timespec a, b;

                memcpy(payload, &seq, 8);
                memcpy(payload + 8, &t0, 8);
                ssize_t n = proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, payload, sizeof(payload));
                if (n < 0) {
                        r = (int) n;
                        break;
                }
                clock_gettime(CLOCK_MONOTONIC, &a);
                r = echo_one(c, buf, (size_t) n, payload, sizeof(payload));
                clock_gettime(CLOCK_MONOTONIC, &b);
                if (r >= 0)
                        ret_samples[i] = (double) (b.tv_sec - a.tv_sec) * 1e6 + (double) (b.tv_nsec - a.tv_nsec) / 1e3;
        }

        if (fcntl(c->fd, F_SETFL, flags) < 0 && r >= 0)
                r = -errno;
        return r;
}

const char *net_client_error_name(const NetClient *c, int r) {
        switch (-r) {
        case ETIME:
                return "deadline";
        case EPROTO:
                return "protocol";
        case EKEYREJECTED:
                return "auth-required";
        case EREMOTEIO: {
                const char *s = proto_error_code_to_string(c->remote_error.code);
                return s ?: "remote-error";
        }
        default: {
                const char *s = strerrorname_np(-r);
                return s ?: "error";
        }
        }
}
