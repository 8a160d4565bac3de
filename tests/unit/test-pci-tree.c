/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the PCIe tree on hand-made functions: the roles of bridges, the link of each function
 * judged from both ends, the path rate with each link counted once, the relation classifier
 * (PIX/PXB/PHB/NODE/SYS as nvidia-smi topo names them), and the guards: parents that loop, a chain too
 * deep, a parent that is not on the bus. */
#include <math.h>

#include "unit-test.h"

#include "daemon/pci-tree.h"
#include "shared/string-util.h"

#define BRIDGE 0x060400u
#define GPU 0x030200u
#define NIC 0x020000u

typedef struct Set {
        PciDevice *d[64];
        size_t n;
        PciTree *t;
} Set;

static PciDevice *add(Set *s, const char *address, const char *parent, const char *host_bridge, uint32_t class_code,
                      int numa, double cur_gts, unsigned cur_w, double max_gts, unsigned max_w) {
        PciDevice *d = calloc(1, sizeof(PciDevice));
        assert_non_null(d);
        d->address = strdup(address);
        d->parent = strdup_or_null(parent);
        d->host_bridge = strdup_or_null(host_bridge);
        d->has_class = true;
        d->class_code = class_code;
        d->numa_node = numa;
        d->current = (PciLink) { cur_gts, pci_speed_generation(cur_gts), cur_w };
        d->max = (PciLink) { max_gts, pci_speed_generation(max_gts), max_w };
        d->is_pcie = cur_gts > 0 || max_gts > 0;
        s->d[s->n++] = d;
        return d;
}

static void build(Set *s) {
        s->t = pci_tree_free(s->t);
        assert_int_equal(pci_tree_build(s->d, s->n, &s->t), 0);
}

static void set_free(Set *s) {
        pci_tree_free(s->t);
        for (size_t i = 0; i < s->n; i++)
                pci_device_free(s->d[i]);
}

static size_t idx(const Set *s, const char *address) {
        ssize_t i = pci_tree_find(s->t, address);
        if (i < 0)
                fail_msg("no function %s", address);
        return (size_t) i;
}

static const PciTreeNode *node(const Set *s, const char *address) {
        return &s->t->nodes[idx(s, address)];
}

static const char *rel(const Set *s, const char *a, const char *b, char *through) {
        return pci_relation_to_string(pci_tree_relation(s->t, idx(s, a), idx(s, b), through, 32));
}

/* Socket 0: a switch with a GPU and a NIC, a second switch behind it, another root port on the same
 * host bridge, another host bridge; socket 1: one more. */
static void server(Set *s) {
        add(s, "0000:15:01.0", NULL, "pci0000:15", BRIDGE, 0, 32, 16, 32, 16);
        add(s, "0000:16:00.0", "0000:15:01.0", "pci0000:15", BRIDGE, 0, 32, 16, 32, 16);
        add(s, "0000:17:00.0", "0000:16:00.0", "pci0000:15", BRIDGE, 0, 32, 16, 32, 16);
        add(s, "0000:17:01.0", "0000:16:00.0", "pci0000:15", BRIDGE, 0, 32, 4, 32, 16);
        add(s, "0000:17:02.0", "0000:16:00.0", "pci0000:15", BRIDGE, 0, 32, 16, 32, 16);
        add(s, "0000:18:00.0", "0000:17:00.0", "pci0000:15", GPU, 0, 32, 16, 32, 16);
        add(s, "0000:19:00.0", "0000:17:01.0", "pci0000:15", NIC, 0, 32, 4, 32, 16);
        add(s, "0000:1a:00.0", "0000:17:02.0", "pci0000:15", BRIDGE, 0, 32, 16, 32, 16);
        add(s, "0000:1b:00.0", "0000:1a:00.0", "pci0000:15", BRIDGE, 0, 32, 16, 32, 16);
        add(s, "0000:1c:00.0", "0000:1b:00.0", "pci0000:15", GPU, 0, 32, 16, 32, 16);
        add(s, "0000:15:03.0", NULL, "pci0000:15", BRIDGE, 0, 16, 16, 32, 16);
        add(s, "0000:20:00.0", "0000:15:03.0", "pci0000:15", GPU, 0, 16, 16, 16, 16);
        add(s, "0000:37:01.0", NULL, "pci0000:37", BRIDGE, 0, 32, 16, 32, 16);
        add(s, "0000:38:00.0", "0000:37:01.0", "pci0000:37", GPU, 0, 32, 16, 32, 16);
        add(s, "0000:9a:01.0", NULL, "pci0000:9a", BRIDGE, 1, 32, 16, 32, 16);
        add(s, "0000:9b:00.0", "0000:9a:01.0", "pci0000:9a", GPU, 1, 32, 16, 32, 16);
        add(s, "0000:9b:00.1", "0000:9a:01.0", "pci0000:9a", NIC, 1, 32, 16, 32, 16);
        build(s);
}

