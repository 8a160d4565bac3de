/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto-auth.h — pre-shared keys, nonces and the HMAC-SHA256 challenge of the responder handshake */
#pragma once

#include "proto.h"

#define PROTO_KEY_MIN 16
#define PROTO_KEY_MAX 1024

typedef struct ProtoKey {
        size_t size;
        uint8_t bytes[PROTO_KEY_MAX];
} ProtoKey;

/**
 * proto_key_load() - read a pre-shared key from a file
 * @dir_fd: directory for a relative @path (AT_FDCWD for the working directory)
 * @path: the key file; one line, trailing newlines are not part of the key
 * @ret: receives the key
 *
 * Refuses keys shorter than PROTO_KEY_MIN or longer than PROTO_KEY_MAX bytes (-EINVAL), and files
 * other users can read or write (-EPERM), like ssh does with its private keys.
 * Return: 0 or a negative errno.
 */
int proto_key_load(int dir_fd, const char *path, ProtoKey *ret);

/* Fills buf with n bytes from the kernel's CSPRNG (getrandom(2)); 0 or -errno. */
int proto_random_bytes(void *buf, size_t n);

/**
 * proto_auth_compute() - the proof a client sends in an AUTH frame
 * @key: the pre-shared key
 * @server_nonce: the nonce of HELLO_REPLY
 * @client_nonce: the nonce of HELLO
 * @ret: receives HMAC-SHA256(key, "linkprobe-auth-v1" || server_nonce || client_nonce)
 *
 * Return: 0 or -EIO when libcrypto fails.
 */
int proto_auth_compute(const ProtoKey *key, const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                       const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE], uint8_t ret[static PROTO_HMAC_SIZE]);

/* Checks a proof in constant time. Returns true only for the right one. */
bool proto_auth_verify(const ProtoKey *key, const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                       const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE], const uint8_t proof[static PROTO_HMAC_SIZE]);
