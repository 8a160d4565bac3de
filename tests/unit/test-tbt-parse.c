/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the Thunderbolt value and name parsers: the formats the kernel writes, and every
 * way a value can be wrong (garbage, negative, huge, out of range, trailing bytes). */
#include "unit-test.h"

#include "sysfs/thunderbolt.h"

static void test_lane_speed(void **state) {
        static const struct {
                const char *text;
                int r;
                unsigned gbps;
        } table[] = {
                { "10.0 Gb/s", 0, 10 },   { "20.0 Gb/s", 0, 20 },         { "40.0 Gb/s", 0, 40 },
                { "20 Gb/s", 0, 20 },     { "80.0 Gb/s", 0, 80 },         { "1000.0 Gb/s", 0, 1000 },
                { "abc Gb/s", -EINVAL },  { "-20.0 Gb/s", -EINVAL },      { "4294967296.0 Gb/s", -ERANGE },
                { "1001.0 Gb/s", -ERANGE }, { "0.0 Gb/s", -ERANGE },      { "20.5 Gb/s", -EINVAL },
                { "20.0Gb/s", -EINVAL },  { "20.0 Gb/s ", -EINVAL },      { "20.0 GB/s", -EINVAL },
                { "20.0", -EINVAL },      { " 20.0 Gb/s", -EINVAL },      { "", -EINVAL },
                { "+20.0 Gb/s", -EINVAL }, { "99999999999999999999.0 Gb/s", -ERANGE },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                unsigned v = 12345;
                int r = tbt_parse_lane_speed(table[i].text, &v);
                if (r != table[i].r)
                        fail_msg("\"%s\": got %d, expected %d", table[i].text, r, table[i].r);
                assert_int_equal(v, r == 0 ? table[i].gbps : 12345);
        }
        assert_int_equal(tbt_parse_lane_speed(NULL, &(unsigned) { 0 }), -EINVAL);
}

static void test_small_numbers(void **state) {
        unsigned v = 0;
        TbtAuthorized a = _TBT_AUTHORIZED_INVALID;

        assert_int_equal(tbt_parse_lanes("1", &v), 0);
        assert_int_equal(v, 1);
        assert_int_equal(tbt_parse_lanes("3", &v), 0);
        assert_int_equal(v, 3);
        assert_int_equal(tbt_parse_lanes("0", &v), -ERANGE);
        assert_int_equal(tbt_parse_lanes("4", &v), -ERANGE);
        assert_int_equal(tbt_parse_lanes("7", &v), -ERANGE);
        assert_int_equal(tbt_parse_lanes("-1", &v), -EINVAL);
        assert_int_equal(tbt_parse_lanes("2 ", &v), -EINVAL);
        assert_int_equal(tbt_parse_lanes("", &v), -EINVAL);
        assert_int_equal(v, 3);

        assert_int_equal(tbt_parse_generation("4", &v), 0);
        assert_int_equal(v, 4);
        assert_int_equal(tbt_parse_generation("1", &v), 0);
        assert_int_equal(tbt_parse_generation("0", &v), -ERANGE);
        assert_int_equal(tbt_parse_generation("-1", &v), -EINVAL);
        assert_int_equal(tbt_parse_generation("99999999999", &v), -ERANGE);

        assert_int_equal(tbt_parse_authorized("0", &a), 0);
        assert_int_equal(a, TBT_AUTHORIZED_NO);
        assert_int_equal(tbt_parse_authorized("2", &a), 0);
        assert_int_equal(a, TBT_AUTHORIZED_SECURE);
        assert_int_equal(tbt_parse_authorized("3", &a), -ERANGE);
        assert_int_equal(tbt_parse_authorized("yes", &a), -EINVAL);

        assert_int_equal(tbt_parse_usb4_version("1.0", &v), 0);
        assert_int_equal(v, 1);
        assert_int_equal(tbt_parse_usb4_version("2.0", &v), 0);
        assert_int_equal(v, 2);
        assert_int_equal(tbt_parse_usb4_version("x.y", &v), -EINVAL);
        assert_int_equal(tbt_parse_usb4_version("2", &v), -EINVAL);
        assert_int_equal(tbt_parse_usb4_version("0.9", &v), -ERANGE);
        assert_int_equal(tbt_parse_usb4_version(".0", &v), -EINVAL);
        assert_int_equal(v, 2);
}

