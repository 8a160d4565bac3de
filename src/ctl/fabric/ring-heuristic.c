/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The search for a ring through every node over the hops at least as fast as a threshold, where the
 * exact programme would take too long. Cabled clusters are sparse (two to four cables a node), and in a
 * sparse graph a ring is found by reasoning about cables rather than by walking: each cable between two
 * nodes (usable at the threshold in at least one direction) is undecided, in the ring or out of it,
 * and four rules decide most of them without a guess:
 *
 *  - a node left with two cables uses both;
 *  - a node with two cables in the ring uses no other;
 *  - a cable that would close a ring short of every node is out;
 *  - a node left with fewer than two cables, or given three, is a contradiction.
 *
 * Where the rules stop, the search guesses at the most constrained node (fewest undecided cables; a
 * path's end first), on the cable to the most constrained neighbour (then the faster, then the lower
 * number), and takes the guess back on a contradiction: the same input always gives the same ring.
 * A ring found is read in both directions; the faster direction that only uses hops at least as fast as
 * the threshold is the answer, and a ring that has none (a cable usable one way only, the wrong way) is
 * one more contradiction. A budget of guesses bounds the work; a search that ends within it without a
 * ring has tried everything, and proves there is none.
 */
#include <math.h>

#include "ring-graph.h"

typedef enum TrailKind { TRAIL_STATE, TRAIL_END, TRAIL_LEN, TRAIL_ROLE } TrailKind;

/* Which way the ring passes a chain's end, once a cable usable one way only has fixed it: the ring
 * leaves the chain at its head and enters it at its tail. */
typedef enum Role { ROLE_EITHER, ROLE_HEAD, ROLE_TAIL } Role;

typedef struct Trail {
        TrailKind kind;
        uint32_t index, old;
} Trail;

typedef struct Search {
        const RingGraph *g;
        double t;
        size_t n, m;
        uint32_t *eu, *ev;        /* the cables (one per pair of nodes, either direction) */
        double *ew;               /* the faster way of each, for the order of guesses */
        uint32_t *adj_start, *adj; /* per node, its cables */
        int8_t *state;            /* 0 undecided, 1 in the ring, -1 out */
        uint32_t *avail, *req;    /* per node: cables not out; cables in */
        uint32_t *end, *len;      /* per end of a chain of cables in the ring: the other end, the nodes */
        uint8_t *role;            /* per end of a chain: Role */
        size_t n_req;
        Trail *trail;
        size_t n_trail, trail_max;
        uint32_t *queue; /* nodes whose cables the rules look at again, each once */
        bool *queued;
        size_t n_queue;
        bool oom;
        uint64_t guesses, budget;
        uint32_t *order; /* the ring found, or NULL when only asked whether */
} Search;

static void search_done(Search *s) {
        free(s->eu);
        free(s->ev);
        free(s->ew);
        free(s->adj_start);
        free(s->adj);
        free(s->state);
        free(s->avail);
        free(s->req);
        free(s->end);
        free(s->len);
        free(s->role);
        free(s->trail);
        free(s->queue);
        free(s->queued);
}

static uint32_t pair_of(const RingGraph *g, uint32_t u, uint32_t v) {
        for (uint32_t k = g->out_start[u]; k < g->out_start[u + 1]; k++)
                if (g->pairs[k].to == v)
                        return k;
        return UINT32_MAX;
}

static double hop(const Search *s, uint32_t u, uint32_t v) {
        uint32_t p = pair_of(s->g, u, v);
        return p != UINT32_MAX && ring_graph_has(s->g, p, s->t) ? s->g->weight[p] : 0;
}

