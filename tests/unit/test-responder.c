/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the responder core, driven over socketpairs on a private sd-event loop. */
#include "unit-test.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/socket.h>

#include "probes/proto-auth.h"
#include "probes/proto-bulk.h"
#include "probes/responder.h"
#include "shared/log.h"
#include "shared/time-util.h"

typedef struct Peer {
        int fd;
        uint8_t in[PROTO_HEADER_SIZE + 256 * 1024];
        size_t in_len;
} Peer;

typedef struct Fixture {
        sd_event *event;
        Responder *responder;
        ResponderLimits limits;
        ProtoKey key;
        bool with_key;
} Fixture;

static Fixture fx;

static void setup(const ResponderLimits *limits, bool with_key) {
        fx = (Fixture) { .limits = limits ? *limits : RESPONDER_LIMITS_DEFAULT, .with_key = with_key };
        fx.key.size = 32;
        memset(fx.key.bytes, 'q', fx.key.size);
        assert_int_equal(sd_event_new(&fx.event), 0);
        assert_int_equal(responder_new(fx.event, &fx.limits, with_key ? &fx.key : NULL, NULL, &fx.responder), 0);
}

static void teardown(void) {
        fx.responder = responder_free(fx.responder);
        fx.event = sd_event_unref(fx.event);
}

static void pump(unsigned rounds) {
        for (unsigned i = 0; i < rounds; i++)
                assert_true(sd_event_run(fx.event, 1000) >= 0);
}

/* A client connection "from" address (an IPv4 string) through a socketpair. */
static Peer *peer_new(const char *address) {
        int sv[2];
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(40000) };
        Peer *p = calloc(1, sizeof(Peer));

        assert_non_null(p);
        assert_int_equal(inet_pton(AF_INET, address, &sa.sin_addr), 1);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        p->fd = sv[0];
        (void) responder_add_connection(fx.responder, sv[1], (struct sockaddr *) &sa);
        return p;
}

static void peer_free(Peer *p) {
        if (!p)
                return;
        safe_close(p->fd);
        free(p);
        pump(3);
}

static void peer_send(Peer *p, const void *buf, size_t n) {
        const uint8_t *b = buf;
        for (unsigned i = 0; n > 0 && i < 10000; i++) {
                ssize_t k = send(p->fd, b, n, MSG_NOSIGNAL);
                if (k < 0 && (errno == EPIPE || errno == ECONNRESET))
                        return;   /* the responder hung up; what it said before is still readable */
                if (k < 0) {
                        assert_int_equal(errno, EAGAIN);
                        pump(1);
                        continue;
                }
                b += k;
                n -= (size_t) k;
        }
        assert_int_equal(n, 0);
}

/* Pumps until a whole frame arrived. Returns its type, or -1 when the responder closed the connection. */
static int peer_recv(Peer *p, ProtoHeader *ret_h, uint8_t **ret_payload) {
        for (unsigned i = 0; i < 5000; i++) {
                if (p->in_len >= PROTO_HEADER_SIZE) {
                        ProtoHeader h;
                        assert_int_equal(proto_header_decode(p->in, 256 * 1024, &h), 0);
                        if (p->in_len >= PROTO_HEADER_SIZE + h.length) {
                                static uint8_t payload[256 * 1024];
                                memcpy(payload, p->in + PROTO_HEADER_SIZE, h.length);
                                memmove(p->in, p->in + PROTO_HEADER_SIZE + h.length,
                                        p->in_len - PROTO_HEADER_SIZE - h.length);
                                p->in_len -= PROTO_HEADER_SIZE + h.length;
                                if (ret_h)
                                        *ret_h = h;
                                if (ret_payload)
                                        *ret_payload = payload;
                                return h.type;
                        }
                }
                ssize_t k = recv(p->fd, p->in + p->in_len, sizeof(p->in) - p->in_len, 0);
                if (k == 0)
                        return -1;
                if (k < 0) {
                        assert_int_equal(errno, EAGAIN);
                        pump(1);
                        continue;
                }
                p->in_len += (size_t) k;
        }
        fail_msg("no frame arrived");
        return -2;
}

static ProtoErrorCode peer_expect_error(Peer *p) {
        ProtoHeader h;
        uint8_t *payload;
        ProtoError e;

        assert_int_equal(peer_recv(p, &h, &payload), PROTO_ERROR);
        assert_int_equal(proto_decode_error(payload, h.length, &e), 0);
        return e.code;
}

static void peer_hello(Peer *p, ProtoHelloReply *ret) {
        uint8_t buf[64];
        ProtoHello hello = { .version = PROTO_VERSION };
        ProtoHeader h;
        uint8_t *payload;
        ProtoHelloReply hr;

        memset(hello.nonce, 0x42, sizeof(hello.nonce));
        peer_send(p, buf, (size_t) proto_encode_hello(buf, sizeof(buf), &hello));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_HELLO_REPLY);
        assert_int_equal(proto_decode_hello_reply(payload, h.length, &hr), 0);
        if (ret)
                *ret = hr;
}