static void test_roles_and_links(void **state) {
        Set s = {};

        server(&s);
        assert_int_equal(node(&s, "0000:15:01.0")->type, PCI_PORT_ROOT);
        assert_int_equal(node(&s, "0000:16:00.0")->type, PCI_PORT_UPSTREAM);
        assert_int_equal(node(&s, "0000:17:00.0")->type, PCI_PORT_DOWNSTREAM);
        assert_int_equal(node(&s, "0000:18:00.0")->type, PCI_PORT_ENDPOINT);
        assert_int_equal(node(&s, "0000:1a:00.0")->type, PCI_PORT_UPSTREAM);
        assert_int_equal(node(&s, "0000:1b:00.0")->type, PCI_PORT_DOWNSTREAM);
        assert_string_equal(pci_port_type_to_string(node(&s, "0000:1b:00.0")->type), "downstream-port");

        /* Links exist above upstream ports and endpoints only; a switch's internal link has none. */
        assert_false(node(&s, "0000:15:01.0")->has_link);
        assert_true(node(&s, "0000:16:00.0")->has_link);
        assert_false(node(&s, "0000:17:00.0")->has_link);
        assert_true(node(&s, "0000:18:00.0")->has_link);

        /* The NIC at x4 of x16: trained low, and its port is judged by that link too (the health judge
         * says whether it is degraded). */
        const PciTreeNode *nic = node(&s, "0000:19:00.0");
        assert_true(nic->trained_low);
        assert_int_equal(nic->link.width, 4);
        assert_int_equal(nic->capable.width, 16);
        assert_int_equal(node(&s, "0000:17:01.0")->trained_low_below, pci_tree_find(s.t, "0000:19:00.0"));
        assert_false(node(&s, "0000:16:00.0")->trained_low);
        assert_int_equal(node(&s, "0000:15:01.0")->trained_low_below, -1);

        /* Gen4 GPU in a Gen5 slot at Gen4: both ends do not support more, so not degraded. */
        assert_false(node(&s, "0000:20:00.0")->trained_low);
        assert_true(node(&s, "0000:20:00.0")->capable.gts == 16);

        /* Paths: the NIC's is its own x4 link; the nested GPU's the narrowest of three equal links, the
         * one nearest the root named. */
        assert_true(nic->path_gbps > 126.0 && nic->path_gbps < 126.1);
        const PciTreeNode *g = node(&s, "0000:1c:00.0");
        assert_true(g->path_gbps > 504.1 && g->path_gbps < 504.2);
        assert_int_equal(g->path_limit, (ssize_t) idx(&s, "0000:16:00.0"));
        _cleanup_(freep) char *d = pci_tree_describe_limit(s.t, idx(&s, "0000:19:00.0"));
        assert_string_equal(d, "PCIe link 0000:17:01.0 - 0000:19:00.0 at 32.0 GT/s x4 (126.0 Gb/s)");
        /* A root port's path is the link below it. */
        _cleanup_(freep) char *rp = pci_tree_describe_limit(s.t, idx(&s, "0000:15:03.0"));
        assert_string_equal(rp, "PCIe link below 0000:15:03.0 at 16.0 GT/s x16 (252.1 Gb/s)");
        assert_null(s.t->problems);
        set_free(&s);
}

