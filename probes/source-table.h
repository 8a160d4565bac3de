/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* source-table.h — the responder's fixed-size table of token buckets keyed by source address */
#pragma once

#include <netinet/in.h>

#include "shared/ratelimit.h"

typedef struct SourceEntry {
        struct in6_addr address;   /* IPv4 as IPv4-mapped IPv6 */
        bool used;
        unsigned connections;      /* open connections from this address */
        uint64_t last_usec;
        TokenBucket bucket;
} SourceEntry;

typedef struct SourceTable {
        size_t size;
        uint64_t rate, burst;
        SourceEntry entries[];
} SourceTable;

/* A table of at most size entries: memory is fixed whatever the number of sources. */
SourceTable *source_table_new(size_t size, uint64_t rate, uint64_t burst);
SourceTable *source_table_free(SourceTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(SourceTable *, source_table_free);

/**
 * source_table_get() - the entry of a source address, created when missing
 * @t: the table
 * @address: the source (IPv4-mapped for IPv4)
 * @now_usec: CLOCK_MONOTONIC
 *
 * When the table is full, an entry without open connections is reused: first one whose bucket has
 * refilled completely (forgetting it loses nothing), else the least recently used one.
 * Return: the entry, or NULL when every entry has open connections.
 */
SourceEntry *source_table_get(SourceTable *t, const struct in6_addr *address, uint64_t now_usec);

/* Normalises a socket address to the table's key. -EAFNOSUPPORT for families other than IP. */
int source_address_from_sockaddr(const struct sockaddr *sa, struct in6_addr *ret, uint16_t *ret_port);