static int build(Search *s) {
        const RingGraph *g = s->g;
        size_t n = g->n;

        s->eu = new0(uint32_t, g->n_pairs + 1);
        s->ev = new0(uint32_t, g->n_pairs + 1);
        s->ew = new0(double, g->n_pairs + 1);
        s->adj_start = new0(uint32_t, n + 1);
        s->avail = new0(uint32_t, n);
        s->req = new0(uint32_t, n);
        s->end = new0(uint32_t, n);
        s->len = new0(uint32_t, n);
        s->role = new0(uint8_t, n);
        s->queue = new0(uint32_t, n);
        s->queued = new0(bool, n);
        if (!s->queued || !s->eu || !s->ev || !s->ew || !s->adj_start || !s->avail || !s->req || !s->end || !s->len || !s->role || !s->queue)
                return -ENOMEM;
        /* One cable per unordered pair usable either way. */
        for (uint32_t p = 0; p < g->n_pairs; p++) {
                uint32_t u = g->pairs[p].from, v = g->pairs[p].to;
                double fwd = ring_graph_has(g, p, s->t) ? g->weight[p] : 0, back;
                uint32_t q = pair_of(g, v, u);

                back = q != UINT32_MAX && ring_graph_has(g, q, s->t) ? g->weight[q] : 0;
                /* Each pair is seen from both ends: count it from its lower end, or from the only end
                 * that has it. */
                if ((fwd <= 0 && back <= 0) || (u > v && q != UINT32_MAX))
                        continue;
                s->eu[s->m] = u;
                s->ev[s->m] = v;
                s->ew[s->m] = MAX(fwd, back);
                s->adj_start[u + 1]++;
                s->adj_start[v + 1]++;
                s->m++;
        }
        for (size_t u = 0; u < n; u++)
                s->adj_start[u + 1] += s->adj_start[u];
        s->adj = new0(uint32_t, 2 * s->m + 1);
        s->state = new0(int8_t, s->m + 1);
        _cleanup_(freep) uint32_t *fill = new0(uint32_t, n);
        if (!s->adj || !s->state || !fill)
                return -ENOMEM;
        for (uint32_t e = 0; e < s->m; e++) {
                s->adj[s->adj_start[s->eu[e]] + fill[s->eu[e]]++] = e;
                s->adj[s->adj_start[s->ev[e]] + fill[s->ev[e]]++] = e;
        }
        for (uint32_t u = 0; u < n; u++) {
                s->avail[u] = s->adj_start[u + 1] - s->adj_start[u];
                s->end[u] = u;
                s->len[u] = 1;
        }
        return 0;
}

static bool remember(Search *s, TrailKind kind, uint32_t index, uint32_t old) {
        if (s->n_trail == s->trail_max) {
                size_t max = MAX(s->trail_max * 2, (size_t) 1024);
                Trail *grown = reallocarray(s->trail, max, sizeof(Trail));
                if (!grown) {
                        s->oom = true;
                        return false;
                }
                s->trail = grown;
                s->trail_max = max;
        }
        s->trail[s->n_trail++] = (Trail) { kind, index, old };
        return true;
}

static void undo(Search *s, size_t mark) {
        while (s->n_trail > mark) {
                Trail *x = &s->trail[--s->n_trail];
                switch (x->kind) {
                case TRAIL_STATE: {
                        uint32_t e = x->index, u = s->eu[e], v = s->ev[e];
                        if (s->state[e] < 0)
                                s->avail[u]++, s->avail[v]++;
                        else if (s->state[e] > 0)
                                s->req[u]--, s->req[v]--, s->n_req--;
                        s->state[e] = (int8_t) (int32_t) x->old;
                        break;
                }
                case TRAIL_END:
                        s->end[x->index] = x->old;
                        break;
                case TRAIL_LEN:
                        s->len[x->index] = x->old;
                        break;
                case TRAIL_ROLE:
                        s->role[x->index] = (uint8_t) x->old;
                        break;
                }
        }
}

static void enqueue(Search *s, uint32_t u) {
        if (!s->queued[u]) {
                s->queued[u] = true;
                s->queue[s->n_queue++] = u;
        }
}

static void clear_queue(Search *s) {
        while (s->n_queue > 0)
                s->queued[s->queue[--s->n_queue]] = false;
}

static bool cable_out(Search *s, uint32_t e) {
        if (s->state[e] != 0)
                return s->state[e] < 0;
        if (!remember(s, TRAIL_STATE, e, 0))
                return false;
        s->state[e] = -1;
        s->avail[s->eu[e]]--, s->avail[s->ev[e]]--;
        enqueue(s, s->eu[e]);
        enqueue(s, s->ev[e]);
        return true;
}

static bool set_end(Search *s, uint32_t u, uint32_t end, uint32_t len) {
        if (!remember(s, TRAIL_END, u, s->end[u]) || !remember(s, TRAIL_LEN, u, s->len[u]))
                return false;
        s->end[u] = end;
        s->len[u] = len;
        return true;
}

static bool set_role(Search *s, uint32_t u, Role role) {
        if (!remember(s, TRAIL_ROLE, u, s->role[u]))
                return false;
        s->role[u] = (uint8_t) role;
        return true;
}

