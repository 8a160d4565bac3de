/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rank 0: the node every other node reaches best. A coordinator talks to every rank both ways (MLX's
 * JACCL side channel, exo's master), so a hop counts at the slower of its two directions, and a
 * direct cable is worth more than any route through other nodes: the path to a node is the one with
 * the fewest hops, and among those the one whose slowest hop is fastest (a breadth-first search that
 * keeps, per node, the best bottleneck over its parents in the layer above).
 */
#include <limits.h>
#include <math.h>

#include "ring-graph.h"

#define FAR UINT_MAX

void ring_coordinator_done(RingCoordinator *c) {
        free(c->hops);
        free(c->gbps);
        free(c->via);
        *c = (RingCoordinator) {};
}

/* The fastest lane of pair p. */
static double best_lane(const RingGraph *g, uint32_t p) {
        return g->lanes[g->lane_order[g->pairs[p].first]].gbps;
}

/* Per pair u->v: the slower of the fastest lane each way; 0 when one way carries nothing. */
static void both_ways(const RingGraph *g, double *w) {
        for (uint32_t p = 0; p < g->n_pairs; p++) {
                uint32_t u = g->pairs[p].from, v = g->pairs[p].to;
                w[p] = 0;
                for (uint32_t k = g->out_start[v]; k < g->out_start[v + 1]; k++)
                        if (g->pairs[k].to == u) {
                                w[p] = MIN(best_lane(g, p), best_lane(g, k));
                                break;
                        }
        }
}

/* From s: hops, bottleneck and parent of every node. */
static void paths_from(const RingGraph *g, const double *w, uint32_t s, unsigned *hops, double *gbps, uint32_t *via,
                       uint32_t *queue) {
        size_t head = 0, tail = 0;

        for (size_t v = 0; v < g->n; v++) {
                hops[v] = FAR;
                gbps[v] = 0;
                via[v] = UINT32_MAX;
        }
        hops[s] = 0;
        gbps[s] = INFINITY;
        via[s] = s;
        queue[tail++] = s;
        while (head < tail) {
                uint32_t u = queue[head++];
                for (uint32_t k = g->out_start[u]; k < g->out_start[u + 1]; k++) {
                        uint32_t v = g->pairs[k].to;
                        double through = MIN(gbps[u], w[k]);
                        if (w[k] <= 0)
                                continue;
                        if (hops[v] == FAR) {
                                hops[v] = hops[u] + 1;
                                queue[tail++] = v;
                        } else if (hops[v] != hops[u] + 1 || through <= gbps[v])
                                continue;
                        gbps[v] = through;
                        via[v] = u;
                }
        }
}

int ring_coordinator(size_t n, const RingLane *lanes, size_t n_lanes, RingCoordinator *ret) {
        _cleanup_(ring_graph_done) RingGraph g = {};
        _cleanup_(freep) double *w = NULL;
        _cleanup_(freep) uint32_t *queue = NULL;
        RingCoordinator c = { .n = n, .node = UINT32_MAX };
        int r;

        r = ring_graph_build(n, lanes, n_lanes, &g);
        if (r < 0)
                return r;
        w = new0(double, MAX(g.n_pairs, (size_t) 1));
        queue = new0(uint32_t, n);
        c.hops = new0(unsigned, n);
        c.gbps = new0(double, n);
        c.via = new0(uint32_t, n);
        if (!w || !queue || !c.hops || !c.gbps || !c.via) {
                ring_coordinator_done(&c);
                return -ENOMEM;
        }
        both_ways(&g, w);
        for (uint32_t s = 0; s < n; s++) {
                unsigned worst_hops = 0;
                double worst = INFINITY;

                paths_from(&g, w, s, c.hops, c.gbps, c.via, queue);
                for (uint32_t v = 0; v < n; v++) {
                        if (v == s)
                                continue;
                        if (c.hops[v] == FAR) {
                                /* The set is in pieces: no node reaches every other. */
                                ring_coordinator_done(&c);
                                *ret = (RingCoordinator) { .verdict = RING_UNREACHABLE, .a = s, .b = v, .n = n };
                                return 0;
                        }
                        worst_hops = MAX(worst_hops, c.hops[v]);
                        worst = MIN(worst, c.gbps[v]);
                }
                if (n == 1)
                        worst = 0;
                if (c.node == UINT32_MAX || worst_hops < c.worst_hops ||
                    (worst_hops == c.worst_hops && worst > c.worst_gbps)) {
                        c.node = s;
                        c.worst_hops = worst_hops;
                        c.worst_gbps = worst;
                }
        }
        paths_from(&g, w, c.node, c.hops, c.gbps, c.via, queue);
        c.gbps[c.node] = 0;
        c.verdict = RING_FOUND;
        *ret = c;
        return 0;
}
