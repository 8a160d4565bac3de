/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the subnet sweep's side of the Switch objects (switch.c): one object per node GUID
 * whoever found it, Links replaced by each complete sweep, a switch the sweep no longer finds kept only
 * while a port of ours is on it, and no SWITCHES_MAX bound on what the sweep (capped on its own)
 * publishes. */
#include "unit-test.h"
#include "daemon/switch.h"
#include "shared/log.h"
#include "shared/string-util.h"

#define STRV_MAKE(...) ((char *const[]) { __VA_ARGS__, NULL })
#define LOCAL "/org/linkprobe/LinkProbe1/rdma/ibsim0_5f1"

static SwitchLink link_to(unsigned port, const char *remote, unsigned remote_port, double gbps) {
        SwitchLink l = { .port = port, .remote_port = remote_port, .rate_gbps = gbps };
        snprintf(l.remote_guid, sizeof(l.remote_guid), "%s", remote);
        snprintf(l.width, sizeof(l.width), "4X");
        snprintf(l.speed, sizeof(l.speed), "HDR");
        return l;
}

static void test_one_object_per_guid(void **state) {
        BusPublisher publisher = {};
        Switches s;
        Switch *leaf, *spine;

        log_set_max_level(LOG_CRIT);
        switches_init(&s, &publisher);
        /* Our neighbour: leaf, through the MAD queries. */
        SwitchInfo info = { .node_guid = "0000:0000:0020:0001", .name = "leaf1", .description = "leaf1" };
        SwitchPort port = { .source = SWITCH_SOURCE_INFINIBAND, .local_path = LOCAL, .port_id = "1" };
        assert_int_equal(switch_port_set(&s, SWITCH_SOURCE_INFINIBAND, "0000:0000:0020:0001", &info, &port, 1), 1);

        SwitchLink leaf_links[] = { link_to(5, "0000:0000:0020:0000", 1, 200) };
        SwitchLink spine_links[] = { link_to(1, "0000:0000:0020:0001", 5, 200) };
        SweptSwitch swept[] = {
                { .node_guid = "0000:0000:0020:0001", .description = "leaf1", .links = leaf_links, .n_links = 1 },
                { .node_guid = "0000:0000:0020:0000", .description = "spine1", .links = spine_links, .n_links = 1 },
        };
        assert_int_equal(switches_sweep_apply(&s, swept, 2, 10), 0);
        assert_int_equal(table_size(&s.table), 2);
        leaf = switch_get(&s, "0000:0000:0020:0001");
        spine = switch_get(&s, "0000:0000:0020:0000");
        assert_non_null(leaf);
        assert_non_null(spine);
        assert_true(strv_equal(leaf->sources, STRV_MAKE("infiniband", "sweep")));
        assert_true(strv_equal(spine->sources, STRV_MAKE("sweep")));
        assert_int_equal(leaf->n_ports, 1);
        assert_int_equal(leaf->n_links, 1);
        assert_int_equal(leaf->links[0].port, 5);
        assert_string_equal(leaf->links[0].remote_guid, "0000:0000:0020:0000");
        assert_string_equal(spine->name, "spine1");
        assert_int_equal(switches_sweep_links(&s), 2);

        /* The cable between them went: both stay (the sweep found them), without Links. */
        swept[0].n_links = swept[1].n_links = 0;
        assert_int_equal(switches_sweep_apply(&s, swept, 2, 20), 0);
        assert_int_equal(table_size(&s.table), 2);
        assert_int_equal(switches_sweep_links(&s), 0);

        /* The sweep no longer finds the spine: gone. Then none: the leaf stays for our port. */
        assert_int_equal(switches_sweep_apply(&s, swept, 1, 30), 0);
        assert_null(switch_get(&s, "0000:0000:0020:0000"));
        assert_int_equal(switches_sweep_apply(&s, NULL, 0, 40), 0);
        leaf = switch_get(&s, "0000:0000:0020:0001");
        assert_non_null(leaf);
        assert_false(leaf->swept);
        assert_true(strv_equal(leaf->sources, STRV_MAKE("infiniband")));
        /* Our port's link went down too: nothing is left. */
        switches_remove_local(&s, SWITCH_SOURCE_INFINIBAND, LOCAL);
        assert_int_equal(table_size(&s.table), 0);

        switches_done(&s);
        bus_publisher_done(&publisher);
}

static void test_more_than_switches_max(void **state) {
        BusPublisher publisher = {};
        size_t n = SWITCHES_MAX + 50;
        SweptSwitch *swept = calloc(n, sizeof(SweptSwitch));
        char (*guids)[24] = calloc(n, 24);
        Switches s;

        assert_non_null(swept);
        assert_non_null(guids);
        switches_init(&s, &publisher);
        for (size_t i = 0; i < n; i++) {
                snprintf(guids[i], 24, "0000:0000:0030:%04zx", i);
                swept[i] = (SweptSwitch) { .node_guid = guids[i], .description = "leaf" };
        }
        assert_int_equal(switches_sweep_apply(&s, swept, n, 1), 0);
        assert_int_equal(table_size(&s.table), n);
        /* The sweep's switches leave LLDP's bound alone: a switch heard on a link still comes. */
        SwitchPort port = { .source = SWITCH_SOURCE_LLDP, .local_path = "/org/linkprobe/LinkProbe1/link/_32",
                            .port_id = "Eth1" };
        assert_int_equal(switch_port_set(&s, SWITCH_SOURCE_LLDP, "mac-00:00:00:00:00:01", &(SwitchInfo) {}, &port, 1),
                         1);
        switches_done(&s);
        bus_publisher_done(&publisher);
        free(swept);
        free(guids);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_one_object_per_guid),
                cmocka_unit_test(test_more_than_switches_max),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