/* The role end u of a chain plays; a lone node plays either. */
static Role role_of(const Search *s, uint32_t u) {
        return s->len[u] > 1 ? (Role) s->role[u] : ROLE_EITHER;
}

/* A head's cables that cannot go out of it, and a tail's that cannot come in, are out. */
static bool prune_one_way(Search *s, uint32_t u) {
        Role role = role_of(s, u);

        if (role == ROLE_EITHER)
                return true;
        for (uint32_t k = s->adj_start[u]; k < s->adj_start[u + 1]; k++) {
                uint32_t f = s->adj[k], w = s->eu[f] == u ? s->ev[f] : s->eu[f];
                if (s->state[f] == 0 && (role == ROLE_HEAD ? hop(s, u, w) : hop(s, w, u)) <= 0 && !cable_out(s, f))
                        return false;
        }
        return true;
}

static bool cable_in(Search *s, uint32_t e) {
        uint32_t u = s->eu[e], v = s->ev[e], a, b, len;
        Role ru, rv;
        bool forward, backward;

        if (s->state[e] != 0)
                return s->state[e] > 0;
        if (s->req[u] >= 2 || s->req[v] >= 2)
                return false;
        a = s->end[u];
        b = s->end[v];
        /* Joining the two ends of one chain closes a ring: only the last cable may. */
        if (a == v && s->len[u] < s->n)
                return false;
        /* Which way the ring may run through the cable: u->v leaves u's chain at u and enters v's at v. */
        ru = role_of(s, u);
        rv = role_of(s, v);
        forward = hop(s, u, v) > 0 && ru != ROLE_TAIL && rv != ROLE_HEAD;
        backward = hop(s, v, u) > 0 && ru != ROLE_HEAD && rv != ROLE_TAIL;
        if (a == v) /* closing: one chain, u and v its two ends, as oriented as it is */
                forward = hop(s, u, v) > 0 && ru != ROLE_TAIL, backward = hop(s, v, u) > 0 && ru != ROLE_HEAD;
        if (!forward && !backward)
                return false;
        if (!remember(s, TRAIL_STATE, e, 0))
                return false;
        s->state[e] = 1;
        s->req[u]++, s->req[v]++, s->n_req++;
        enqueue(s, u);
        enqueue(s, v);
        if (a == v)
                return true;
        len = s->len[u] + s->len[v];
        if (!set_end(s, a, b, len) || !set_end(s, b, a, len))
                return false;
        /* One way only: the new chain runs a .. u -> v .. b (or back), its tail at a (or b). */
        if (forward != backward &&
            (!set_role(s, a, forward ? ROLE_TAIL : ROLE_HEAD) || !set_role(s, b, forward ? ROLE_HEAD : ROLE_TAIL) ||
             !prune_one_way(s, a) || !prune_one_way(s, b)))
                return false;
        if (forward == backward && (!set_role(s, a, ROLE_EITHER) || !set_role(s, b, ROLE_EITHER)))
                return false;
        if (len < s->n)
                /* The chain's two ends may not be joined before the chain holds every node. */
                for (uint32_t k = s->adj_start[a]; k < s->adj_start[a + 1]; k++) {
                        uint32_t f = s->adj[k];
                        if (f != e && (s->eu[f] == b || s->ev[f] == b) && !cable_out(s, f))
                                return false;
                }
        return true;
}

static bool propagate(Search *s) {
        while (s->n_queue > 0) {
                uint32_t u = s->queue[--s->n_queue];

                s->queued[u] = false;
                if (s->avail[u] < 2 || s->req[u] > 2)
                        return false;
                if (s->req[u] == s->avail[u])
                        continue;
                for (uint32_t k = s->adj_start[u]; k < s->adj_start[u + 1]; k++) {
                        uint32_t e = s->adj[k];
                        if (s->state[e] != 0)
                                continue;
                        /* Two left: both in. Two in: the rest out. */
                        if (s->avail[u] == 2 ? !cable_in(s, e) : s->req[u] == 2 ? !cable_out(s, e) : false)
                                return false;
                }
        }
        return true;
}

