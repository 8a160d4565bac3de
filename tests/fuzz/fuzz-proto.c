/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the measurement protocol's decoders (probes/proto.c) as the responder and the probes use
 * them: the input is a stream of frames, each header checked against a maximum frame size taken from
 * the first bytes, each payload handed to the decoder of its type. What a decoder accepts must be
 * within the protocol's bounds, and encoding it again must decode to the same message. */
#include "probes/proto-bulk.h"
#include "probes/proto-identity.h"
#include "probes/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The largest control frame the encoders may write. */
#define FRAME_BUF (PROTO_HEADER_SIZE + PROTO_CONTROL_MAX)

static void check_hello(const uint8_t *p, size_t n) {
        ProtoHello a, b;
        uint8_t buf[FRAME_BUF];

        if (proto_decode_hello(p, n, &a) < 0)
                return;
        if (a.version == 0)
                abort();
        ssize_t k = proto_encode_hello(buf, sizeof(buf), &a);
        if (k < PROTO_HEADER_SIZE || proto_decode_hello(buf + PROTO_HEADER_SIZE, (size_t) k - PROTO_HEADER_SIZE, &b) < 0 ||
            a.version != b.version || a.capabilities != b.capabilities || memcmp(a.nonce, b.nonce, sizeof(a.nonce)) != 0)
                abort();
}

static void check_hello_reply(const uint8_t *p, size_t n) {
        ProtoHelloReply a, b;
        uint8_t buf[FRAME_BUF];

        if (proto_decode_hello_reply(p, n, &a) < 0)
                return;
        if (a.version == 0 || a.max_frame < PROTO_FRAME_MAX_MIN || a.max_frame > PROTO_FRAME_MAX_MAX)
                abort();
        ssize_t k = proto_encode_hello_reply(buf, sizeof(buf), &a);
        if (k < PROTO_HEADER_SIZE ||
            proto_decode_hello_reply(buf + PROTO_HEADER_SIZE, (size_t) k - PROTO_HEADER_SIZE, &b) < 0 ||
            a.version != b.version || a.flags != b.flags || a.capabilities != b.capabilities ||
            a.max_frame != b.max_frame || memcmp(a.nonce, b.nonce, sizeof(a.nonce)) != 0 ||
            memcmp(&a.observed, &b.observed, sizeof(a.observed)) != 0 || a.observed_port != b.observed_port)
                abort();
}

static void check_error(const uint8_t *p, size_t n) {
        ProtoError a, b;
        uint8_t buf[FRAME_BUF];
        size_t len;

        if (proto_decode_error(p, n, &a) < 0)
                return;
        /* Printable ASCII only, terminated, bounded: it goes into the probe's JSON as it is. */
        len = strnlen(a.message, sizeof(a.message));
        if (len > PROTO_ERROR_MESSAGE_MAX)
                abort();
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) a.message[i] < 0x20 || (unsigned char) a.message[i] > 0x7e)
                        abort();
        (void) proto_error_code_to_string(a.code);
        ssize_t k = proto_encode_error(buf, sizeof(buf), a.code, a.message);
        if (k < PROTO_HEADER_SIZE || proto_decode_error(buf + PROTO_HEADER_SIZE, (size_t) k - PROTO_HEADER_SIZE, &b) < 0 ||
            (uint16_t) a.code != (uint16_t) b.code || strcmp(a.message, b.message) != 0)
                abort();
}

static void check_test_request(const uint8_t *p, size_t n, ProtoType type) {
        ProtoTestRequest a, b;
        uint8_t buf[FRAME_BUF];

        if (proto_decode_test_request(p, n, &a) < 0)
                return;
        if (a.max_bytes == 0 || a.max_usec == 0 || a.frame_size == 0)
                abort();
        ssize_t k = proto_encode_test_request(buf, sizeof(buf), type, &a);
        if (k < PROTO_HEADER_SIZE ||
            proto_decode_test_request(buf + PROTO_HEADER_SIZE, (size_t) k - PROTO_HEADER_SIZE, &b) < 0 ||
            a.max_bytes != b.max_bytes || a.max_usec != b.max_usec || a.frame_size != b.frame_size)
                abort();
}

static void check_test_result(const uint8_t *p, size_t n, ProtoType type) {
        ProtoTestResult a, b;
        uint8_t buf[FRAME_BUF];

        if (proto_decode_test_result(p, n, &a) < 0)
                return;
        ssize_t k = proto_encode_test_result(buf, sizeof(buf), type, &a);
        if (k < PROTO_HEADER_SIZE ||
            proto_decode_test_result(buf + PROTO_HEADER_SIZE, (size_t) k - PROTO_HEADER_SIZE, &b) < 0 ||
            a.bytes != b.bytes || a.usec != b.usec)
                abort();
}