static bool peer_closed(Peer *p) {
        uint8_t b[4096];
        for (unsigned i = 0; i < 3000; i++) {
                ssize_t k = recv(p->fd, b, sizeof(b), 0);
                if (k == 0)
                        return true;
                if (k < 0 && errno != EAGAIN)
                        return true;
                pump(1);
        }
        return false;
}

static void test_hello_echo(void **state) {
        setup(NULL, false);
        Peer *p = peer_new("10.1.0.1");
        ProtoHelloReply hr;
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_ECHO_MAX], *payload;
        ProtoHeader h;

        peer_hello(p, &hr);
        assert_int_equal(hr.version, PROTO_VERSION);
        assert_int_equal(hr.flags & PROTO_HELLO_FLAG_AUTH_REQUIRED, 0);
        assert_true(hr.capabilities & PROTO_CAP_ECHO);
        assert_false(hr.capabilities & PROTO_CAP_RDMA);
        assert_int_equal(hr.max_frame, PROTO_FRAME_MAX_DEFAULT);
        assert_int_equal(hr.observed.s6_addr[15], 1);
        assert_int_equal(hr.observed.s6_addr[12], 10);

        for (size_t n = 0; n <= PROTO_ECHO_MAX; n += 341) {
                uint8_t data[PROTO_ECHO_MAX];
                memset(data, (int) n, sizeof(data));
                peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, data, n));
                assert_int_equal(peer_recv(p, &h, &payload), PROTO_ECHO_REPLY);
                assert_int_equal(h.length, n);
                assert_memory_equal(payload, data, n);
        }
        /* Many requests at once are answered in order, one at a time. */
        for (int i = 0; i < 50; i++)
                peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, &i, sizeof(i)));
        for (int i = 0; i < 50; i++) {
                assert_int_equal(peer_recv(p, &h, &payload), PROTO_ECHO_REPLY);
                assert_memory_equal(payload, &i, sizeof(i));
        }
        peer_free(p);
        ResponderStats st;
        responder_get_stats(fx.responder, &st);
        assert_int_equal(st.connections, 0);
        teardown();
}

/* Round trips go to the echo thread after the first: frames that follow an echo in the same write are
 * served in order by the loop, replies that the client does not read wait for it, and a responder
 * freed while the thread waits for the next request stops it. */
static void test_echo_thread(void **state) {
        setup(NULL, false);
        Peer *p = peer_new("10.1.0.1");
        uint8_t buf[3 * (PROTO_HEADER_SIZE + PROTO_ECHO_MAX)], *payload;
        ProtoHeader h;
        ResponderStats st;
        size_t n;

        peer_hello(p, NULL);
        for (int i = 0; i < 200; i++) {
                peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, &i, sizeof(i)));
                assert_int_equal(peer_recv(p, &h, &payload), PROTO_ECHO_REPLY);
                assert_memory_equal(payload, &i, sizeof(i));
        }
        responder_get_stats(fx.responder, &st);
        assert_int_equal(st.echo_sessions, 1);

        /* Two echoes and a streams request in one write: the thread answers the echoes, the loop the rest. */
        n = (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "a", 1);
        n += (size_t) proto_encode_echo(buf + n, sizeof(buf) - n, PROTO_ECHO_REQUEST, "b", 1);
        n += (size_t) proto_encode_u32(buf + n, sizeof(buf) - n, PROTO_STREAMS_REQUEST, 2);
        peer_send(p, buf, n);
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_ECHO_REPLY);
        assert_int_equal(payload[0], 'a');
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_ECHO_REPLY);
        assert_int_equal(payload[0], 'b');
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_STREAMS_REPLY);

        /* 150 requests of the largest size before reading any reply: more replies than the socket
         * holds, so the thread hands the connection back with one waiting to leave. */
        for (int i = 0; i < 150; i++) {
                uint8_t data[PROTO_ECHO_MAX];
                memset(data, i, sizeof(data));
                peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, data, sizeof(data)));
        }
        for (int i = 0; i < 150; i++) {
                assert_int_equal(peer_recv(p, &h, &payload), PROTO_ECHO_REPLY);
                assert_int_equal(h.length, PROTO_ECHO_MAX);
                assert_int_equal(payload[0], (uint8_t) i);
                assert_int_equal(payload[PROTO_ECHO_MAX - 1], (uint8_t) i);
        }
        responder_get_stats(fx.responder, &st);
        assert_true(st.echo_sessions >= 2);

        /* Freed while the thread waits in recv(): it is stopped, and the client sees the end. */
        peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "c", 1));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_ECHO_REPLY);
        peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "d", 1));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_ECHO_REPLY);
        teardown();
        assert_true(peer_closed(p));
        safe_close(p->fd);
        free(p);
}