static void test_relations(void **state) {
        char through[32];
        Set s = {};

        server(&s);
        assert_string_equal(rel(&s, "0000:18:00.0", "0000:18:00.0", through), "X");
        assert_string_equal(rel(&s, "0000:18:00.0", "0000:19:00.0", through), "PIX");
        assert_string_equal(through, "0000:16:00.0");
        assert_string_equal(rel(&s, "0000:18:00.0", "0000:1c:00.0", through), "PXB");
        assert_string_equal(through, "0000:16:00.0");
        assert_string_equal(rel(&s, "0000:1c:00.0", "0000:18:00.0", through), "PXB");
        assert_string_equal(rel(&s, "0000:18:00.0", "0000:20:00.0", through), "PHB");
        assert_string_equal(through, "pci0000:15");
        assert_string_equal(rel(&s, "0000:18:00.0", "0000:38:00.0", through), "NODE");
        assert_string_equal(through, "0");
        assert_string_equal(rel(&s, "0000:18:00.0", "0000:9b:00.0", through), "SYS");
        assert_string_equal(through, "0,1");
        /* Two functions of one device below a root port. */
        assert_string_equal(rel(&s, "0000:9b:00.0", "0000:9b:00.1", through), "PIX");
        assert_string_equal(through, "0000:9a:01.0");
        /* A port and a function below it. */
        assert_string_equal(rel(&s, "0000:17:00.0", "0000:18:00.0", through), "PIX");
        set_free(&s);
}

static void test_no_numa(void **state) {
        char through[32];
        Set s = {};

        add(&s, "0000:00:01.0", NULL, "pci0000:00", BRIDGE, -1, 16, 8, 16, 16);
        add(&s, "0000:01:00.0", "0000:00:01.0", "pci0000:00", GPU, -1, 16, 8, 16, 16);
        add(&s, "0000:40:01.0", NULL, "pci0000:40", BRIDGE, -1, 8, 4, 8, 4);
        add(&s, "0000:41:00.0", "0000:40:01.0", "pci0000:40", NIC, -1, 8, 4, 8, 4);
        add(&s, "0000:60:01.0", NULL, "pci0000:60", BRIDGE, 1, 8, 4, 8, 4);
        add(&s, "0000:61:00.0", "0000:60:01.0", "pci0000:60", NIC, 1, 8, 4, 8, 4);
        build(&s);
        /* A machine without NUMA is one node. */
        assert_string_equal(rel(&s, "0000:01:00.0", "0000:41:00.0", through), "NODE");
        assert_string_equal(through, "");
        /* One side unknown, the other known: nothing says they share a node. */
        assert_string_equal(rel(&s, "0000:01:00.0", "0000:61:00.0", through), "SYS");
        assert_string_equal(through, "");
        /* The GPU at x8 in an x16 slot. */
        assert_true(node(&s, "0000:01:00.0")->trained_low);
        assert_int_equal(node(&s, "0000:00:01.0")->trained_low_below, pci_tree_find(s.t, "0000:01:00.0"));
        set_free(&s);
}

