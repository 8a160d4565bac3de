/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring whose slowest hop is fastest (the bottleneck travelling salesman problem, directed: a hop
 * u->v is u's upload to v, which need not be v's upload to u). For each width (cables striped per
 * hop) the hop speeds are fixed, and "is there a ring using only hops at least as fast as t" is
 * monotone in t: a binary search over the distinct hop speeds finds the best t.
 *
 * Up to RING_EXACT_NODES_MAX nodes the question is answered exactly by a dynamic programme over the
 * subsets of nodes holding a bitmask per subset: fin[S] = the nodes v in S such that a path that has
 * visited exactly S and stands at v can still visit the rest and close the ring at node 0. Read
 * forwards, the same table gives the ring whose order reads first (deterministic ties).
 *
 * Beyond, ring-heuristic.c searches, and the graph's necessary conditions (ring-graph.c) give the upper
 * bound the answer is reported against.
 */
#include "ring-graph.h"

int ring_exact(const RingGraph *g, double t, uint32_t *order) {
        size_t n = g->n;
        uint32_t out[RING_EXACT_NODES_MAX] = {}, in[RING_EXACT_NODES_MAX] = {}, full, mask;
        _cleanup_(freep) uint16_t *fin = NULL;

        if (n == 0 || n > RING_EXACT_NODES_MAX)
                return -EINVAL;
        if (n == 1) {
                if (order)
                        order[0] = 0;
                return 1;
        }
        for (size_t p = 0; p < g->n_pairs; p++)
                if (ring_graph_has(g, p, t)) {
                        out[g->pairs[p].from] |= 1u << g->pairs[p].to;
                        in[g->pairs[p].to] |= 1u << g->pairs[p].from;
                }
        full = (1u << n) - 1;
        fin = new0(uint16_t, (size_t) full + 1);
        if (!fin)
                return -ENOMEM;
        /* Every node visited: the ring closes from any node with a hop to node 0. Then the subsets that
         * hold node 0 (the odd ones), largest first. */
        fin[full] = (uint16_t) in[0];
        for (mask = full - 2; mask >= 1 && mask < full; mask -= 2) {
                uint32_t rest = full & ~mask, f = 0;
                while (rest) {
                        unsigned x = (unsigned) __builtin_ctz(rest);
                        rest &= rest - 1;
                        if (fin[mask | 1u << x] & 1u << x)
                                f |= in[x] & mask;
                }
                fin[mask] = (uint16_t) f;
                if (mask == 1)
                        break;
        }
        if (!(fin[1] & 1u))
                return 0;
        if (!order)
                return 1;
        /* Forwards, always to the lowest-numbered node from which the ring can still be closed. */
        order[0] = 0;
        mask = 1;
        for (size_t k = 1; k < n; k++) {
                uint32_t cur = order[k - 1], next = UINT32_MAX;
                for (uint32_t x = 0; x < n && next == UINT32_MAX; x++)
                        if (!(mask & 1u << x) && (out[cur] & 1u << x) && (fin[mask | 1u << x] & 1u << x))
                                next = x;
                if (next == UINT32_MAX)
                        return -EINVAL; /* cannot happen: fin said it can be closed */
                order[k] = next;
                mask |= 1u << next;
        }
        return 1;
}

