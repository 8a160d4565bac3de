/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto-bulk.c — the messages of the bulk tests: TCP upload/download requests and results, RDMA
 * queue-pair exchange and tests, and the parallel streams that join one test. */
#include "proto-bulk.h"
#include "proto-wire.h"

ssize_t proto_encode_test_request(uint8_t *buf, size_t size, ProtoType type, const ProtoTestRequest *m) {
        uint8_t *p = proto_frame_begin(buf, size, type, TEST_REQUEST_SIZE);
        if (!p)
                return -ENOBUFS;
        p = put_u64(p, m->max_bytes);
        p = put_u64(p, m->max_usec);
        p = put_u32(p, m->frame_size);
        /* One stream is written as version 1 wrote the reserved field. */
        put_u32(p, m->streams <= 1 ? 0 : m->streams);
        return PROTO_HEADER_SIZE + TEST_REQUEST_SIZE;
}

int proto_decode_test_request(const uint8_t *p, size_t n, ProtoTestRequest *ret) {
        ProtoTestRequest m = {};

        if (n != TEST_REQUEST_SIZE)
                return -EBADMSG;
        p = get_u64(p, &m.max_bytes);
        p = get_u64(p, &m.max_usec);
        p = get_u32(p, &m.frame_size);
        get_u32(p, &m.streams);
        if (m.max_bytes == 0 || m.max_usec == 0 || m.frame_size == 0 || m.streams > PROTO_STREAMS_MAX)
                return -EBADMSG;
        m.streams = MAX(m.streams, 1U);
        *ret = m;
        return 0;
}

ssize_t proto_encode_test_result(uint8_t *buf, size_t size, ProtoType type, const ProtoTestResult *m) {
        /* Only the results of a test have room for the stats. */
        bool stats = m->have_stats && IN_SET(type, PROTO_UPLOAD_RESULT, PROTO_DOWNLOAD_END);
        size_t payload = stats ? TEST_RESULT_STATS_SIZE : TEST_RESULT_SIZE;
        uint8_t *p = proto_frame_begin(buf, size, type, payload);
        if (!p)
                return -ENOBUFS;
        p = put_u64(p, m->bytes);
        p = put_u64(p, m->usec);
        if (stats) {
                p = put_u64(p, m->cpu_usec);
                p = put_u32(p, m->threads);
                p = put_u32(p, m->cpus);
                p = put_u64(p, m->if_rx_bytes);
                p = put_u64(p, m->if_tx_bytes);
                p = put_u64(p, m->if_rx_packets);
                p = put_u64(p, m->if_tx_packets);
                put_u64(p, m->retrans_bytes);
        }
        return (ssize_t) (PROTO_HEADER_SIZE + payload);
}

int proto_decode_test_result(const uint8_t *p, size_t n, ProtoTestResult *ret) {
        ProtoTestResult m = {};

        if (n != TEST_RESULT_SIZE && n != TEST_RESULT_STATS_SIZE)
                return -EBADMSG;
        p = get_u64(p, &m.bytes);
        p = get_u64(p, &m.usec);
        if (n == TEST_RESULT_STATS_SIZE) {
                m.have_stats = true;
                p = get_u64(p, &m.cpu_usec);
                p = get_u32(p, &m.threads);
                p = get_u32(p, &m.cpus);
                p = get_u64(p, &m.if_rx_bytes);
                p = get_u64(p, &m.if_tx_bytes);
                p = get_u64(p, &m.if_rx_packets);
                p = get_u64(p, &m.if_tx_packets);
                get_u64(p, &m.retrans_bytes);
        }
        *ret = m;
        return 0;
}

ssize_t proto_encode_rdma_info(uint8_t *buf, size_t size, ProtoType type, const ProtoRdmaInfo *m) {
        uint8_t *p = proto_frame_begin(buf, size, type, RDMA_INFO_SIZE);
        if (!p)
                return -ENOBUFS;
        p = put_u32(p, m->qpn);
        p = put_u32(p, m->psn);
        p = put_u32(p, m->rkey);
        p = put_u16(p, m->lid);
        p = put_u8(p, m->mtu);
        p = put_u8(p, m->gid_index);
        p = put_bytes(p, m->gid, sizeof(m->gid));
        p = put_u64(p, m->addr);
        put_u32(p, m->size);
        return PROTO_HEADER_SIZE + RDMA_INFO_SIZE;
}

int proto_decode_rdma_info(const uint8_t *p, size_t n, ProtoRdmaInfo *ret) {
        ProtoRdmaInfo m = {};

        if (n != RDMA_INFO_SIZE)
                return -EBADMSG;
        p = get_u32(p, &m.qpn);
        p = get_u32(p, &m.psn);
        p = get_u32(p, &m.rkey);
        p = get_u16(p, &m.lid);
        p = get_u8(p, &m.mtu);
        p = get_u8(p, &m.gid_index);
        p = get_bytes(p, m.gid, sizeof(m.gid));
        p = get_u64(p, &m.addr);
        get_u32(p, &m.size);
        /* QP numbers and PSNs are 24 bits; MTU is enum ibv_mtu (1..5). */
        if (m.qpn == 0 || m.qpn > 0xffffff || m.psn > 0xffffff || m.mtu < 1 || m.mtu > 5 || m.size == 0)
                return -EBADMSG;
        *ret = m;
        return 0;
}