static void test_unknown_ends(void **state) {
        Set s = {};

        /* The port's maximum unknown: nothing says both ends could do more. */
        add(&s, "0000:00:01.0", NULL, "pci0000:00", BRIDGE, 0, 8, 8, 0, 0);
        add(&s, "0000:01:00.0", "0000:00:01.0", "pci0000:00", GPU, 0, 8, 8, 16, 16);
        /* The child's current unknown: the port's side of the same link is used. */
        add(&s, "0000:00:02.0", NULL, "pci0000:00", BRIDGE, 0, 8, 4, 8, 4);
        add(&s, "0000:02:00.0", "0000:00:02.0", "pci0000:00", NIC, 0, 0, 0, 8, 4);
        /* Not a bridge at all, right below the host bridge: integrated, no link. */
        add(&s, "0000:00:14.3", NULL, "pci0000:00", NIC, 0, 0, 0, 0, 0);
        build(&s);
        assert_false(node(&s, "0000:01:00.0")->trained_low);
        assert_true(node(&s, "0000:01:00.0")->has_link);
        assert_int_equal(node(&s, "0000:01:00.0")->capable.gts, 0);
        assert_true(node(&s, "0000:02:00.0")->link.gts == 8);
        assert_int_equal(node(&s, "0000:02:00.0")->link.width, 4);
        assert_int_equal(node(&s, "0000:00:14.3")->type, PCI_PORT_INTEGRATED);
        assert_false(node(&s, "0000:00:14.3")->has_link);
        assert_true(node(&s, "0000:00:14.3")->path_gbps == 0);
        assert_int_equal(node(&s, "0000:00:14.3")->path_limit, -1);
        assert_null(pci_tree_describe_limit(s.t, idx(&s, "0000:00:14.3")));
        set_free(&s);
}

static void test_cycle(void **state) {
        char through[32];
        Set s = {};

        /* Parents that name each other: impossible in sysfs, but the tree is pure logic. */
        add(&s, "0000:01:00.0", "0000:02:00.0", "pci0000:00", BRIDGE, 0, 8, 4, 8, 4);
        add(&s, "0000:02:00.0", "0000:03:00.0", "pci0000:00", BRIDGE, 0, 8, 4, 8, 4);
        add(&s, "0000:03:00.0", "0000:01:00.0", "pci0000:00", BRIDGE, 0, 8, 4, 8, 4);
        add(&s, "0000:04:00.0", "0000:03:00.0", "pci0000:00", NIC, 0, 8, 4, 8, 4);
        add(&s, "0000:05:00.0", "0000:05:00.0", "pci0000:00", NIC, 0, 8, 4, 8, 4);
        build(&s);
        assert_int_equal(strv_length(s.t->problems), 1);
        assert_non_null(strstr(s.t->problems[0], "loop back"));
        for (size_t i = 0; i < s.n; i++)
                assert_true(s.t->nodes[i].depth <= 4);
        /* Whatever was cut, every question still has an answer. */
        for (size_t i = 0; i < s.n; i++)
                for (size_t j = 0; j < s.n; j++)
                        assert_non_null(pci_relation_to_string(pci_tree_relation(s.t, i, j, through, sizeof(through))));
        assert_int_equal(node(&s, "0000:05:00.0")->parent, -1);
        set_free(&s);
}

static void test_too_deep(void **state) {
        char address[PCI_ADDRESS_MAX], parent[PCI_ADDRESS_MAX] = "", through[32];
        Set s = {};

        for (unsigned i = 0; i < 40; i++) {
                snprintf(address, sizeof(address), "0000:%02x:00.0", 0x10 + i);
                add(&s, address, i == 0 ? NULL : parent, "pci0000:10", i == 39 ? NIC : BRIDGE, 0, 8, 8, 8, 8);
                memcpy(parent, address, sizeof(parent));
        }
        build(&s);
        assert_int_equal(strv_length(s.t->problems), 1);
        assert_non_null(strstr(s.t->problems[0], "more than 32"));
        for (size_t i = 0; i < s.n; i++) {
                assert_true(s.t->nodes[i].depth <= PCI_DEPTH_MAX);
                assert_non_null(pci_relation_to_string(pci_tree_relation(s.t, 0, i, through, sizeof(through))));
        }
        /* Below the cut nothing is judged: no role, no link. */
        assert_int_equal(node(&s, "0000:37:00.0")->type, _PCI_PORT_TYPE_INVALID);
        assert_false(node(&s, "0000:37:00.0")->has_link);
        set_free(&s);
}

