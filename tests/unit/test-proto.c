/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the measurement protocol: frame header, messages, auth, statistics, addresses. */
#include "unit-test.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "probes/net-client.h"
#include "probes/proto-auth.h"
#include "probes/proto-bulk.h"
#include "probes/proto.h"
#include "probes/rtt-stats.h"
#include "shared/time-util.h"

static void test_header_roundtrip(void **state) {
        uint8_t buf[PROTO_HEADER_SIZE];
        ProtoHeader h;

        for (int t = 1; t < _PROTO_TYPE_MAX; t++) {
                uint32_t lo, hi;
                assert_int_equal(proto_type_payload_limits((ProtoType) t, PROTO_FRAME_MAX_DEFAULT, &lo, &hi), 0);
                assert_non_null(proto_type_to_string((ProtoType) t));
                proto_header_encode(buf, (ProtoType) t, lo);
                assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
                assert_int_equal(h.type, t);
                assert_int_equal(h.length, lo);
                proto_header_encode(buf, (ProtoType) t, hi);
                assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
                assert_int_equal(h.length, hi);
                /* One past the type's maximum is refused before anything is read. */
                proto_header_encode(buf, (ProtoType) t, hi + 1);
                assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EMSGSIZE);
                if (lo > 0) {
                        proto_header_encode(buf, (ProtoType) t, lo - 1);
                        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EMSGSIZE);
                }
        }
}

static void test_header_garbage(void **state) {
        uint8_t buf[PROTO_HEADER_SIZE];
        ProtoHeader h;

        proto_header_encode(buf, PROTO_DATA, 4096);
        buf[0] = 'X';
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EBADMSG);
        proto_header_encode(buf, PROTO_DATA, 4096);
        buf[3] = 1;   /* reserved flags */
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EBADMSG);
        proto_header_encode(buf, PROTO_DATA, 4096);
        buf[2] = 0;
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EBADMSG);
        buf[2] = _PROTO_TYPE_MAX;
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EBADMSG);
        buf[2] = 0xff;
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EBADMSG);

        /* DATA is held to the receiver's maximum frame size, whatever the sender claims. */
        proto_header_encode(buf, PROTO_DATA, 0xffffffffU);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EMSGSIZE);
        proto_header_encode(buf, PROTO_DATA, 8193);
        assert_int_equal(proto_header_decode(buf, 8192, &h), -EMSGSIZE);
        proto_header_encode(buf, PROTO_DATA, 0);
        assert_int_equal(proto_header_decode(buf, 8192, &h), -EMSGSIZE);

        /* Random headers: every outcome is a clean accept within bounds or a refusal. */
        srand(1);
        for (int i = 0; i < 200000; i++) {
                for (size_t j = 0; j < sizeof(buf); j++)
                        buf[j] = (uint8_t) rand();
                if (i % 2) {
                        buf[0] = 'L';
                        buf[1] = 'P';
                        buf[3] = 0;
                }
                int r = proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h);
                if (r == 0) {
                        uint32_t lo, hi;
                        assert_int_equal(proto_type_payload_limits(h.type, PROTO_FRAME_MAX_DEFAULT, &lo, &hi), 0);
                        assert_true(h.length >= lo && h.length <= hi);
                        assert_true(h.length <= PROTO_FRAME_MAX_DEFAULT);
                } else
                        assert_true(r == -EBADMSG || r == -EMSGSIZE);
        }
}