static void run_upload(Peer *p, uint64_t bytes, uint32_t frame, ProtoTestResult *ret) {
        uint8_t buf[PROTO_HEADER_SIZE + 64], *payload;
        static uint8_t data[PROTO_HEADER_SIZE + 65536];
        ProtoTestRequest req = { .max_bytes = bytes, .max_usec = 5 * USEC_PER_SEC, .frame_size = frame };
        ProtoTestResult granted;
        ProtoHeader h;

        peer_send(p, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &req));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_UPLOAD_READY);
        assert_int_equal(proto_decode_test_result(payload, h.length, &granted), 0);
        assert_true(granted.bytes == bytes);
        for (uint64_t sent = 0; sent < bytes;) {
                uint32_t n = (uint32_t) MIN((uint64_t) frame, bytes - sent);
                proto_header_encode(data, PROTO_DATA, n);
                peer_send(p, data, PROTO_HEADER_SIZE + n);
                sent += n;
        }
        peer_send(p, buf, (size_t) proto_encode_empty(buf, sizeof(buf), PROTO_UPLOAD_END));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_UPLOAD_RESULT);
        assert_int_equal(proto_decode_test_result(payload, h.length, ret), 0);
}

static void test_upload_download(void **state) {
        setup(NULL, false);
        Peer *p = peer_new("10.1.0.1");
        uint8_t buf[PROTO_HEADER_SIZE + 64], *payload;
        ProtoTestResult res, granted;
        ProtoHeader h;

        peer_hello(p, NULL);
        run_upload(p, 1000000, 65536, &res);
        assert_true(res.bytes == 1000000);

        ProtoTestRequest req = { .max_bytes = 300000, .max_usec = 5 * USEC_PER_SEC, .frame_size = 65536 };
        peer_send(p, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_DOWNLOAD_START, &req));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_DOWNLOAD_READY);
        assert_int_equal(proto_decode_test_result(payload, h.length, &granted), 0);
        uint64_t received = 0;
        int t;
        while ((t = peer_recv(p, &h, &payload)) == PROTO_DATA) {
                assert_true(h.length <= 65536);
                received += h.length;
        }
        assert_int_equal(t, PROTO_DOWNLOAD_END);
        assert_int_equal(proto_decode_test_result(payload, h.length, &res), 0);
        assert_true(received == 300000 && res.bytes == 300000);

        /* The connection is usable again afterwards. */
        peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "x", 1));
        assert_int_equal(peer_recv(p, NULL, NULL), PROTO_ECHO_REPLY);
        peer_free(p);
        teardown();
}

static void test_limits_granted(void **state) {
        ResponderLimits l = RESPONDER_LIMITS_DEFAULT;
        l.max_test_bytes = 100000;
        l.max_test_usec = 200 * USEC_PER_MSEC;
        setup(&l, false);
        Peer *p = peer_new("10.1.0.1");
        uint8_t buf[PROTO_HEADER_SIZE + 64], *payload;
        ProtoTestRequest req = { .max_bytes = UINT64_MAX, .max_usec = UINT64_MAX, .frame_size = 4096 };
        ProtoTestResult granted;
        ProtoHeader h;

        peer_hello(p, NULL);
        peer_send(p, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &req));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_UPLOAD_READY);
        assert_int_equal(proto_decode_test_result(payload, h.length, &granted), 0);
        assert_true(granted.bytes == 100000 && granted.usec == 200 * USEC_PER_MSEC);

        /* Sending more than granted ends the connection with "limit". */
        static uint8_t data[PROTO_HEADER_SIZE + 65536];
        proto_header_encode(data, PROTO_DATA, 65536);
        peer_send(p, data, sizeof(data));
        peer_send(p, data, sizeof(data));
        assert_int_equal(peer_expect_error(p), PROTO_ERROR_LIMIT);
        assert_true(peer_closed(p));
        peer_free(p);
        teardown();
}

static void test_busy(void **state) {
        setup(NULL, false);
        Peer *a = peer_new("10.1.0.1"), *b = peer_new("10.1.0.2");
        uint8_t buf[PROTO_HEADER_SIZE + 64];
        ProtoTestRequest req = { .max_bytes = 1 << 20, .max_usec = 5 * USEC_PER_SEC, .frame_size = 4096 };
        ProtoTestResult res;

        peer_hello(a, NULL);
        peer_hello(b, NULL);
        peer_send(a, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &req));
        assert_int_equal(peer_recv(a, NULL, NULL), PROTO_UPLOAD_READY);
        peer_send(b, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_DOWNLOAD_START, &req));
        assert_int_equal(peer_expect_error(b), PROTO_ERROR_BUSY);
        /* "busy" keeps the connection: echo still works. */
        peer_send(b, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "y", 1));
        assert_int_equal(peer_recv(b, NULL, NULL), PROTO_ECHO_REPLY);

        /* When the owner goes away mid-test, the slot is free again. */
        peer_free(a);
        run_upload(b, 10000, 4096, &res);
        assert_true(res.bytes == 10000);
        peer_free(b);
        teardown();
}