/* The ring read from node 0 along its cables, in whichever direction is faster and usable. */
static bool orient(Search *s) {
        _cleanup_(freep) uint32_t *ring = new0(uint32_t, s->n);
        double best[2] = { INFINITY, INFINITY };
        uint32_t prev = UINT32_MAX, u = 0;

        if (!ring)
                return false;
        for (size_t i = 0; i < s->n; i++) {
                uint32_t next = UINT32_MAX;
                ring[i] = u;
                for (uint32_t k = s->adj_start[u]; k < s->adj_start[u + 1] && next == UINT32_MAX; k++) {
                        uint32_t e = s->adj[k], w = s->eu[e] == u ? s->ev[e] : s->eu[e];
                        if (s->state[e] > 0 && w != prev)
                                next = w;
                }
                prev = u;
                u = next;
        }
        for (size_t i = 0; i < s->n; i++) {
                best[0] = MIN(best[0], hop(s, ring[i], ring[(i + 1) % s->n]));
                best[1] = MIN(best[1], hop(s, ring[(i + 1) % s->n], ring[i]));
        }
        if (best[0] <= 0 && best[1] <= 0)
                return false;
        /* Faster first; equal, the one whose second node is the lower number. */
        bool backwards = best[1] > best[0] || (best[1] == best[0] && ring[s->n - 1] < ring[1]);
        if (s->order)
                for (size_t i = 0; i < s->n; i++)
                        s->order[i] = backwards ? ring[(s->n - i) % s->n] : ring[i];
        return true;
}

/* The cable to guess on: at the node with fewest undecided cables (a chain's end first), to the
 * neighbour with fewest, then the faster, then the lower number. UINT32_MAX when none is undecided. */
static uint32_t pick(const Search *s) {
        uint32_t best_u = UINT32_MAX, best_left = UINT32_MAX, best_e = UINT32_MAX, best_nb_left = UINT32_MAX;

        for (uint32_t u = 0; u < s->n; u++) {
                uint32_t left = s->avail[u] - s->req[u];
                if (s->req[u] >= 2 || left == 0)
                        continue;
                if (best_u == UINT32_MAX || (s->req[u] > s->req[best_u]) ||
                    (s->req[u] == s->req[best_u] && left < best_left)) {
                        best_u = u;
                        best_left = left;
                }
        }
        if (best_u == UINT32_MAX)
                return UINT32_MAX;
        for (uint32_t k = s->adj_start[best_u]; k < s->adj_start[best_u + 1]; k++) {
                uint32_t e = s->adj[k], w = s->eu[e] == best_u ? s->ev[e] : s->eu[e], nb_left = s->avail[w] - s->req[w];
                if (s->state[e] != 0)
                        continue;
                if (best_e == UINT32_MAX || nb_left < best_nb_left ||
                    (nb_left == best_nb_left && (s->ew[e] > s->ew[best_e] ||
                                                 (s->ew[e] == s->ew[best_e] && e < best_e)))) {
                        best_e = e;
                        best_nb_left = nb_left;
                }
        }
        return best_e;
}

/* 1 found, 0 none below this point, -1 out of budget or memory. */
static int solve(Search *s, unsigned depth) {
        uint32_t e;
        size_t mark;
        int r;

        if (!propagate(s)) {
                clear_queue(s);
                return s->oom ? -1 : 0;
        }
        if (s->n_req == s->n)
                return orient(s) ? 1 : 0;
        e = pick(s);
        if (e == UINT32_MAX || ++s->guesses > s->budget || depth > s->m)
                return e == UINT32_MAX ? 0 : -1;
        mark = s->n_trail;
        if (cable_in(s, e)) {
                r = solve(s, depth + 1);
                if (r != 0)
                        return r;
        }
        clear_queue(s);
        undo(s, mark);
        if (!cable_out(s, e))
                return -1;
        r = solve(s, depth + 1);
        if (r == 0)
                undo(s, mark);
        return r;
}

int ring_heuristic(const RingGraph *g, double t, uint64_t budget, uint32_t *order) {
        _cleanup_(search_done) Search s = { .g = g, .t = t, .n = g->n, .budget = budget, .order = order };
        int r;

        if (g->n <= 2) {
                bool ok = g->n == 1 || (hop(&s, 0, 1) > 0 && hop(&s, 1, 0) > 0);
                if (ok && order)
                        for (uint32_t i = 0; i < g->n; i++)
                                order[i] = i;
                return ok;
        }
        r = build(&s);
        if (r < 0)
                return r;
        for (uint32_t u = 0; u < g->n; u++)
                enqueue(&s, u);
        r = solve(&s, 0);
        return s.oom ? -ENOMEM : r > 0 ? 1 : r < 0 ? -ETIME : 0;
}
