/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto-bulk.h — the bulk tests' messages of the linkprobe protocol (proto.h): TCP test requests and
 * results, the RDMA queue-pair exchange and tests, and the parallel streams of one test */
#pragma once

#include "proto.h"

typedef enum ProtoRdmaOp {
        PROTO_RDMA_OP_WRITE_DOWNLOAD = 1,    /* the responder RDMA-writes into the client's buffer */
        PROTO_RDMA_OP_SEND_LATENCY = 2,      /* send/recv ping-pong */
        _PROTO_RDMA_OP_MAX,
} ProtoRdmaOp;

/* UPLOAD_START and DOWNLOAD_START. frame_size: the DATA payload the client sends (upload) or can take
 * (download). streams: how many of the connection's streams carry the test, this one and the first
 * streams - 1 joined ones (a field version 1 reserved as 0, which means 1); max_bytes is for all of
 * them together. */
typedef struct ProtoTestRequest {
        uint64_t max_bytes;
        uint64_t max_usec;
        uint32_t frame_size;
        uint32_t streams;
} ProtoTestRequest;

/* STREAMS_REPLY. */
typedef struct ProtoStreams {
        uint32_t granted;
        uint8_t token[PROTO_STREAMS_TOKEN_SIZE];
} ProtoStreams;

/* UPLOAD_READY, DOWNLOAD_READY (granted limits), UPLOAD_RESULT, DOWNLOAD_END, RDMA_RESULT. The stats
 * travel in UPLOAD_RESULT and DOWNLOAD_END to a client that asked for PROTO_CAP_TEST_STATS: the
 * responder's side of the test, from its start to the frame. */
#define PROTO_COUNTER_UNKNOWN UINT64_MAX
typedef struct ProtoTestResult {
        uint64_t bytes;
        uint64_t usec;
        bool have_stats;
        uint64_t cpu_usec;       /* the responder's CPU time (user + system, all its threads) */
        uint32_t threads;        /* threads that moved the data */
        uint32_t cpus;           /* CPUs they could run on */
        /* The byte and packet counters of the responder's interface for the connection, as deltas;
         * PROTO_COUNTER_UNKNOWN when it could not read them. */
        uint64_t if_rx_bytes, if_tx_bytes, if_rx_packets, if_tx_packets;
        /* Payload bytes the responder's TCP sent again on the test's streams (what the counters
         * carried twice); PROTO_COUNTER_UNKNOWN when unknown. */
        uint64_t retrans_bytes;
} ProtoTestResult;

/* What perftest exchanges over its TCP side channel to bring an RC queue pair up. */
typedef struct ProtoRdmaInfo {
        uint32_t qpn;
        uint32_t psn;
        uint32_t rkey;
        uint16_t lid;
        uint8_t mtu;              /* enum ibv_mtu */
        uint8_t gid_index;
        uint8_t gid[16];
        uint64_t addr;
        uint32_t size;            /* bytes of the registered buffer at addr */
} ProtoRdmaInfo;

typedef struct ProtoRdmaTest {
        ProtoRdmaOp op;
        uint64_t max_bytes;
        uint64_t max_usec;
        uint32_t iterations;
        uint32_t message_size;
} ProtoRdmaTest;

/* Encoders write a complete frame (header + payload) into buf and return its size, or -ENOBUFS. */
ssize_t proto_encode_test_request(uint8_t *buf, size_t size, ProtoType type, const ProtoTestRequest *m);
ssize_t proto_encode_test_result(uint8_t *buf, size_t size, ProtoType type, const ProtoTestResult *m);
ssize_t proto_encode_rdma_info(uint8_t *buf, size_t size, ProtoType type, const ProtoRdmaInfo *m);
ssize_t proto_encode_rdma_test(uint8_t *buf, size_t size, const ProtoRdmaTest *m);
/* STREAMS_REQUEST (streams wanted) and JOIN_OK (the stream's index): one u32. */
ssize_t proto_encode_u32(uint8_t *buf, size_t size, ProtoType type, uint32_t v);
ssize_t proto_encode_streams_reply(uint8_t *buf, size_t size, const ProtoStreams *m);
ssize_t proto_encode_join(uint8_t *buf, size_t size, const uint8_t token[static PROTO_STREAMS_TOKEN_SIZE]);

/* Decoders take a payload whose length already passed proto_header_decode(); -EBADMSG on bad content. */
int proto_decode_test_request(const uint8_t *p, size_t n, ProtoTestRequest *ret);
int proto_decode_test_result(const uint8_t *p, size_t n, ProtoTestResult *ret);
int proto_decode_rdma_info(const uint8_t *p, size_t n, ProtoRdmaInfo *ret);
int proto_decode_rdma_test(const uint8_t *p, size_t n, ProtoRdmaTest *ret);
/* STREAMS_REQUEST: 1..PROTO_STREAMS_MAX; JOIN_OK: 1..PROTO_STREAMS_MAX - 1. */
int proto_decode_streams_request(const uint8_t *p, size_t n, uint32_t *ret);
int proto_decode_join_ok(const uint8_t *p, size_t n, uint32_t *ret);
int proto_decode_streams_reply(const uint8_t *p, size_t n, ProtoStreams *ret);
int proto_decode_join(const uint8_t *p, size_t n, uint8_t ret[static PROTO_STREAMS_TOKEN_SIZE]);
