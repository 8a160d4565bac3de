/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the class/infiniband parsers: every rate the kernel's rate_show() can print (all
 * speeds x all widths, generated here the way the kernel does it), the old form without a speed
 * name, node types, port and physical states, link layers, GUIDs, GIDs, GID types, and garbage for
 * each. */
#include <arpa/inet.h>
#include <inttypes.h>

#include "unit-test.h"
#include "shared/string-util.h"
#include "sysfs/infiniband-parse.h"

/* Names the table entry in the output, so a failing assertion says which one it was. */
static void show(const char *s) {
        _cleanup_(freep) char *e = escape_for_terminal(s);
        print_message("# \"%s\"\n", strna(e));
}

/* rate_show() in drivers/infiniband/core/sysfs.c, in deci-Gb/s, with the names it prints. */
static const struct {
        RdmaSpeed speed;
        const char *name;
        int deci_gbps;
} kernel_speeds[] = {
        { RDMA_SPEED_SDR, "SDR", 25 },     { RDMA_SPEED_DDR, "DDR", 50 },    { RDMA_SPEED_QDR, "QDR", 100 },
        { RDMA_SPEED_FDR10, "FDR10", 100 }, { RDMA_SPEED_FDR, "FDR", 140 },  { RDMA_SPEED_EDR, "EDR", 250 },
        { RDMA_SPEED_HDR, "HDR", 500 },    { RDMA_SPEED_NDR, "NDR", 1000 }, { RDMA_SPEED_XDR, "XDR", 2000 },
};
/* ib_width_enum_to_int() */
static const struct {
        RdmaWidth width;
        int lanes;
} kernel_widths[] = {
        { RDMA_WIDTH_1X, 1 }, { RDMA_WIDTH_2X, 2 }, { RDMA_WIDTH_4X, 4 }, { RDMA_WIDTH_8X, 8 }, { RDMA_WIDTH_12X, 12 },
};

static void test_rate_every_kernel_form(void **state) {
        for (size_t s = 0; s < ELEMENTSOF(kernel_speeds); s++)
                for (size_t w = 0; w < ELEMENTSOF(kernel_widths); w++) {
                        int rate = kernel_speeds[s].deci_gbps * kernel_widths[w].lanes;
                        char text[64];
                        RdmaRate r;

                        snprintf(text, sizeof(text), "%d%s Gb/sec (%dX %s)", rate / 10, rate % 10 ? ".5" : "",
                                 kernel_widths[w].lanes, kernel_speeds[s].name);
                        show(text);
                        assert_int_equal(rdma_parse_rate(text, &r), 0);
                        assert_int_equal(r.mgbps, (uint64_t) rate * 100);
                        assert_int_equal(r.width, kernel_widths[w].width);
                        assert_int_equal(r.speed, kernel_speeds[s].speed);
                        assert_int_equal(rdma_rate_mgbps(r.speed, r.width), r.mgbps);
                }
}

