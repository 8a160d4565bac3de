/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring search's graph: the lanes grouped into one hop per ordered pair of nodes, the hop's speed at
 * a width, and the necessary conditions of a ring over the hops at least as fast as a threshold. The
 * conditions serve twice: they say why there is no ring at all (a node with one neighbour, a node the
 * set falls apart without), and, monotone in the threshold, they bound the best ring from above where
 * the search is not exact.
 */
#include <math.h>

#include "ring-graph.h"

#define NONE UINT32_MAX

static int compare_lanes(const void *a, const void *b, void *userdata) {
        const RingLane *lanes = userdata;
        uint32_t i = *(const uint32_t *) a, j = *(const uint32_t *) b;
        const RingLane *x = &lanes[i], *y = &lanes[j];

        if (x->from != y->from)
                return x->from < y->from ? -1 : 1;
        if (x->to != y->to)
                return x->to < y->to ? -1 : 1;
        if (x->gbps != y->gbps)
                return x->gbps > y->gbps ? -1 : 1;
        return i < j ? -1 : i > j;
}

void ring_graph_done(RingGraph *g) {
        free(g->lane_order);
        free(g->pairs);
        free(g->out_start);
        free(g->in_pairs);
        free(g->in_start);
        free(g->weight);
        *g = (RingGraph) {};
}

int ring_graph_build(size_t n, const RingLane *lanes, size_t n_lanes, RingGraph *ret) {
        RingGraph g = { .n = n, .lanes = lanes };
        size_t k = 0;

        if (n == 0 || n >= NONE || n_lanes >= NONE)
                return -EINVAL;
        for (size_t i = 0; i < n_lanes; i++)
                if (lanes[i].from >= n || lanes[i].to >= n)
                        return -EINVAL;
        g.lane_order = new0(uint32_t, MAX(n_lanes, (size_t) 1));
        g.pairs = new0(RingPair, MAX(n_lanes, (size_t) 1));
        g.out_start = new0(uint32_t, n + 1);
        g.in_start = new0(uint32_t, n + 1);
        if (!g.lane_order || !g.pairs || !g.out_start || !g.in_start) {
                ring_graph_done(&g);
                return -ENOMEM;
        }
        /* A lane that carries nothing, or loops back to its node, is no hop. */
        for (size_t i = 0; i < n_lanes; i++)
                if (lanes[i].from != lanes[i].to && isfinite(lanes[i].gbps) && lanes[i].gbps > 0)
                        g.lane_order[k++] = (uint32_t) i;
        qsort_r(g.lane_order, k, sizeof(uint32_t), compare_lanes, (void *) lanes);
        for (size_t i = 0; i < k; i++) {
                const RingLane *l = &lanes[g.lane_order[i]];
                RingPair *last = g.n_pairs > 0 ? &g.pairs[g.n_pairs - 1] : NULL;

                if (last && last->from == l->from && last->to == l->to)
                        last->count++;
                else
                        g.pairs[g.n_pairs++] = (RingPair) { .from = l->from, .to = l->to, .first = (uint32_t) i, .count = 1 };
        }
        g.in_pairs = new0(uint32_t, MAX(g.n_pairs, (size_t) 1));
        g.weight = new0(double, MAX(g.n_pairs, (size_t) 1));
        if (!g.in_pairs || !g.weight) {
                ring_graph_done(&g);
                return -ENOMEM;
        }
        /* Counting sorts: by from (already in order), and by to, each bucket in order of from. */
        for (size_t p = 0; p < g.n_pairs; p++) {
                g.out_start[g.pairs[p].from + 1]++;
                g.in_start[g.pairs[p].to + 1]++;
        }
        for (size_t u = 0; u < n; u++) {
                g.out_start[u + 1] += g.out_start[u];
                g.in_start[u + 1] += g.in_start[u];
        }
        _cleanup_(freep) uint32_t *fill = new0(uint32_t, n);
        if (!fill) {
                ring_graph_done(&g);
                return -ENOMEM;
        }
        for (size_t p = 0; p < g.n_pairs; p++) {
                uint32_t v = g.pairs[p].to;
                g.in_pairs[g.in_start[v] + fill[v]++] = (uint32_t) p;
        }
        ring_graph_set_width(&g, 1);
        *ret = g;
        return 0;
}

void ring_graph_set_width(RingGraph *g, unsigned width) {
        for (size_t p = 0; p < g->n_pairs; p++) {
                const RingPair *pair = &g->pairs[p];
                g->weight[p] = width > 0 && pair->count >= width
                                       ? width * g->lanes[g->lane_order[pair->first + width - 1]].gbps
                                       : 0;
        }
}

static int compare_desc(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x > y ? -1 : x < y;
}