static void test_messages_roundtrip(void **state) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        ProtoHeader h;

        ProtoHello hello, hello2;
        memset(&hello, 0, sizeof(hello));
        memset(&hello2, 0, sizeof(hello2));
        hello.version = 1, hello.capabilities = 7;
        memset(hello.nonce, 0xab, sizeof(hello.nonce));
        assert_int_equal(proto_encode_hello(buf, sizeof(buf), &hello), PROTO_HEADER_SIZE + 24);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
        assert_int_equal(proto_decode_hello(buf + PROTO_HEADER_SIZE, h.length, &hello2), 0);
        assert_memory_equal(&hello, &hello2, sizeof(hello));
        assert_int_equal(proto_encode_hello(buf, 10, &hello), -ENOBUFS);
        /* A longer hello from a later version is accepted; version 0 is not a version. */
        uint8_t longer[100] = { 0, 2 };
        assert_int_equal(proto_decode_hello(longer, sizeof(longer), &hello2), 0);
        assert_int_equal(hello2.version, 2);
        longer[1] = 0;
        assert_int_equal(proto_decode_hello(longer, sizeof(longer), &hello2), -EBADMSG);
        assert_int_equal(proto_decode_hello(longer, 23, &hello2), -EBADMSG);

        ProtoHelloReply hr, hr2;
        memset(&hr, 0, sizeof(hr));
        memset(&hr2, 0, sizeof(hr2));
        hr.version = 1, hr.flags = 1, hr.capabilities = 15, hr.max_frame = 65536, hr.observed_port = 4242;
        memset(hr.nonce, 0x11, sizeof(hr.nonce));
        hr.observed.s6_addr[15] = 1;
        assert_int_equal(proto_encode_hello_reply(buf, sizeof(buf), &hr), PROTO_HEADER_SIZE + 64);
        assert_int_equal(proto_decode_hello_reply(buf + PROTO_HEADER_SIZE, 64, &hr2), 0);
        assert_memory_equal(&hr, &hr2, sizeof(hr));
        hr.max_frame = 12;
        proto_encode_hello_reply(buf, sizeof(buf), &hr);
        assert_int_equal(proto_decode_hello_reply(buf + PROTO_HEADER_SIZE, 64, &hr2), -EBADMSG);

        ProtoError e;
        char long_message[600];
        memset(long_message, 'x', sizeof(long_message) - 1);
        long_message[sizeof(long_message) - 1] = '\0';
        ssize_t n = proto_encode_error(buf, sizeof(buf), PROTO_ERROR_BUSY, long_message);
        assert_int_equal(n, PROTO_HEADER_SIZE + 4 + PROTO_ERROR_MESSAGE_MAX);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
        assert_int_equal(proto_decode_error(buf + PROTO_HEADER_SIZE, h.length, &e), 0);
        assert_int_equal(e.code, PROTO_ERROR_BUSY);
        assert_int_equal(strlen(e.message), PROTO_ERROR_MESSAGE_MAX);
        n = proto_encode_error(buf, sizeof(buf), PROTO_ERROR_LIMIT, "a\nb\x01\xff");
        assert_int_equal(proto_decode_error(buf + PROTO_HEADER_SIZE, (size_t) n - PROTO_HEADER_SIZE, &e), 0);
        assert_string_equal(e.message, "a?b??");
        assert_string_equal(proto_error_code_to_string(PROTO_ERROR_AUTH_FAILED), "auth-failed");
        assert_int_equal(proto_error_code_from_string("busy"), PROTO_ERROR_BUSY);
        assert_int_equal(proto_error_code_from_string("nope"), 0);
        assert_null(proto_error_code_to_string(0));
        assert_null(proto_error_code_to_string(_PROTO_ERROR_MAX));

        ProtoTestRequest tr, tr2;
        memset(&tr, 0, sizeof(tr));
        memset(&tr2, 0, sizeof(tr2));
        tr.max_bytes = UINT64_MAX, tr.max_usec = 1, tr.frame_size = 4096, tr.streams = 1;
        proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &tr);
        /* One stream is written as version 1 wrote its reserved field, which reads as one stream. */
        assert_int_equal(buf[PROTO_HEADER_SIZE + 23], 0);
        assert_int_equal(proto_decode_test_request(buf + PROTO_HEADER_SIZE, 24, &tr2), 0);
        assert_memory_equal(&tr, &tr2, sizeof(tr));
        tr.streams = PROTO_STREAMS_MAX;
        proto_encode_test_request(buf, sizeof(buf), PROTO_DOWNLOAD_START, &tr);
        assert_int_equal(proto_decode_test_request(buf + PROTO_HEADER_SIZE, 24, &tr2), 0);
        assert_int_equal(tr2.streams, PROTO_STREAMS_MAX);
        buf[PROTO_HEADER_SIZE + 23] = PROTO_STREAMS_MAX + 1;
        assert_int_equal(proto_decode_test_request(buf + PROTO_HEADER_SIZE, 24, &tr2), -EBADMSG);
        tr.streams = 1;
        tr.max_usec = 0;
        proto_encode_test_request(buf, sizeof(buf), PROTO_UPLOAD_START, &tr);
        assert_int_equal(proto_decode_test_request(buf + PROTO_HEADER_SIZE, 24, &tr2), -EBADMSG);

        ProtoTestResult res = { .bytes = 123456789012ULL, .usec = 42 }, res2;
        assert_int_equal(proto_encode_test_result(buf, sizeof(buf), PROTO_UPLOAD_RESULT, &res), PROTO_HEADER_SIZE + 16);
        assert_int_equal(proto_decode_test_result(buf + PROTO_HEADER_SIZE, 16, &res2), 0);
        assert_true(res2.bytes == res.bytes && res2.usec == res.usec && !res2.have_stats);
        assert_int_equal(proto_decode_test_result(buf + PROTO_HEADER_SIZE, 15, &res2), -EBADMSG);

        /* The responder's side (PROTO_CAP_TEST_STATS) rides on results only; READY keeps its size. */
        res = (ProtoTestResult) { .bytes = 1, .usec = 2, .have_stats = true, .cpu_usec = 3, .threads = 4, .cpus = 5,
                                  .if_rx_bytes = 6, .if_tx_bytes = PROTO_COUNTER_UNKNOWN, .if_rx_packets = 8,
                                  .if_tx_packets = 9, .retrans_bytes = 10 };
        assert_int_equal(proto_encode_test_result(buf, sizeof(buf), PROTO_DOWNLOAD_END, &res), PROTO_HEADER_SIZE + 72);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_MIN, &h), 0);
        assert_int_equal(h.length, 72);
        assert_int_equal(proto_decode_test_result(buf + PROTO_HEADER_SIZE, 72, &res2), 0);
        assert_true(res2.have_stats && res2.bytes == 1 && res2.usec == 2 && res2.cpu_usec == 3 && res2.threads == 4 &&
                    res2.cpus == 5 && res2.if_rx_bytes == 6 && res2.if_tx_bytes == PROTO_COUNTER_UNKNOWN &&
                    res2.if_rx_packets == 8 && res2.if_tx_packets == 9 && res2.retrans_bytes == 10);
        assert_int_equal(proto_decode_test_result(buf + PROTO_HEADER_SIZE, 40, &res2), -EBADMSG);
        assert_int_equal(proto_encode_test_result(buf, sizeof(buf), PROTO_UPLOAD_READY, &res), PROTO_HEADER_SIZE + 16);
        /* A version 1 peer's limits: READY is 16 bytes exactly, results 16 or 72. */
        proto_header_encode(buf, PROTO_UPLOAD_READY, 72);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_MIN, &h), -EMSGSIZE);
        proto_header_encode(buf, PROTO_UPLOAD_RESULT, 73);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_MIN, &h), -EMSGSIZE);

        /* memset: padding must compare equal too. */
        ProtoRdmaInfo ri, ri2;
        memset(&ri, 0, sizeof(ri));
        memset(&ri2, 0, sizeof(ri2));
        ri.qpn = 0x123456, ri.psn = 0xabcdef, ri.rkey = 0xdeadbeef, ri.lid = 7, ri.mtu = 5, ri.gid_index = 3;
        ri.addr = 0x7f0000001000ULL, ri.size = 8 << 20;
        for (size_t i = 0; i < sizeof(ri.gid); i++)
                ri.gid[i] = (uint8_t) i;
        proto_encode_rdma_info(buf, sizeof(buf), PROTO_RDMA_CONNECT, &ri);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
        assert_int_equal(proto_decode_rdma_info(buf + PROTO_HEADER_SIZE, h.length, &ri2), 0);
        assert_memory_equal(&ri, &ri2, sizeof(ri));
        ri.qpn = 0x1000000;   /* QP numbers are 24 bits */
        proto_encode_rdma_info(buf, sizeof(buf), PROTO_RDMA_CONNECT, &ri);
        assert_int_equal(proto_decode_rdma_info(buf + PROTO_HEADER_SIZE, h.length, &ri2), -EBADMSG);
        ri.qpn = 1;
        ri.mtu = 6;
        proto_encode_rdma_info(buf, sizeof(buf), PROTO_RDMA_CONNECT, &ri);
        assert_int_equal(proto_decode_rdma_info(buf + PROTO_HEADER_SIZE, h.length, &ri2), -EBADMSG);

        ProtoRdmaTest rt, rt2;
        memset(&rt, 0, sizeof(rt));
        memset(&rt2, 0, sizeof(rt2));
        rt.op = PROTO_RDMA_OP_SEND_LATENCY, rt.max_usec = 5, rt.iterations = 9, rt.message_size = 64;
        proto_encode_rdma_test(buf, sizeof(buf), &rt);
        assert_int_equal(proto_decode_rdma_test(buf + PROTO_HEADER_SIZE, 28, &rt2), 0);
        assert_memory_equal(&rt, &rt2, sizeof(rt));
        buf[PROTO_HEADER_SIZE] = 9;  /* unknown op */
        assert_int_equal(proto_decode_rdma_test(buf + PROTO_HEADER_SIZE, 28, &rt2), -EBADMSG);

        assert_int_equal(proto_encode_echo(buf, sizeof(buf), PROTO_ECHO_REQUEST, buf, PROTO_ECHO_MAX + 1), -EMSGSIZE);

        /* Streams: the request, the reply with its token, a join and its index. */
        uint32_t v;
        n = proto_encode_u32(buf, sizeof(buf), PROTO_STREAMS_REQUEST, 8);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
        assert_int_equal(h.type, PROTO_STREAMS_REQUEST);
        assert_int_equal(proto_decode_streams_request(buf + PROTO_HEADER_SIZE, h.length, &v), 0);
        assert_int_equal(v, 8);
        for (uint32_t bad_count = 0; bad_count < 20; bad_count += 9) {
                proto_encode_u32(buf, sizeof(buf), PROTO_STREAMS_REQUEST, bad_count);
                assert_int_equal(proto_decode_streams_request(buf + PROTO_HEADER_SIZE, 4, &v), -EBADMSG);
        }
        proto_encode_u32(buf, sizeof(buf), PROTO_JOIN_OK, 7);
        assert_int_equal(proto_decode_join_ok(buf + PROTO_HEADER_SIZE, 4, &v), 0);
        assert_int_equal(v, 7);
        proto_encode_u32(buf, sizeof(buf), PROTO_JOIN_OK, 8); /* index 0 is the asking connection, 8 is past */
        assert_int_equal(proto_decode_join_ok(buf + PROTO_HEADER_SIZE, 4, &v), -EBADMSG);
        assert_int_equal(proto_decode_join_ok(buf + PROTO_HEADER_SIZE, 3, &v), -EBADMSG);

        ProtoStreams st = { .granted = 3 }, st2;
        for (size_t i = 0; i < sizeof(st.token); i++)
                st.token[i] = (uint8_t) (0xa0 + i);
        n = proto_encode_streams_reply(buf, sizeof(buf), &st);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
        assert_int_equal(proto_decode_streams_reply(buf + PROTO_HEADER_SIZE, h.length, &st2), 0);
        assert_memory_equal(&st, &st2, sizeof(st));
        st.granted = 0;
        proto_encode_streams_reply(buf, sizeof(buf), &st);
        assert_int_equal(proto_decode_streams_reply(buf + PROTO_HEADER_SIZE, h.length, &st2), -EBADMSG);

        uint8_t token[PROTO_STREAMS_TOKEN_SIZE];
        n = proto_encode_join(buf, sizeof(buf), st.token);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
        assert_int_equal(h.length, PROTO_STREAMS_TOKEN_SIZE);
        assert_int_equal(proto_decode_join(buf + PROTO_HEADER_SIZE, h.length, token), 0);
        assert_memory_equal(token, st.token, sizeof(token));
        /* The header holds every streams frame to its one size. */
        proto_header_encode(buf, PROTO_JOIN, PROTO_STREAMS_TOKEN_SIZE + 1);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EMSGSIZE);
        proto_header_encode(buf, PROTO_STREAMS_REPLY, 4);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EMSGSIZE);
        assert_string_equal(proto_type_to_string(PROTO_JOIN_OK), "join-ok");
}

