/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the ring search: small graphs with a known best ring (a square with one slow cable,
 * two cables between a pair, an asymmetric cable), the reasons there is none (a node with a single
 * cable, a node the set falls apart without, two nodes only one node leads to), ties broken the same
 * way whatever the input order, the search against the exact answer, a thousand nodes, and rank 0. */
#include <math.h>

#include "unit-test.h"
#include "ctl/fabric/ring-graph.h"

#define MAX_LANES 8192

typedef struct Lanes {
        RingLane l[MAX_LANES];
        size_t n;
} Lanes;

/* A cable: gbps one way, back the other. */
static void cable(Lanes *ls, uint32_t u, uint32_t v, double gbps, double back) {
        assert_true(ls->n + 2 <= MAX_LANES);
        ls->l[ls->n++] = (RingLane) { u, v, gbps };
        ls->l[ls->n++] = (RingLane) { v, u, back };
}

static void sym(Lanes *ls, uint32_t u, uint32_t v, double gbps) {
        cable(ls, u, v, gbps, gbps);
}

/* Every node once, order[0] = 0, every hop striped over width lanes that go where the hop goes. */
static void assert_valid(const Lanes *ls, const RingResult *r) {
        _cleanup_(freep) bool *seen = new0(bool, r->n);
        double slowest = INFINITY;

        assert_non_null(seen);
        assert_int_equal(r->verdict, RING_FOUND);
        assert_int_equal(r->order[0], 0);
        for (size_t i = 0; i < r->n; i++) {
                assert_false(seen[r->order[i]]);
                seen[r->order[i]] = true;
        }
        for (size_t i = 0; r->n > 1 && i < r->n; i++) {
                double lane_min = INFINITY;
                for (unsigned k = 0; k < r->width; k++) {
                        const RingLane *l = &ls->l[r->hop_lanes[i * r->width + k]];
                        assert_int_equal(l->from, r->order[i]);
                        assert_int_equal(l->to, r->order[(i + 1) % r->n]);
                        lane_min = MIN(lane_min, l->gbps);
                }
                slowest = MIN(slowest, r->width * lane_min);
        }
        if (r->n > 1)
                assert_true(fabs(slowest - r->bottleneck_gbps) < 1e-9);
        assert_true(r->upper_bound_gbps >= r->bottleneck_gbps);
}

static void search(const Lanes *ls, size_t n, RingResult *r) {
        assert_int_equal(ring_search(n, ls->l, ls->n, RING_WIDTH_MAX, r), 0);
}

static void assert_order(const RingResult *r, const uint32_t *want) {
        for (size_t i = 0; i < r->n; i++)
                assert_int_equal(r->order[i], want[i]);
}

static void test_square_with_one_slow_cable(void **state) {
        Lanes ls = {};
        _cleanup_(ring_result_done) RingResult r = {};

        /* 0-1-2-3-0 with 2-3 slow: with no other cables the ring must take it... */
        sym(&ls, 0, 1, 10), sym(&ls, 1, 2, 10), sym(&ls, 2, 3, 1), sym(&ls, 3, 0, 10);
        search(&ls, 4, &r);
        assert_valid(&ls, &r);
        assert_true(r.exact);
        assert_int_equal(r.width, 1);
        assert_true(r.bottleneck_gbps == 1);
        ring_result_done(&r);

        /* ...and with both diagonals cabled it goes round it: 0 2 1 3, the first of the two (the
         * other is the same ring backwards). */
        sym(&ls, 0, 2, 10), sym(&ls, 1, 3, 10);
        search(&ls, 4, &r);
        assert_valid(&ls, &r);
        assert_true(r.bottleneck_gbps == 10 && r.upper_bound_gbps == 10);
        assert_order(&r, (const uint32_t[]) { 0, 2, 1, 3 });
}

