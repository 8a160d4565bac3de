/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto-wire.h — private to proto.c and proto-bulk.c, the two files that lay out the protocol's
 * messages: the fixed payload sizes proto_type_payload_limits() checks, and the big-endian cursor
 * both write and read them with (a frame starts with proto_frame_begin()). */
#pragma once

#include <endian.h>
#include <stdint.h>
#include <string.h>

#define TEST_REQUEST_SIZE 24
#define TEST_RESULT_SIZE 16
#define TEST_RESULT_STATS_SIZE 72
#define RDMA_INFO_SIZE 44
#define RDMA_TEST_SIZE 28

/* Cursor helpers: big-endian, bounds known by the caller (sizes are fixed per message). */
static inline uint8_t *put_u8(uint8_t *p, uint8_t v) {
        *p = v;
        return p + 1;
}
static inline uint8_t *put_u16(uint8_t *p, uint16_t v) {
        v = htobe16(v);
        memcpy(p, &v, sizeof(v));
        return p + sizeof(v);
}
static inline uint8_t *put_u32(uint8_t *p, uint32_t v) {
        v = htobe32(v);
        memcpy(p, &v, sizeof(v));
        return p + sizeof(v);
}
static inline uint8_t *put_u64(uint8_t *p, uint64_t v) {
        v = htobe64(v);
        memcpy(p, &v, sizeof(v));
        return p + sizeof(v);
}
static inline uint8_t *put_bytes(uint8_t *p, const void *b, size_t n) {
        if (n > 0)
                memcpy(p, b, n);
        return p + n;
}
static inline const uint8_t *get_u8(const uint8_t *p, uint8_t *v) {
        *v = *p;
        return p + 1;
}
static inline const uint8_t *get_u16(const uint8_t *p, uint16_t *v) {
        memcpy(v, p, sizeof(*v));
        *v = be16toh(*v);
        return p + sizeof(*v);
}
static inline const uint8_t *get_u32(const uint8_t *p, uint32_t *v) {
        memcpy(v, p, sizeof(*v));
        *v = be32toh(*v);
        return p + sizeof(*v);
}
static inline const uint8_t *get_u64(const uint8_t *p, uint64_t *v) {
        memcpy(v, p, sizeof(*v));
        *v = be64toh(*v);
        return p + sizeof(*v);
}
static inline const uint8_t *get_bytes(const uint8_t *p, void *b, size_t n) {
        memcpy(b, p, n);
        return p + n;
}
