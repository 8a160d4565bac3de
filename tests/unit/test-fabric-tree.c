/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the switch tree of the fabric model: switch keys the same whoever saw the switch, a
 * node placed by its fastest cable (InfiniBand before Ethernet when a rate is unknown), tiers from the
 * switch-to-switch cables, names Slurm cannot take refused, nameless switches named by their key,
 * nodes with no switch counted, the sweep's judgement of a switch link carried from either end, and
 * LinkSpeed the same figure at every tier. */
#include <string.h>

#include "unit-test.h"
#include "ctl/fabric/fabric-model.h"
#include "ctl/fabric/fabric-tree.h"
#include "ctl/linkprobectl-format.h"
#include "shared/json-util.h"

static void test_switch_keys(void **state) {
        char a[64], b[64];

        assert_int_equal(fabric_switch_key("0x0002c903000a1b2c", NULL, NULL, a, sizeof(a)), 0);
        assert_int_equal(fabric_switch_key("0002:c903:000a:1B2C", "ignored", NULL, b, sizeof(b)), 0);
        assert_string_equal(a, "guid:0002c903000a1b2c");
        assert_string_equal(a, b);
        assert_int_equal(fabric_switch_key(NULL, "02:00:5E:10:00:01", "tor", a, sizeof(a)), 0);
        assert_string_equal(a, "chassis:02:00:5e:10:00:01");
        assert_int_equal(fabric_switch_key("", "", "tor1", a, sizeof(a)), 0);
        assert_string_equal(a, "name:tor1");
        assert_int_equal(fabric_switch_key("0xzz", NULL, NULL, a, sizeof(a)), -EINVAL);
        assert_int_equal(fabric_switch_key("0x00000000000000001", NULL, NULL, a, sizeof(a)), -EINVAL);
        assert_int_equal(fabric_switch_key("0x0", NULL, NULL, a, sizeof(a)), -EINVAL);
        assert_int_equal(fabric_switch_key(NULL, NULL, NULL, a, sizeof(a)), -EINVAL);
}

/* Two leaves under one spine; n1 has a 1 Gb/s management port in a tor and an InfiniBand port of
 * unknown rate in leaf1; n2 a 100 Gb/s Ethernet port in leaf2 and a 200 Gb/s InfiniBand one in leaf1;
 * n3 nothing. */
static json_object *model(void) {
        json_object *m = fabric_model_new("snapshots");

        assert_non_null(m);
        assert_int_equal(fabric_add_node(m, "id1", "n1", false), 0);
        assert_int_equal(fabric_add_node(m, "id2", "n2", false), 0);
        assert_int_equal(fabric_add_node(m, "id3", "n3", false), 0);
        assert_non_null(fabric_add_switch(m, "chassis:aa", "tor", NULL, "lldp"));
        assert_non_null(fabric_add_switch(m, "guid:0000000000000001", "leaf1", NULL, "infiniband"));
        assert_non_null(fabric_add_switch(m, "guid:0000000000000002", NULL, NULL, "lldp"));
        assert_non_null(fabric_add_switch(m, "guid:0000000000000003", "spine", NULL, "sweep"));
        assert_int_equal(fabric_add_attachment(m, "id1", "eth0", "ethernet", "chassis:aa", "1", 1, 1, false), 0);
        assert_int_equal(fabric_add_attachment(m, "id1", "mlx5_0/1", "infiniband", "guid:0000000000000001", "3", 0, 0, false), 0);
        assert_int_equal(fabric_add_attachment(m, "id2", "eth1", "ethernet", "guid:0000000000000002", "7", 100, 100, false), 0);
        assert_int_equal(fabric_add_attachment(m, "id2", "mlx5_0/1", "infiniband", "guid:0000000000000001", "4", 200, 200, false), 0);
        /* Named again from the other end, and a second cable of the same pair: one cable, one child. */
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000001", "9", "guid:0000000000000003", "1", "4X", "HDR", 200, NULL), 0);
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000003", "1", "guid:0000000000000001", "9", "4X", "HDR", 200, NULL), 0);
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000001", "10", "guid:0000000000000003", "2", "4X", "HDR", 200, NULL), 0);
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000002", "9", "guid:0000000000000003", "3", "4X", "EDR", 100, NULL), 0);
        assert_int_equal(json_object_array_length(ctl_member(m, "SwitchLinks")), 3);
        return m;
}