static void test_two_cables_between_a_pair(void **state) {
        Lanes ls = {};
        _cleanup_(ring_result_done) RingResult r = {};

        /* 0-1 has 40 and 15; the others two of 25. One cable a hop: 25. Two: min(2 x 15, 50, 50) = 30. */
        sym(&ls, 0, 1, 40), sym(&ls, 0, 1, 15);
        sym(&ls, 1, 2, 25), sym(&ls, 1, 2, 25);
        sym(&ls, 2, 0, 25), sym(&ls, 2, 0, 25);
        search(&ls, 3, &r);
        assert_valid(&ls, &r);
        assert_int_equal(r.width, 2);
        assert_true(r.bottleneck_gbps == 30);
        /* The hop 0->1 stripes over both of its cables, the faster first. */
        assert_true(ls.l[r.hop_lanes[0]].gbps == 40 && ls.l[r.hop_lanes[1]].gbps == 15);
        ring_result_done(&r);

        /* With the second cable at 10, two cables give 20 < 25: one cable a hop wins. */
        ls.l[2].gbps = ls.l[3].gbps = 10;
        search(&ls, 3, &r);
        assert_valid(&ls, &r);
        assert_int_equal(r.width, 1);
        assert_true(r.bottleneck_gbps == 25);
        ring_result_done(&r);

        /* A tie (2 x 12.5 = 25) goes to the narrower ring: fewer cables to set up for the same speed. */
        ls.l[2].gbps = ls.l[3].gbps = 12.5;
        search(&ls, 3, &r);
        assert_int_equal(r.width, 1);
        assert_true(r.bottleneck_gbps == 25);
}

static void test_asymmetric_cable(void **state) {
        Lanes ls = {};
        _cleanup_(ring_result_done) RingResult r = {};

        /* 0->1 runs at 40, 1->0 at 5: the ring goes 0 1 2, not 0 2 1. */
        cable(&ls, 0, 1, 40, 5), sym(&ls, 1, 2, 40), sym(&ls, 2, 0, 40);
        search(&ls, 3, &r);
        assert_valid(&ls, &r);
        assert_order(&r, (const uint32_t[]) { 0, 1, 2 });
        assert_true(r.bottleneck_gbps == 40);
        ring_result_done(&r);

        /* The other way round, the other direction. */
        ls.l[0].gbps = 5, ls.l[1].gbps = 40;
        search(&ls, 3, &r);
        assert_valid(&ls, &r);
        assert_order(&r, (const uint32_t[]) { 0, 2, 1 });
        assert_true(r.bottleneck_gbps == 40);
}

static void test_no_ring_and_why(void **state) {
        Lanes ls = {};
        _cleanup_(ring_result_done) RingResult r = {};

        /* A triangle and node 3 with one cable, to 0. */
        sym(&ls, 0, 1, 10), sym(&ls, 1, 2, 10), sym(&ls, 2, 0, 10), sym(&ls, 3, 0, 10);
        search(&ls, 4, &r);
        assert_int_equal(r.verdict, RING_ONE_NEIGHBOUR);
        assert_int_equal(r.a, 3);
        assert_int_equal(r.b, 0);
        ring_result_done(&r);

        /* Two cables to the same node are still one neighbour. */
        sym(&ls, 3, 0, 20);
        search(&ls, 4, &r);
        assert_int_equal(r.verdict, RING_ONE_NEIGHBOUR);
        ring_result_done(&r);

        /* A node with no cable at all. */
        search(&ls, 5, &r);
        assert_int_equal(r.verdict, RING_NO_CABLE);
        assert_int_equal(r.a, 4);
        ring_result_done(&r);

        /* A cable that carries nothing one way: nothing goes out of 1. */
        ls.n = 0;
        cable(&ls, 0, 1, 10, 0), sym(&ls, 0, 2, 10), sym(&ls, 2, 1, 0.5);
        ls.l[ls.n - 1].gbps = 0; /* 1->2 carries nothing either */
        search(&ls, 3, &r);
        assert_int_equal(r.verdict, RING_NO_WAY_OUT);
        assert_int_equal(r.a, 1);
        ring_result_done(&r);

        /* Two triangles joined at node 0: no ring passes 0 twice. */
        ls.n = 0;
        sym(&ls, 0, 1, 10), sym(&ls, 1, 2, 10), sym(&ls, 2, 0, 10);
        sym(&ls, 0, 3, 10), sym(&ls, 3, 4, 10), sym(&ls, 4, 0, 10);
        search(&ls, 5, &r);
        assert_int_equal(r.verdict, RING_CUT_VERTEX);
        assert_int_equal(r.a, 0);
        ring_result_done(&r);

        /* Two triangles apart. */
        ls.n = 0;
        sym(&ls, 0, 1, 10), sym(&ls, 1, 2, 10), sym(&ls, 2, 0, 10);
        sym(&ls, 3, 4, 10), sym(&ls, 4, 5, 10), sym(&ls, 5, 3, 10);
        search(&ls, 6, &r);
        assert_int_equal(r.verdict, RING_UNREACHABLE);
        assert_int_equal(r.a, 0);
        assert_int_equal(r.b, 3);
        ring_result_done(&r);

        /* Only 0 leads to 1 and to 2: one of them is left without a way in. */
        ls.n = 0;
        ls.l[ls.n++] = (RingLane) { 0, 1, 10 };
        ls.l[ls.n++] = (RingLane) { 0, 2, 10 };
        ls.l[ls.n++] = (RingLane) { 1, 3, 10 };
        ls.l[ls.n++] = (RingLane) { 2, 3, 10 };
        ls.l[ls.n++] = (RingLane) { 3, 0, 10 };
        search(&ls, 4, &r);
        assert_int_equal(r.verdict, RING_NO_COVER);
        assert_int_equal(r.a, 2);
        ring_result_done(&r);

        /* The Petersen graph: every node has three neighbours, the set stays whole without any one of
         * them, every node can be given a way in and out - and no ring visits all ten. */
        ls.n = 0;
        for (uint32_t i = 0; i < 5; i++) {
                sym(&ls, i, (i + 1) % 5, 10);
                sym(&ls, i, i + 5, 10);
                sym(&ls, i + 5, (i + 2) % 5 + 5, 10);
        }
        search(&ls, 10, &r);
        assert_int_equal(r.verdict, RING_NONE);
        assert_true(r.exact);
        ring_result_done(&r);
        {
                _cleanup_(ring_graph_done) RingGraph g = {};
                assert_int_equal(ring_graph_build(10, ls.l, ls.n, &g), 0);
                assert_int_equal(ring_graph_check(&g, 0, &r.a, &r.b), RING_FOUND);
                assert_int_equal(ring_heuristic(&g, 0, 1000000, NULL), 0);
        }
}

