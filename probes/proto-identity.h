/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto-identity.h — the IDENTITY frame: who the responder's node is, bound to the session by the key */
#pragma once

#include "proto-auth.h"
#include "shared/node-identity.h"

/*
 * IDENTITY payload, big-endian:
 *   node_id[16] boot_id[16] booted_at(u64, CLOCK_REALTIME µs)
 *   hostname_len(u8, 1..253) n_thunderbolt(u8, 0..8) n_rdma(u8, 0..16) reserved(u8, 0)
 *   hostname[hostname_len] thunderbolt[n_thunderbolt][16] rdma_guid[n_rdma](u64)
 *   proof[32]
 * The proof is HMAC-SHA256(key, "linkprobe-identity-v1" || server nonce || client nonce || everything
 * before the proof) when the responder has a pre-shared key, zeroes otherwise. The nonces are the
 * session's (HELLO's and HELLO_REPLY's): a proof cannot be replayed into another session, and only a
 * holder of the key can make one, so a client holding the key knows the identity is the truth of a
 * node of its cluster. Without a key it is just what the responder says.
 */

_Static_assert(PROTO_IDENTITY_MAX == PROTO_IDENTITY_FIXED_SIZE + NODE_HOSTNAME_MAX + NODE_IDENTITY_THUNDERBOLT_MAX * 16 +
                       NODE_IDENTITY_RDMA_MAX * 8 + PROTO_HMAC_SIZE,
               "the frame bound follows the identity's");

/* Encodes a complete IDENTITY frame into buf (proof included: key may be NULL for zeroes); its size,
 * -ENOBUFS, -EINVAL for an identity that could not be decoded again (an invalid hostname). */
ssize_t proto_encode_identity(uint8_t *buf, size_t size, const NodeIdentity *id, const ProtoKey *key,
                              const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                              const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE]);

/* Decodes an IDENTITY payload: -EBADMSG for anything malformed (sizes that do not add up, a hostname
 * that node_hostname_is_valid() refuses, reserved bits, a null NodeId). ret_proof gets the proof. */
int proto_decode_identity(const uint8_t *p, size_t n, NodeIdentity *ret, uint8_t ret_proof[static PROTO_HMAC_SIZE]);

/* Checks an IDENTITY payload's proof against key and the session's nonces, in constant time. */
bool proto_identity_verify(const ProtoKey *key, const uint8_t server_nonce[static PROTO_NONCE_SIZE],
                           const uint8_t client_nonce[static PROTO_CLIENT_NONCE_SIZE], const uint8_t *p, size_t n);
