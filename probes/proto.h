/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto.h — the linkprobe measurement protocol over TCP: frame header, messages, error codes */
#pragma once

#include <netinet/in.h>

#include "shared/macros.h"
#include "shared/peer-address.h"

/*
 * Every frame is an 8-byte header followed by its payload:
 *   'L' 'P' type flags(0) length(u32, big-endian)
 * All integers are big-endian. The header is checked (magic, flags, known type, the type's payload
 * size limits and the receiver's maximum frame size) before anything is allocated or read beyond it.
 * man/linkprobe-responder.8 documents the exchange; this file is the single source of the layout.
 */
#define PROTO_VERSION 1
#define PROTO_VERSION_MIN 1
#define PROTO_HEADER_SIZE 8
#define PROTO_MAGIC0 'L'
#define PROTO_MAGIC1 'P'

/* The largest payload of any frame but DATA; control frames land in a fixed buffer of this size. */
#define PROTO_CONTROL_MAX 1024
#define PROTO_ECHO_MAX 1024
#define PROTO_ERROR_MESSAGE_MAX 256
#define PROTO_CLIENT_NONCE_SIZE 16
#define PROTO_NONCE_SIZE 32
#define PROTO_HMAC_SIZE 32

/* IDENTITY payload bounds: a fixed part, a hostname of 1..253 bytes, up to 8 Thunderbolt host UUIDs and
 * 16 RDMA node GUIDs, and the 32-byte proof (see proto-identity.h). */
#define PROTO_IDENTITY_FIXED_SIZE 44
#define PROTO_IDENTITY_MIN (PROTO_IDENTITY_FIXED_SIZE + 1 + PROTO_HMAC_SIZE)
#define PROTO_IDENTITY_MAX (PROTO_IDENTITY_FIXED_SIZE + 253 + 8 * 16 + 16 * 8 + PROTO_HMAC_SIZE)

/* Bounds of the configurable maximum frame size (the limit DATA frames are held to). */
#define PROTO_FRAME_MAX_MIN (4U * 1024U)
#define PROTO_FRAME_MAX_MAX (16U * 1024U * 1024U)
#define PROTO_FRAME_MAX_DEFAULT (1024U * 1024U)
/* The DATA payload size the probes ask for: large enough that headers cost nothing. */
#define PROTO_DATA_FRAME_DEFAULT (256U * 1024U)

typedef enum ProtoType {
        PROTO_HELLO = 1,              /* C->R: version, capabilities wanted, client nonce */
        PROTO_HELLO_REPLY = 2,        /* R->C: version, flags, capabilities, max frame, nonce, observed address */
        PROTO_AUTH = 3,               /* C->R: HMAC-SHA256 proof */
        PROTO_AUTH_OK = 4,            /* R->C: empty */
        PROTO_ERROR = 5,              /* R->C: code, message */
        PROTO_ECHO_REQUEST = 6,       /* C->R: opaque payload */
        PROTO_ECHO_REPLY = 7,         /* R->C: the same payload */
        PROTO_UPLOAD_START = 8,       /* C->R: test request */
        PROTO_UPLOAD_READY = 9,       /* R->C: granted bytes and duration */
        PROTO_DATA = 10,              /* both: bulk payload */
        PROTO_UPLOAD_END = 11,        /* C->R: empty */
        PROTO_UPLOAD_RESULT = 12,     /* R->C: bytes received, receive duration */
        PROTO_DOWNLOAD_START = 13,    /* C->R: test request */
        PROTO_DOWNLOAD_READY = 14,    /* R->C: granted bytes and duration */
        PROTO_DOWNLOAD_END = 15,      /* R->C: bytes sent, send duration */
        PROTO_RDMA_CONNECT = 16,      /* C->R: queue pair connection data */
        PROTO_RDMA_CONNECT_REPLY = 17,/* R->C: queue pair connection data */
        PROTO_RDMA_TEST = 18,         /* C->R: run one RDMA phase */
        PROTO_RDMA_READY = 19,        /* R->C: receives posted, go */
        PROTO_RDMA_RESULT = 20,       /* R->C: bytes/iterations and duration */
        PROTO_IDENTITY_REQUEST = 21,  /* C->R: empty; once ready, when HELLO_REPLY offered PROTO_CAP_IDENTITY */
        PROTO_IDENTITY = 22,          /* R->C: the node's identity and its proof (proto-identity.h) */
        PROTO_STREAMS_REQUEST = 23,   /* C->R: u32 streams wanted; when HELLO_REPLY offered PROTO_CAP_STREAMS */
        PROTO_STREAMS_REPLY = 24,     /* R->C: u32 streams granted (this connection included), join token */
        PROTO_JOIN = 25,              /* C->R: join token, as a new connection's first request once ready */
        PROTO_JOIN_OK = 26,           /* R->C: u32 the stream's index (1..granted-1) */
        _PROTO_TYPE_MAX,
} ProtoType;

