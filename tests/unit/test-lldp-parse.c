/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LLDPDU parser against frames built byte by byte: what a switch sends, and what a liar does. */
#include "unit-test.h"

#include "shared/lldp-parse.h"

typedef struct Frame {
        uint8_t b[1600];
        size_t n;
} Frame;

static void frame_header(Frame *f) {
        static const uint8_t h[] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, /* nearest bridge */
                                     0x02, 0x11, 0x22, 0x33, 0x44, 0x55, /* source */
                                     0x88, 0xcc };
        memcpy(f->b, h, sizeof(h));
        f->n = sizeof(h);
}

static void frame_tlv(Frame *f, unsigned type, const void *v, size_t len) {
        f->b[f->n++] = (uint8_t) ((type << 1) | (len >> 8));
        f->b[f->n++] = (uint8_t) (len & 0xff);
        if (len > 0)
                memcpy(f->b + f->n, v, len);
        f->n += len;
}

static void frame_mandatory(Frame *f, uint16_t ttl) {
        static const uint8_t chassis[] = { LLDP_CHASSIS_MAC_ADDRESS, 0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc };
        static const uint8_t port[] = { LLDP_PORT_INTERFACE_NAME, 'E', 't', 'h', '1', '/', '7' };
        uint8_t t[2] = { (uint8_t) (ttl >> 8), (uint8_t) ttl };
        frame_header(f);
        frame_tlv(f, LLDP_TLV_CHASSIS_ID, chassis, sizeof(chassis));
        frame_tlv(f, LLDP_TLV_PORT_ID, port, sizeof(port));
        frame_tlv(f, LLDP_TLV_TTL, t, sizeof(t));
}

static int parse(const Frame *f, LldpFrame *out, const char **reason) {
        *reason = NULL;
        return lldp_parse_frame(f->b, f->n, out, reason);
}