static void test_garbage(void **state) {
        setup(NULL, false);
        static const char *const garbage[] = {
                "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",   /* a TLS ClientHello */
                "LP\x01\x01\0\0\0\x18",                            /* reserved flags set */
                "LP\xee\0\0\0\0\0",                                /* unknown type */
                "LP\x01\0\xff\xff\xff\xff",                        /* a 4 GiB hello */
                "LP\x0a\0\0\0\x10\0",                              /* DATA before hello */
        };
        for (size_t i = 0; i < ELEMENTSOF(garbage); i++) {
                Peer *p = peer_new("10.1.0.1");
                peer_send(p, garbage[i], i == 1 ? 11 : 8 + (i == 0 ? strlen(garbage[0]) - 8 : 0));
                assert_int_equal(peer_expect_error(p), PROTO_ERROR_PROTOCOL);
                assert_true(peer_closed(p));
                peer_free(p);
        }

        /* After hello: an oversized DATA frame or a frame of the wrong kind closes only that connection. */
        Peer *good = peer_new("10.1.0.3");
        peer_hello(good, NULL);
        Peer *p = peer_new("10.1.0.1");
        peer_hello(p, NULL);
        uint8_t hdr[PROTO_HEADER_SIZE];
        proto_header_encode(hdr, PROTO_DATA, PROTO_FRAME_MAX_DEFAULT + 1);
        peer_send(p, hdr, sizeof(hdr));
        assert_int_equal(peer_expect_error(p), PROTO_ERROR_PROTOCOL);
        peer_free(p);
        p = peer_new("10.1.0.1");
        peer_hello(p, NULL);
        uint8_t buf[PROTO_HEADER_SIZE + 64];
        peer_send(p, buf, (size_t) proto_encode_empty(buf, sizeof(buf), PROTO_UPLOAD_END));
        assert_int_equal(peer_expect_error(p), PROTO_ERROR_PROTOCOL);
        peer_free(p);

        /* Random bytes after a valid hello (from many addresses: one would run out of tokens). */
        srand(3);
        for (int i = 0; i < 100; i++) {
                char address[32];
                snprintf(address, sizeof(address), "10.1.1.%d", i);
                p = peer_new(address);
                peer_hello(p, NULL);
                uint8_t junk[64];
                for (size_t j = 0; j < sizeof(junk); j++)
                        junk[j] = (uint8_t) rand();
                peer_send(p, junk, sizeof(junk));
                pump(3);
                peer_free(p);
        }

        peer_send(good, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "z", 1));
        assert_int_equal(peer_recv(good, NULL, NULL), PROTO_ECHO_REPLY);
        peer_free(good);
        ResponderStats st;
        responder_get_stats(fx.responder, &st);
        assert_int_equal(st.connections, 0);
        assert_true(st.closed_protocol >= 7);
        teardown();
}

static void test_auth(void **state) {
        setup(NULL, true);
        uint8_t buf[PROTO_HEADER_SIZE + 64], proof[PROTO_HMAC_SIZE], nonce[PROTO_CLIENT_NONCE_SIZE];
        ProtoHelloReply hr;

        memset(nonce, 0x42, sizeof(nonce));   /* what peer_hello() sends */

        /* Right key. */
        Peer *p = peer_new("10.1.0.1");
        peer_hello(p, &hr);
        assert_true(hr.flags & PROTO_HELLO_FLAG_AUTH_REQUIRED);
        assert_int_equal(proto_auth_compute(&fx.key, hr.nonce, nonce, proof), 0);
        peer_send(p, buf, (size_t) proto_encode_auth(buf, sizeof(buf), proof));
        assert_int_equal(peer_recv(p, NULL, NULL), PROTO_AUTH_OK);
        peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "a", 1));
        assert_int_equal(peer_recv(p, NULL, NULL), PROTO_ECHO_REPLY);
        peer_free(p);

        /* Wrong key. */
        ProtoKey wrong = fx.key;
        wrong.bytes[0] ^= 1;
        p = peer_new("10.1.0.1");
        peer_hello(p, &hr);
        assert_int_equal(proto_auth_compute(&wrong, hr.nonce, nonce, proof), 0);
        peer_send(p, buf, (size_t) proto_encode_auth(buf, sizeof(buf), proof));
        assert_int_equal(peer_expect_error(p), PROTO_ERROR_AUTH_FAILED);
        assert_true(peer_closed(p));
        peer_free(p);

        /* A proof for another connection's nonce is worthless (no replay). */
        Peer *q = peer_new("10.1.0.2");
        ProtoHelloReply hr2;
        p = peer_new("10.1.0.1");
        peer_hello(p, &hr);
        peer_hello(q, &hr2);
        assert_memory_not_equal(hr.nonce, hr2.nonce, sizeof(hr.nonce));
        assert_int_equal(proto_auth_compute(&fx.key, hr.nonce, nonce, proof), 0);
        peer_send(q, buf, (size_t) proto_encode_auth(buf, sizeof(buf), proof));
        assert_int_equal(peer_expect_error(q), PROTO_ERROR_AUTH_FAILED);
        peer_free(q);

        /* Skipping authentication. */
        peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "a", 1));
        assert_int_equal(peer_expect_error(p), PROTO_ERROR_AUTH_REQUIRED);
        peer_free(p);

        ResponderStats st;
        responder_get_stats(fx.responder, &st);
        assert_int_equal(st.auth_failed, 2);
        teardown();
}

