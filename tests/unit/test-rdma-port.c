/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for what the daemon makes of an RDMA port: verbs over sysfs, the D-Bus spellings, and
 * letting go of a uverbs device that is being removed (the kernel cannot see these here). */
#include "unit-test.h"

#include <infiniband/verbs.h>

#include "shared/bus-names.h"
#include "daemon/rdma-names.h"
#include "daemon/rdma-live.h"
#include "daemon/rdma-verbs.h"
#include "daemon/rdma-port-state.h"
#include "daemon/rdma.h"

static RdmaPortStatus sysfs_hdr(void) {
        return (RdmaPortStatus) {
                .known = RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_PHYS_STATE | RDMA_PORT_FIELD_LINK_LAYER |
                         RDMA_PORT_FIELD_RATE | RDMA_PORT_FIELD_WIDTH | RDMA_PORT_FIELD_SPEED | RDMA_PORT_FIELD_LID,
                .state = RDMA_PORT_STATE_ACTIVE,
                .phys_state = RDMA_PHYS_STATE_LINK_UP,
                .link_layer = RDMA_LINK_LAYER_INFINIBAND,
                .rate = { .mgbps = 200000, .width = RDMA_WIDTH_4X, .speed = RDMA_SPEED_HDR },
                .lid = 0x1a,
        };
}

static void test_merge_without_verbs(void **state) {
        RdmaPortStatus s = sysfs_hdr(), out;

        rdma_port_status_merge(&s, NULL, &out);
        assert_int_equal(out.known, s.known);
        assert_int_equal(rdma_port_status_diff(&s, &out), 0);
        assert_int_equal(out.rate.mgbps, 200000);
        assert_int_equal(out.rate.speed, RDMA_SPEED_HDR);
        assert_int_equal(out.lid, 0x1a);
}

static void test_merge_verbs_wins(void **state) {
        RdmaPortStatus s = sysfs_hdr(), v, out;
        struct ibv_port_attr attr = {
                .state = IBV_PORT_DOWN,
                .phys_state = 2, /* polling */
                .link_layer = IBV_LINK_LAYER_INFINIBAND,
                .active_width = 2, /* 4X */
                .active_speed = 32, /* EDR */
                .lid = 0x2b,
                .sm_lid = 3,
        };

        /* What ibv_query_port() reported after the link retrained, while sysfs still said HDR. */
        rdma_port_status_from_ibv(&attr, 0, &v);
        rdma_port_status_merge(&s, &v, &out);
        assert_int_equal(out.state, RDMA_PORT_STATE_DOWN);
        assert_int_equal(out.phys_state, RDMA_PHYS_STATE_POLLING);
        assert_int_equal(out.rate.speed, RDMA_SPEED_EDR);
        assert_int_equal(out.rate.width, RDMA_WIDTH_4X);
        assert_int_equal(out.rate.mgbps, 100000);
        assert_int_equal(out.lid, 0x2b);
        assert_int_equal(out.sm_lid, 3);
        assert_true(out.known & RDMA_PORT_FIELD_SM_LID);
}

static void test_merge_keeps_what_verbs_does_not_know(void **state) {
        RdmaPortStatus s = sysfs_hdr(), out;
        /* XDR on headers without active_speed_ex: verbs know the width, not the speed nor the rate. */
        RdmaPortStatus v = {
                .known = RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_WIDTH,
                .state = RDMA_PORT_STATE_ACTIVE,
                .rate = { .width = RDMA_WIDTH_4X },
        };

        s.rate = (RdmaRate) { .mgbps = 800000, .width = RDMA_WIDTH_4X, .speed = RDMA_SPEED_XDR };
        rdma_port_status_merge(&s, &v, &out);
        assert_int_equal(out.rate.speed, RDMA_SPEED_XDR);
        assert_int_equal(out.rate.mgbps, 800000);
        assert_int_equal(out.lid, 0x1a);
        assert_int_equal(out.phys_state, RDMA_PHYS_STATE_LINK_UP);
}