static void test_switch_frame(void **state) {
        static const uint8_t caps[] = { 0x00, 0x14, 0x00, 0x04 }; /* bridge+router supported, bridge on */
        static const uint8_t mgmt[] = { 5, 1, 192, 0, 2, 10, 2, 0, 0, 0, 7, 0 };
        static const uint8_t mgmt6[] = { 17, 2, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0 };
        static const uint8_t pvid[] = { 0x00, 0x80, 0xc2, 1, 0x00, 0x64 };
        /* autoneg supported+enabled, 1000BASE-TFD + 100BASE-TXFD advertised, MAU 10GigBaseCX4 */
        static const uint8_t macphy[] = { 0x00, 0x12, 0x0f, 1, 0x03, 0x04, 0x01, 0x00, 41 };
        static const uint8_t mfs[] = { 0x00, 0x12, 0x0f, 4, 0x25, 0x8c };
        static const uint8_t vendor[] = { 0x00, 0x01, 0x42, 9, 1, 2, 3 };
        static const uint8_t reserved[] = { 1, 2, 3 };
        char text[LLDP_ID_TEXT_MAX];
        uint32_t speeds[4];
        LldpFrame l;
        const char *reason;
        Frame f;

        frame_mandatory(&f, 120);
        frame_tlv(&f, LLDP_TLV_PORT_DESCRIPTION, "uplink to node7", 15);
        frame_tlv(&f, LLDP_TLV_SYSTEM_NAME, "leaf-3", 6);
        frame_tlv(&f, LLDP_TLV_SYSTEM_DESCRIPTION, "Switch OS 4.2", 13);
        frame_tlv(&f, LLDP_TLV_SYSTEM_CAPABILITIES, caps, sizeof(caps));
        frame_tlv(&f, LLDP_TLV_MANAGEMENT_ADDRESS, mgmt, sizeof(mgmt));
        frame_tlv(&f, LLDP_TLV_MANAGEMENT_ADDRESS, mgmt6, sizeof(mgmt6));
        frame_tlv(&f, LLDP_TLV_ORGANIZATION, pvid, sizeof(pvid));
        frame_tlv(&f, LLDP_TLV_ORGANIZATION, macphy, sizeof(macphy));
        frame_tlv(&f, LLDP_TLV_ORGANIZATION, mfs, sizeof(mfs));
        frame_tlv(&f, LLDP_TLV_ORGANIZATION, vendor, sizeof(vendor));
        frame_tlv(&f, 42, reserved, sizeof(reserved));
        frame_tlv(&f, LLDP_TLV_END, NULL, 0);

        assert_int_equal(parse(&f, &l, &reason), 0);
        assert_int_equal(l.ttl, 120);
        assert_string_equal(lldp_id_to_text(&l.chassis_id, true, text, sizeof(text)), "00:1b:21:aa:bb:cc");
        assert_string_equal(lldp_id_subtype_to_string(&l.chassis_id, true), "mac");
        assert_string_equal(lldp_id_to_text(&l.port_id, false, text, sizeof(text)), "Eth1/7");
        assert_string_equal(lldp_id_subtype_to_string(&l.port_id, false), "ifname");
        assert_true(l.has_port_description && l.has_system_name && l.has_system_description);
        assert_string_equal(lldp_bytes_to_text(&l.port_description, text, sizeof(text)), "uplink to node7");
        assert_string_equal(lldp_bytes_to_text(&l.system_name, text, sizeof(text)), "leaf-3");
        assert_string_equal(lldp_bytes_to_text(&l.system_description, text, sizeof(text)), "Switch OS 4.2");
        assert_true(l.has_capabilities);
        assert_int_equal(l.capabilities_supported, 0x14);
        assert_int_equal(l.capabilities_enabled, 0x04);
        assert_string_equal(lldp_capability_to_string(LLDP_CAP_BRIDGE), "bridge");
        assert_int_equal(l.n_management_addresses, 2);
        assert_string_equal(lldp_management_address_to_text(&l.management_addresses[0], text, sizeof(text)),
                            "192.0.2.10");
        assert_string_equal(lldp_management_address_to_text(&l.management_addresses[1], text, sizeof(text)),
                            "2001:db8::1");
        assert_true(l.has_port_vlan_id);
        assert_int_equal(l.port_vlan_id, 100);
        assert_true(l.has_mac_phy);
        assert_int_equal(l.autoneg, LLDP_AUTONEG_SUPPORTED | LLDP_AUTONEG_ENABLED);
        assert_int_equal(l.mau_type, 41);
        assert_int_equal(lldp_mau_type_speed_mbps(l.mau_type), 10000);
        assert_int_equal(lldp_advertised_speeds_mbps(l.autoneg_advertised, speeds), 2);
        assert_int_equal(speeds[0], 100);
        assert_int_equal(speeds[1], 1000);
        assert_true(l.has_max_frame_size);
        assert_int_equal(l.max_frame_size, 9612);
        assert_int_equal(l.n_unknown, 2);
        assert_int_equal(l.n_malformed, 0);
}

static void test_ttl_zero_and_padding(void **state) {
        LldpFrame l;
        const char *reason;
        Frame f;

        /* A shutdown LLDPDU: the three mandatory TLVs, TTL 0, no End TLV, Ethernet padding. */
        frame_mandatory(&f, 0);
        memset(f.b + f.n, 0, 60 - f.n);
        f.n = 60;
        assert_int_equal(parse(&f, &l, &reason), 0);
        assert_int_equal(l.ttl, 0);

        /* No End TLV and nothing after: accepted (802.1AB-2016 made End optional). */
        frame_mandatory(&f, 30);
        assert_int_equal(parse(&f, &l, &reason), 0);
        assert_int_equal(l.ttl, 30);
}

static void expect_refused(const Frame *f, const char *why) {
        LldpFrame l;
        const char *reason;
        assert_int_equal(parse(f, &l, &reason), -EBADMSG);
        assert_non_null(reason);
        assert_string_equal(reason, why);
}