static const TreeSwitch *by_name(const FabricTree *t, const char *name) {
        for (size_t i = 0; i < t->n_order; i++)
                if (strcmp(t->switches[t->order[i]].name, name) == 0)
                        return &t->switches[t->order[i]];
        fail_msg("no switch %s", name);
        return NULL;
}

static void test_tree(void **state) {
        _cleanup_(json_object_putp) json_object *m = model();
        _cleanup_(fabric_tree_done) FabricTree t = {};
        _cleanup_(freep) char *error = NULL;
        const TreeSwitch *leaf1, *spine, *nameless;

        assert_int_equal(fabric_tree_build(m, &t, &error), 0);
        assert_int_equal(t.n_nodes, 3);
        assert_int_equal(t.unattached, 1);
        /* Leaves first (the tor is no leaf: both its nodes have a better cable), then the spine; a switch
         * with no node below it, cabled to the spine, looks like a core switch from the cables alone. */
        assert_int_equal(t.tiers, 3);
        assert_int_equal(t.n_order, 3);
        assert_string_equal(t.switches[t.order[0]].name, "leaf1");
        assert_string_equal(t.switches[t.order[1]].name, "spine");
        assert_string_equal(t.switches[t.order[2]].name, "sw-0000000000000002");
        leaf1 = by_name(&t, "leaf1");
        spine = by_name(&t, "spine");
        nameless = by_name(&t, "sw-0000000000000002");
        assert_int_equal(leaf1->tier, 0);
        assert_int_equal(spine->tier, 1);
        assert_int_equal(nameless->n_nodes, 0);
        assert_int_equal(nameless->tier, 2);
        /* n1 by InfiniBand (its rate unknown beats 1 Gb/s Ethernet), n2 by its 200 Gb/s port. */
        assert_int_equal(leaf1->n_nodes, 2);
        assert_string_equal(t.nodes[leaf1->nodes[0]].hostname, "n1");
        assert_string_equal(t.nodes[leaf1->nodes[1]].hostname, "n2");
        assert_int_equal(t.nodes[2].leaf, -1);
        assert_true(leaf1->link_gbps == 200);
        assert_int_equal(spine->n_children, 1);
        assert_ptr_equal(&t.switches[spine->children[0]], leaf1);
        assert_int_equal(leaf1->n_parents, 1);
        assert_true(spine->link_gbps == 200);
}

static void test_names_slurm_cannot_take(void **state) {
        _cleanup_(json_object_putp) json_object *m = model();
        _cleanup_(fabric_tree_done) FabricTree t = {};
        _cleanup_(freep) char *error = NULL;

        json_object_object_add(fabric_switch(m, "guid:0000000000000001"), "Name", json_object_new_string("leaf 1"));
        assert_int_equal(fabric_tree_build(m, &t, &error), -EINVAL);
        assert_non_null(strstr(error, "\"leaf 1\": not a name Slurm takes"));
}

static void test_two_switches_one_name(void **state) {
        _cleanup_(json_object_putp) json_object *m = model();
        _cleanup_(fabric_tree_done) FabricTree t = {};
        _cleanup_(freep) char *error = NULL;

        json_object_object_add(fabric_switch(m, "guid:0000000000000003"), "Name", json_object_new_string("leaf1"));
        assert_int_equal(fabric_tree_build(m, &t, &error), -EINVAL);
        assert_non_null(strstr(error, "two switches are named leaf1"));
}

/* A switch link named from both ends: the end that judged it fills in what the other could not, either
 * end's "degraded" stands, and a later end that finds it fine does not clear it. */