static void test_nvm_and_uuid(void **state) {
        assert_int_equal(tbt_parse_nvm_version("26.0"), 0);
        assert_int_equal(tbt_parse_nvm_version("3a.1"), 0);
        assert_int_equal(tbt_parse_nvm_version("garbage"), -EINVAL);
        assert_int_equal(tbt_parse_nvm_version("1."), -EINVAL);
        assert_int_equal(tbt_parse_nvm_version(".1"), -EINVAL);
        assert_int_equal(tbt_parse_nvm_version("1.2.3"), -EINVAL);
        assert_int_equal(tbt_parse_nvm_version(""), -EINVAL);

        assert_true(tbt_uuid_is_valid("d1030000-0090-8f18-23c5-b11c6cd30923"));
        assert_false(tbt_uuid_is_valid("d1030000-0090-8f18-23c5-b11c6cd3092"));
        assert_false(tbt_uuid_is_valid("d1030000-0090-8f18-23c5-b11c6cd309234"));
        assert_false(tbt_uuid_is_valid("d1030000009008f1823c5b11c6cd30923"));
        assert_false(tbt_uuid_is_valid("not-a-uuid"));
        assert_false(tbt_uuid_is_valid("g1030000-0090-8f18-23c5-b11c6cd30923"));
        assert_false(tbt_uuid_is_valid(""));
        assert_false(tbt_uuid_is_valid(NULL));
}

static void test_route(void **state) {
        static const struct {
                const char *name;
                int r;
                unsigned domain;
                uint64_t route;
                int depth;
        } table[] = {
                { "0-0", 0, 0, 0x0, 0 },
                { "0-1", 0, 0, 0x1, 1 },
                { "0-301", 0, 0, 0x301, 2 },
                { "1-30301", 0, 1, 0x30301, 3 },
                { "0-303030303030303", 0, 0, UINT64_C(0x303030303030303), 8 },
                { "12-3f01", 0, 12, 0x3f01, 2 },
                { "0-3001", 0, 0, 0x3001, 2 },  /* port 0x30 = 48 is fine */
                { "0-30001", -EINVAL },  /* a hop after an empty one */
                { "0-4001", -EINVAL },   /* port 0x40 > 63 */
                { "0-ff", -EINVAL },
                { "0-", -EINVAL },
                { "-1", -EINVAL },
                { "0", -EINVAL },
                { "x-1", -EINVAL },
                { "0-1g", -EINVAL },
                { "0-30303030303030303", -EINVAL }, /* 17 hex digits */
                { "0--1", -EINVAL },
                { "99999999999-1", -ERANGE },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                unsigned domain = 777;
                uint64_t route = 777;
                int r = tbt_parse_router_name(table[i].name, &domain, &route);
                if (r != table[i].r)
                        fail_msg("\"%s\": got %d, expected %d", table[i].name, r, table[i].r);
                if (r < 0) {
                        assert_int_equal(domain, 777);
                        continue;
                }
                assert_int_equal(domain, table[i].domain);
                assert_true(route == table[i].route);
                assert_int_equal(tbt_route_depth(route), table[i].depth);
        }

        assert_int_equal(tbt_route_port(0x30301, 1), 1);
        assert_int_equal(tbt_route_port(0x30301, 2), 3);
        assert_int_equal(tbt_route_port(0x30301, 3), 3);
        assert_int_equal(tbt_route_port(0x30301, 4), 0);
        assert_int_equal(tbt_route_port(0x30301, 0), 0);
        assert_int_equal(tbt_route_port(0x30301, 9), 0);
        assert_int_equal(tbt_route_depth(UINT64_MAX), -EINVAL);
}

static void test_names(void **state) {
        unsigned domain = 0, port = 0, index = 0;
        char *s = NULL;

        assert_int_equal(tbt_parse_domain_name("domain0", &domain), 0);
        assert_int_equal(domain, 0);
        assert_int_equal(tbt_parse_domain_name("domain12", &domain), 0);
        assert_int_equal(domain, 12);
        assert_int_equal(tbt_parse_domain_name("domain", &domain), -EINVAL);
        assert_int_equal(tbt_parse_domain_name("domainx", &domain), -EINVAL);
        assert_int_equal(tbt_parse_domain_name("0-0", &domain), -EINVAL);

        assert_int_equal(tbt_parse_service_name("0-301.0", &s, &index), 0);
        assert_string_equal(s, "0-301");
        assert_int_equal(index, 0);
        free(s);
        s = NULL;
        assert_int_equal(tbt_parse_service_name("1-1.12", NULL, &index), 0);
        assert_int_equal(index, 12);
        assert_int_equal(tbt_parse_service_name("0-301", &s, &index), -EINVAL);
        assert_int_equal(tbt_parse_service_name("0-301.", &s, &index), -EINVAL);
        assert_int_equal(tbt_parse_service_name("domain0.1", &s, &index), -EINVAL);
        assert_null(s);

        assert_int_equal(tbt_parse_retimer_name("0-0:1.1", &s, &port, &index), 0);
        assert_string_equal(s, "0-0");
        assert_int_equal(port, 1);
        assert_int_equal(index, 1);
        free(s);
        s = NULL;
        assert_int_equal(tbt_parse_retimer_name("0-301:3.2", NULL, &port, &index), 0);
        assert_int_equal(port, 3);
        assert_int_equal(index, 2);
        assert_int_equal(tbt_parse_retimer_name("0-0:0.1", &s, &port, &index), -ERANGE);
        assert_int_equal(tbt_parse_retimer_name("0-0:64.1", &s, &port, &index), -ERANGE);
        assert_int_equal(tbt_parse_retimer_name("0-0:1.0", &s, &port, &index), -ERANGE);
        assert_int_equal(tbt_parse_retimer_name("0-0:1", &s, &port, &index), -EINVAL);
        assert_int_equal(tbt_parse_retimer_name("0-0:.1", &s, &port, &index), -EINVAL);
        assert_int_equal(tbt_parse_retimer_name("x:1.1", &s, &port, &index), -EINVAL);
        assert_null(s);
}