int ring_graph_thresholds(const RingGraph *g, double **ret, size_t *ret_n) {
        double *t = new0(double, MAX(g->n_pairs, (size_t) 1));
        size_t k = 0, m = 0;

        if (!t)
                return -ENOMEM;
        for (size_t p = 0; p < g->n_pairs; p++)
                if (g->weight[p] > 0)
                        t[k++] = g->weight[p];
        qsort(t, k, sizeof(double), compare_desc);
        for (size_t i = 0; i < k; i++)
                if (m == 0 || t[i] != t[m - 1])
                        t[m++] = t[i];
        *ret = t;
        *ret_n = m;
        return 0;
}

/* ---- the conditions ---- */

/* A node with no cable comes first, then one with no way out or in, then one with one neighbour: the
 * bigger news about the set. */
static RingVerdict check_degrees(const RingGraph *g, double t, uint32_t *ret_a, uint32_t *ret_b) {
        RingVerdict worst = RING_FOUND;

        for (uint32_t u = 0; u < g->n; u++) {
                uint32_t out_one = UINT32_MAX, in_one = UINT32_MAX;
                size_t outs = 0, ins = 0;
                RingVerdict v = RING_FOUND;

                for (uint32_t k = g->out_start[u]; k < g->out_start[u + 1]; k++)
                        if (ring_graph_has(g, k, t)) {
                                outs++;
                                out_one = g->pairs[k].to;
                        }
                for (uint32_t k = g->in_start[u]; k < g->in_start[u + 1]; k++)
                        if (ring_graph_has(g, g->in_pairs[k], t)) {
                                ins++;
                                in_one = g->pairs[g->in_pairs[k]].from;
                        }
                if (g->out_start[u] == g->out_start[u + 1] && g->in_start[u] == g->in_start[u + 1])
                        v = RING_NO_CABLE;
                else if (outs == 0)
                        v = RING_NO_WAY_OUT;
                else if (ins == 0)
                        v = RING_NO_WAY_IN;
                /* Its one way out and its one way in lead to the same node: in a ring of three or more
                 * its two neighbours are two nodes. */
                else if (g->n >= 3 && outs == 1 && ins == 1 && out_one == in_one)
                        v = RING_ONE_NEIGHBOUR;
                /* The verdicts are numbered in that order. */
                if (v != RING_FOUND && (worst == RING_FOUND || v < worst)) {
                        worst = v;
                        *ret_a = u;
                        *ret_b = out_one != UINT32_MAX ? out_one : 0;
                }
        }
        return worst;
}

/* The first node, by number, that node 0 does not reach (forward) or that does not reach it. */
static uint32_t unreached(const RingGraph *g, double t, bool forward, uint32_t *queue, bool *seen) {
        size_t head = 0, tail = 0;

        memset(seen, 0, g->n * sizeof(bool));
        seen[0] = true;
        queue[tail++] = 0;
        while (head < tail) {
                uint32_t u = queue[head++];
                uint32_t begin = forward ? g->out_start[u] : g->in_start[u], end = forward ? g->out_start[u + 1] : g->in_start[u + 1];
                for (uint32_t k = begin; k < end; k++) {
                        uint32_t p = forward ? k : g->in_pairs[k], v = forward ? g->pairs[p].to : g->pairs[p].from;
                        if (ring_graph_has(g, p, t) && !seen[v]) {
                                seen[v] = true;
                                queue[tail++] = v;
                        }
                }
        }
        for (uint32_t v = 0; v < g->n; v++)
                if (!seen[v])
                        return v;
        return NONE;
}

/* The k-th neighbour of u either way (NONE past the end; a node may come twice). */
static uint32_t undirected_neighbour(const RingGraph *g, double t, uint32_t u, uint32_t k, bool *ret_valid) {
        uint32_t outs = g->out_start[u + 1] - g->out_start[u], p;

        if (k < outs) {
                p = g->out_start[u] + k;
                *ret_valid = ring_graph_has(g, p, t);
                return g->pairs[p].to;
        }
        k -= outs;
        if (k < g->in_start[u + 1] - g->in_start[u]) {
                p = g->in_pairs[g->in_start[u] + k];
                *ret_valid = ring_graph_has(g, p, t);
                return g->pairs[p].from;
        }
        return NONE;
}

/* A node whose removal leaves the rest in pieces (Hopcroft and Tarjan, without recursion). The
 * graph is connected (check_reach() ran first). */