static void test_decoders_garbage(void **state) {
        uint8_t p[PROTO_CONTROL_MAX];
        union {
                ProtoHello h;
                ProtoHelloReply hr;
                ProtoError e;
                ProtoTestRequest tr;
                ProtoTestResult res;
                ProtoRdmaInfo ri;
                ProtoRdmaTest rt;
        } u;

        srand(2);
        for (int i = 0; i < 20000; i++) {
                size_t n = (size_t) rand() % 80;
                for (size_t j = 0; j < n; j++)
                        p[j] = (uint8_t) rand();
                /* Only the return value matters: no decoder may read past n or crash. */
                (void) proto_decode_hello(p, n, &u.h);
                (void) proto_decode_hello_reply(p, n, &u.hr);
                if (proto_decode_error(p, n, &u.e) == 0)
                        assert_true(strlen(u.e.message) <= n - 4);
                (void) proto_decode_test_request(p, n, &u.tr);
                (void) proto_decode_test_result(p, n, &u.res);
                (void) proto_decode_rdma_info(p, n, &u.ri);
                (void) proto_decode_rdma_test(p, n, &u.rt);
        }
}

static void test_auth(void **state) {
        ProtoKey key = { .size = 20 }, other = { .size = 20 };
        uint8_t sn[PROTO_NONCE_SIZE], cn[PROTO_CLIENT_NONCE_SIZE], proof[PROTO_HMAC_SIZE], proof2[PROTO_HMAC_SIZE];

        memset(key.bytes, 'k', key.size);
        memset(other.bytes, 'k', other.size);
        other.bytes[19] = 'K';
        assert_int_equal(proto_random_bytes(sn, sizeof(sn)), 0);
        assert_int_equal(proto_random_bytes(cn, sizeof(cn)), 0);

        assert_int_equal(proto_auth_compute(&key, sn, cn, proof), 0);
        assert_int_equal(proto_auth_compute(&key, sn, cn, proof2), 0);
        assert_memory_equal(proof, proof2, sizeof(proof));
        assert_true(proto_auth_verify(&key, sn, cn, proof));
        assert_false(proto_auth_verify(&other, sn, cn, proof));
        for (size_t bit = 0; bit < 8 * sizeof(proof); bit += 37) {
                memcpy(proof2, proof, sizeof(proof));
                proof2[bit / 8] ^= (uint8_t) (1U << (bit % 8));
                assert_false(proto_auth_verify(&key, sn, cn, proof2));
        }
        cn[0] ^= 1;
        assert_false(proto_auth_verify(&key, sn, cn, proof));

        /* A known answer: HMAC-SHA256 with key "k"x20 over "linkprobe-auth-v1" || 0x00*32 || 0x00*16. */
        memset(sn, 0, sizeof(sn));
        memset(cn, 0, sizeof(cn));
        assert_int_equal(proto_auth_compute(&key, sn, cn, proof), 0);
        char hex[65];
        for (size_t i = 0; i < sizeof(proof); i++)
                sprintf(hex + 2 * i, "%02x", proof[i]);
        /* Computed independently with Python's hmac module. */
        assert_string_equal(hex, "90acf3d5574ee83f17699c206713fcc4dc0ff2ccc064b0d02b381c52195bd672");
}