/* The smallest index into the descending thresholds t[0..m) at which a ring exists (exact), or m. */
static int exact_best(const RingGraph *g, const double *t, size_t m, size_t *ret) {
        size_t lo = 0, hi = m; /* none in [0, lo) is known; hi: found, or m */
        int r;

        r = m > 0 ? ring_exact(g, t[m - 1], NULL) : 0;
        if (r <= 0) {
                *ret = m;
                return r;
        }
        hi = m - 1;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                r = ring_exact(g, t[mid], NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        *ret = hi;
        return 0;
}

/* The smallest index whose threshold the necessary conditions allow: the upper bound. */
static size_t bound_index(const RingGraph *g, const double *t, size_t m) {
        size_t lo = 0, hi = m - 1;
        uint32_t a, b;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (ring_graph_check(g, t[mid], &a, &b) == RING_FOUND)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return hi;
}

/* Each try of the search gets this many guesses (a cable put in the ring or left out by choice). */
static uint64_t search_budget(size_t n) {
        return 20000 + 40 * (uint64_t) n;
}

/* The search over the thresholds from the bound's index on: *ret_found, the index of the best ring
 * it found (m: none), its ring in order; *ret_bound raised past every threshold it proved has none. */
static int heuristic_best(const RingGraph *g, const double *t, size_t m, size_t *ret_bound, uint32_t *order,
                          size_t *ret_found) {
        size_t lo = *ret_bound, hi;
        int r;

        *ret_found = m;
        r = ring_heuristic(g, t[lo], search_budget(g->n), order);
        if (r == 1) {
                *ret_found = lo;
                return 0;
        }
        if (r == 0)
                *ret_bound = lo + 1;
        if (r != 0 && r != -ETIME)
                return r;
        if (lo + 1 >= m)
                return 0;
        hi = m - 1;
        r = ring_heuristic(g, t[hi], search_budget(g->n), NULL);
        if (r == 0)
                *ret_bound = m; /* none at all at this width */
        if (r != 1)
                return r == 0 || r == -ETIME ? 0 : r;
        /* Found at hi, not at lo: halve the gap. */
        while (lo + 1 < hi) {
                size_t mid = lo + (hi - lo) / 2;
                r = ring_heuristic(g, t[mid], search_budget(g->n), NULL);
                if (r == 1)
                        hi = mid;
                else if (r == 0 || r == -ETIME) {
                        lo = mid;
                        if (r == 0)
                                *ret_bound = MAX(*ret_bound, mid + 1);
                } else
                        return r;
        }
        r = ring_heuristic(g, t[hi], search_budget(g->n), order);
        if (r < 0 && r != -ETIME)
                return r;
        *ret_found = r == 1 ? hi : m;
        return 0;
}

void ring_result_done(RingResult *r) {
        free(r->order);
        free(r->hop_lanes);
        *r = (RingResult) {};
}

static uint32_t find_pair(const RingGraph *g, uint32_t u, uint32_t v) {
        for (uint32_t k = g->out_start[u]; k < g->out_start[u + 1]; k++)
                if (g->pairs[k].to == v)
                        return k;
        return UINT32_MAX;
}

static int fill_hop_lanes(const RingGraph *g, RingResult *res) {
        res->hop_lanes = new0(uint32_t, MAX(res->n * res->width, (size_t) 1));
        if (!res->hop_lanes)
                return -ENOMEM;
        for (size_t i = 0; i < res->n; i++) {
                uint32_t p = find_pair(g, res->order[i], res->order[(i + 1) % res->n]);
                if (p == UINT32_MAX || g->pairs[p].count < res->width)
                        return -EINVAL;
                for (unsigned k = 0; k < res->width; k++)
                        res->hop_lanes[i * res->width + k] = g->lane_order[g->pairs[p].first + k];
        }
        return 0;
}

/* Tries one width; improves *res when its ring is faster. */
static int try_width(RingGraph *g, unsigned width, uint32_t *scratch, RingResult *res) {
        _cleanup_(freep) double *t = NULL;
        size_t m, best;
        uint32_t a, b;
        int r;

        ring_graph_set_width(g, width);
        r = ring_graph_thresholds(g, &t, &m);
        if (r < 0)
                return r;
        if (m == 0 || ring_graph_check(g, t[m - 1], &a, &b) != RING_FOUND)
                return 0;
        if (res->exact) {
                r = exact_best(g, t, m, &best);
                if (r < 0)
                        return r;
                if (best == m || t[best] <= res->bottleneck_gbps)
                        return 0;
                r = ring_exact(g, t[best], scratch);
        } else {
                size_t bound = bound_index(g, t, m);
                if (t[bound] <= res->bottleneck_gbps) {
                        res->upper_bound_gbps = MAX(res->upper_bound_gbps, t[bound]);
                        return 0;
                }
                r = heuristic_best(g, t, m, &bound, scratch, &best);
                if (r < 0)
                        return r;
                if (bound < m)
                        res->upper_bound_gbps = MAX(res->upper_bound_gbps, t[bound]);
                if (best == m || t[best] <= res->bottleneck_gbps)
                        return 0;
                r = 1;
        }
        if (r <= 0)
                return r < 0 ? r : -EINVAL;
        memcpy(res->order, scratch, g->n * sizeof(uint32_t));
        res->width = width;
        res->bottleneck_gbps = t[best];
        res->verdict = RING_FOUND;
        return 0;
}

int ring_search(size_t n, const RingLane *lanes, size_t n_lanes, unsigned width_max, RingResult *ret) {
        _cleanup_(ring_graph_done) RingGraph g = {};
        _cleanup_(freep) uint32_t *scratch = NULL;
        RingResult res = { .n = n, .exact = n <= RING_EXACT_NODES_MAX };
        int r;

        if (width_max < 1 || width_max > RING_WIDTH_MAX)
                return -EINVAL;
        r = ring_graph_build(n, lanes, n_lanes, &g);
        if (r < 0)
                return r;
        res.order = new0(uint32_t, n);
        scratch = new0(uint32_t, n);
        if (!res.order || !scratch) {
                ring_result_done(&res);
                return -ENOMEM;
        }
        if (n == 1) {
                *ret = res; /* a ring of one node, no hops: verdict RING_FOUND, width 0 */
                return 0;
        }

        /* Why there is no ring at all, over every hop there is, in words a person can act on. */
        ring_graph_set_width(&g, 1);
        res.verdict = ring_graph_check(&g, 0, &res.a, &res.b);
        if (res.verdict != RING_FOUND) {
                *ret = res;
                return 0;
        }
        res.verdict = res.exact ? RING_NONE : RING_NOT_FOUND;
        for (unsigned w = 1; w <= width_max; w++) {
                r = try_width(&g, w, scratch, &res);
                if (r < 0) {
                        ring_result_done(&res);
                        return r;
                }
        }
        if (res.exact)
                res.upper_bound_gbps = res.bottleneck_gbps;
        if (res.verdict == RING_FOUND) {
                ring_graph_set_width(&g, res.width);
                r = fill_hop_lanes(&g, &res);
                if (r < 0) {
                        ring_result_done(&res);
                        return r;
                }
        }
        *ret = res;
        return 0;
}