static void test_timeouts(void **state) {
        ResponderLimits l = RESPONDER_LIMITS_DEFAULT;
        l.handshake_timeout_usec = 50 * USEC_PER_MSEC;
        l.idle_timeout_usec = 80 * USEC_PER_MSEC;
        setup(&l, false);

        Peer *silent = peer_new("10.1.0.1");
        /* A slow sender: half a header, then nothing. */
        Peer *slow = peer_new("10.1.0.2");
        peer_send(slow, "LP\x01", 3);
        Peer *idle = peer_new("10.1.0.3");
        peer_hello(idle, NULL);
        /* Idle after round trips: the echo thread hands it back before the idle time is up. */
        Peer *echoing = peer_new("10.1.0.4");
        uint8_t buf[PROTO_HEADER_SIZE + 1];
        peer_hello(echoing, NULL);
        for (int i = 0; i < 3; i++) {
                peer_send(echoing, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "e", 1));
                assert_int_equal(peer_recv(echoing, NULL, NULL), PROTO_ECHO_REPLY);
        }

        assert_int_equal(peer_expect_error(silent), PROTO_ERROR_TIMEOUT);
        assert_int_equal(peer_expect_error(slow), PROTO_ERROR_TIMEOUT);
        assert_int_equal(peer_expect_error(idle), PROTO_ERROR_TIMEOUT);
        assert_int_equal(peer_expect_error(echoing), PROTO_ERROR_TIMEOUT);
        assert_true(peer_closed(silent) && peer_closed(slow) && peer_closed(idle) && peer_closed(echoing));
        peer_free(silent);
        peer_free(slow);
        peer_free(idle);
        peer_free(echoing);
        ResponderStats st;
        responder_get_stats(fx.responder, &st);
        assert_int_equal(st.closed_timeout, 4);
        assert_int_equal(st.echo_sessions, 1);
        assert_int_equal(st.connections, 0);
        teardown();
}

static void test_connection_caps(void **state) {
        ResponderLimits l = RESPONDER_LIMITS_DEFAULT;
        l.max_connections = 4;
        l.max_connections_per_source = 2;
        l.burst = 3;
        l.rate = 1;
        setup(&l, false);

        /* Per source: the third connection from one address is refused. */
        Peer *a1 = peer_new("10.2.0.1"), *a2 = peer_new("10.2.0.1"), *a3 = peer_new("10.2.0.1");
        assert_int_equal(peer_expect_error(a3), PROTO_ERROR_TOO_MANY_CONNECTIONS);
        peer_free(a3);
        /* The token bucket (burst 3, 3 taken) refuses the fourth attempt from that address. */
        Peer *a4 = peer_new("10.2.0.1");
        assert_int_equal(peer_expect_error(a4), PROTO_ERROR_RATE_LIMITED);
        peer_free(a4);

        /* Global cap 4: two more sources fill it; a fifth client evicts the oldest unfinished handshake. */
        Peer *b = peer_new("10.2.0.2"), *c = peer_new("10.2.0.3");
        peer_hello(a2, NULL);
        peer_hello(b, NULL);
        peer_hello(c, NULL);
        Peer *d = peer_new("10.2.0.4");
        assert_true(peer_closed(a1));   /* a1 never said hello */
        peer_hello(d, NULL);
        /* Now everyone has completed the handshake: a new client is refused. */
        Peer *e = peer_new("10.2.0.5");
        assert_int_equal(peer_expect_error(e), PROTO_ERROR_TOO_MANY_CONNECTIONS);

        ResponderStats st;
        responder_get_stats(fx.responder, &st);
        assert_int_equal(st.connections, 4);
        assert_int_equal(st.evicted, 1);
        assert_int_equal(st.rejected_rate, 1);
        assert_int_equal(st.rejected_connections, 2);
        peer_free(a1);
        peer_free(a2);
        peer_free(b);
        peer_free(c);
        peer_free(d);
        peer_free(e);
        teardown();
}

static void test_rdma_unsupported(void **state) {
        setup(NULL, false);
        Peer *p = peer_new("10.1.0.1");
        uint8_t buf[PROTO_HEADER_SIZE + 64], *payload;
        ProtoRdmaInfo info = { .qpn = 0x42, .psn = 1, .mtu = 3, .size = 1 << 20 };
        ProtoHeader h;
        ProtoError e;

        peer_hello(p, NULL);
        peer_send(p, buf, (size_t) proto_encode_rdma_info(buf, sizeof(buf), PROTO_RDMA_CONNECT, &info));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_ERROR);
        assert_int_equal(proto_decode_error(payload, h.length, &e), 0);
        assert_int_equal(e.code, PROTO_ERROR_UNSUPPORTED);
        assert_string_equal(e.message, "RDMA is not enabled on this responder");
        /* The connection stays usable. */
        peer_send(p, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "r", 1));
        assert_int_equal(peer_recv(p, NULL, NULL), PROTO_ECHO_REPLY);
        peer_free(p);
        teardown();
}

/* --- parallel streams ---------------------------------------------------------------------------- */