static void test_missing_parent(void **state) {
        Set s = {};

        add(&s, "0000:05:00.0", "0000:00:1c.0", "pci0000:00", NIC, 0, 2.5, 1, 5, 1);
        build(&s);
        assert_int_equal(node(&s, "0000:05:00.0")->type, _PCI_PORT_TYPE_INVALID);
        assert_false(node(&s, "0000:05:00.0")->has_link);
        assert_false(node(&s, "0000:05:00.0")->trained_low);
        assert_int_equal(pci_tree_find(s.t, "0000:00:1c.0"), -1);
        assert_int_equal(pci_tree_find(s.t, NULL), -1);
        set_free(&s);

        /* An empty tree. */
        PciTree *t = NULL;
        assert_int_equal(pci_tree_build(NULL, 0, &t), 0);
        assert_int_equal(pci_tree_find(t, "0000:00:00.0"), -1);
        pci_tree_free(t);
}

/* A USB4 dock's 10GbE NIC behind the host's tunnel root port: the tunnel hops report 2.5 GT/s x1 and are
 * neither degraded nor on the path; the NIC's own link in the dock is. On a kernel before 6.12 a discrete
 * controller right below an external-facing port is "removable" too, but its real Gen3 x4 link is no
 * tunnel. */
static void test_tunnel(void **state) {
        Set s = {};

        add(&s, "0000:00:07.0", NULL, "pci0000:00", BRIDGE, -1, 2.5, 1, 8, 4);
        add(&s, "0000:2a:00.0", "0000:00:07.0", "pci0000:00", BRIDGE, -1, 2.5, 1, 2.5, 1)->removable = true;
        add(&s, "0000:2b:01.0", "0000:2a:00.0", "pci0000:00", BRIDGE, -1, 2.5, 1, 2.5, 1)->removable = true;
        add(&s, "0000:2c:00.0", "0000:2b:01.0", "pci0000:00", NIC, -1, 8, 4, 8, 4)->removable = true;
        add(&s, "0000:00:1c.4", NULL, "pci0000:00", BRIDGE, -1, 8, 4, 8, 4);
        add(&s, "0000:05:00.0", "0000:00:1c.4", "pci0000:00", BRIDGE, -1, 8, 4, 8, 4)->removable = true;
        build(&s);

        assert_true(node(&s, "0000:2a:00.0")->tunnel);
        assert_false(node(&s, "0000:2a:00.0")->trained_low);
        assert_true(node(&s, "0000:00:07.0")->below_tunnel);
        assert_int_equal(node(&s, "0000:00:07.0")->trained_low_below, -1);
        assert_false(node(&s, "0000:2c:00.0")->tunnel);
        assert_int_equal(node(&s, "0000:2c:00.0")->tunnels, 1);
        /* The NIC's own 8 GT/s x4 is its path: not the tunnel's 2 Gb/s. */
        assert_true(fabs(node(&s, "0000:2c:00.0")->path_gbps - pci_link_gbps(8, 4)) < 1e-9);
        assert_true(node(&s, "0000:2a:00.0")->path_gbps == 0);
        /* The discrete controller's real link. */
        assert_false(node(&s, "0000:05:00.0")->tunnel);
        assert_int_equal(node(&s, "0000:05:00.0")->tunnels, 0);
        assert_true(fabs(node(&s, "0000:05:00.0")->path_gbps - pci_link_gbps(8, 4)) < 1e-9);
        set_free(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_roles_and_links), cmocka_unit_test(test_relations),
                cmocka_unit_test(test_no_numa),         cmocka_unit_test(test_unknown_ends),
                cmocka_unit_test(test_cycle),           cmocka_unit_test(test_too_deep),
                cmocka_unit_test(test_missing_parent),  cmocka_unit_test(test_tunnel),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