ssize_t proto_encode_rdma_test(uint8_t *buf, size_t size, const ProtoRdmaTest *m) {
        uint8_t *p = proto_frame_begin(buf, size, PROTO_RDMA_TEST, RDMA_TEST_SIZE);
        if (!p)
                return -ENOBUFS;
        p = put_u8(p, (uint8_t) m->op);
        p = put_u8(p, 0);
        p = put_u16(p, 0);
        p = put_u64(p, m->max_bytes);
        p = put_u64(p, m->max_usec);
        p = put_u32(p, m->iterations);
        put_u32(p, m->message_size);
        return PROTO_HEADER_SIZE + RDMA_TEST_SIZE;
}

int proto_decode_rdma_test(const uint8_t *p, size_t n, ProtoRdmaTest *ret) {
        ProtoRdmaTest m = {};
        uint8_t op, r8;
        uint16_t r16;

        if (n != RDMA_TEST_SIZE)
                return -EBADMSG;
        p = get_u8(p, &op);
        p = get_u8(p, &r8);
        p = get_u16(p, &r16);
        p = get_u64(p, &m.max_bytes);
        p = get_u64(p, &m.max_usec);
        p = get_u32(p, &m.iterations);
        get_u32(p, &m.message_size);
        if (op == 0 || op >= _PROTO_RDMA_OP_MAX || m.max_usec == 0 || m.message_size == 0)
                return -EBADMSG;
        m.op = (ProtoRdmaOp) op;
        *ret = m;
        return 0;
}

ssize_t proto_encode_u32(uint8_t *buf, size_t size, ProtoType type, uint32_t v) {
        uint8_t *p = proto_frame_begin(buf, size, type, 4);
        if (!p)
                return -ENOBUFS;
        put_u32(p, v);
        return PROTO_HEADER_SIZE + 4;
}

static int decode_u32_in(const uint8_t *p, size_t n, uint32_t lo, uint32_t hi, uint32_t *ret) {
        uint32_t v;

        if (n != 4)
                return -EBADMSG;
        get_u32(p, &v);
        if (v < lo || v > hi)
                return -EBADMSG;
        *ret = v;
        return 0;
}

int proto_decode_streams_request(const uint8_t *p, size_t n, uint32_t *ret) {
        return decode_u32_in(p, n, 1, PROTO_STREAMS_MAX, ret);
}

int proto_decode_join_ok(const uint8_t *p, size_t n, uint32_t *ret) {
        return decode_u32_in(p, n, 1, PROTO_STREAMS_MAX - 1, ret);
}

ssize_t proto_encode_streams_reply(uint8_t *buf, size_t size, const ProtoStreams *m) {
        uint8_t *p = proto_frame_begin(buf, size, PROTO_STREAMS_REPLY, 4 + PROTO_STREAMS_TOKEN_SIZE);
        if (!p)
                return -ENOBUFS;
        p = put_u32(p, m->granted);
        put_bytes(p, m->token, sizeof(m->token));
        return PROTO_HEADER_SIZE + 4 + PROTO_STREAMS_TOKEN_SIZE;
}

int proto_decode_streams_reply(const uint8_t *p, size_t n, ProtoStreams *ret) {
        ProtoStreams m = {};

        if (n != 4 + PROTO_STREAMS_TOKEN_SIZE)
                return -EBADMSG;
        p = get_u32(p, &m.granted);
        get_bytes(p, m.token, sizeof(m.token));
        if (m.granted < 1 || m.granted > PROTO_STREAMS_MAX)
                return -EBADMSG;
        *ret = m;
        return 0;
}

ssize_t proto_encode_join(uint8_t *buf, size_t size, const uint8_t token[static PROTO_STREAMS_TOKEN_SIZE]) {
        uint8_t *p = proto_frame_begin(buf, size, PROTO_JOIN, PROTO_STREAMS_TOKEN_SIZE);
        if (!p)
                return -ENOBUFS;
        put_bytes(p, token, PROTO_STREAMS_TOKEN_SIZE);
        return PROTO_HEADER_SIZE + PROTO_STREAMS_TOKEN_SIZE;
}

int proto_decode_join(const uint8_t *p, size_t n, uint8_t ret[static PROTO_STREAMS_TOKEN_SIZE]) {
        if (n != PROTO_STREAMS_TOKEN_SIZE)
                return -EBADMSG;
        get_bytes(p, ret, PROTO_STREAMS_TOKEN_SIZE);
        return 0;
}