static void test_rate_known_strings(void **state) {
        static const struct {
                const char *text;
                uint64_t mgbps;
                RdmaWidth width;
                RdmaSpeed speed;
        } table[] = {
                { "2.5 Gb/sec (1X SDR)", 2500, RDMA_WIDTH_1X, RDMA_SPEED_SDR },
                { "100 Gb/sec (4X EDR)", 100000, RDMA_WIDTH_4X, RDMA_SPEED_EDR },
                { "56 Gb/sec (4X FDR)", 56000, RDMA_WIDTH_4X, RDMA_SPEED_FDR },
                { "40 Gb/sec (4X FDR10)", 40000, RDMA_WIDTH_4X, RDMA_SPEED_FDR10 },
                { "400 Gb/sec (4X NDR)", 400000, RDMA_WIDTH_4X, RDMA_SPEED_NDR },
                { "800 Gb/sec (4X XDR)", 800000, RDMA_WIDTH_4X, RDMA_SPEED_XDR },
                { "100 Gb/sec (2X HDR)", 100000, RDMA_WIDTH_2X, RDMA_SPEED_HDR }, /* HDR100 */
                { "200 Gb/sec (2X NDR)", 200000, RDMA_WIDTH_2X, RDMA_SPEED_NDR }, /* NDR200 */
                { "200 Gb/sec (4X HDR)", 200000, RDMA_WIDTH_4X, RDMA_SPEED_HDR },
                { "10 Gb/sec (1X QDR)", 10000, RDMA_WIDTH_1X, RDMA_SPEED_QDR },
                { "10 Gb/sec (1X FDR10)", 10000, RDMA_WIDTH_1X, RDMA_SPEED_FDR10 },
                { "25 Gb/sec (1X EDR)", 25000, RDMA_WIDTH_1X, RDMA_SPEED_EDR },
                { "50 Gb/sec (2X EDR)", 50000, RDMA_WIDTH_2X, RDMA_SPEED_EDR },
                { "20 Gb/sec (4X DDR)", 20000, RDMA_WIDTH_4X, RDMA_SPEED_DDR },
                { "7.5 Gb/sec (3X SDR)", 0, 0, 0 }, /* no 3X width: garbage */
                { "30 Gb/sec (12X SDR)", 30000, RDMA_WIDTH_12X, RDMA_SPEED_SDR },
                { "168 Gb/sec (12X FDR)", 168000, RDMA_WIDTH_12X, RDMA_SPEED_FDR },
                { "1600 Gb/sec (8X XDR)", 1600000, RDMA_WIDTH_8X, RDMA_SPEED_XDR },
                /* The form before the kernel named SDR (and before FDR existed): inferred. */
                { "10 Gb/sec (4X)", 10000, RDMA_WIDTH_4X, RDMA_SPEED_SDR },
                { "2.5 Gb/sec (1X)", 2500, RDMA_WIDTH_1X, RDMA_SPEED_SDR },
                { "5 Gb/sec (2X)", 5000, RDMA_WIDTH_2X, RDMA_SPEED_SDR },
                { "30 Gb/sec (12X)", 30000, RDMA_WIDTH_12X, RDMA_SPEED_SDR },
                { "20 Gb/sec (4X)", 20000, RDMA_WIDTH_4X, RDMA_SPEED_DDR },
                { "40 Gb/sec (4X)", 40000, RDMA_WIDTH_4X, RDMA_SPEED_QDR },
                { "10 Gb/sec (1X)", 10000, RDMA_WIDTH_1X, RDMA_SPEED_QDR },
                /* FDR hardware on a kernel that computed 25 x width x active_speed: no such lane rate. */
                { "160 Gb/sec (4X)", 160000, RDMA_WIDTH_4X, RDMA_SPEED_UNKNOWN },
                { "7.5 Gb/sec (1X)", 7500, RDMA_WIDTH_1X, RDMA_SPEED_UNKNOWN },
                /* A speed name from a kernel newer than this code: rate and width still count. */
                { "3200 Gb/sec (8X GDR)", 3200000, RDMA_WIDTH_8X, RDMA_SPEED_UNKNOWN },
                { "1.25 Gb/sec (1X)", 1250, RDMA_WIDTH_1X, RDMA_SPEED_UNKNOWN },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                RdmaRate r = { .mgbps = 12345 };
                int ret = rdma_parse_rate(table[i].text, &r);

                show(table[i].text);
                if (table[i].mgbps == 0) {
                        assert_int_equal(ret, -EINVAL);
                        assert_int_equal(r.mgbps, 12345);
                        continue;
                }
                assert_int_equal(ret, 0);
                assert_int_equal(r.mgbps, table[i].mgbps);
                assert_int_equal(r.width, table[i].width);
                assert_int_equal(r.speed, table[i].speed);
        }
}

