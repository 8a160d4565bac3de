/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* net-client.h — the probe side of the protocol: connect from a chosen source, hello, echo, bulk tests */
#pragma once

#include <net/if.h>
#include <sys/socket.h>

#include "proto-auth.h"
#include "proto-bulk.h"
#include "proto.h"
#include "shared/node-identity.h"

typedef struct NetTarget {
        struct sockaddr_storage sink;
        socklen_t sink_len;
        struct sockaddr_storage source;   /* port 0; valid when source_len > 0 */
        socklen_t source_len;
        char interface[IF_NAMESIZE];      /* SO_BINDTODEVICE when not empty */
} NetTarget;

/* A peer address as the daemon writes it (peer_address_parse(): "10.0.0.2", "10.0.0.2:7472",
 * "fe80::1%eth0", "[fe80::1%eth0]:7472", "[2001:db8::1]"), the responder's port when none is named.
 * -EINVAL for anything else, -ENODEV for a zone that names no interface here. */
int net_target_parse_sink(NetTarget *t, const char *s);
/* A numeric IPv4 or IPv6 address (with %scope for link-local), to bind to before connecting. */
int net_target_parse_source(NetTarget *t, const char *s);
/* Checks and stores an interface name; -ENODEV when there is no such interface. */
int net_target_set_interface(NetTarget *t, const char *ifname);

/* Formats an address as "ADDR" (port 0) or "ADDR:PORT" / "[ADDR]:PORT". */
char *net_format_address(const struct sockaddr *sa, bool with_port, char *buf, size_t size);

typedef struct NetClient {
        int fd;
        uint16_t version;
        uint32_t capabilities;
        uint32_t max_frame;              /* the responder's limit for DATA frames */
        bool authenticated;
        struct sockaddr_storage local;   /* our end after connect */
        struct sockaddr_storage observed;/* our end as the responder saw it */
        ProtoError remote_error;         /* set when a call returned -EREMOTEIO */
        bool have_identity;              /* the responder said who its node is */
        bool identity_authenticated;     /* ... and proved it with our pre-shared key */
        NodeIdentity identity;
        bool skip_identity;              /* set before connecting: a stream that joins needs no identity */
        uint8_t *data;                   /* bulk buffer, PROTO_FRAME_MAX_DEFAULT bytes */
} NetClient;

#define NET_CLIENT_NULL { .fd = -EBADF }

void net_client_done(NetClient *c);

/**
 * net_client_connect() - connect, say hello and authenticate
 * @c: an unconnected client (NET_CLIENT_NULL)
 * @t: where to and from
 * @key: the pre-shared key, or NULL
 * @deadline: CLOCK_MONOTONIC usec bounding the whole handshake
 *
 * When the responder offers its identity, it is asked for (c->identity); with a key, an identity
 * counts as authenticated only if its proof is right, and one without is kept as unauthenticated.
 *
 * Return: 0; -errno of socket calls (e.g. -ECONNREFUSED); -ETIME at the deadline; -EPROTO for a
 * malformed reply (a malformed or oversized identity too); -EREMOTEIO when the responder sent an error (c->remote_error says which);
 * -EKEYREJECTED when the responder demands a key and none was given.
 */
int net_client_connect(NetClient *c, const NetTarget *t, const ProtoKey *key, uint64_t deadline);

/* Takes n RTT samples (usec) with ECHO frames, ret_samples has room for n. */
int net_client_echo(NetClient *c, size_t n, double *ret_samples, uint64_t deadline);

/* Bulk tests, over this connection alone or with joined streams, are in net-streams.h. */

/* Sends one frame prepared in buf and reads the reply, which must be of type expect (or ERROR). */
int net_client_request(NetClient *c, const uint8_t *buf, size_t n, ProtoType expect, uint8_t reply[static PROTO_CONTROL_MAX],
                       uint32_t *ret_length, uint64_t deadline);

/* Reads one reply of type expect (or ERROR: -EREMOTEIO with c->remote_error set). */
int net_client_read_reply(NetClient *c, ProtoType expect, uint8_t reply[static PROTO_CONTROL_MAX], uint32_t *ret_length,
                          uint64_t deadline);

/* The same for replies that carry a test result (READY, RESULT, END frames): -EPROTO when it is
 * malformed. ret may be NULL when only the arrival counts. */
int net_client_request_result(NetClient *c, const uint8_t *buf, size_t n, ProtoType expect, ProtoTestResult *ret,
                              uint64_t deadline);
int net_client_read_result(NetClient *c, ProtoType expect, ProtoTestResult *ret, uint64_t deadline);

/**
 * net_client_retry_wait() - how long to wait before asking again, after a call that failed with r
 * @c: the client
 * @r: what the call returned
 * @retries: retries so far; counted up when a wait is returned
 * @max_retries: how many are allowed
 *
 * A busy responder (one test at a time, another node's probe holds it) is asked again 100..300 ms
 * later; one that wants this address to slow down (rate-limited) after 500..1000 ms, by when its
 * token bucket (10 a second by default) holds enough for a test again. Random, so that two probes
 * waiting for one responder do not collide again.
 * Return: the wait in µs, or 0 when the failure is not one to retry or the retries are spent.
 */
uint64_t net_client_retry_wait(const NetClient *c, int r, uint64_t *retries, uint64_t max_retries);

/* The stable error name of a failed call: "ECONNREFUSED", "deadline", "protocol", "busy", ... */
const char *net_client_error_name(const NetClient *c, int r);
