/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fabric-sides.h — what each node says about its edges, gathered from any source, and the
 * merge that makes one edge of an edge's two ends */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/macros.h"

/* Which members a word sets: Prometheus gives one family at a time, a node's own view all at once. */
typedef enum FabricSideField {
        SIDE_UP = 1 << 0,
        SIDE_DOWN = 1 << 1,
        SIDE_RTT = 1 << 2,
        SIDE_STALE = 1 << 3,
        SIDE_DEGRADED = 1 << 4,
        SIDE_MEASURED_AT = 1 << 5,
        SIDE_ADDRESS = 1 << 6,
} FabricSideField;

/* What one node (from) says about one edge to a neighbour (to) over one local interface. The strings
 * are borrowed: whatever they point into outlives the merge. */
typedef struct FabricSide {
        const char *from, *to, *transport, *interface;
        const char *address;  /* the address it measured the neighbour at, NULL unknown */
        double up, down;      /* Gb/s, from -> to and back */
        double rtt_usec;
        uint64_t measured_at; /* µs since the epoch, 0 unknown */
        bool stale, degraded;
        bool measured;        /* false: a Thunderbolt rate negotiated, not measured */
        unsigned fields;      /* FabricSideField */
        const char *far;      /* the interface at the other end, when the address tells (the merge) */
        bool used;
} FabricSide;

typedef struct FabricSides {
        FabricSide *s;
        size_t n, allocated;
} FabricSides;

/* A new word about the edge (from, to, transport, interface); NULL when out of memory or past
 * FABRIC_EDGES_MAX x 8 words. Words about one edge are combined by fabric_sides_merge(): members only
 * one of them sets are taken from it; where both set a member, the live word beats a stale one, then
 * the faster. */
FabricSide *fabric_sides_add(FabricSides *sides, const char *from, const char *to, const char *transport,
                             const char *interface);
void fabric_sides_done(FabricSides *sides);

/* Combines the words, pairs each node's edges to a neighbour with the neighbour's edges back, and
 * adds one edge per pair, or per word the far end did not echo, to the model. Which of the far end's
 * edges is the same cable: the one whose interface holds the address this end measured (the model's
 * Interfaces say which), else the one whose figures agree best with this end's (its upload is our
 * download and the other way round). A word that only gives an address adds no edge. */
int fabric_sides_merge(json_object *model, FabricSides *sides);

/* The host part of an address as measured ("[fe80::1%tb0]:7472", "10.0.0.2:7472"): no brackets, port
 * or zone, as interfaces list their addresses. */
void fabric_address_host(const char *address, char *buf, size_t size);