static void test_mandatory(void **state) {
        static const uint8_t chassis[] = { LLDP_CHASSIS_LOCAL, 'c' };
        static const uint8_t port[] = { LLDP_PORT_LOCAL, 'p' };
        static const uint8_t ttl[] = { 0, 120 };
        Frame f;

        frame_header(&f);
        expect_refused(&f, "frame too short for an LLDPDU");
        frame_tlv(&f, LLDP_TLV_END, NULL, 0);
        expect_refused(&f, "no Chassis ID TLV");

        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_PORT_ID, port, sizeof(port));
        expect_refused(&f, "first TLV is not Chassis ID");

        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, chassis, sizeof(chassis));
        expect_refused(&f, "no Port ID TLV");
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, chassis, sizeof(chassis));
        expect_refused(&f, "repeated Chassis ID TLV");

        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, chassis, sizeof(chassis));
        frame_tlv(&f, LLDP_TLV_PORT_ID, port, sizeof(port));
        expect_refused(&f, "no Time To Live TLV");
        frame_tlv(&f, LLDP_TLV_PORT_ID, port, sizeof(port));
        expect_refused(&f, "repeated Port ID TLV");

        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, chassis, sizeof(chassis));
        frame_tlv(&f, LLDP_TLV_PORT_ID, port, sizeof(port));
        frame_tlv(&f, LLDP_TLV_SYSTEM_NAME, "x", 1);
        expect_refused(&f, "third TLV is not Time To Live");

        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, chassis, sizeof(chassis));
        frame_tlv(&f, LLDP_TLV_PORT_ID, port, sizeof(port));
        frame_tlv(&f, LLDP_TLV_TTL, ttl, sizeof(ttl));
        frame_tlv(&f, LLDP_TLV_TTL, ttl, sizeof(ttl));
        expect_refused(&f, "repeated Time To Live TLV");

        frame_mandatory(&f, 120);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, chassis, sizeof(chassis));
        expect_refused(&f, "repeated Chassis ID TLV");
        frame_mandatory(&f, 120);
        frame_tlv(&f, LLDP_TLV_PORT_ID, port, sizeof(port));
        expect_refused(&f, "repeated Port ID TLV");
}

static void test_bad_lengths(void **state) {
        static const uint8_t reserved_subtype[] = { 0, 'x' };
        static const uint8_t big_subtype[] = { 8, 'x' };
        static const uint8_t port[] = { LLDP_PORT_LOCAL, 'p' };
        static const uint8_t ttl3[] = { 0, 0, 120 };
        uint8_t long_id[300];
        Frame f;

        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, reserved_subtype, 1);
        expect_refused(&f, "bad Chassis ID TLV (length or subtype)");
        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, reserved_subtype, sizeof(reserved_subtype));
        expect_refused(&f, "bad Chassis ID TLV (length or subtype)");
        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, big_subtype, sizeof(big_subtype));
        expect_refused(&f, "bad Chassis ID TLV (length or subtype)");
        /* 1 + 256 octets: one more than an ID may have. */
        memset(long_id, 'a', sizeof(long_id));
        long_id[0] = LLDP_CHASSIS_LOCAL;
        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, long_id, 257);
        expect_refused(&f, "bad Chassis ID TLV (length or subtype)");
        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, long_id, 256);
        frame_tlv(&f, LLDP_TLV_PORT_ID, long_id, 1);
        expect_refused(&f, "bad Port ID TLV (length or subtype)");
        frame_header(&f);
        frame_tlv(&f, LLDP_TLV_CHASSIS_ID, long_id, 256);
        frame_tlv(&f, LLDP_TLV_PORT_ID, port, sizeof(port));
        frame_tlv(&f, LLDP_TLV_TTL, ttl3, sizeof(ttl3));
        expect_refused(&f, "Time To Live TLV is not 2 octets");

        /* A length past the end, and a header cut in half. */
        frame_mandatory(&f, 120);
        frame_tlv(&f, LLDP_TLV_SYSTEM_NAME, "leaf", 4);
        f.n -= 1;
        expect_refused(&f, "TLV length runs past the end of the frame");
        frame_mandatory(&f, 120);
        f.b[f.n++] = LLDP_TLV_SYSTEM_NAME << 1;
        expect_refused(&f, "truncated TLV header");
        frame_mandatory(&f, 120);
        frame_tlv(&f, LLDP_TLV_END, "x", 1);
        expect_refused(&f, "End of LLDPDU TLV is not empty");

        /* Not LLDP at all. */
        frame_mandatory(&f, 120);
        f.b[13] = 0xcd;
        expect_refused(&f, "not LLDP (EtherType is not 0x88cc)");
}

