/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ring-search.h — the ring whose slowest hop is fastest, and the best-placed coordinator,
 * over nodes numbered 0..n-1 and the cables between them (no JSON, no I/O: the verbs feed it numbers) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Up to this many nodes the ring is exact (a dynamic programme over the subsets of nodes); beyond,
 * a search that says how far from the best its ring may be. */
#define RING_EXACT_NODES_MAX 16
/* The most cables one hop stripes over: JACCL's ring backend (RING_MAX_CONNS). */
#define RING_WIDTH_MAX 4

/* One cable in one direction: what it carries from node `from` to node `to`. A cable between u and v
 * is two lanes, one each way; two cables are four. */
typedef struct RingLane {
        uint32_t from, to;
        double gbps; /* > 0; a lane of 0 carries nothing and is left out */
} RingLane;

/* Why there is no ring, naming the nodes it is about (a, and b where the sentence has two). */
typedef enum RingVerdict {
        RING_FOUND,
        RING_NO_CABLE,      /* a has no cable to any node of the set */
        RING_NO_WAY_OUT,    /* a has cables, but nothing is known to go out of a over any of them */
        RING_NO_WAY_IN,     /* ... nor into a */
        RING_ONE_NEIGHBOUR, /* a is cabled to b only: a ring needs two neighbours at every node */
        RING_UNREACHABLE,   /* nothing leads from a to b */
        RING_CUT_VERTEX,    /* the set falls apart without a (b is on one side) */
        RING_NO_COVER,      /* a cannot get a hop in without taking the only one out of another node */
        RING_NONE,          /* exact: no ring visits every node once */
        RING_NOT_FOUND,     /* the search found none within its budget; none was ruled out either */
        _RING_VERDICT_MAX,
} RingVerdict;

typedef struct RingResult {
        RingVerdict verdict;
        uint32_t a, b;
        bool exact;
        /* How many cables each hop stripes over: one width for the whole ring, as JACCL and MLX's
         * ring backend want the same number of connections at every rank. */
        unsigned width;
        /* The slowest hop: width x its slowest striped lane (a striped message waits for its slowest
         * part). 0 for a ring of one node. */
        double bottleneck_gbps;
        /* No ring over these lanes has a faster slowest hop (== bottleneck_gbps when exact). */
        double upper_bound_gbps;
        size_t n;
        uint32_t *order;     /* n nodes in ring order, order[0] = 0; hop i goes order[i] -> order[i+1 mod n] */
        uint32_t *hop_lanes; /* n x width indices into lanes[]: the lanes each hop stripes over, fastest first */
} RingResult;

/*
 * ring_search() - the cyclic order of all n nodes whose slowest hop is fastest
 * @n: nodes, 1..65535 (the caller numbers them in the order ties are broken by)
 * @lanes, @n_lanes: every cable in each direction it carries anything
 * @width_max: 1..RING_WIDTH_MAX, the most cables a hop may stripe over
 *
 * A hop u->v striped over w cables runs at w x the w-th fastest lane u->v. Every width up to width_max
 * is tried; the fastest slowest hop wins, the narrower width on a tie. Up to RING_EXACT_NODES_MAX nodes
 * the answer is exact and, among equally good rings, the one whose order reads first (node numbers
 * compared from order[1] on). Beyond, a depth-first search with a budget; upper_bound_gbps is then the
 * best slowest hop any ring could have as far as necessary conditions tell (every node can be given one
 * hop in and one out, the hops left are strongly connected and stay connected without any one node).
 *
 * Return: 0 with ret filled (verdict RING_FOUND or why not), or -ENOMEM / -EINVAL.
 */
int ring_search(size_t n, const RingLane *lanes, size_t n_lanes, unsigned width_max, RingResult *ret);
void ring_result_done(RingResult *r);

/* The node with the best worst-case path to every other node (see ring_coordinator()). */
typedef struct RingCoordinator {
        RingVerdict verdict; /* RING_FOUND, or RING_UNREACHABLE (a, b) */
        uint32_t a, b;
        uint32_t node;
        unsigned worst_hops;
        double worst_gbps;
        size_t n;
        unsigned *hops; /* per node: hops from the coordinator (0 for itself) */
        double *gbps;   /* per node: the slowest hop of that path */
        uint32_t *via;  /* per node: the node before it on that path (the coordinator for itself) */
} RingCoordinator;

/*
 * ring_coordinator() - rank 0: the node whose worst path to any other node is best
 * @n, @lanes, @n_lanes: as for ring_search()
 *
 * A path is a chain of hops where each hop is a cable the two nodes measured (or negotiated) both
 * ways, at the slower of its two directions, the fastest cable of the pair counting. From each node,
 * the path to each other node is the one with the fewest hops and, among those, the fastest slowest
 * hop. The coordinator is the node whose farthest node is fewest hops away, then whose slowest such
 * path is fastest, then the lowest number.
 *
 * Return: 0 with ret filled, or -ENOMEM / -EINVAL.
 */
int ring_coordinator(size_t n, const RingLane *lanes, size_t n_lanes, RingCoordinator *ret);
void ring_coordinator_done(RingCoordinator *c);