typedef enum ProtoCapability {
        PROTO_CAP_ECHO = 1U << 0,
        PROTO_CAP_UPLOAD = 1U << 1,
        PROTO_CAP_DOWNLOAD = 1U << 2,
        PROTO_CAP_RDMA = 1U << 3,
        PROTO_CAP_IDENTITY = 1U << 4,
        PROTO_CAP_STREAMS = 1U << 5,  /* parallel streams: STREAMS_REQUEST, JOIN, streams in test requests */
        /* UPLOAD_RESULT and DOWNLOAD_END carry the responder's side of the test too (ProtoTestResult's
         * have_stats part). Sent only to a client whose HELLO asked for it: a client that did not
         * takes those frames at their version 1 size. */
        PROTO_CAP_TEST_STATS = 1U << 6,
} ProtoCapability;

/* Parallel streams of one bulk test: the connection that asks (stream 0) and those that join it. */
#define PROTO_STREAMS_MAX PEER_STREAMS_MAX
#define PROTO_STREAMS_TOKEN_SIZE 16

#define PROTO_HELLO_FLAG_AUTH_REQUIRED (1U << 0)

typedef enum ProtoErrorCode {
        PROTO_ERROR_PROTOCOL = 1,            /* malformed or unexpected frame */
        PROTO_ERROR_VERSION = 2,             /* no common protocol version */
        PROTO_ERROR_AUTH_FAILED = 3,         /* wrong pre-shared key */
        PROTO_ERROR_AUTH_REQUIRED = 4,       /* a test was asked for before authenticating */
        PROTO_ERROR_BUSY = 5,                /* another bulk test is running */
        PROTO_ERROR_RATE_LIMITED = 6,        /* the source address ran out of tokens */
        PROTO_ERROR_TOO_MANY_CONNECTIONS = 7,
        PROTO_ERROR_UNSUPPORTED = 8,         /* e.g. RDMA on a responder without a device */
        PROTO_ERROR_LIMIT = 9,               /* a test ran past its granted bytes or time */
        PROTO_ERROR_TIMEOUT = 10,            /* handshake or idle timeout */
        PROTO_ERROR_INTERNAL = 11,
        _PROTO_ERROR_MAX,
} ProtoErrorCode;

typedef struct ProtoHeader {
        ProtoType type;
        uint32_t length;
} ProtoHeader;

typedef struct ProtoHello {
        uint16_t version;
        uint32_t capabilities;
        uint8_t nonce[PROTO_CLIENT_NONCE_SIZE];
} ProtoHello;

typedef struct ProtoHelloReply {
        uint16_t version;
        uint16_t flags;
        uint32_t capabilities;
        uint32_t max_frame;
        uint8_t nonce[PROTO_NONCE_SIZE];
        struct in6_addr observed;   /* the client's address as the responder sees it (IPv4-mapped) */
        uint16_t observed_port;
} ProtoHelloReply;

typedef struct ProtoError {
        ProtoErrorCode code;
        char message[PROTO_ERROR_MESSAGE_MAX + 1];
} ProtoError;

const char *proto_type_to_string(ProtoType t) _const_;
const char *proto_error_code_to_string(ProtoErrorCode c) _const_;
ProtoErrorCode proto_error_code_from_string(const char *s) _pure_;

/* Payload bounds of a frame type; DATA's maximum is the receiver's max_frame. */
int proto_type_payload_limits(ProtoType type, uint32_t max_frame, uint32_t *ret_min, uint32_t *ret_max);

void proto_header_encode(uint8_t buf[static PROTO_HEADER_SIZE], ProtoType type, uint32_t length);
/* -EBADMSG for a bad magic, flags or unknown type; -EMSGSIZE for a length outside the type's bounds
 * or above max_frame. */
int proto_header_decode(const uint8_t buf[static PROTO_HEADER_SIZE], uint32_t max_frame, ProtoHeader *ret);
/* Starts a frame of a fixed payload size: writes the header, returns where the payload goes; NULL
 * when buf is too small. */
uint8_t *proto_frame_begin(uint8_t *buf, size_t size, ProtoType type, size_t payload);

/* Encoders write a complete frame (header + payload) into buf and return its size, or -ENOBUFS. */
ssize_t proto_encode_hello(uint8_t *buf, size_t size, const ProtoHello *m);
ssize_t proto_encode_hello_reply(uint8_t *buf, size_t size, const ProtoHelloReply *m);
ssize_t proto_encode_auth(uint8_t *buf, size_t size, const uint8_t hmac[static PROTO_HMAC_SIZE]);
ssize_t proto_encode_error(uint8_t *buf, size_t size, ProtoErrorCode code, const char *message);
ssize_t proto_encode_empty(uint8_t *buf, size_t size, ProtoType type);
ssize_t proto_encode_echo(uint8_t *buf, size_t size, ProtoType type, const void *payload, size_t n);

/* Decoders take a payload whose length already passed proto_header_decode(); -EBADMSG on bad content. */
int proto_decode_hello(const uint8_t *p, size_t n, ProtoHello *ret);
int proto_decode_hello_reply(const uint8_t *p, size_t n, ProtoHelloReply *ret);
int proto_decode_error(const uint8_t *p, size_t n, ProtoError *ret);
