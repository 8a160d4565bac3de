/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which local ports the subnet sweep walks from (probes/fabric-subnets.c): one per subnet, a subnet
 * told by what a walk found rather than by its prefix; ibsim gives a client one CA, so the choice is
 * tested here with walks that "find" given port GUIDs. */
#include <string.h>

#include "unit-test.h"
#include "../../probes/fabric-subnets.h"

/* The walks so far: each found these port GUIDs (0 ends a walk's list). */
typedef struct Walked {
        const uint64_t *found[4];
        size_t n;
} Walked;

static bool covered(uint64_t guid, void *userdata) {
        const Walked *w = userdata;

        for (size_t i = 0; i < w->n; i++)
                for (const uint64_t *g = w->found[i]; *g; g++)
                        if (*g == guid)
                                return true;
        return false;
}

static void test_walkable(void **state) {
        assert_true(fabric_port_walkable(4, "InfiniBand"));
        assert_true(fabric_port_walkable(4, ""));
        assert_true(fabric_port_walkable(4, NULL));
        assert_true(fabric_port_walkable(2, "IB")); /* init (no SM yet): DR SMPs still go */
        assert_true(fabric_port_walkable(3, "InfiniBand"));
        assert_false(fabric_port_walkable(4, "Ethernet")); /* RoCE: no SMPs */
        assert_false(fabric_port_walkable(1, "InfiniBand")); /* down */
        assert_false(fabric_port_walkable(0, "InfiniBand")); /* no state */
        assert_false(fabric_port_walkable(5, "InfiniBand"));
}

/* Two HCAs on subnet A (one of them dual-ported, both ports there) and one on subnet B, all with the
 * default prefix: A is walked once, from its first port, B from its own. */
static void test_one_walk_per_subnet(void **state) {
        const FabricLocalPort ports[] = {
                { "mlx5_0", 1, 0xa1 }, { "mlx5_0", 2, 0xa2 }, { "mlx5_1", 1, 0xa3 }, { "mlx5_2", 1, 0xb1 },
        };
        static const uint64_t subnet_a[] = { 0xa1, 0xa2, 0xa3, 0x5000, 0 }, subnet_b[] = { 0xb1, 0x6000, 0 };
        Walked w = {};
        ssize_t i;

        i = fabric_next_subnet_port(ports, ELEMENTSOF(ports), 0, covered, &w);
        assert_int_equal(i, 0);
        w.found[w.n++] = subnet_a;
        i = fabric_next_subnet_port(ports, ELEMENTSOF(ports), (size_t) i + 1, covered, &w);
        assert_int_equal(i, 3);
        assert_string_equal(ports[i].ca, "mlx5_2");
        w.found[w.n++] = subnet_b;
        assert_int_equal(fabric_next_subnet_port(ports, ELEMENTSOF(ports), (size_t) i + 1, covered, &w), -1);
}

/* Two ports each cabled into a subnet of its own: both walked, in libibumad's order. */
static void test_separate_subnets(void **state) {
        const FabricLocalPort ports[] = { { "mlx5_0", 1, 0xa1 }, { "mlx5_0", 2, 0xb1 } };
        static const uint64_t subnet_a[] = { 0xa1, 0 };
        Walked w = {};

        assert_int_equal(fabric_next_subnet_port(ports, 2, 0, covered, &w), 0);
        w.found[w.n++] = subnet_a;
        assert_int_equal(fabric_next_subnet_port(ports, 2, 1, covered, &w), 1);
}

static void test_no_ports(void **state) {
        Walked w = {};

        assert_int_equal(fabric_next_subnet_port(NULL, 0, 0, covered, &w), -1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_walkable),
                cmocka_unit_test(test_one_walk_per_subnet),
                cmocka_unit_test(test_separate_subnets),
                cmocka_unit_test(test_no_ports),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