static void test_ties_deterministic(void **state) {
        Lanes ls = {}, shuffled = {};
        _cleanup_(ring_result_done) RingResult r = {}, s = {};

        /* Every pair of five nodes cabled alike: the ring that reads first, 0 1 2 3 4. */
        for (uint32_t u = 0; u < 5; u++)
                for (uint32_t v = u + 1; v < 5; v++)
                        sym(&ls, u, v, 10);
        for (size_t i = 0; i < ls.n; i++)
                shuffled.l[i] = ls.l[(i * 7) % ls.n]; /* 7 and 20 are coprime: a permutation */
        shuffled.n = ls.n;
        search(&ls, 5, &r);
        search(&shuffled, 5, &s);
        assert_valid(&ls, &r);
        assert_order(&r, (const uint32_t[]) { 0, 1, 2, 3, 4 });
        assert_order(&s, (const uint32_t[]) { 0, 1, 2, 3, 4 });
}

static void test_small_rings(void **state) {
        Lanes ls = {};
        _cleanup_(ring_result_done) RingResult r = {};

        search(&ls, 1, &r);
        assert_int_equal(r.verdict, RING_FOUND);
        assert_int_equal(r.width, 0);
        ring_result_done(&r);

        /* Two nodes: there and back, at the slower way. */
        cable(&ls, 0, 1, 30, 20);
        search(&ls, 2, &r);
        assert_valid(&ls, &r);
        assert_true(r.bottleneck_gbps == 20);
        ring_result_done(&r);

        assert_int_equal(ring_search(2, ls.l, ls.n, 0, &r), -EINVAL);
        ls.l[0].to = 7;
        assert_int_equal(ring_search(2, ls.l, ls.n, 1, &r), -EINVAL);
}

/* A ring 0..n-1 planted under a random order, with random speeds, plus chords: 2 to 4 cables a node. */
static void planted(Lanes *ls, size_t n, unsigned seed) {
        _cleanup_(freep) uint32_t *perm = new0(uint32_t, n);

        assert_non_null(perm);
        srand(seed);
        ls->n = 0;
        for (uint32_t i = 0; i < n; i++)
                perm[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
                size_t j = (size_t) rand() % (i + 1);
                uint32_t x = perm[i];
                perm[i] = perm[j], perm[j] = x;
        }
        for (size_t i = 0; i < n; i++)
                cable(ls, perm[i], perm[(i + 1) % n], 5 + rand() % 36, 5 + rand() % 36);
        for (size_t i = 0; i < n / 2; i++) {
                uint32_t u = (uint32_t) (rand() % (int) n), v = (uint32_t) (rand() % (int) n);
                if (u != v)
                        cable(ls, u, v, 5 + rand() % 36, 5 + rand() % 36);
        }
}

