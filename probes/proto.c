/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "proto.h"
#include "proto-wire.h"

#include "shared/string-table.h"

#define HELLO_SIZE 24
#define HELLO_MAX 256           /* later versions may append fields; version 1 ignores them */
#define HELLO_REPLY_SIZE 64

static const char *const type_names[_PROTO_TYPE_MAX] = {
        [PROTO_HELLO] = "hello",
        [PROTO_HELLO_REPLY] = "hello-reply",
        [PROTO_AUTH] = "auth",
        [PROTO_AUTH_OK] = "auth-ok",
        [PROTO_ERROR] = "error",
        [PROTO_ECHO_REQUEST] = "echo-request",
        [PROTO_ECHO_REPLY] = "echo-reply",
        [PROTO_UPLOAD_START] = "upload-start",
        [PROTO_UPLOAD_READY] = "upload-ready",
        [PROTO_DATA] = "data",
        [PROTO_UPLOAD_END] = "upload-end",
        [PROTO_UPLOAD_RESULT] = "upload-result",
        [PROTO_DOWNLOAD_START] = "download-start",
        [PROTO_DOWNLOAD_READY] = "download-ready",
        [PROTO_DOWNLOAD_END] = "download-end",
        [PROTO_RDMA_CONNECT] = "rdma-connect",
        [PROTO_RDMA_CONNECT_REPLY] = "rdma-connect-reply",
        [PROTO_RDMA_TEST] = "rdma-test",
        [PROTO_RDMA_READY] = "rdma-ready",
        [PROTO_RDMA_RESULT] = "rdma-result",
        [PROTO_IDENTITY_REQUEST] = "identity-request",
        [PROTO_IDENTITY] = "identity",
        [PROTO_STREAMS_REQUEST] = "streams-request",
        [PROTO_STREAMS_REPLY] = "streams-reply",
        [PROTO_JOIN] = "join",
        [PROTO_JOIN_OK] = "join-ok",
};

/* These names are what the probes print as error names, so they are stable. */
static const char *const error_names[_PROTO_ERROR_MAX] = {
        [PROTO_ERROR_PROTOCOL] = "protocol",
        [PROTO_ERROR_VERSION] = "protocol-version",
        [PROTO_ERROR_AUTH_FAILED] = "auth-failed",
        [PROTO_ERROR_AUTH_REQUIRED] = "auth-required",
        [PROTO_ERROR_BUSY] = "busy",
        [PROTO_ERROR_RATE_LIMITED] = "rate-limited",
        [PROTO_ERROR_TOO_MANY_CONNECTIONS] = "too-many-connections",
        [PROTO_ERROR_UNSUPPORTED] = "unsupported",
        [PROTO_ERROR_LIMIT] = "limit",
        [PROTO_ERROR_TIMEOUT] = "timeout",
        [PROTO_ERROR_INTERNAL] = "internal",
};

