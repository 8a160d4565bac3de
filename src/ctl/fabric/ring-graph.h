/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ring-graph.h — the ring search's own view of the lanes: one hop per ordered pair of
 * nodes, its speed at the width being tried, and the tests a ring must pass (private to ring-*.c) */
#pragma once

#include "ring-search.h"
#include "shared/macros.h"

/* The lanes from one node to another: lane_order[first .. first + count), fastest first. */
typedef struct RingPair {
        uint32_t from, to;
        uint32_t first, count;
} RingPair;

typedef struct RingGraph {
        size_t n, n_pairs;
        const RingLane *lanes;
        uint32_t *lane_order; /* lane indices by (from, to, fastest first, index) */
        RingPair *pairs;      /* by (from, to) */
        uint32_t *out_start;  /* n + 1: pairs[out_start[u] .. out_start[u + 1]) leave u */
        uint32_t *in_pairs;   /* pair indices by (to, from) */
        uint32_t *in_start;   /* n + 1: in_pairs[in_start[v] .. in_start[v + 1]) enter v */
        double *weight;       /* per pair at the width set: the hop's speed, 0 none */
} RingGraph;

int ring_graph_build(size_t n, const RingLane *lanes, size_t n_lanes, RingGraph *ret);
void ring_graph_done(RingGraph *g);
/* Sets every pair's weight for hops striped over width cables. */
void ring_graph_set_width(RingGraph *g, unsigned width);
/* The distinct positive weights, fastest first; their number. */
int ring_graph_thresholds(const RingGraph *g, double **ret, size_t *ret_n);

#define ring_graph_has(g, p, t) ((g)->weight[(p)] > 0 && (g)->weight[(p)] >= (t))

/* What every ring over the hops at least as fast as t must have (see ring_search()); RING_FOUND when
 * nothing rules a ring out, else why not, naming the nodes in ret_a, ret_b. */
RingVerdict ring_graph_check(const RingGraph *g, double t, uint32_t *ret_a, uint32_t *ret_b);

/* Exact (n <= RING_EXACT_NODES_MAX): whether a ring over the hops at least as fast as t exists, and the
 * one whose order reads first into order (may be NULL). -ENOMEM, 0 none, 1 found. */
int ring_exact(const RingGraph *g, double t, uint32_t *order);
/* The search: 1 and a ring in order; 0 none exists (it tried everything); -ETIME none found within
 * budget guesses; -ENOMEM. */
int ring_heuristic(const RingGraph *g, double t, uint64_t budget, uint32_t *order);