static void test_rate_garbage(void **state) {
        static const char *const garbage[] = {
                "",
                "fast (4X EDR)",
                "100 Gb/sec",
                "100 Gb/sec (4X EDR",
                "100 Gb/sec (4X EDR) ",
                "100 Gb/sec (4X EDR)\n",
                "100 Gb/sec (4X EDR))",
                "100 Gb/sec (4X EDR)x",
                "100 Gb/sec (3X EDR)",
                "100 Gb/sec (1X EDR)", /* named speed, rate does not match */
                "56 Gb/sec (4X EDR)",
                "200 Gb/sec (2X HDR)", /* 2X HDR is 100 Gb/s: the kernel computes the figure from the name */
                "2.5 Gb/sec (4X SDR)",
                "100Gb/sec (4X EDR)",
                " 100 Gb/sec (4X EDR)",
                "100 Gb/s (4X EDR)",
                "100 Gbit/sec (4X EDR)",
                "100.5.5 Gb/sec (4X)",
                "100. Gb/sec (4X)",
                ".5 Gb/sec (1X)",
                "2.5555 Gb/sec (1X SDR)",
                "-100 Gb/sec (4X EDR)",
                "+100 Gb/sec (4X EDR)",
                "1e2 Gb/sec (4X EDR)",
                "99999999999999999999 Gb/sec (4X)",
                "0 Gb/sec (4X)",
                "0 Gb/sec (4X SDR)",
                "100 Gb/sec ()",
                "100 Gb/sec (X EDR)",
                "100 Gb/sec (4 EDR)",
                "100 Gb/sec (4x EDR)",
                "100 Gb/sec (4X edr)",
                "100 Gb/sec (4X  EDR)",
                "100 Gb/sec (4X )",
                "100 Gb/sec (4X EDR-)",
                "100 Gb/sec (4X VERYLONGSPEEDNAME)",
                "100 Gb/sec (0004X EDR)",
                "100 Gb/sec (99999999999999999999X)",
                "100 Gb/sec (4X\tEDR)",
        };
        RdmaRate r;

        for (size_t i = 0; i < ELEMENTSOF(garbage); i++) {
                show(garbage[i]);
                assert_int_equal(rdma_parse_rate(garbage[i], &r), -EINVAL);
        }
        assert_int_equal(rdma_parse_rate(NULL, &r), -EINVAL);
}

static void test_rate_format(void **state) {
        char buf[RDMA_RATE_STRING_MAX];
        RdmaRate r;

        assert_int_equal(rdma_parse_rate("200 Gb/sec (4X HDR)", &r), 0);
        assert_string_equal(rdma_format_rate(&r, buf), "200 Gb/s (4X HDR)");
        assert_true(rdma_rate_gbps(&r) == 200.0);
        assert_int_equal(rdma_parse_rate("2.5 Gb/sec (1X SDR)", &r), 0);
        assert_string_equal(rdma_format_rate(&r, buf), "2.5 Gb/s (1X SDR)");
        assert_true(rdma_rate_gbps(&r) == 2.5);
        assert_int_equal(rdma_parse_rate("160 Gb/sec (4X)", &r), 0);
        assert_string_equal(rdma_format_rate(&r, buf), "160 Gb/s (4X)");
        assert_int_equal(rdma_parse_rate("1.25 Gb/sec (1X)", &r), 0);
        assert_string_equal(rdma_format_rate(&r, buf), "1.25 Gb/s (1X)");
        r = (RdmaRate) { .mgbps = 1234 };
        assert_string_equal(rdma_format_rate(&r, buf), "1.234 Gb/s");
        r = (RdmaRate) {};
        assert_string_equal(rdma_format_rate(&r, buf), "unknown");
        assert_true(rdma_rate_gbps(&r) == 0.0);
}

static void test_node_type(void **state) {
        static const struct {
                const char *text;
                RdmaNodeType type;
        } table[] = {
                { "1: CA", RDMA_NODE_TYPE_CA },
                { "2: switch", RDMA_NODE_TYPE_SWITCH },
                { "3: router", RDMA_NODE_TYPE_ROUTER },
                { "4: RNIC", RDMA_NODE_TYPE_RNIC },
                { "5: usNIC", RDMA_NODE_TYPE_USNIC },
                { "6: usNIC UDP", RDMA_NODE_TYPE_USNIC_UDP },
                { "7: unspecified", RDMA_NODE_TYPE_UNSPECIFIED },
                { "0: <unknown>", RDMA_NODE_TYPE_UNKNOWN },
                { "8: <unknown>", RDMA_NODE_TYPE_UNKNOWN },
                { "4294967295: <unknown>", RDMA_NODE_TYPE_UNKNOWN },
        };
        static const char *const garbage[] = {
                "", "CA", "1:CA", "1: ", "1:", "1:  CA", ": CA", "x: CA", "-1: CA", "1 : CA",
                "99999999999: CA", "1: C\tA", "0x1: CA", " 1: CA",
        };
        RdmaNodeType t;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                t = _RDMA_NODE_TYPE_INVALID;
                assert_int_equal(rdma_parse_node_type(table[i].text, &t), 0);
                assert_int_equal(t, table[i].type);
        }
        for (size_t i = 0; i < ELEMENTSOF(garbage); i++) {
                show(garbage[i]);
                assert_int_equal(rdma_parse_node_type(garbage[i], &t), -EINVAL);
        }
        assert_int_equal(rdma_parse_node_type(NULL, &t), -EINVAL);
        assert_string_equal(rdma_node_type_to_string(RDMA_NODE_TYPE_RNIC), "RNIC");
        assert_string_equal(rdma_node_type_to_string(RDMA_NODE_TYPE_UNKNOWN), "unknown");
        assert_null(rdma_node_type_to_string(_RDMA_NODE_TYPE_MAX));
        assert_null(rdma_node_type_to_string(_RDMA_NODE_TYPE_INVALID));
}