static void test_search_against_exact(void **state) {
        for (unsigned seed = 1; seed <= 20; seed++) {
                Lanes ls = {};
                size_t n = 8 + seed % 9;
                _cleanup_(ring_result_done) RingResult r = {};
                _cleanup_(ring_graph_done) RingGraph g = {};
                _cleanup_(freep) uint32_t *order = new0(uint32_t, n);
                double *t = NULL;
                size_t m;

                planted(&ls, n, seed);
                search(&ls, n, &r);
                assert_valid(&ls, &r);
                assert_true(r.exact);
                /* The search finds a ring at the exact answer's width and threshold, and none above it
                 * (the exact programme says there is none). */
                assert_int_equal(ring_graph_build(n, ls.l, ls.n, &g), 0);
                ring_graph_set_width(&g, r.width);
                assert_int_equal(ring_heuristic(&g, r.bottleneck_gbps, 1000000, order), 1);
                assert_int_equal(ring_graph_thresholds(&g, &t, &m), 0);
                for (size_t i = 0; i < m && t[i] > r.bottleneck_gbps; i++) {
                        assert_int_equal(ring_exact(&g, t[i], NULL), 0);
                        assert_int_equal(ring_heuristic(&g, t[i], 100000, NULL), 0);
                }
                free(t);
        }
}

static void test_thousand_nodes(void **state) {
        static Lanes ls;
        _cleanup_(ring_result_done) RingResult r = {};

        planted(&ls, 1000, 42);
        search(&ls, 1000, &r);
        assert_false(r.exact);
        assert_valid(&ls, &r);
        assert_true(r.bottleneck_gbps >= 5);
        print_message("1000 nodes: slowest hop %.0f Gb/s, no ring above %.0f\n", r.bottleneck_gbps, r.upper_bound_gbps);
}

static void test_coordinator(void **state) {
        Lanes ls = {};
        _cleanup_(ring_coordinator_done) RingCoordinator c = {};

        /* A line 0-1-2-3-4: the middle reaches everyone in two hops. */
        sym(&ls, 0, 1, 10), sym(&ls, 1, 2, 10), sym(&ls, 2, 3, 10), sym(&ls, 3, 4, 10);
        assert_int_equal(ring_coordinator(5, ls.l, ls.n, &c), 0);
        assert_int_equal(c.verdict, RING_FOUND);
        assert_int_equal(c.node, 2);
        assert_int_equal(c.worst_hops, 2);
        assert_int_equal(c.hops[0], 2);
        assert_int_equal(c.via[0], 1);
        ring_coordinator_done(&c);

        /* Node 4 cabled to everyone, slowly one way to 3: still the fewest hops; the slower direction
         * of a cable counts. */
        sym(&ls, 4, 0, 10), sym(&ls, 4, 1, 10), sym(&ls, 4, 2, 10);
        assert_int_equal(ring_coordinator(5, ls.l, ls.n, &c), 0);
        assert_int_equal(c.node, 4);
        assert_int_equal(c.worst_hops, 1);
        ring_coordinator_done(&c);
        ls.l[ls.n - 7].gbps = 2; /* 4->3 */
        assert_int_equal(ring_coordinator(5, ls.l, ls.n, &c), 0);
        assert_int_equal(c.node, 4);
        assert_true(c.worst_gbps == 2);
        ring_coordinator_done(&c);

        /* Apart: nobody reaches everyone. */
        assert_int_equal(ring_coordinator(6, ls.l, ls.n, &c), 0);
        assert_int_equal(c.verdict, RING_UNREACHABLE);
        assert_int_equal(c.b, 5);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_square_with_one_slow_cable),
                cmocka_unit_test(test_two_cables_between_a_pair),
                cmocka_unit_test(test_asymmetric_cable),
                cmocka_unit_test(test_no_ring_and_why),
                cmocka_unit_test(test_ties_deterministic),
                cmocka_unit_test(test_small_rings),
                cmocka_unit_test(test_search_against_exact),
                cmocka_unit_test(test_thousand_nodes),
                cmocka_unit_test(test_coordinator),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