static void streams_request(Peer *p, uint32_t wanted, ProtoStreams *ret) {
        uint8_t buf[PROTO_HEADER_SIZE + 4], *payload;
        ProtoHeader h;

        peer_send(p, buf, (size_t) proto_encode_u32(buf, sizeof(buf), PROTO_STREAMS_REQUEST, wanted));
        assert_int_equal(peer_recv(p, &h, &payload), PROTO_STREAMS_REPLY);
        assert_int_equal(proto_decode_streams_reply(payload, h.length, ret), 0);
}

/* A new connection from address that joins token; returns it, and the index in *ret_index. */
static Peer *stream_join(const char *address, const uint8_t *token, int *ret_type, uint32_t *ret_index) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_STREAMS_TOKEN_SIZE], *payload;
        Peer *p = peer_new(address);
        ProtoHeader h;

        peer_hello(p, NULL);
        peer_send(p, buf, (size_t) proto_encode_join(buf, sizeof(buf), token));
        *ret_type = peer_recv(p, &h, &payload);
        if (*ret_type == PROTO_JOIN_OK)
                assert_int_equal(proto_decode_join_ok(payload, h.length, ret_index), 0);
        return p;
}

static void send_data(Peer *p, uint64_t bytes) {
        static uint8_t data[PROTO_HEADER_SIZE + 16384];
        for (uint64_t sent = 0; sent < bytes;) {
                uint32_t n = (uint32_t) MIN((uint64_t) 16384, bytes - sent);
                proto_header_encode(data, PROTO_DATA, n);
                peer_send(p, data, PROTO_HEADER_SIZE + n);
                sent += n;
        }
}

static void expect_result(Peer *p, ProtoType type, uint64_t bytes) {
        ProtoTestResult res;
        ProtoHeader h;
        uint8_t *payload;

        assert_int_equal(peer_recv(p, &h, &payload), type);
        assert_int_equal(proto_decode_test_result(payload, h.length, &res), 0);
        if (res.bytes != bytes)
                fail_msg("%s: %" PRIu64 " bytes, expected %" PRIu64, proto_type_to_string(type), res.bytes, bytes);
}

static void test_streams(void **state) {
        setup(NULL, false);
        Peer *a = peer_new("10.1.0.1"), *joined[2];
        uint8_t buf[PROTO_HEADER_SIZE + 64];
        ProtoHelloReply hr;
        ProtoStreams st;
        ProtoHeader h;
        uint32_t index;
        int type;

        peer_hello(a, &hr);
        assert_true(hr.capabilities & PROTO_CAP_STREAMS);
        streams_request(a, 8, &st);
        assert_int_equal(st.granted, 8);
        for (unsigned i = 0; i < 2; i++) {
                joined[i] = stream_join("10.1.0.1", st.token, &type, &index);
                assert_int_equal(type, PROTO_JOIN_OK);
                assert_int_equal(index, i + 1);
        }
        /* Asking twice is refused, and the connection stays. */
        peer_send(a, buf, (size_t) proto_encode_u32(buf, sizeof(buf), PROTO_STREAMS_REQUEST, 2));
        assert_int_equal(peer_expect_error(a), PROTO_ERROR_PROTOCOL);

        /* Upload over three streams: one grant, each stream hears its part, the asker the sum. */
        ProtoTestRequest req = { .max_bytes = 300000, .max_usec = 5 * USEC_PER_SEC, .frame_size = 16384, .streams = 3 };
        peer_send(a, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &req));
        assert_int_equal(peer_recv(a, NULL, NULL), PROTO_UPLOAD_READY);
        send_data(a, 100000);
        send_data(joined[0], 120000);
        send_data(joined[1], 80000);
        peer_send(a, buf, (size_t) proto_encode_empty(buf, sizeof(buf), PROTO_UPLOAD_END));
        peer_send(joined[0], buf, (size_t) proto_encode_empty(buf, sizeof(buf), PROTO_UPLOAD_END));
        expect_result(joined[0], PROTO_UPLOAD_RESULT, 120000);
        peer_send(joined[1], buf, (size_t) proto_encode_empty(buf, sizeof(buf), PROTO_UPLOAD_END));
        expect_result(joined[1], PROTO_UPLOAD_RESULT, 80000);
        expect_result(a, PROTO_UPLOAD_RESULT, 300000);

        /* Download over two of them: the grant is shared, every stream ends with what it sent. */
        req = (ProtoTestRequest) { .max_bytes = 500000, .max_usec = 5 * USEC_PER_SEC, .frame_size = 65536, .streams = 2 };
        peer_send(a, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_DOWNLOAD_START, &req));
        assert_int_equal(peer_recv(a, NULL, NULL), PROTO_DOWNLOAD_READY);
        /* Both streams are read at once, as a client does: they may end together. */
        Peer *streams[2] = { a, joined[0] };
        uint64_t mine[2] = {}, total = 0;
        bool ended[2] = {};
        for (unsigned round = 0; round < 20000 && !(ended[0] && ended[1]); round++) {
                pump(1);
                for (unsigned i = 0; i < 2; i++) {
                        Peer *s = streams[i];
                        ssize_t k = ended[i] ? 0 : recv(s->fd, s->in + s->in_len, sizeof(s->in) - s->in_len, MSG_DONTWAIT);
                        if (k > 0)
                                s->in_len += (size_t) k;
                        while (!ended[i] && s->in_len >= PROTO_HEADER_SIZE) {
                                assert_int_equal(proto_header_decode(s->in, 256 * 1024, &h), 0);
                                if (s->in_len < PROTO_HEADER_SIZE + h.length)
                                        break;
                                if (h.type == PROTO_DATA)
                                        mine[i] += h.length;
                                else {
                                        ProtoTestResult res;
                                        assert_int_equal(h.type, PROTO_DOWNLOAD_END);
                                        assert_int_equal(proto_decode_test_result(s->in + PROTO_HEADER_SIZE, h.length, &res), 0);
                                        assert_true(res.bytes == mine[i]);
                                        ended[i] = true;
                                }
                                memmove(s->in, s->in + PROTO_HEADER_SIZE + h.length, s->in_len - PROTO_HEADER_SIZE - h.length);
                                s->in_len -= PROTO_HEADER_SIZE + h.length;
                        }
                }
        }
        assert_true(ended[0] && ended[1]);
        total = mine[0] + mine[1];
        assert_true(total == 500000);

        /* More streams than joined: refused, nothing starts, the connection stays. */
        req.streams = 4;
        peer_send(a, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &req));
        assert_int_equal(peer_expect_error(a), PROTO_ERROR_PROTOCOL);
        peer_send(a, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "x", 1));
        assert_int_equal(peer_recv(a, NULL, NULL), PROTO_ECHO_REPLY);

        /* A joined stream says nothing of its own. */
        peer_send(joined[1], buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "x", 1));
        assert_int_equal(peer_expect_error(joined[1]), PROTO_ERROR_PROTOCOL);
        assert_true(peer_closed(joined[1]));

        /* A wrong token, and the right one from another address, join nothing. */
        uint8_t wrong[PROTO_STREAMS_TOKEN_SIZE];
        memcpy(wrong, st.token, sizeof(wrong));
        wrong[0] ^= 1;
        Peer *x = stream_join("10.1.0.1", wrong, &type, &index);
        assert_int_equal(type, PROTO_ERROR);
        assert_true(peer_closed(x));
        Peer *y = stream_join("10.1.0.2", st.token, &type, &index);
        assert_int_equal(type, PROTO_ERROR);
        assert_true(peer_closed(y));

        /* The streams go with the connection that asked for them. */
        peer_free(a);
        assert_true(peer_closed(joined[0]));
        ResponderStats stats;
        responder_get_stats(fx.responder, &stats);
        assert_true(stats.joined == 2);
        peer_free(joined[0]);
        peer_free(joined[1]);
        peer_free(x);
        peer_free(y);
        teardown();
}