static void test_switch_link_judgement(void **state) {
        _cleanup_(json_object_putp) json_object *m = fabric_model_new("daemon");
        const FabricLinkJudgement fine = { .best_width = "4X", .best_speed = "HDR", .best = 200 },
                                  low = { .best_width = "4X", .best_speed = "HDR", .best = 200, .degraded = true,
                                          .reason = "1X while both ends support 4X" };
        json_object *l;

        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000001", "9", "guid:0000000000000003", "1", "1X", "HDR", 50, NULL), 0);
        l = json_object_array_get_idx(ctl_member(m, "SwitchLinks"), 0);
        assert_null(ctl_member(l, "BestGbps"));
        assert_false(json_bool_or(l, "Degraded", true));
        assert_null(ctl_member(l, "DegradedReason"));
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000003", "1", "guid:0000000000000001", "9", "1X", "HDR", 50, &low), 0);
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000001", "9", "guid:0000000000000003", "1", "1X", "HDR", 50, &fine), 0);
        assert_int_equal(json_object_array_length(ctl_member(m, "SwitchLinks")), 1);
        assert_true(json_double_or(l, "BestGbps", 0) == 200);
        assert_string_equal(json_string_or(l, "BestWidth", ""), "4X");
        assert_string_equal(json_string_or(l, "BestSpeed", ""), "HDR");
        assert_true(json_bool_or(l, "Degraded", false));
        assert_string_equal(json_string_or(l, "DegradedReason", ""), "1X while both ends support 4X");
        /* As Prometheus has it: a rate, no widths, an empty reason is none. */
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000001", "10", "guid:0000000000000003", "2", "4X", "HDR", 200,
                                                &(FabricLinkJudgement) { .best = 200, .reason = "" }), 0);
        l = json_object_array_get_idx(ctl_member(m, "SwitchLinks"), 1);
        assert_true(json_double_or(l, "BestGbps", 0) == 200);
        assert_null(ctl_member(l, "BestWidth"));
        assert_false(json_bool_or(l, "Degraded", true));
        assert_null(ctl_member(l, "DegradedReason"));
}

/* LinkSpeed is what the cables down could do at every tier: a spine whose only cable down trained 1X of
 * a 4X both ends support says 200, as a leaf with a degraded node cable does. */
static void test_link_speed_is_what_both_ends_could_do(void **state) {
        _cleanup_(json_object_putp) json_object *m = fabric_model_new("daemon");
        _cleanup_(fabric_tree_done) FabricTree t = {};
        _cleanup_(freep) char *error = NULL;

        assert_int_equal(fabric_add_node(m, "id1", "n1", false), 0);
        assert_non_null(fabric_add_switch(m, "guid:0000000000000001", "leaf1", NULL, "infiniband"));
        assert_non_null(fabric_add_switch(m, "guid:0000000000000003", "spine", NULL, "sweep"));
        assert_int_equal(fabric_add_attachment(m, "id1", "mlx5_0/1", "infiniband", "guid:0000000000000001", "1", 50, 200, true), 0);
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000001", "9", "guid:0000000000000003", "1", "1X", "HDR", 50,
                                                &(FabricLinkJudgement) { .best = 200, .degraded = true }), 0);
        assert_int_equal(fabric_tree_build(m, &t, &error), 0);
        assert_true(by_name(&t, "leaf1")->link_gbps == 200);
        assert_true(by_name(&t, "spine")->link_gbps == 200);
        assert_true(fabric_tree_capable_gbps(json_object_array_get_idx(ctl_member(m, "SwitchLinks"), 0)) == 200);
        /* Not judged (the far end not swept): what it runs at. */
        assert_int_equal(fabric_add_switch_link(m, "guid:0000000000000003", "2", "guid:0000000000000004", "1", "4X", "EDR", 100,
                                                NULL), 0);
        assert_true(fabric_tree_capable_gbps(json_object_array_get_idx(ctl_member(m, "SwitchLinks"), 1)) == 100);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_switch_keys),
                cmocka_unit_test(test_tree),
                cmocka_unit_test(test_names_slurm_cannot_take),
                cmocka_unit_test(test_two_switches_one_name),
                cmocka_unit_test(test_switch_link_judgement),
                cmocka_unit_test(test_link_speed_is_what_both_ends_could_do),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