static void check_rdma_info(const uint8_t *p, size_t n, ProtoType type) {
        ProtoRdmaInfo a, b;
        uint8_t buf[FRAME_BUF];

        if (proto_decode_rdma_info(p, n, &a) < 0)
                return;
        if (a.qpn == 0 || a.qpn > 0xffffff || a.psn > 0xffffff || a.mtu < 1 || a.mtu > 5 || a.size == 0)
                abort();
        ssize_t k = proto_encode_rdma_info(buf, sizeof(buf), type, &a);
        if (k < PROTO_HEADER_SIZE ||
            proto_decode_rdma_info(buf + PROTO_HEADER_SIZE, (size_t) k - PROTO_HEADER_SIZE, &b) < 0 ||
            a.qpn != b.qpn || a.psn != b.psn || a.rkey != b.rkey || a.lid != b.lid || a.mtu != b.mtu ||
            a.gid_index != b.gid_index || memcmp(a.gid, b.gid, sizeof(a.gid)) != 0 || a.addr != b.addr ||
            a.size != b.size)
                abort();
}

static void check_rdma_test(const uint8_t *p, size_t n) {
        ProtoRdmaTest a, b;
        uint8_t buf[FRAME_BUF];

        if (proto_decode_rdma_test(p, n, &a) < 0)
                return;
        if (a.op <= 0 || a.op >= _PROTO_RDMA_OP_MAX || a.max_usec == 0 || a.message_size == 0)
                abort();
        ssize_t k = proto_encode_rdma_test(buf, sizeof(buf), &a);
        if (k < PROTO_HEADER_SIZE || proto_decode_rdma_test(buf + PROTO_HEADER_SIZE, (size_t) k - PROTO_HEADER_SIZE, &b) < 0 ||
            a.op != b.op || a.max_bytes != b.max_bytes || a.max_usec != b.max_usec || a.iterations != b.iterations ||
            a.message_size != b.message_size)
                abort();
}

/* An identity that decodes is one we would send: a valid hostname, counts within bounds, and it encodes
 * to the same bytes (the proof aside, which depends on a key). */
static void check_identity(const uint8_t *p, size_t n) {
        NodeIdentity a, b;
        uint8_t buf[FRAME_BUF], proof[PROTO_HMAC_SIZE], nonce[PROTO_NONCE_SIZE] = {};

        if (proto_decode_identity(p, n, &a, proof) < 0)
                return;
        if (!node_hostname_is_valid(a.hostname, strlen(a.hostname)) || a.n_thunderbolt > NODE_IDENTITY_THUNDERBOLT_MAX ||
            a.n_rdma > NODE_IDENTITY_RDMA_MAX || node_id_is_null(a.node_id))
                abort();
        ssize_t k = proto_encode_identity(buf, sizeof(buf), &a, NULL, nonce, nonce);
        if (k != (ssize_t) (PROTO_HEADER_SIZE + n) || memcmp(buf + PROTO_HEADER_SIZE, p, n - PROTO_HMAC_SIZE) != 0 ||
            proto_decode_identity(buf + PROTO_HEADER_SIZE, n, &b, proof) < 0 || strcmp(a.hostname, b.hostname) != 0)
                abort();
}

static void check_payload(ProtoType type, const uint8_t *p, size_t n) {
        /* Every decoder sees every payload too: they must refuse what is not theirs by size alone. */
        check_hello(p, n);
        check_hello_reply(p, n);
        check_error(p, n);
        check_test_request(p, n, type == PROTO_DOWNLOAD_START ? PROTO_DOWNLOAD_START : PROTO_UPLOAD_START);
        check_test_result(p, n, PROTO_UPLOAD_RESULT);
        check_rdma_info(p, n, type == PROTO_RDMA_CONNECT_REPLY ? PROTO_RDMA_CONNECT_REPLY : PROTO_RDMA_CONNECT);
        check_rdma_test(p, n);
        check_identity(p, n);
        (void) proto_type_to_string(type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint32_t max_frame;

        if (size < 1)
                return 0;
        /* The receiver's limit: anything from below the minimum to above the maximum. */
        max_frame = (uint32_t) data[0] << 12;
        data++, size--;

        while (size >= PROTO_HEADER_SIZE) {
                ProtoHeader h;
                uint32_t lo, hi;
                int r = proto_header_decode(data, max_frame, &h);

                if (r < 0) {
                        if (r != -EBADMSG && r != -EMSGSIZE)
                                abort();
                        /* Skip a byte and try again, so later frames in the input are reached too. */
                        data++, size--;
                        continue;
                }
                if (proto_type_payload_limits(h.type, max_frame, &lo, &hi) < 0 || h.length < lo || h.length > hi)
                        abort();
                /* Anything but DATA fits the fixed control buffer the receivers use. */
                if (h.type != PROTO_DATA && h.length > PROTO_CONTROL_MAX)
                        abort();
                data += PROTO_HEADER_SIZE, size -= PROTO_HEADER_SIZE;
                size_t n = MIN((size_t) h.length, size);
                if (n == h.length)
                        check_payload(h.type, data, n);
                data += n, size -= n;
        }
        return 0;
}