static bool find_cut_vertex(const RingGraph *g, double t, uint32_t *ret_a, uint32_t *ret_b) {
        _cleanup_(freep) uint32_t *disc = new0(uint32_t, g->n), *low = new0(uint32_t, g->n), *parent = new0(uint32_t, g->n),
                                  *iter = new0(uint32_t, g->n), *stack = new0(uint32_t, g->n);
        uint32_t timer = 0, root_children = 0, second_child = NONE;
        size_t depth = 0;

        if (!disc || !low || !parent || !iter || !stack)
                return false; /* no bound is still a correct answer for a check */
        disc[0] = low[0] = ++timer;
        parent[0] = NONE;
        stack[depth++] = 0;
        while (depth > 0) {
                uint32_t u = stack[depth - 1];
                bool valid = false;
                uint32_t v = undirected_neighbour(g, t, u, iter[u], &valid);

                if (v != NONE) {
                        iter[u]++;
                        if (!valid)
                                continue;
                        if (disc[v] == 0) {
                                parent[v] = u;
                                disc[v] = low[v] = ++timer;
                                stack[depth++] = v;
                                if (u == 0 && ++root_children == 2)
                                        second_child = v;
                        } else if (v != parent[u])
                                low[u] = MIN(low[u], disc[v]);
                        continue;
                }
                depth--;
                uint32_t p = parent[u];
                if (p == NONE)
                        continue;
                low[p] = MIN(low[p], low[u]);
                if (p != 0 && low[u] >= disc[p]) {
                        *ret_a = p;
                        *ret_b = u;
                        return true;
                }
        }
        if (root_children > 1) {
                *ret_a = 0;
                *ret_b = second_child;
                return true;
        }
        return false;
}

/* Kuhn's augmenting paths: sender u is matched to receiver match_of[v] == u. */
static bool augment(const RingGraph *g, double t, uint32_t u, uint32_t *match_of, uint32_t *stamp, uint32_t round,
                    unsigned depth) {
        /* Deeper than the nodes there are is a loop; the stamps prevent it, this only bounds the stack. */
        if (depth > g->n)
                return false;
        for (uint32_t k = g->out_start[u]; k < g->out_start[u + 1]; k++) {
                uint32_t v = g->pairs[k].to;
                if (!ring_graph_has(g, k, t) || stamp[v] == round)
                        continue;
                stamp[v] = round;
                if (match_of[v] == NONE || augment(g, t, match_of[v], match_of, stamp, round, depth + 1)) {
                        match_of[v] = u;
                        return true;
                }
        }
        return false;
}

/* Whether every node can be given one hop out and one hop in at once (a cycle cover); if not, a node
 * that gets no hop in. */
static bool find_uncovered(const RingGraph *g, double t, uint32_t *ret_a) {
        _cleanup_(freep) uint32_t *match_of = new0(uint32_t, g->n), *stamp = new0(uint32_t, g->n);
        _cleanup_(freep) bool *matched = new0(bool, g->n);

        if (!match_of || !stamp || !matched)
                return false;
        memset(match_of, 0xff, g->n * sizeof(uint32_t));
        /* Greedy first: most senders find a free receiver at once. */
        for (uint32_t u = 0; u < g->n; u++)
                for (uint32_t k = g->out_start[u]; k < g->out_start[u + 1]; k++)
                        if (ring_graph_has(g, k, t) && match_of[g->pairs[k].to] == NONE) {
                                match_of[g->pairs[k].to] = u;
                                matched[u] = true;
                                break;
                        }
        for (uint32_t u = 0, round = 0; u < g->n; u++)
                if (!matched[u] && augment(g, t, u, match_of, stamp, ++round, 0))
                        matched[u] = true;
        for (uint32_t v = 0; v < g->n; v++)
                if (match_of[v] == NONE) {
                        *ret_a = v;
                        return true;
                }
        return false;
}

RingVerdict ring_graph_check(const RingGraph *g, double t, uint32_t *ret_a, uint32_t *ret_b) {
        _cleanup_(freep) uint32_t *queue = new0(uint32_t, g->n);
        _cleanup_(freep) bool *seen = new0(bool, g->n);
        RingVerdict v;
        uint32_t x;

        *ret_a = *ret_b = 0;
        if (g->n == 1)
                return RING_FOUND;
        v = check_degrees(g, t, ret_a, ret_b);
        if (v != RING_FOUND)
                return v;
        if (!queue || !seen)
                return RING_FOUND;
        x = unreached(g, t, true, queue, seen);
        if (x != NONE) {
                *ret_a = 0;
                *ret_b = x;
                return RING_UNREACHABLE;
        }
        x = unreached(g, t, false, queue, seen);
        if (x != NONE) {
                *ret_a = x;
                *ret_b = 0;
                return RING_UNREACHABLE;
        }
        if (g->n >= 3 && find_cut_vertex(g, t, ret_a, ret_b))
                return RING_CUT_VERTEX;
        if (find_uncovered(g, t, ret_a))
                return RING_NO_COVER;
        return RING_FOUND;
}
