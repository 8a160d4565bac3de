/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "proto-auth.h"
#include "shared/fileio.h"

#define AUTH_CONTEXT "linkprobe-auth-v1"

int proto_key_load(int dir_fd, const char *path, ProtoKey *ret) {
        _cleanup_(closep) int fd = -EBADF;
        ProtoKey key = {};
        struct stat st;
        ssize_t n;

        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        /* Group read is allowed (a "linkprobe" group may share the key), anything wider is not. */
        if (st.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO))
                return -EPERM;

        /* One byte more than allowed tells a too long key from one that fits exactly. */
        uint8_t buf[PROTO_KEY_MAX + 2];
        n = loop_read(fd, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        size_t total = (size_t) n;
        while (total > 0 && (buf[total - 1] == '\n' || buf[total - 1] == '\r'))
                total--;
        if (total < PROTO_KEY_MIN || total > PROTO_KEY_MAX) {
                explicit_bzero(buf, sizeof(buf));
                return -EINVAL;
        }
        memcpy(key.bytes, buf, total);
        key.size = total;
        explicit_bzero(buf, sizeof(buf));

        *ret = key;
        explicit_bzero(&key, sizeof(key));
        return 0;
}

int proto_random_bytes(void *buf, size_t n) {
        uint8_t *p = buf;

        while (n > 0) {
                ssize_t k = getrandom(p, n, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int proto_auth_compute(const ProtoKey *key, const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                       const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE], uint8_t ret[static PROTO_HMAC_SIZE]) {
        uint8_t msg[sizeof(AUTH_CONTEXT) - 1 + PROTO_NONCE_SIZE + PROTO_CLIENT_NONCE_SIZE];
        unsigned int len = 0;

        memcpy(msg, AUTH_CONTEXT, sizeof(AUTH_CONTEXT) - 1);
        memcpy(msg + sizeof(AUTH_CONTEXT) - 1, server_nonce, PROTO_NONCE_SIZE);
        memcpy(msg + sizeof(AUTH_CONTEXT) - 1 + PROTO_NONCE_SIZE, client_nonce, PROTO_CLIENT_NONCE_SIZE);

        if (!HMAC(EVP_sha256(), key->bytes, (int) key->size, msg, sizeof(msg), ret, &len) || len != PROTO_HMAC_SIZE)
                return -EIO;
        return 0;
}

bool proto_auth_verify(const ProtoKey *key, const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                       const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE], const uint8_t proof[static PROTO_HMAC_SIZE]) {
        uint8_t expected[PROTO_HMAC_SIZE];
        bool ok;

        if (proto_auth_compute(key, server_nonce, client_nonce, expected) < 0)
                return false;
        /* CRYPTO_memcmp's run time does not depend on where the first difference is. */
        ok = CRYPTO_memcmp(expected, proof, PROTO_HMAC_SIZE) == 0;
        explicit_bzero(expected, sizeof(expected));
        return ok;
}