/* An upload over several streams is taken in by the pump's threads: what a client does wrong on a
 * stream is answered as the loop answers it, and the threads let the connections go back to it. */
static void test_streams_upload_errors(void **state) {
        setup(NULL, false);
        uint8_t buf[PROTO_HEADER_SIZE + 64];
        ResponderStats stats;

        for (int round = 0; round < 4; round++) {
                Peer *a = peer_new("10.1.0.1"), *b;
                ProtoStreams st;
                uint32_t index;
                int type;

                peer_hello(a, NULL);
                streams_request(a, 2, &st);
                b = stream_join("10.1.0.1", st.token, &type, &index);
                assert_int_equal(type, PROTO_JOIN_OK);
                ProtoTestRequest req = { .max_bytes = 1 << 20, .max_usec = 5 * USEC_PER_SEC, .frame_size = 16384, .streams = 2 };
                peer_send(a, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &req));
                assert_int_equal(peer_recv(a, NULL, NULL), PROTO_UPLOAD_READY);
                send_data(a, 20000);
                send_data(b, 20000);
                switch (round) {
                case 0: /* a frame other than DATA on a joined stream */
                        peer_send(b, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "x", 1));
                        assert_int_equal(peer_expect_error(a), PROTO_ERROR_PROTOCOL);
                        break;
                case 1: /* a malformed header on the asking stream */
                        peer_send(a, "XX\x0a\x00\x00\x00\x00\x01", PROTO_HEADER_SIZE);
                        assert_int_equal(peer_expect_error(a), PROTO_ERROR_PROTOCOL);
                        break;
                case 2: /* a joined stream that goes */
                        safe_close(b->fd);
                        break;
                case 3: /* and the good case after them: both streams hear their part, the asker the sum */
                        peer_send(b, buf, (size_t) proto_encode_empty(buf, sizeof(buf), PROTO_UPLOAD_END));
                        expect_result(b, PROTO_UPLOAD_RESULT, 20000);
                        peer_send(a, buf, (size_t) proto_encode_empty(buf, sizeof(buf), PROTO_UPLOAD_END));
                        expect_result(a, PROTO_UPLOAD_RESULT, 40000);
                        peer_send(a, buf, (size_t) proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, "y", 1));
                        assert_int_equal(peer_recv(a, NULL, NULL), PROTO_ECHO_REPLY);
                        break;
                }
                if (round < 3)
                        assert_true(peer_closed(a));
                peer_free(a);
                if (b->fd >= 0)
                        assert_true(peer_closed(b));
                peer_free(b);
        }
        responder_get_stats(fx.responder, &stats);
        assert_int_equal(stats.closed_protocol, 1);
        assert_int_equal(stats.connections, 0);
        teardown();
}

