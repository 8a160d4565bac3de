/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "proto-identity.h"

#define IDENTITY_CONTEXT "linkprobe-identity-v1"

static int identity_proof(const ProtoKey *key, const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                          const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE], const uint8_t *body, size_t n,
                          uint8_t ret[static PROTO_HMAC_SIZE]) {
        uint8_t msg[sizeof(IDENTITY_CONTEXT) - 1 + PROTO_NONCE_SIZE + PROTO_CLIENT_NONCE_SIZE + PROTO_IDENTITY_MAX];
        size_t m = 0;
        unsigned int len = 0;

        if (n > PROTO_IDENTITY_MAX - PROTO_HMAC_SIZE)
                return -EINVAL;
        memcpy(msg, IDENTITY_CONTEXT, sizeof(IDENTITY_CONTEXT) - 1);
        m += sizeof(IDENTITY_CONTEXT) - 1;
        memcpy(msg + m, server_nonce, PROTO_NONCE_SIZE);
        m += PROTO_NONCE_SIZE;
        memcpy(msg + m, client_nonce, PROTO_CLIENT_NONCE_SIZE);
        m += PROTO_CLIENT_NONCE_SIZE;
        memcpy(msg + m, body, n);
        m += n;
        if (!HMAC(EVP_sha256(), key->bytes, (int) key->size, msg, m, ret, &len) || len != PROTO_HMAC_SIZE)
                return -EIO;
        return 0;
}

ssize_t proto_encode_identity(uint8_t *buf, size_t size, const NodeIdentity *id, const ProtoKey *key,
                              const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                              const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE]) {
        size_t hostname_len = strnlen(id->hostname, sizeof(id->hostname)), body, total;
        uint8_t *p;
        int r;

        if (!node_hostname_is_valid(id->hostname, hostname_len) || id->n_thunderbolt > NODE_IDENTITY_THUNDERBOLT_MAX ||
            id->n_rdma > NODE_IDENTITY_RDMA_MAX || node_id_is_null(id->node_id))
                return -EINVAL;
        body = PROTO_IDENTITY_FIXED_SIZE + hostname_len + id->n_thunderbolt * 16 + id->n_rdma * 8;
        total = PROTO_HEADER_SIZE + body + PROTO_HMAC_SIZE;
        if (size < total)
                return -ENOBUFS;

        proto_header_encode(buf, PROTO_IDENTITY, (uint32_t) (body + PROTO_HMAC_SIZE));
        p = buf + PROTO_HEADER_SIZE;
        memcpy(p, id->node_id, NODE_ID_SIZE);
        memcpy(p + 16, id->boot_id, NODE_ID_SIZE);
        uint64_t booted = htobe64(id->booted_at);
        memcpy(p + 32, &booted, sizeof(booted));
        p[40] = (uint8_t) hostname_len;
        p[41] = (uint8_t) id->n_thunderbolt;
        p[42] = (uint8_t) id->n_rdma;
        p[43] = 0;
        p += PROTO_IDENTITY_FIXED_SIZE;
        memcpy(p, id->hostname, hostname_len);
        p += hostname_len;
        for (size_t i = 0; i < id->n_thunderbolt; i++, p += 16)
                memcpy(p, id->thunderbolt[i], 16);
        for (size_t i = 0; i < id->n_rdma; i++, p += 8) {
                uint64_t g = htobe64(id->rdma[i]);
                memcpy(p, &g, sizeof(g));
        }
        if (key) {
                r = identity_proof(key, server_nonce, client_nonce, buf + PROTO_HEADER_SIZE, body, p);
                if (r < 0)
                        return r;
        } else
                memset(p, 0, PROTO_HMAC_SIZE);
        return (ssize_t) total;
}

int proto_decode_identity(const uint8_t *p, size_t n, NodeIdentity *ret, uint8_t ret_proof[static PROTO_HMAC_SIZE]) {
        NodeIdentity id = {};
        size_t hostname_len, expected;
        uint64_t v;

        if (n < PROTO_IDENTITY_MIN || n > PROTO_IDENTITY_MAX)
                return -EBADMSG;
        hostname_len = p[40];
        id.n_thunderbolt = p[41];
        id.n_rdma = p[42];
        if (p[43] != 0 || hostname_len == 0 || hostname_len > NODE_HOSTNAME_MAX ||
            id.n_thunderbolt > NODE_IDENTITY_THUNDERBOLT_MAX || id.n_rdma > NODE_IDENTITY_RDMA_MAX)
                return -EBADMSG;
        expected = PROTO_IDENTITY_FIXED_SIZE + hostname_len + id.n_thunderbolt * 16 + id.n_rdma * 8 + PROTO_HMAC_SIZE;
        if (n != expected)
                return -EBADMSG;

        memcpy(id.node_id, p, NODE_ID_SIZE);
        memcpy(id.boot_id, p + 16, NODE_ID_SIZE);
        memcpy(&v, p + 32, sizeof(v));
        id.booted_at = be64toh(v);
        if (node_id_is_null(id.node_id))
                return -EBADMSG;
        p += PROTO_IDENTITY_FIXED_SIZE;
        if (!node_hostname_is_valid((const char *) p, hostname_len))
                return -EBADMSG;
        memcpy(id.hostname, p, hostname_len);
        id.hostname[hostname_len] = '\0';
        p += hostname_len;
        for (size_t i = 0; i < id.n_thunderbolt; i++, p += 16)
                memcpy(id.thunderbolt[i], p, 16);
        for (size_t i = 0; i < id.n_rdma; i++, p += 8) {
                memcpy(&v, p, sizeof(v));
                id.rdma[i] = be64toh(v);
        }
        memcpy(ret_proof, p, PROTO_HMAC_SIZE);
        *ret = id;
        return 0;
}

bool proto_identity_verify(const ProtoKey *key, const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                           const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE], const uint8_t *p, size_t n) {
        uint8_t expected[PROTO_HMAC_SIZE];
        bool ok;

        if (!key || n < PROTO_IDENTITY_MIN || n > PROTO_IDENTITY_MAX)
                return false;
        if (identity_proof(key, server_nonce, client_nonce, p, n - PROTO_HMAC_SIZE, expected) < 0)
                return false;
        ok = CRYPTO_memcmp(expected, p + n - PROTO_HMAC_SIZE, PROTO_HMAC_SIZE) == 0;
        explicit_bzero(expected, sizeof(expected));
        return ok;
}