static int write_key(const char *dir, const char *name, const char *content, mode_t mode) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, content, strlen(content));
        close(fd);
        (void) chmod(path, mode);
        return n < 0 ? -errno : 0;
}

static void test_key_load(void **state) {
        char dir[] = "/tmp/lp-test-key-XXXXXX";
        ProtoKey key;

        assert_non_null(mkdtemp(dir));
        int dfd = open(dir, O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);

        assert_int_equal(write_key(dir, "good", "0123456789abcdef\n", 0600), 0);
        assert_int_equal(proto_key_load(dfd, "good", &key), 0);
        assert_int_equal(key.size, 16);
        assert_memory_equal(key.bytes, "0123456789abcdef", 16);
        assert_int_equal(write_key(dir, "short", "0123456789abcde\n", 0600), 0);
        assert_int_equal(proto_key_load(dfd, "short", &key), -EINVAL);
        assert_int_equal(write_key(dir, "world", "0123456789abcdef", 0644), 0);
        assert_int_equal(proto_key_load(dfd, "world", &key), -EPERM);
        assert_int_equal(write_key(dir, "group", "0123456789abcdef", 0640), 0);
        assert_int_equal(proto_key_load(dfd, "group", &key), 0);
        char big[1100];
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        assert_int_equal(write_key(dir, "long", big, 0600), 0);
        assert_int_equal(proto_key_load(dfd, "long", &key), -EINVAL);
        assert_int_equal(proto_key_load(dfd, "missing", &key), -ENOENT);
        assert_int_equal(proto_key_load(dfd, ".", &key), -EINVAL);

        const char *names[] = { "good", "short", "world", "group", "long" };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                unlinkat(dfd, names[i], 0);
        close(dfd);
        rmdir(dir);
}