static void test_port_state(void **state) {
        static const char *const kernel[] = { "0: NOP", "1: DOWN", "2: INIT", "3: ARMED", "4: ACTIVE", "5: ACTIVE_DEFER" };
        static const RdmaPortState expected[] = {
                RDMA_PORT_STATE_NOP,   RDMA_PORT_STATE_DOWN,   RDMA_PORT_STATE_INIT,
                RDMA_PORT_STATE_ARMED, RDMA_PORT_STATE_ACTIVE, RDMA_PORT_STATE_ACTIVE_DEFER,
        };
        RdmaPortState s;

        for (size_t i = 0; i < ELEMENTSOF(kernel); i++) {
                assert_int_equal(rdma_parse_port_state(kernel[i], &s), 0);
                assert_int_equal(s, expected[i]);
                /* The name we print is the kernel's. */
                assert_string_equal(rdma_port_state_to_string(s), strchr(kernel[i], ' ') + 1);
        }
        assert_int_equal(rdma_parse_port_state("6: UNKNOWN", &s), 0);
        assert_int_equal(s, RDMA_PORT_STATE_UNKNOWN);
        assert_int_equal(rdma_parse_port_state("4 ACTIVE", &s), -EINVAL);
        assert_int_equal(rdma_parse_port_state("ACTIVE", &s), -EINVAL);
        assert_int_equal(rdma_parse_port_state("4:", &s), -EINVAL);
        assert_int_equal(rdma_parse_port_state("", &s), -EINVAL);
        assert_null(rdma_port_state_to_string(_RDMA_PORT_STATE_MAX));
}

static void test_phys_state(void **state) {
        static const char *const kernel[] = {
                "1: Sleep",  "2: Polling",           "3: Disabled", "4: PortConfigurationTraining",
                "5: LinkUp", "6: LinkErrorRecovery", "7: Phy Test",
        };
        RdmaPhysState s;

        for (size_t i = 0; i < ELEMENTSOF(kernel); i++) {
                assert_int_equal(rdma_parse_phys_state(kernel[i], &s), 0);
                assert_int_equal(s, (RdmaPhysState) (i + 1));
                assert_string_equal(rdma_phys_state_to_string(s), strchr(kernel[i], ' ') + 1);
        }
        assert_int_equal(rdma_parse_phys_state("0: <unknown>", &s), 0);
        assert_int_equal(s, RDMA_PHYS_STATE_UNKNOWN);
        assert_int_equal(rdma_parse_phys_state("8: <unknown>", &s), 0);
        assert_int_equal(s, RDMA_PHYS_STATE_UNKNOWN);
        assert_int_equal(rdma_parse_phys_state("LinkUp", &s), -EINVAL);
        assert_int_equal(rdma_parse_phys_state("5:LinkUp", &s), -EINVAL);
        assert_int_equal(rdma_parse_phys_state("five: LinkUp", &s), -EINVAL);
        assert_null(rdma_phys_state_to_string(_RDMA_PHYS_STATE_MAX));
}

static void test_link_layer(void **state) {
        RdmaLinkLayer l;

        assert_int_equal(rdma_parse_link_layer("InfiniBand", &l), 0);
        assert_int_equal(l, RDMA_LINK_LAYER_INFINIBAND);
        assert_int_equal(rdma_parse_link_layer("Ethernet", &l), 0);
        assert_int_equal(l, RDMA_LINK_LAYER_ETHERNET);
        assert_int_equal(rdma_parse_link_layer("Unknown", &l), 0);
        assert_int_equal(l, RDMA_LINK_LAYER_UNKNOWN);
        static const char *const garbage[] = { "", "infiniband", "Infiniband", "IB", "Ethernet ", "unknown", "RoCE" };
        for (size_t i = 0; i < ELEMENTSOF(garbage); i++)
                assert_int_equal(rdma_parse_link_layer(garbage[i], &l), -EINVAL);
        assert_int_equal(rdma_parse_link_layer(NULL, &l), -EINVAL);
        assert_string_equal(rdma_link_layer_to_string(RDMA_LINK_LAYER_INFINIBAND), "InfiniBand");
}

