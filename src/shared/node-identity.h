/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node-identity.h — who a node is, as its responder says on the wire and the probes and daemon record it */
#pragma once

#include <json-c/json.h>

#include "shared/macros.h"

#define NODE_ID_SIZE 16
#define NODE_ID_STRING_MAX (NODE_ID_SIZE * 2 + 1)
#define NODE_UUID_STRING_MAX 37
#define NODE_GUID_STRING_MAX 20
/* What DNS allows a name to be; a kernel hostname is at most 64 bytes. */
#define NODE_HOSTNAME_MAX 253
#define NODE_IDENTITY_THUNDERBOLT_MAX 8
#define NODE_IDENTITY_RDMA_MAX 16

/*
 * A node's identity: its NodeId (sd_id128_get_machine_app_specific() with linkprobe's application ID,
 * never the raw machine ID), what identifies it to its neighbours without any IP (the unique_id of
 * each Thunderbolt domain's host router, which the kernel announces to XDomain peers; the node GUID
 * of each RDMA device), its hostname for people, and its boot: an application-specific boot ID and
 * when that boot began, which tell two nodes answering with one NodeId (a cloned image) from one
 * node that rebooted.
 */
typedef struct NodeIdentity {
        uint8_t node_id[NODE_ID_SIZE];
        uint8_t boot_id[NODE_ID_SIZE];
        uint64_t booted_at; /* CLOCK_REALTIME µs; 0 unknown */
        char hostname[NODE_HOSTNAME_MAX + 1];
        size_t n_thunderbolt;
        uint8_t thunderbolt[NODE_IDENTITY_THUNDERBOLT_MAX][16];
        size_t n_rdma;
        uint64_t rdma[NODE_IDENTITY_RDMA_MAX];
} NodeIdentity;

/* A hostname we accept from another node: 1..NODE_HOSTNAME_MAX bytes of valid UTF-8 without control
 * characters (C0, DEL, C1) or bidirectional overrides. Whatever passes is still escaped by every output (JSON, DOT, labels). */
bool node_hostname_is_valid(const char *s, size_t n);
/* Our own hostname made acceptable: control characters and invalid UTF-8 become '?', cut to fit. */
void node_hostname_sanitize(const char *s, char ret[static NODE_HOSTNAME_MAX + 1]);

/* 32 hex digits, as sd_id128_to_string() writes them (either case accepted). */
int node_id_from_string(const char *s, uint8_t ret[static NODE_ID_SIZE]);
char *node_id_to_string(const uint8_t id[static NODE_ID_SIZE], char buf[static NODE_ID_STRING_MAX]);
bool node_id_is_null(const uint8_t id[static NODE_ID_SIZE]);
/* A UUID as Thunderbolt's unique_id prints it ("dc0a8680-f4c7-4eb1-8b6c-86c9a26f4a11"); 32 plain
 * hex digits are accepted too. Written in lower case with dashes. */
int node_uuid_from_string(const char *s, uint8_t ret[static 16]);
char *node_uuid_to_string(const uint8_t uuid[static 16], char buf[static NODE_UUID_STRING_MAX]);
/* A GUID as the kernel prints node_guid ("0002:c903:0011:2233"). */
int node_guid_from_string(const char *s, uint64_t *ret);
char *node_guid_to_string(uint64_t guid, char buf[static NODE_GUID_STRING_MAX]);

/* {"node_id", "hostname", "boot_id", "booted_at", "thunderbolt_host_uuids", "rdma_node_guids"}. */
json_object *node_identity_to_json(const NodeIdentity *id);
/**
 * node_identity_from_json() - an identity from what another program or a file claims
 * @o: the object node_identity_to_json() writes
 * @ret: receives the identity
 *
 * Strict: every member well-formed, a valid hostname, no more UUIDs or GUIDs than fit, a NodeId
 * that is not all zeroes. Unknown members are ignored (a later version may add some).
 *
 * Return: 0, or -EINVAL for anything else.
 */
int node_identity_from_json(json_object *o, NodeIdentity *ret);

bool node_identity_equal(const NodeIdentity *a, const NodeIdentity *b);

/* Whether the identity names that Thunderbolt host router UUID. */
bool node_identity_has_thunderbolt(const NodeIdentity *id, const uint8_t uuid[static 16]);
