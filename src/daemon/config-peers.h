/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-peers.h — linkprobed.conf's [Peers], [Reconciler] and [Responder] sections and their parsers */
#pragma once

#include "shared/macros.h"

typedef struct PeersConfig {
        /* [Peers] */
        char **addresses;         /* Address=: canonical peer addresses, in order, without duplicates */
        char **discover_kinds;    /* Discover=: link kinds whose IPv6 link-local neighbours are peers */
        char *psk_file;           /* PreSharedKeyFile=: for responders that demand a key */

        /* [Reconciler] */
        uint64_t tick_usec;          /* TickSec= */
        uint64_t tcp_ttl_usec;       /* TcpTtlSec= */
        uint64_t rdma_ttl_usec;      /* RdmaTtlSec= */
        uint64_t tcp_duration_usec;  /* TcpDurationSec=: per direction */
        unsigned tcp_samples;        /* TcpSamples=: RTT samples */
        unsigned tcp_streams;        /* TcpStreams=: parallel streams, 0 = as many as raise goodput */
        uint64_t rdma_duration_usec; /* RdmaDurationSec=: per direction */
        uint64_t remeasure_settle_usec;   /* RemeasureSettleSec=: quiet time after a link change */
        uint64_t remeasure_interval_usec; /* RemeasureIntervalSec=: at most one such re-measurement per path */

        /* [Responder]: 0 (or -1 for the boolean) leaves linkprobe-responder's own default. */
        char **listen;                  /* Listen= */
        char *responder_psk_file;       /* PreSharedKeyFile= */
        unsigned max_connections;       /* MaxConnections= */
        unsigned rate;                  /* RatePerSource= */
        unsigned burst;                 /* BurstPerSource= */
        unsigned max_streams;           /* MaxStreams= */
        uint64_t max_test_usec;         /* MaxTestDurationSec= */
        uint64_t max_test_bytes;        /* MaxTestBytes= */
        uint64_t handshake_timeout_usec; /* HandshakeTimeoutSec= */
        uint64_t idle_timeout_usec;     /* IdleTimeoutSec= */
        int rdma;                       /* RDMA= */
} PeersConfig;

/* Splits value at white space and hands each word to add (at most PEERS_CONFIG_LIST_MAX); an empty
 * value empties the list. For every list key of every section. */
int config_parse_word_list(const char *value, char ***list,
                           int (*add)(char ***list, const char *word, char *why, size_t n), char *why, size_t n);

void peers_config_init(PeersConfig *c);
void peers_config_done(PeersConfig *c);

/* Parsers for config.c's table: 0, or -EINVAL with why filled in (-ENOMEM). List keys add to what
 * is there; an empty value empties the list. */
int config_parse_peer_addresses(const char *value, void *field, char *why, size_t why_size);
int config_parse_listen_addresses(const char *value, void *field, char *why, size_t why_size);
int config_parse_link_kinds(const char *value, void *field, char *why, size_t why_size);
int config_parse_key_file(const char *value, void *field, char *why, size_t why_size);
int config_parse_positive_duration(const char *value, void *field, char *why, size_t why_size);
int config_parse_probe_duration(const char *value, void *field, char *why, size_t why_size);
int config_parse_count(const char *value, void *field, char *why, size_t why_size);
int config_parse_test_bytes(const char *value, void *field, char *why, size_t why_size);
int config_parse_tristate(const char *value, void *field, char *why, size_t why_size);
/* "auto" (0) or 1..PEER_STREAMS_MAX; MaxStreams= takes 1..PEER_STREAMS_MAX only. */
int config_parse_tcp_streams(const char *value, void *field, char *why, size_t why_size);
int config_parse_max_streams(const char *value, void *field, char *why, size_t why_size);

/* Appends a copy of s unless it is already there. 0, or -ENOMEM. */
