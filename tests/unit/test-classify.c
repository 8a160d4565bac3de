/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the classifiers: every address range at and just outside its boundaries, link kinds
 * from the facts real interfaces present, connection types and ranking order. */
#include <arpa/inet.h>
#include <net/if_arp.h>
#include "unit-test.h"

#include "daemon/classify.h"

static AddressClass classify(const char *text) {
        uint8_t buf[16];
        int family = strchr(text, ':') ? AF_INET6 : AF_INET;
        assert_int_equal(inet_pton(family, text, buf), 1);
        return address_class(family, buf);
}

static void test_address_class_boundaries(void **state) {
        static const struct {
                const char *address;
                const char *class;
        } table[] = {
                /* 127.0.0.0/8 */
                { "126.255.255.255", "global" }, { "127.0.0.0", "loopback" }, { "127.0.0.1", "loopback" },
                { "127.255.255.255", "loopback" }, { "128.0.0.0", "global" },
                /* 169.254.0.0/16 */
                { "169.253.255.255", "global" }, { "169.254.0.0", "link-local" }, { "169.254.255.255", "link-local" },
                { "169.255.0.0", "global" },
                /* 10.0.0.0/8 */
                { "9.255.255.255", "global" }, { "10.0.0.0", "private" }, { "10.255.255.255", "private" },
                { "11.0.0.0", "global" },
                /* 172.16.0.0/12 */
                { "172.15.255.255", "global" }, { "172.16.0.0", "private" }, { "172.31.255.255", "private" },
                { "172.32.0.0", "global" },
                /* 192.168.0.0/16 */
                { "192.167.255.255", "global" }, { "192.168.0.0", "private" }, { "192.168.255.255", "private" },
                { "192.169.0.0", "global" },
                /* 100.64.0.0/10 (Tailscale hands out 100.64/10 addresses) */
                { "100.63.255.255", "global" }, { "100.64.0.0", "cgnat" }, { "100.101.102.103", "cgnat" },
                { "100.127.255.255", "cgnat" }, { "100.128.0.0", "global" },
                { "8.8.8.8", "global" }, { "0.0.0.0", "global" },
                /* IPv6 */
                { "::1", "loopback" }, { "::", "global" }, { "::2", "global" },
                { "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "global" }, { "fe80::", "link-local" },
                { "fe80::1", "link-local" }, { "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local" },
                { "fec0::", "global" },
                { "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "global" }, { "fc00::", "ula" },
                { "fd7a:115c:a1e0::1", "ula" }, { "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ula" },
                { "fe00::", "global" }, { "2001:db8::1", "global" }, { "2a00:1450:4001::1", "global" },
                /* IPv4-mapped addresses are classified by the IPv4 address inside */
                { "::ffff:10.1.2.3", "private" }, { "::ffff:100.64.0.1", "cgnat" }, { "::ffff:127.0.0.1", "loopback" },
                { "::ffff:8.8.8.8", "global" }, { "::fffe:10.1.2.3", "global" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                const char *got = address_class_to_string(classify(table[i].address));
                if (!got || !streq(got, table[i].class))
                        fail_msg("%s: expected %s, got %s", table[i].address, table[i].class, strna(got));
        }
}

static void test_address_class_invalid(void **state) {
        uint8_t buf[16] = {};
        assert_int_equal(address_class(AF_PACKET, buf), _ADDRESS_CLASS_INVALID);
        assert_int_equal(address_class(AF_INET, NULL), _ADDRESS_CLASS_INVALID);
}

static void test_link_kind(void **state) {
        static const struct {
                const char *what;
                LinkFacts facts;
                const char *kind;
                const char *connection;
        } table[] = {
                { "lo", { .arphrd = ARPHRD_LOOPBACK }, "loopback", "Loopback" },
                { "virtio eth0", { .arphrd = ARPHRD_ETHER, .driver = "virtio_net", .has_device = true }, "ethernet", "Ethernet" },
                { "igc enp5s0", { .arphrd = ARPHRD_ETHER, .driver = "igc", .has_device = true }, "ethernet", "Ethernet" },
                { "usb r8152", { .arphrd = ARPHRD_ETHER, .driver = "r8152", .has_device = true }, "ethernet", "Ethernet" },
                { "iwlwifi wlp0s20f3", { .arphrd = ARPHRD_ETHER, .driver = "iwlwifi", .devtype = "wlan", .wireless = true, .has_device = true }, "wifi", "Wi-Fi" },
                { "wifi without DEVTYPE", { .arphrd = ARPHRD_ETHER, .driver = "brcmfmac", .wireless = true, .has_device = true }, "wifi", "Wi-Fi" },
                { "thunderbolt0", { .arphrd = ARPHRD_ETHER, .driver = "thunderbolt-net", .has_device = true, .on_thunderbolt = true }, "thunderbolt", "Thunderbolt" },
                { "ib0 ipoib", { .arphrd = ARPHRD_INFINIBAND, .info_kind = "ipoib", .driver = "mlx5_core", .has_device = true }, "infiniband", "InfiniBand" },
                { "br0", { .arphrd = ARPHRD_ETHER, .info_kind = "bridge" }, "bridge", "Virtual" },
                { "bond0", { .arphrd = ARPHRD_ETHER, .info_kind = "bond" }, "bond", "Virtual" },
                { "team0", { .arphrd = ARPHRD_ETHER, .info_kind = "team" }, "bond", "Virtual" },
                { "eth0.100", { .arphrd = ARPHRD_ETHER, .info_kind = "vlan" }, "vlan", "Virtual" },
                { "veth0", { .arphrd = ARPHRD_ETHER, .info_kind = "veth" }, "veth", "Virtual" },
                { "tailscale0", { .arphrd = ARPHRD_NONE, .info_kind = "tun" }, "tun", "VPN" },
                { "tap0", { .arphrd = ARPHRD_ETHER, .info_kind = "tun" }, "tun", "Virtual" },
                { "macvlan", { .arphrd = ARPHRD_ETHER, .info_kind = "macvlan" }, "macvlan", "Virtual" },
                { "macvtap", { .arphrd = ARPHRD_ETHER, .info_kind = "macvtap" }, "macvlan", "Virtual" },
                { "wg0", { .arphrd = ARPHRD_NONE, .info_kind = "wireguard" }, "other", "VPN" },
                { "gre1", { .arphrd = ARPHRD_IPGRE, .info_kind = "gre" }, "other", "VPN" },
                { "ppp0", { .arphrd = ARPHRD_PPP }, "other", "VPN" },
                { "dummy0", { .arphrd = ARPHRD_ETHER, .info_kind = "dummy" }, "other", "Virtual" },
                { "ifb0", { .arphrd = ARPHRD_ETHER, .info_kind = "ifb" }, "ifb", "Virtual" },
                { "ifb on thunderbolt", { .arphrd = ARPHRD_ETHER, .info_kind = "ifb", .has_device = true, .on_thunderbolt = true }, "thunderbolt", "Thunderbolt" },
                { "vxlan", { .arphrd = ARPHRD_ETHER, .info_kind = "vxlan" }, "other", "Virtual" },
                { "wwan0", { .arphrd = ARPHRD_ETHER, .devtype = "wwan", .has_device = true }, "other", "Unknown" },
                { "bnep0", { .arphrd = ARPHRD_ETHER, .devtype = "bluetooth", .has_device = true }, "other", "Unknown" },
                { "can0", { .arphrd = ARPHRD_CAN, .has_device = true }, "other", "Unknown" },
                /* A prefix that looks like a VPN's must not decide anything: the name is not a fact. */
                { "ethernet named tun0", { .arphrd = ARPHRD_ETHER, .driver = "e1000e", .has_device = true }, "ethernet", "Ethernet" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                LinkKind k = link_kind_from_facts(&table[i].facts);
                const char *kind = link_kind_to_string(k);
                const char *conn = connection_type_to_string(connection_type_from_facts(k, &table[i].facts));
                if (!kind || !streq(kind, table[i].kind))
                        fail_msg("%s: kind %s, expected %s", table[i].what, strna(kind), table[i].kind);
                if (!conn || !streq(conn, table[i].connection))
                        fail_msg("%s: connection %s, expected %s", table[i].what, strna(conn), table[i].connection);
        }
}

static void test_string_tables(void **state) {
        for (LinkKind k = 0; k < _LINK_KIND_MAX; k++)
                assert_int_equal(link_kind_from_string(link_kind_to_string(k)), k);
        for (ConnectionType t = 0; t < _CONNECTION_TYPE_MAX; t++)
                assert_int_equal(connection_type_from_string(connection_type_to_string(t)), t);
        for (AddressClass c = 0; c < _ADDRESS_CLASS_MAX; c++)
                assert_int_equal(address_class_from_string(address_class_to_string(c)), c);
        assert_int_equal(rank_purpose_from_string("ring"), RANK_PURPOSE_RING);
        assert_int_equal(rank_purpose_from_string("coordinator"), RANK_PURPOSE_COORDINATOR);
        assert_int_equal(rank_purpose_from_string("Ring"), _RANK_PURPOSE_INVALID);
        assert_int_equal(rank_purpose_from_string(""), _RANK_PURPOSE_INVALID);
        assert_int_equal(rank_purpose_from_string(NULL), _RANK_PURPOSE_INVALID);
        assert_null(link_kind_to_string(_LINK_KIND_MAX));
        assert_null(connection_type_to_string(_CONNECTION_TYPE_INVALID));
        assert_string_equal(connection_type_to_string(connection_type_for_thunderbolt(5)), "Thunderbolt 5");
        assert_string_equal(connection_type_to_string(connection_type_for_thunderbolt(3)), "Thunderbolt 3");
        assert_string_equal(connection_type_to_string(connection_type_for_thunderbolt(0)), "Thunderbolt");
}

static void test_rank_order(void **state) {
        /* ring: Thunderbolt, then Ethernet, then the rest, VPN last, loopback never */
        assert_true(rank_type_order(RANK_PURPOSE_RING, CONNECTION_THUNDERBOLT_5) <
                    rank_type_order(RANK_PURPOSE_RING, CONNECTION_ETHERNET));
        assert_true(rank_type_order(RANK_PURPOSE_RING, CONNECTION_ETHERNET) <
                    rank_type_order(RANK_PURPOSE_RING, CONNECTION_WIFI));
        assert_true(rank_type_order(RANK_PURPOSE_RING, CONNECTION_WIFI) <
                    rank_type_order(RANK_PURPOSE_RING, CONNECTION_VPN));
        /* coordinator: Ethernet, then Thunderbolt */
        assert_true(rank_type_order(RANK_PURPOSE_COORDINATOR, CONNECTION_ETHERNET) <
                    rank_type_order(RANK_PURPOSE_COORDINATOR, CONNECTION_THUNDERBOLT_4));
        assert_true(rank_type_order(RANK_PURPOSE_COORDINATOR, CONNECTION_THUNDERBOLT_4) <
                    rank_type_order(RANK_PURPOSE_COORDINATOR, CONNECTION_VIRTUAL));
        for (RankPurpose p = 0; p < _RANK_PURPOSE_MAX; p++) {
                assert_true(rank_type_order(p, CONNECTION_LOOPBACK) < 0);
                for (ConnectionType t = 0; t < _CONNECTION_TYPE_MAX; t++)
                        if (t != CONNECTION_LOOPBACK && t != CONNECTION_VPN)
                                assert_true(rank_type_order(p, t) < rank_type_order(p, CONNECTION_VPN));
        }
        /* private before link-local before the others, CGNAT last, loopback never */
        assert_true(rank_class_order(ADDRESS_CLASS_PRIVATE) < rank_class_order(ADDRESS_CLASS_LINK_LOCAL));
        assert_true(rank_class_order(ADDRESS_CLASS_LINK_LOCAL) < rank_class_order(ADDRESS_CLASS_ULA));
        assert_true(rank_class_order(ADDRESS_CLASS_LINK_LOCAL) < rank_class_order(ADDRESS_CLASS_GLOBAL));
        assert_true(rank_class_order(ADDRESS_CLASS_GLOBAL) < rank_class_order(ADDRESS_CLASS_CGNAT));
        assert_true(rank_class_order(ADDRESS_CLASS_LOOPBACK) < 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_address_class_boundaries),
                cmocka_unit_test(test_address_class_invalid),
                cmocka_unit_test(test_link_kind),
                cmocka_unit_test(test_string_tables),
                cmocka_unit_test(test_rank_order),
        };
        return cmocka_run_group_tests_name("classify", tests, NULL, NULL);
}