static void test_optional_malformed(void **state) {
        static const uint8_t caps3[] = { 0, 4, 0 };
        static const uint8_t mgmt_short[] = { 5, 1, 192, 0 };
        static const uint8_t mgmt_oid_past[] = { 5, 1, 192, 0, 2, 1, 2, 0, 0, 0, 1, 9, 1 };
        static const uint8_t macphy_short[] = { 0x00, 0x12, 0x0f, 1, 0x03, 0x00 };
        static const uint8_t org_short[] = { 0x00, 0x12 };
        LldpFrame l;
        const char *reason;
        char text[LLDP_ID_TEXT_MAX];
        Frame f;

        frame_mandatory(&f, 120);
        frame_tlv(&f, LLDP_TLV_SYSTEM_CAPABILITIES, caps3, sizeof(caps3));
        frame_tlv(&f, LLDP_TLV_MANAGEMENT_ADDRESS, mgmt_short, sizeof(mgmt_short));
        frame_tlv(&f, LLDP_TLV_MANAGEMENT_ADDRESS, mgmt_oid_past, sizeof(mgmt_oid_past));
        frame_tlv(&f, LLDP_TLV_ORGANIZATION, macphy_short, sizeof(macphy_short));
        frame_tlv(&f, LLDP_TLV_ORGANIZATION, org_short, sizeof(org_short));
        frame_tlv(&f, LLDP_TLV_SYSTEM_NAME, "", 0);
        frame_tlv(&f, LLDP_TLV_SYSTEM_NAME, "first", 5);
        frame_tlv(&f, LLDP_TLV_SYSTEM_NAME, "second", 6);
        /* Control characters and invalid UTF-8 in a description. */
        frame_tlv(&f, LLDP_TLV_PORT_DESCRIPTION, "a\x1b[31m\xff", 7);
        assert_int_equal(parse(&f, &l, &reason), 0);
        assert_false(l.has_capabilities);
        assert_int_equal(l.n_management_addresses, 0);
        assert_false(l.has_mac_phy);
        assert_int_equal(l.n_malformed, 6);
        assert_int_equal(l.n_repeated, 1);
        assert_string_equal(lldp_bytes_to_text(&l.system_name, text, sizeof(text)), "first");
        assert_string_equal(lldp_bytes_to_text(&l.port_description, text, sizeof(text)), "a\\x1b[31m\\xff");
}

static void test_id_forms(void **state) {
        char text[LLDP_ID_TEXT_MAX];
        LldpId id = { .subtype = LLDP_CHASSIS_NETWORK_ADDRESS, .size = 5, .data = { 1, 10, 0, 0, 1 } };

        assert_string_equal(lldp_id_to_text(&id, true, text, sizeof(text)), "10.0.0.1");
        assert_string_equal(lldp_id_subtype_to_string(&id, true), "ip");
        id = (LldpId) { .subtype = LLDP_CHASSIS_LOCAL, .size = 3, .data = { 0x01, 0xfe, 0x41 } };
        assert_string_equal(lldp_id_to_text(&id, true, text, sizeof(text)), "01:fe:41");
        id = (LldpId) { .subtype = LLDP_PORT_AGENT_CIRCUIT_ID, .size = 2, .data = { 'a', 'b' } };
        assert_string_equal(lldp_id_to_text(&id, false, text, sizeof(text)), "ab");
        assert_string_equal(lldp_id_subtype_to_string(&id, false), "circuit");
        /* A small buffer cuts, and stays a string. */
        id = (LldpId) { .subtype = LLDP_PORT_MAC_ADDRESS, .size = 6, .data = { 1, 2, 3, 4, 5, 6 } };
        assert_string_equal(lldp_id_to_text(&id, false, text, 6), "01:02");
        assert_int_equal(lldp_mau_type_speed_mbps(0), 0);
        assert_int_equal(lldp_mau_type_speed_mbps(30), 1000);
        assert_int_equal(lldp_mau_type_speed_mbps(77), 100000);
        assert_int_equal(lldp_mau_type_speed_mbps(999), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_switch_frame),
                cmocka_unit_test(test_ttl_zero_and_padding),
                cmocka_unit_test(test_mandatory),
                cmocka_unit_test(test_bad_lengths),
                cmocka_unit_test(test_optional_malformed),
                cmocka_unit_test(test_id_forms),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