static void test_guid(void **state) {
        char buf[RDMA_GUID_STRING_MAX];
        uint64_t g = 0;

        assert_int_equal(rdma_parse_guid("b8ce:f603:00a1:b2c2", &g), 0);
        assert_int_equal(g, UINT64_C(0xb8cef60300a1b2c2));
        assert_string_equal(rdma_format_guid(g, buf), "b8ce:f603:00a1:b2c2");
        assert_int_equal(rdma_parse_guid("0000:0000:0000:0001", &g), 0);
        assert_int_equal(g, 1);
        assert_int_equal(rdma_parse_guid("FFFF:FFFF:FFFF:FFFF", &g), 0);
        assert_int_equal(g, UINT64_MAX);
        assert_string_equal(rdma_format_guid(g, buf), "ffff:ffff:ffff:ffff");

        static const char *const garbage[] = {
                "", "b8ce:f603:00a1", "b8cef60300a1b2c2", "b8ce:f603:00a1:b2c2:", "g8ce:f603:00a1:b2c2",
                "b8ce-f603-00a1-b2c2", " b8ce:f603:00a1:b2c", "0xb8ce:f603:00a1:b2", "b8ce:f603:00a1:b2c2 ",
                "b8c:ef603:00a1:b2c2", "b8ce::f60300a1b2c2",
        };
        g = 42;
        for (size_t i = 0; i < ELEMENTSOF(garbage); i++) {
                show(garbage[i]);
                assert_int_equal(rdma_parse_guid(garbage[i], &g), -EINVAL);
        }
        assert_int_equal(rdma_parse_guid(NULL, &g), -EINVAL);
        assert_int_equal(g, 42);
}