static void test_rtt_stats(void **state) {
        RttStats s;
        const double odd[] = { 10, 30, 20, 50, 40 };
        assert_int_equal(rtt_stats_compute(odd, ELEMENTSOF(odd), &s), 0);
        assert_true(s.median_usec == 30);
        assert_true(s.min_usec == 10 && s.max_usec == 50 && s.mean_usec == 30);
        /* |30-10| + |20-30| + |50-20| + |40-50| = 70 over 4 differences */
        assert_true(s.jitter_usec == 17.5);
        /* RFC 3550: J += (|D| - J) / 16 */
        double j = 0;
        const double d[] = { 20, 10, 30, 10 };
        for (size_t i = 0; i < ELEMENTSOF(d); i++)
                j += (d[i] - j) / 16;
        assert_true(s.jitter_rfc3550_usec == j);
        assert_true(odd[0] == 10);   /* the input keeps its order */

        const double even[] = { 4, 1, 3, 2 };
        assert_int_equal(rtt_stats_compute(even, ELEMENTSOF(even), &s), 0);
        assert_true(s.median_usec == 2.5);

        const double one[] = { 7 };
        assert_int_equal(rtt_stats_compute(one, 1, &s), 0);
        assert_true(s.median_usec == 7 && s.jitter_usec == 0 && s.jitter_rfc3550_usec == 0);
        assert_int_equal(rtt_stats_compute(one, 0, &s), -EINVAL);

        assert_true(goodput_gbps(125000000, 1000000) == 1.0);
        assert_true(goodput_gbps(1, 0) == 0);

        /* The ramp's slices: a burst shorter than half the step does not move the median. */
        double slices[] = { 20, 95, 21, 19, 100, 20, 22 };
        assert_true(samples_median(slices, ELEMENTSOF(slices)) == 21);
        double pair[] = { 3, 1 };
        assert_true(samples_median(pair, 2) == 2);
        assert_true(samples_median(pair, 0) == 0);
}