/* 0 is neither a type nor an error code: the tables leave it NULL. */
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(proto_type, ProtoType, type_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(proto_error_code, ProtoErrorCode, error_names)

ProtoErrorCode proto_error_code_from_string(const char *s) {
        int i = string_table_lookup_from_string(error_names, ELEMENTSOF(error_names), s);
        return i < 0 ? 0 : (ProtoErrorCode) i;
}

int proto_type_payload_limits(ProtoType type, uint32_t max_frame, uint32_t *ret_min, uint32_t *ret_max) {
        uint32_t lo, hi;

        switch (type) {
        case PROTO_HELLO:
                lo = HELLO_SIZE, hi = HELLO_MAX;
                break;
        case PROTO_HELLO_REPLY:
                lo = hi = HELLO_REPLY_SIZE;
                break;
        case PROTO_AUTH:
                lo = hi = PROTO_HMAC_SIZE;
                break;
        case PROTO_AUTH_OK:
        case PROTO_UPLOAD_END:
        case PROTO_RDMA_READY:
        case PROTO_IDENTITY_REQUEST:
                lo = hi = 0;
                break;
        case PROTO_ERROR:
                lo = 4, hi = 4 + PROTO_ERROR_MESSAGE_MAX;
                break;
        case PROTO_ECHO_REQUEST:
        case PROTO_ECHO_REPLY:
                lo = 0, hi = PROTO_ECHO_MAX;
                break;
        case PROTO_UPLOAD_START:
        case PROTO_DOWNLOAD_START:
                lo = hi = TEST_REQUEST_SIZE;
                break;
        case PROTO_UPLOAD_READY:
        case PROTO_DOWNLOAD_READY:
        case PROTO_RDMA_RESULT:
                lo = hi = TEST_RESULT_SIZE;
                break;
        case PROTO_UPLOAD_RESULT:
        case PROTO_DOWNLOAD_END:
                lo = TEST_RESULT_SIZE, hi = TEST_RESULT_STATS_SIZE;
                break;
        case PROTO_DATA:
                lo = 1, hi = max_frame;
                break;
        case PROTO_RDMA_CONNECT:
        case PROTO_RDMA_CONNECT_REPLY:
                lo = hi = RDMA_INFO_SIZE;
                break;
        case PROTO_RDMA_TEST:
                lo = hi = RDMA_TEST_SIZE;
                break;
        case PROTO_IDENTITY:
                lo = PROTO_IDENTITY_MIN, hi = PROTO_IDENTITY_MAX;
                break;
        case PROTO_STREAMS_REQUEST:
        case PROTO_JOIN_OK:
                lo = hi = 4;
                break;
        case PROTO_STREAMS_REPLY:
                lo = hi = 4 + PROTO_STREAMS_TOKEN_SIZE;
                break;
        case PROTO_JOIN:
                lo = hi = PROTO_STREAMS_TOKEN_SIZE;
                break;
        case _PROTO_TYPE_MAX:
        default:
                /* Values off the wire: anything not listed is not a type. */
                return -EBADMSG;
        }
        *ret_min = lo;
        *ret_max = hi;
        return 0;
}


void proto_header_encode(uint8_t buf[static PROTO_HEADER_SIZE], ProtoType type, uint32_t length) {
        uint8_t *p = buf;
        p = put_u8(p, PROTO_MAGIC0);
        p = put_u8(p, PROTO_MAGIC1);
        p = put_u8(p, (uint8_t) type);
        p = put_u8(p, 0);
        put_u32(p, length);
}

int proto_header_decode(const uint8_t buf[static PROTO_HEADER_SIZE], uint32_t max_frame, ProtoHeader *ret) {
        uint32_t length, lo, hi;
        int r;

        if (buf[0] != PROTO_MAGIC0 || buf[1] != PROTO_MAGIC1 || buf[3] != 0)
                return -EBADMSG;
        get_u32(buf + 4, &length);

        r = proto_type_payload_limits((ProtoType) buf[2], max_frame, &lo, &hi);
        if (r < 0)
                return r;
        if (length < lo || length > hi || length > MAX(max_frame, (uint32_t) PROTO_CONTROL_MAX))
                return -EMSGSIZE;

        *ret = (ProtoHeader) { .type = (ProtoType) buf[2], .length = length };
        return 0;
}


uint8_t *proto_frame_begin(uint8_t *buf, size_t size, ProtoType type, size_t payload) {
        if (size < PROTO_HEADER_SIZE + payload)
                return NULL;
        proto_header_encode(buf, type, (uint32_t) payload);
        return buf + PROTO_HEADER_SIZE;
}

ssize_t proto_encode_hello(uint8_t *buf, size_t size, const ProtoHello *m) {
        uint8_t *p = proto_frame_begin(buf, size, PROTO_HELLO, HELLO_SIZE);
        if (!p)
                return -ENOBUFS;
        p = put_u16(p, m->version);
        p = put_u16(p, 0);
        p = put_u32(p, m->capabilities);
        put_bytes(p, m->nonce, sizeof(m->nonce));
        return PROTO_HEADER_SIZE + HELLO_SIZE;
}

int proto_decode_hello(const uint8_t *p, size_t n, ProtoHello *ret) {
        ProtoHello m = {};
        uint16_t reserved;

        if (n < HELLO_SIZE || n > HELLO_MAX)
                return -EBADMSG;
        p = get_u16(p, &m.version);
        p = get_u16(p, &reserved);
        p = get_u32(p, &m.capabilities);
        get_bytes(p, m.nonce, sizeof(m.nonce));
        if (m.version == 0)
                return -EBADMSG;
        *ret = m;
        return 0;
}

ssize_t proto_encode_hello_reply(uint8_t *buf, size_t size, const ProtoHelloReply *m) {
        uint8_t *p = proto_frame_begin(buf, size, PROTO_HELLO_REPLY, HELLO_REPLY_SIZE);
        if (!p)
                return -ENOBUFS;
        p = put_u16(p, m->version);
        p = put_u16(p, m->flags);
        p = put_u32(p, m->capabilities);
        p = put_u32(p, m->max_frame);
        p = put_bytes(p, m->nonce, sizeof(m->nonce));
        p = put_bytes(p, &m->observed, sizeof(m->observed));
        p = put_u16(p, m->observed_port);
        put_u16(p, 0);
        return PROTO_HEADER_SIZE + HELLO_REPLY_SIZE;
}

int proto_decode_hello_reply(const uint8_t *p, size_t n, ProtoHelloReply *ret) {
        ProtoHelloReply m = {};
        uint16_t reserved;

        if (n != HELLO_REPLY_SIZE)
                return -EBADMSG;
        p = get_u16(p, &m.version);
        p = get_u16(p, &m.flags);
        p = get_u32(p, &m.capabilities);
        p = get_u32(p, &m.max_frame);
        p = get_bytes(p, m.nonce, sizeof(m.nonce));
        p = get_bytes(p, &m.observed, sizeof(m.observed));
        p = get_u16(p, &m.observed_port);
        get_u16(p, &reserved);
        if (m.version == 0 || m.max_frame < PROTO_FRAME_MAX_MIN || m.max_frame > PROTO_FRAME_MAX_MAX)
                return -EBADMSG;
        *ret = m;
        return 0;
}

ssize_t proto_encode_auth(uint8_t *buf, size_t size, const uint8_t hmac[static PROTO_HMAC_SIZE]) {
        uint8_t *p = proto_frame_begin(buf, size, PROTO_AUTH, PROTO_HMAC_SIZE);
        if (!p)
                return -ENOBUFS;
        put_bytes(p, hmac, PROTO_HMAC_SIZE);
        return PROTO_HEADER_SIZE + PROTO_HMAC_SIZE;
}

ssize_t proto_encode_error(uint8_t *buf, size_t size, ProtoErrorCode code, const char *message) {
        size_t len = strnlen(strempty(message), PROTO_ERROR_MESSAGE_MAX);
        uint8_t *p = proto_frame_begin(buf, size, PROTO_ERROR, 4 + len);
        if (!p)
                return -ENOBUFS;
        p = put_u16(p, (uint16_t) code);
        p = put_u16(p, 0);
        put_bytes(p, strempty(message), len);
        return (ssize_t) (PROTO_HEADER_SIZE + 4 + len);
}

int proto_decode_error(const uint8_t *p, size_t n, ProtoError *ret) {
        ProtoError m = {};
        uint16_t code, reserved;

        if (n < 4 || n > 4 + PROTO_ERROR_MESSAGE_MAX)
                return -EBADMSG;
        p = get_u16(p, &code);
        p = get_u16(p, &reserved);
        /* Unknown codes from a newer responder are kept: the probe prints them as numbers. */
        m.code = (ProtoErrorCode) code;
        get_bytes(p, m.message, n - 4);
        /* The message is for humans and travels into JSON: keep printable ASCII only. */
        for (size_t i = 0; i < n - 4; i++)
                if ((unsigned char) m.message[i] < 0x20 || (unsigned char) m.message[i] > 0x7e)
                        m.message[i] = '?';
        *ret = m;
        return 0;
}

ssize_t proto_encode_empty(uint8_t *buf, size_t size, ProtoType type) {
        if (!proto_frame_begin(buf, size, type, 0))
                return -ENOBUFS;
        return PROTO_HEADER_SIZE;
}

ssize_t proto_encode_echo(uint8_t *buf, size_t size, ProtoType type, const void *payload, size_t n) {
        if (n > PROTO_ECHO_MAX)
                return -EMSGSIZE;
        uint8_t *p = proto_frame_begin(buf, size, type, n);
        if (!p)
                return -ENOBUFS;
        put_bytes(p, payload, n);
        return (ssize_t) (PROTO_HEADER_SIZE + n);
}