static void test_boot_acl(void **state) {
        char **l = NULL;

        assert_int_equal(tbt_parse_boot_acl(",,,,,,,,,,,,,,,", &l), 0);
        assert_int_equal(strv_length(l), 16);
        for (size_t i = 0; i < 16; i++)
                assert_string_equal(l[i], "");
        l = strv_free(l);

        assert_int_equal(tbt_parse_boot_acl("d2000000-0070-4608-ffff-ffffffffff11,,", &l), 0);
        assert_int_equal(strv_length(l), 3);
        assert_string_equal(l[0], "d2000000-0070-4608-ffff-ffffffffff11");
        assert_string_equal(l[2], "");
        l = strv_free(l);

        assert_int_equal(tbt_parse_boot_acl("", &l), 0);
        assert_int_equal(strv_length(l), 1);
        l = strv_free(l);

        assert_int_equal(tbt_parse_boot_acl("not-a-uuid,,,", &l), -EINVAL);
        assert_null(l);
        assert_int_equal(tbt_parse_boot_acl(NULL, &l), -EINVAL);
}

static void test_tables(void **state) {
        assert_int_equal(tbt_kind_from_devtype("thunderbolt_domain"), TBT_KIND_DOMAIN);
        assert_int_equal(tbt_kind_from_devtype("thunderbolt_device"), TBT_KIND_ROUTER);
        assert_int_equal(tbt_kind_from_devtype("thunderbolt_xdomain"), TBT_KIND_PEER);
        assert_int_equal(tbt_kind_from_devtype("thunderbolt_service"), TBT_KIND_SERVICE);
        assert_int_equal(tbt_kind_from_devtype("thunderbolt_retimer"), TBT_KIND_RETIMER);
        assert_int_equal(tbt_kind_from_devtype("thunderbolt_frobnicator"), _TBT_KIND_INVALID);
        assert_int_equal(tbt_kind_from_devtype(NULL), _TBT_KIND_INVALID);
        assert_string_equal(tbt_kind_to_string(TBT_KIND_PEER), "peer");
        assert_null(tbt_kind_to_string(_TBT_KIND_INVALID));

        for (int s = 0; s < _TBT_SECURITY_MAX; s++)
                assert_int_equal(tbt_security_from_string(tbt_security_to_string(s)), s);
        assert_int_equal(tbt_security_from_string("bogus"), _TBT_SECURITY_INVALID);
        for (int t = 0; t < _TBT_ROUTER_TYPE_MAX; t++)
                assert_int_equal(tbt_router_type_from_string(tbt_router_type_to_string(t)), t);
        assert_int_equal(tbt_router_type_from_string("spaceship"), _TBT_ROUTER_TYPE_INVALID);
        for (int l = 0; l < _TBT_PORT_LINK_MAX; l++)
                assert_int_equal(tbt_port_link_from_string(tbt_port_link_to_string(l)), l);
        assert_int_equal(tbt_port_link_from_string("warp"), _TBT_PORT_LINK_INVALID);
        assert_string_equal(tbt_authorized_to_string(TBT_AUTHORIZED_SECURE), "secure");
        assert_null(tbt_authorized_to_string(_TBT_AUTHORIZED_INVALID));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lane_speed), cmocka_unit_test(test_small_numbers),
                cmocka_unit_test(test_nvm_and_uuid), cmocka_unit_test(test_route),
                cmocka_unit_test(test_names),      cmocka_unit_test(test_boot_acl),
                cmocka_unit_test(test_tables),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