static void test_streams_limits(void **state) {
        ResponderLimits l = RESPONDER_LIMITS_DEFAULT;
        l.max_streams = 3;
        l.max_test_bytes = 100000;
        setup(&l, false);
        Peer *a = peer_new("10.1.0.1"), *b, *c, *d;
        uint8_t buf[PROTO_HEADER_SIZE + 64];
        ProtoStreams st;
        uint32_t index;
        int type;

        /* Fewer than asked: what the limit allows. */
        peer_hello(a, NULL);
        streams_request(a, 8, &st);
        assert_int_equal(st.granted, 3);
        b = stream_join("10.1.0.1", st.token, &type, &index);
        c = stream_join("10.1.0.1", st.token, &type, &index);
        assert_int_equal(type, PROTO_JOIN_OK);
        d = stream_join("10.1.0.1", st.token, &type, &index);
        assert_int_equal(type, PROTO_ERROR);
        assert_true(peer_closed(d));

        /* The grant is for all streams together: more, on any of them, ends every one. */
        ProtoTestRequest req = { .max_bytes = UINT64_MAX, .max_usec = 5 * USEC_PER_SEC, .frame_size = 16384, .streams = 3 };
        peer_send(a, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &req));
        assert_int_equal(peer_recv(a, NULL, NULL), PROTO_UPLOAD_READY);
        send_data(a, 40000);
        send_data(b, 40000);
        send_data(c, 40000);
        /* Whichever stream's frame crossed the line, the asker hears why. */
        assert_int_equal(peer_expect_error(a), PROTO_ERROR_LIMIT);
        assert_true(peer_closed(a) && peer_closed(b) && peer_closed(c));
        peer_free(a);
        peer_free(b);
        peer_free(c);
        peer_free(d);

        /* The per-source connection cap bounds the streams too; a closed stream fails the test (the
         * grant is large enough that the streams are still sending when one goes). */
        l.max_connections_per_source = 2;
        l.max_test_bytes = UINT64_C(1) << 30;
        teardown();
        setup(&l, false);
        a = peer_new("10.1.0.1");
        peer_hello(a, NULL);
        streams_request(a, 8, &st);
        assert_int_equal(st.granted, 2);
        b = stream_join("10.1.0.1", st.token, &type, &index);
        assert_int_equal(type, PROTO_JOIN_OK);
        req.streams = 2;
        peer_send(a, buf, (size_t) proto_encode_test_request(buf, sizeof(buf), PROTO_DOWNLOAD_START, &req));
        assert_int_equal(peer_recv(a, NULL, NULL), PROTO_DOWNLOAD_READY);
        peer_free(b);
        assert_true(peer_closed(a));
        peer_free(a);

        /* Without streams, none are offered. */
        l.max_streams = 1;
        teardown();
        setup(&l, false);
        a = peer_new("10.1.0.1");
        ProtoHelloReply hr;
        peer_hello(a, &hr);
        assert_false(hr.capabilities & PROTO_CAP_STREAMS);
        streams_request(a, 4, &st);
        assert_int_equal(st.granted, 1);
        peer_free(a);
        teardown();
}

static void test_limits_validate(void **state) {
        ResponderLimits l = RESPONDER_LIMITS_DEFAULT;
        const char *problem = NULL;
        Responder *r = NULL;
        sd_event *e = NULL;

        assert_int_equal(responder_limits_validate(&l, &problem), 0);
        l.max_frame = 100;
        assert_int_equal(responder_limits_validate(&l, &problem), -EINVAL);
        assert_non_null(problem);
        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(responder_new(e, &l, NULL, NULL, &r), -EINVAL);
        l = RESPONDER_LIMITS_DEFAULT;
        l.max_connections = 0;
        assert_int_equal(responder_limits_validate(&l, NULL), -EINVAL);
        assert_null(responder_free(NULL));
        sd_event_unref(e);
}

int main(void) {
        log_set_max_level(LOG_WARNING);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hello_echo),
                cmocka_unit_test(test_echo_thread),
                cmocka_unit_test(test_upload_download),
                cmocka_unit_test(test_limits_granted),
                cmocka_unit_test(test_busy),
                cmocka_unit_test(test_garbage),
                cmocka_unit_test(test_auth),
                cmocka_unit_test(test_timeouts),
                cmocka_unit_test(test_connection_caps),
                cmocka_unit_test(test_rdma_unsupported),
                cmocka_unit_test(test_limits_validate),
                cmocka_unit_test(test_streams),
                cmocka_unit_test(test_streams_limits),
                cmocka_unit_test(test_streams_upload_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