static void test_parse_sink(void **state) {
        NetTarget t = {};
        char buf[128];

        assert_int_equal(net_target_parse_sink(&t, "10.0.0.2"), 0);
        assert_string_equal(net_format_address((struct sockaddr *) &t.sink, true, buf, sizeof(buf)), "10.0.0.2:7471");
        assert_int_equal(net_target_parse_sink(&t, "10.0.0.2:9"), 0);
        assert_string_equal(net_format_address((struct sockaddr *) &t.sink, true, buf, sizeof(buf)), "10.0.0.2:9");
        assert_int_equal(net_target_parse_sink(&t, "2001:db8::1"), 0);
        assert_string_equal(net_format_address((struct sockaddr *) &t.sink, true, buf, sizeof(buf)), "[2001:db8::1]:7471");
        assert_int_equal(net_target_parse_sink(&t, "[2001:db8::1]:80"), 0);
        assert_string_equal(net_format_address((struct sockaddr *) &t.sink, true, buf, sizeof(buf)), "[2001:db8::1]:80");
        assert_int_equal(net_target_parse_sink(&t, "[::1]"), 0);
        assert_string_equal(net_format_address((struct sockaddr *) &t.sink, false, buf, sizeof(buf)), "::1");
        assert_int_equal(net_target_parse_sink(&t, "fe80::1%lo"), 0);
        assert_string_equal(net_format_address((struct sockaddr *) &t.sink, false, buf, sizeof(buf)), "fe80::1%lo");

        static const char *const bad[] = { "", "host.example", "10.0.0.2:", "10.0.0.2:0", "10.0.0.2:65536",
                                           "10.0.0.2:x", "[::1", "[::1]x", "[::1]:", "10.0.0.256", "1.2.3.4 ",
                                           "[10.0.0.1]:1:2", "fe80::1%nosuchif0" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (net_target_parse_sink(&t, bad[i]) >= 0)
                        fail_msg("accepted \"%s\"", bad[i]);
        assert_int_equal(net_target_parse_source(&t, "127.0.0.1"), 0);
        assert_int_equal(net_target_parse_source(&t, "nope"), -EINVAL);
        assert_int_equal(net_target_set_interface(&t, "lo"), 0);
        assert_int_equal(net_target_set_interface(&t, "nosuchif0"), -ENODEV);
        assert_int_equal(net_target_set_interface(&t, "a/b"), -EINVAL);
        assert_int_equal(net_target_set_interface(&t, "0123456789abcdef"), -EINVAL);
}

/* Busy asks again soon, rate-limited later (once the token bucket refilled), anything else never; the
 * retries run out. */
static void test_retry_wait(void **state) {
        NetClient c = NET_CLIENT_NULL;
        uint64_t retries = 0, w;

        c.remote_error.code = PROTO_ERROR_BUSY;
        for (int i = 0; i < 50; i++) {
                retries = 0;
                w = net_client_retry_wait(&c, -EREMOTEIO, &retries, 3);
                assert_true(w >= 100 * USEC_PER_MSEC && w < 300 * USEC_PER_MSEC);
                assert_int_equal(retries, 1);
        }
        c.remote_error.code = PROTO_ERROR_RATE_LIMITED;
        w = net_client_retry_wait(&c, -EREMOTEIO, &retries, 3);
        assert_true(w >= 500 * USEC_PER_MSEC && w < 1000 * USEC_PER_MSEC);
        assert_int_equal(retries, 2);
        assert_true(net_client_retry_wait(&c, -EREMOTEIO, &retries, 3) > 0);
        assert_int_equal(net_client_retry_wait(&c, -EREMOTEIO, &retries, 3), 0);
        assert_int_equal(retries, 3);

        retries = 0;
        assert_int_equal(net_client_retry_wait(&c, -ECONNREFUSED, &retries, 3), 0);
        c.remote_error.code = PROTO_ERROR_AUTH_FAILED;
        assert_int_equal(net_client_retry_wait(&c, -EREMOTEIO, &retries, 3), 0);
        assert_int_equal(retries, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_header_roundtrip),
                cmocka_unit_test(test_header_garbage),
                cmocka_unit_test(test_messages_roundtrip),
                cmocka_unit_test(test_decoders_garbage),
                cmocka_unit_test(test_auth),
                cmocka_unit_test(test_key_load),
                cmocka_unit_test(test_rtt_stats),
                cmocka_unit_test(test_parse_sink),
                cmocka_unit_test(test_retry_wait),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