static void test_gid(void **state) {
        char buf[RDMA_GID_STRING_MAX];
        uint8_t gid[16];

        assert_int_equal(rdma_parse_gid("fe80:0000:0000:0000:b8ce:f603:00a1:b2c2", gid), 0);
        assert_string_equal(rdma_format_gid(gid, buf), "fe80::b8ce:f603:a1:b2c2");
        assert_true(rdma_gid_is_link_local(gid));
        assert_false(rdma_gid_is_ipv4_mapped(gid));
        assert_false(rdma_gid_is_zero(gid));
        assert_int_equal(gid[0], 0xfe);
        assert_int_equal(gid[15], 0xc2);

        assert_int_equal(rdma_parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:0a15", gid), 0);
        assert_string_equal(rdma_format_gid(gid, buf), "::ffff:192.168.10.21");
        assert_true(rdma_gid_is_ipv4_mapped(gid));
        assert_false(rdma_gid_is_link_local(gid));

        assert_int_equal(rdma_parse_gid("2001:0db8:0010:0000:0e42:a1ff:fe2b:3c4d", gid), 0);
        assert_string_equal(rdma_format_gid(gid, buf), "2001:db8:10:0:e42:a1ff:fe2b:3c4d");
        assert_false(rdma_gid_is_ipv4_mapped(gid));
        assert_false(rdma_gid_is_link_local(gid));

        assert_int_equal(rdma_parse_gid("0000:0000:0000:0000:0000:0000:0000:0000", gid), 0);
        assert_true(rdma_gid_is_zero(gid));
        assert_string_equal(rdma_format_gid(gid, buf), "::");

        /* iWARP: the MAC address in the first six bytes. */
        assert_int_equal(rdma_parse_gid("0007:433a:1bc0:0000:0000:0000:0000:0000", gid), 0);
        assert_int_equal(gid[1], 0x07);
        assert_int_equal(gid[5], 0xc0);

        /* The compressed form is an IPv6 address too. */
        assert_int_equal(rdma_parse_gid("fe80::1", gid), 0);
        assert_int_equal(gid[15], 1);

        static const char *const garbage[] = {
                "", "not-a-gid", "fe80::1%eth0", "fe80::1/64", "192.168.10.21", " fe80::1", "fe80::1 ",
                "fe80:0000:0000:0000:0000:0000:0000:0000:0000", "fe80:::1", "fe80:0000:0000:0000:b8ce:f603:00a1:b2c2x",
                "gggg::1", "fe80:0000:0000:0000:b8ce:f603:00a1:b2c2:0000:0000:0000:0000:0000:0000",
        };
        memset(gid, 0xaa, sizeof(gid));
        for (size_t i = 0; i < ELEMENTSOF(garbage); i++) {
                show(garbage[i]);
                assert_int_equal(rdma_parse_gid(garbage[i], gid), -EINVAL);
        }
        assert_int_equal(rdma_parse_gid(NULL, gid), -EINVAL);
        assert_int_equal(gid[0], 0xaa);
}

static void test_gid_type(void **state) {
        RdmaGidType t;

        assert_int_equal(rdma_parse_gid_type("IB/RoCE v1", &t), 0);
        assert_int_equal(t, RDMA_GID_TYPE_IB_ROCE_V1);
        assert_int_equal(rdma_parse_gid_type("RoCE v2", &t), 0);
        assert_int_equal(t, RDMA_GID_TYPE_ROCE_V2);
        static const char *const garbage[] = { "", "RoCE v3", "roce v2", "IB", "RoCE", "RoCE v2 ", "unknown" };
        for (size_t i = 0; i < ELEMENTSOF(garbage); i++)
                assert_int_equal(rdma_parse_gid_type(garbage[i], &t), -EINVAL);
        assert_string_equal(rdma_gid_type_to_string(RDMA_GID_TYPE_ROCE_V2), "RoCE v2");
        assert_null(rdma_gid_type_to_string(_RDMA_GID_TYPE_MAX));
}

static void test_width_and_speed(void **state) {
        for (size_t w = 0; w < ELEMENTSOF(kernel_widths); w++) {
                const char *s = rdma_width_to_string(kernel_widths[w].width);
                assert_non_null(s);
                assert_int_equal(rdma_width_from_string(s), kernel_widths[w].width);
                assert_int_equal(rdma_width_lanes(kernel_widths[w].width), kernel_widths[w].lanes);
        }
        for (size_t i = 0; i < ELEMENTSOF(kernel_speeds); i++) {
                assert_string_equal(rdma_speed_to_string(kernel_speeds[i].speed), kernel_speeds[i].name);
                assert_int_equal(rdma_speed_from_string(kernel_speeds[i].name), kernel_speeds[i].speed);
                assert_int_equal(rdma_speed_lane_mgbps(kernel_speeds[i].speed), kernel_speeds[i].deci_gbps * 100);
        }
        assert_int_equal(rdma_width_from_string("unknown"), _RDMA_WIDTH_INVALID);
        assert_int_equal(rdma_width_from_string("3X"), _RDMA_WIDTH_INVALID);
        assert_int_equal(rdma_speed_from_string("unknown"), _RDMA_SPEED_INVALID);
        assert_int_equal(rdma_speed_from_string(NULL), _RDMA_SPEED_INVALID);
        assert_int_equal(rdma_width_lanes(RDMA_WIDTH_UNKNOWN), 0);
        assert_int_equal(rdma_width_lanes(_RDMA_WIDTH_INVALID), 0);
        assert_int_equal(rdma_speed_lane_mgbps(RDMA_SPEED_UNKNOWN), 0);
        assert_int_equal(rdma_speed_lane_mgbps(_RDMA_SPEED_MAX), 0);
        assert_int_equal(rdma_rate_mgbps(RDMA_SPEED_HDR, RDMA_WIDTH_UNKNOWN), 0);
        assert_int_equal(rdma_rate_mgbps(RDMA_SPEED_XDR, RDMA_WIDTH_4X), 800000);
        assert_null(rdma_width_to_string(_RDMA_WIDTH_MAX));
        assert_null(rdma_speed_to_string(_RDMA_SPEED_INVALID));
}

static void test_transport(void **state) {
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_CA, RDMA_LINK_LAYER_INFINIBAND), RDMA_TRANSPORT_INFINIBAND);
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_CA, RDMA_LINK_LAYER_ETHERNET), RDMA_TRANSPORT_ROCE);
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_CA, RDMA_LINK_LAYER_UNKNOWN), RDMA_TRANSPORT_UNKNOWN);
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_RNIC, RDMA_LINK_LAYER_ETHERNET), RDMA_TRANSPORT_IWARP);
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_RNIC, RDMA_LINK_LAYER_UNKNOWN), RDMA_TRANSPORT_IWARP);
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_USNIC_UDP, RDMA_LINK_LAYER_ETHERNET), RDMA_TRANSPORT_USNIC);
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_UNSPECIFIED, RDMA_LINK_LAYER_ETHERNET),
                         RDMA_TRANSPORT_UNKNOWN);
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_SWITCH, RDMA_LINK_LAYER_INFINIBAND), RDMA_TRANSPORT_INFINIBAND);
        assert_int_equal(rdma_transport_from(RDMA_NODE_TYPE_UNKNOWN, RDMA_LINK_LAYER_ETHERNET), RDMA_TRANSPORT_ROCE);
        assert_int_equal(rdma_transport_from(_RDMA_NODE_TYPE_INVALID, RDMA_LINK_LAYER_ETHERNET), RDMA_TRANSPORT_UNKNOWN);
        assert_string_equal(rdma_transport_to_string(RDMA_TRANSPORT_ROCE), "RoCE");
        assert_string_equal(rdma_transport_to_string(RDMA_TRANSPORT_IWARP), "iWARP");
        assert_null(rdma_transport_to_string(_RDMA_TRANSPORT_MAX));
}

