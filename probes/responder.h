/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder.h — the measurement responder: serves echo, upload, download and RDMA set-up on sd-event */
#pragma once

#include <systemd/sd-event.h>

#include "proto-auth.h"
#include "proto.h"
#include "shared/node-identity.h"

typedef struct ResponderLimits {
        uint32_t max_frame;                   /* largest DATA payload accepted */
        uint64_t handshake_timeout_usec;      /* accept until HELLO (and AUTH) done */
        uint64_t idle_timeout_usec;           /* between complete frames once ready */
        uint64_t max_test_bytes;              /* per upload or download */
        uint64_t max_test_usec;               /* per upload or download */
        uint64_t rate;                        /* tokens per second per source address */
        uint64_t burst;                       /* bucket size per source address */
        unsigned max_connections;
        unsigned max_connections_per_source;
        unsigned max_streams;                 /* parallel streams of one test, 1..PROTO_STREAMS_MAX */
} ResponderLimits;

#define RESPONDER_LIMITS_DEFAULT                                        \
        ((ResponderLimits) {                                            \
                .max_frame = PROTO_FRAME_MAX_DEFAULT,                   \
                .handshake_timeout_usec = 5 * UINT64_C(1000000),        \
                .idle_timeout_usec = 30 * UINT64_C(1000000),            \
                .max_test_bytes = UINT64_C(16) << 30,                   \
                .max_test_usec = 10 * UINT64_C(1000000),                \
                .rate = 10,                                             \
                .burst = 20,                                            \
                .max_connections = 64,                                  \
                .max_connections_per_source = 8,                        \
                .max_streams = PROTO_STREAMS_MAX,                       \
        })

/* Checks that limits are usable (e.g. max_frame within PROTO_FRAME_MAX_MIN..MAX). */
int responder_limits_validate(const ResponderLimits *l, const char **ret_problem);

/* What the RDMA side says about itself; set before any connection arrives. */
typedef struct ResponderRdma {
        bool available;
        char reason[128];      /* why not, for the "unsupported" reply */
        char device[64];       /* NULL-terminated; empty: the first active port */
        uint8_t port;
        int gid_index;
} ResponderRdma;

typedef struct ResponderStats {
        uint64_t accepted;
        uint64_t rejected_rate;
        uint64_t rejected_connections;
        uint64_t evicted;
        uint64_t closed_protocol;
        uint64_t closed_timeout;
        uint64_t auth_failed;
        uint64_t busy;           /* tests refused while another ran, or while the node's probe measured */
        uint64_t tests;
        uint64_t joined;         /* connections that joined another's streams */
        uint64_t echo_sessions;  /* times a connection's round trips went to the echo thread */
        unsigned connections;    /* open now */
} ResponderStats;

typedef struct Responder Responder;

/**
 * responder_new() - a responder on an event loop
 * @event: the loop (a reference is taken)
 * @limits: copied
 * @key: the pre-shared key (copied), or NULL for no authentication
 * @rdma: what to answer to RDMA requests (copied), or NULL for "unsupported"
 * @ret: receives the responder
 *
 * Return: 0 or a negative errno (-EINVAL for unusable limits).
 */
int responder_new(sd_event *event, const ResponderLimits *limits, const ProtoKey *key, const ResponderRdma *rdma,
                  Responder **ret);
Responder *responder_free(Responder *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Responder *, responder_free);

/* Serves a listening TCP socket (ownership passes to the responder, also on failure). */
int responder_add_listener(Responder *r, int fd);

/* Serves one connected stream socket as if accepted from peer (for tests; ownership passes). */
int responder_add_connection(Responder *r, int fd, const struct sockaddr *peer);

/* The node's identity for IDENTITY_REQUEST: read from path (and again whenever it changes), or given
 * once (tests). Without one, PROTO_CAP_IDENTITY is not offered. */
int responder_set_identity_file(Responder *r, const char *path);
void responder_set_identity(Responder *r, const NodeIdentity *id);

/* The node's measure lock (net_lock_open()): held while a test runs, and a test that cannot take it
 * (the node's own probe is measuring) is answered "busy". Without one, tests never wait for it. */
int responder_set_lock_file(Responder *r, const char *path);

void responder_get_stats(const Responder *r, ResponderStats *ret);