static void test_spellings(void **state) {
        assert_string_equal(rdma_port_state_to_bus(RDMA_PORT_STATE_ACTIVE), "active");
        assert_string_equal(rdma_port_state_to_bus(RDMA_PORT_STATE_ACTIVE_DEFER), "active-defer");
        assert_string_equal(rdma_port_state_to_bus(RDMA_PORT_STATE_UNKNOWN), "unknown");
        assert_string_equal(rdma_phys_state_to_bus(RDMA_PHYS_STATE_LINK_UP), "link-up");
        assert_string_equal(rdma_phys_state_to_bus(RDMA_PHYS_STATE_PORT_CONFIGURATION_TRAINING), "training");
        assert_string_equal(rdma_phys_state_to_bus(RDMA_PHYS_STATE_LINK_ERROR_RECOVERY), "error-recovery");
        assert_string_equal(rdma_link_layer_to_bus(RDMA_LINK_LAYER_ETHERNET), "ethernet");
        assert_string_equal(rdma_node_type_to_bus(RDMA_NODE_TYPE_RNIC), "rnic");
        assert_string_equal(rdma_node_type_to_bus(RDMA_NODE_TYPE_USNIC_UDP), "usnic-udp");
        assert_string_equal(rdma_transport_to_bus(RDMA_TRANSPORT_IWARP), "iWARP");
        assert_string_equal(rdma_transport_to_bus(RDMA_TRANSPORT_UNKNOWN), "Unknown");
        assert_string_equal(rdma_width_to_bus(RDMA_WIDTH_12X), "12X");
        assert_string_equal(rdma_speed_to_bus(RDMA_SPEED_NDR), "NDR");
        assert_string_equal(rdma_speed_to_bus(RDMA_SPEED_UNKNOWN), "unknown");
        assert_string_equal(rdma_gid_type_to_bus(RDMA_GID_TYPE_IB_ROCE_V1, RDMA_TRANSPORT_INFINIBAND), "ib");
        assert_string_equal(rdma_gid_type_to_bus(RDMA_GID_TYPE_IB_ROCE_V1, RDMA_TRANSPORT_ROCE), "roce-v1");
        assert_string_equal(rdma_gid_type_to_bus(RDMA_GID_TYPE_IB_ROCE_V1, RDMA_TRANSPORT_IWARP), "unknown");
        assert_string_equal(rdma_gid_type_to_bus(RDMA_GID_TYPE_ROCE_V2, RDMA_TRANSPORT_ROCE), "roce-v2");

        /* Values outside the enums (a newer kernel, memory gone wrong) still have a spelling. */
        assert_string_equal(rdma_port_state_to_bus(_RDMA_PORT_STATE_MAX), "unknown");
        assert_string_equal(rdma_phys_state_to_bus((RdmaPhysState) 42), "unknown");
        assert_string_equal(rdma_link_layer_to_bus(_RDMA_LINK_LAYER_INVALID), "unknown");
        assert_string_equal(rdma_node_type_to_bus((RdmaNodeType) -1), "unknown");
        assert_string_equal(rdma_transport_to_bus(_RDMA_TRANSPORT_MAX), "Unknown");
        assert_string_equal(rdma_width_to_bus(_RDMA_WIDTH_MAX), "unknown");
        assert_string_equal(rdma_gid_type_to_bus(_RDMA_GID_TYPE_MAX, RDMA_TRANSPORT_ROCE), "unknown");
        for (int i = 0; i < _RDMA_PORT_STATE_MAX; i++)
                assert_non_null(rdma_port_state_to_bus(i));
        for (int i = 0; i < _RDMA_PHYS_STATE_MAX; i++)
                assert_non_null(rdma_phys_state_to_bus(i));
        for (int i = 0; i < _RDMA_NODE_TYPE_MAX; i++)
                assert_non_null(rdma_node_type_to_bus(i));
}

static void test_object_path(void **state) {
        _cleanup_(freep) char *key = NULL, *path = NULL;

        assert_int_equal(rdma_port_object_path("mlx5_0", 1, &key, &path), 0);
        assert_string_equal(key, "mlx5_0_1");
        assert_string_equal(path, RDMA_PATH_PREFIX "/mlx5_5f0_5f1");
}

/* A device opened with libibverbs is let go when its uverbs device is removed, and only that one. */
static void test_uverbs_removed(void **state) {
        BusPublisher publisher = {};
        Rdma rdma;
        rdma_init(&rdma, &publisher, NULL, -EBADF, false);
        RdmaDevice a = { .name = (char *) "mlx5_0", .owner = &rdma }, b = { .name = (char *) "mlx5_1", .owner = &rdma };
        a.live = (RdmaLive) { .name = a.name };
        b.live = (RdmaLive) { .name = b.name };

        /* A handle without a provider context: what rdma_verbs_device_free() frees is all there is. */
        a.live.verbs = calloc(1, sizeof(RdmaVerbsDevice));
        b.live.verbs = calloc(1, sizeof(RdmaVerbsDevice));
        a.live.uverbs = strdup("uverbs0");
        b.live.uverbs = strdup("uverbs1");
        assert_non_null(a.live.verbs);
        assert_non_null(b.live.verbs);
        assert_int_equal(table_put(&rdma.devices, a.name, &a), 0);
        assert_int_equal(table_put(&rdma.devices, b.name, &b), 0);

        rdma_uverbs_removed(&rdma, "uverbs7");
        assert_non_null(a.live.verbs);
        assert_non_null(b.live.verbs);
        rdma_uverbs_removed(&rdma, "uverbs1");
        assert_non_null(a.live.verbs);
        assert_null(b.live.verbs);
        assert_null(b.live.uverbs);

        rdma_live_close(&a.live);
        rdma_live_close(&b.live); /* twice is harmless */
        assert_null(a.live.verbs);
        table_done(&rdma.devices);
        table_done(&rdma.ports);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_merge_without_verbs),
                cmocka_unit_test(test_merge_verbs_wins),
                cmocka_unit_test(test_merge_keeps_what_verbs_does_not_know),
                cmocka_unit_test(test_spellings),
                cmocka_unit_test(test_object_path),
                cmocka_unit_test(test_uverbs_removed),
        };
        return cmocka_run_group_tests_name("rdma-port", tests, NULL, NULL);
}