static void test_status_diff(void **state) {
        RdmaPortStatus a = {
                .known = _RDMA_PORT_FIELD_ALL,
                .state = RDMA_PORT_STATE_ACTIVE,
                .phys_state = RDMA_PHYS_STATE_LINK_UP,
                .link_layer = RDMA_LINK_LAYER_INFINIBAND,
                .rate = { 200000, RDMA_WIDTH_4X, RDMA_SPEED_HDR },
                .lid = 0x1a,
                .sm_lid = 1,
                .cap_mask = 0xa651e848,
        };
        RdmaPortStatus b = a;
        _cleanup_(freep) char *s = NULL, *all = NULL;

        assert_int_equal(rdma_port_status_diff(&a, &b), 0);
        b.state = RDMA_PORT_STATE_INIT;
        b.rate = (RdmaRate) { 100000, RDMA_WIDTH_2X, RDMA_SPEED_HDR };
        b.lid = 0x1b;
        assert_int_equal(rdma_port_status_diff(&a, &b), RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_RATE |
                                                                RDMA_PORT_FIELD_WIDTH | RDMA_PORT_FIELD_LID);
        assert_int_equal(rdma_port_fields_to_string(rdma_port_status_diff(&a, &b), &s), 0);
        assert_string_equal(s, "state,rate,width,lid");
        /* A field only one side knows is no difference. */
        b.known &= ~(unsigned) RDMA_PORT_FIELD_LID;
        assert_int_equal(rdma_port_status_diff(&a, &b), RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_RATE | RDMA_PORT_FIELD_WIDTH);
        b.known = 0;
        assert_int_equal(rdma_port_status_diff(&a, &b), 0);

        assert_int_equal(rdma_port_fields_to_string(_RDMA_PORT_FIELD_ALL, &all), 0);
        assert_string_equal(all, "state,phys_state,link_layer,rate,width,speed,lid,sm_lid,lmc,sm_sl,cap_mask");
        for (unsigned bit = 1; bit & _RDMA_PORT_FIELD_ALL; bit <<= 1)
                assert_non_null(rdma_port_field_to_string(bit));
        assert_null(rdma_port_field_to_string(RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_LID));
        assert_null(rdma_port_field_to_string(_RDMA_PORT_FIELD_ALL + 1));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rate_every_kernel_form),
                cmocka_unit_test(test_rate_known_strings),
                cmocka_unit_test(test_rate_garbage),
                cmocka_unit_test(test_rate_format),
                cmocka_unit_test(test_node_type),
                cmocka_unit_test(test_port_state),
                cmocka_unit_test(test_phys_state),
                cmocka_unit_test(test_link_layer),
                cmocka_unit_test(test_guid),
                cmocka_unit_test(test_gid),
                cmocka_unit_test(test_gid_type),
                cmocka_unit_test(test_width_and_speed),
                cmocka_unit_test(test_transport),
                cmocka_unit_test(test_status_diff),
        };
        return cmocka_run_group_tests_name("infiniband-parse", tests, NULL, NULL);
}
