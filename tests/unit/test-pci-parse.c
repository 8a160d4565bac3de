/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the bus/pci parsers: every link speed the kernel has printed (drivers/pci/probe.c's
 * pci_speed_string() since 5.5, the bare "N GT/s" before), widths, NUMA nodes, CPU lists, addresses,
 * the usable rate after encoding, and device paths. Garbage is refused, never rounded into a value. */
#include "unit-test.h"

#include "shared/string-util.h"
#include "sysfs/kfd.h"
#include "sysfs/pci.h"

static void test_link_speed(void **state) {
        static const struct {
                const char *text;
                double gts;
                unsigned generation;
        } good[] = {
                { "2.5 GT/s PCIe", 2.5, 1 },  { "5.0 GT/s PCIe", 5.0, 2 },   { "8.0 GT/s PCIe", 8.0, 3 },
                { "16.0 GT/s PCIe", 16.0, 4 }, { "32.0 GT/s PCIe", 32.0, 5 }, { "64.0 GT/s PCIe", 64.0, 6 },
                /* Kernels before 5.5 */
                { "2.5 GT/s", 2.5, 1 },        { "5 GT/s", 5.0, 2 },          { "8 GT/s", 8.0, 3 },
                { "16 GT/s", 16.0, 4 },        { "32 GT/s", 32.0, 5 },        { "8.0 GT/s", 8.0, 3 },
                /* The kernel does not know: unknown, not malformed. */
                { "Unknown", 0, 0 },           { "Unknown speed", 0, 0 },
        };
        static const char *const bad[] = {
                "", "abc GT/s", "16.5 GT/s PCIe", "16.0 GT/s PCIe ", " 16.0 GT/s PCIe", "16.0GT/s", "16.0 gt/s",
                "16.0 GT/s PCIE", "-8.0 GT/s", "8.0 Gb/s", "1e1 GT/s", "0x10 GT/s", "33 MHz PCI", "8x AGP",
                "unknown", "16.000 GT/s PCIe", "9999 GT/s", "3.0 GT/s", "16. GT/s", ".5 GT/s", "16.0 GT/s PCIe\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                double gts = -1;
                unsigned gen = 99;
                assert_int_equal(pci_parse_link_speed(good[i].text, &gts, &gen), 0);
                assert_true(gts == good[i].gts);
                assert_int_equal(gen, good[i].generation);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                double gts = 42;
                unsigned gen = 42;
                if (pci_parse_link_speed(bad[i], &gts, &gen) >= 0)
                        fail_msg("\"%s\" parsed", bad[i]);
                /* Nothing written on failure. */
                assert_true(gts == 42);
                assert_int_equal(gen, 42);
        }
        assert_true(pci_parse_link_speed(NULL, &(double) { 0 }, &(unsigned) { 0 }) < 0);
        assert_int_equal(pci_speed_generation(8.0), 3);
        assert_int_equal(pci_speed_generation(7.9), 0);
        assert_int_equal(pci_speed_generation(0), 0);
}

static void test_link_width(void **state) {
        static const unsigned good[] = { 0, 1, 2, 4, 8, 12, 16, 32 };
        static const char *const bad[] = { "", "x16", "3", "63", "64", "-1", "16 ", "0x10", "99", "4294967297" };
        char buf[8];
        unsigned w;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                snprintf(buf, sizeof(buf), "%u", good[i]);
                assert_int_equal(pci_parse_link_width(buf, &w), 0);
                assert_int_equal(w, good[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                w = 7;
                assert_true(pci_parse_link_width(bad[i], &w) < 0);
                assert_int_equal(w, 7);
        }
}

static void test_numa_and_cpus(void **state) {
        int n = 5;

        assert_int_equal(pci_parse_numa_node("-1", &n), 0);
        assert_int_equal(n, -1);
        assert_int_equal(pci_parse_numa_node("0", &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(pci_parse_numa_node("7", &n), 0);
        assert_int_equal(n, 7);
        assert_int_equal(pci_parse_numa_node("1023", &n), 0);
        n = 5;
        assert_true(pci_parse_numa_node("-2", &n) < 0);
        assert_true(pci_parse_numa_node("1024", &n) < 0);
        assert_true(pci_parse_numa_node("banana", &n) < 0);
        assert_true(pci_parse_numa_node("", &n) < 0);
        assert_true(pci_parse_numa_node("0 ", &n) < 0);
        assert_int_equal(n, 5);

        assert_int_equal(pci_parse_cpulist(""), 0);
        assert_int_equal(pci_parse_cpulist("0"), 0);
        assert_int_equal(pci_parse_cpulist("0-15,32-47"), 0);
        assert_int_equal(pci_parse_cpulist("0-55,112-167"), 0);
        assert_int_equal(pci_parse_cpulist("3,5,7-9"), 0);
        assert_true(pci_parse_cpulist("3-1") < 0);
        assert_true(pci_parse_cpulist("0-") < 0);
        assert_true(pci_parse_cpulist(",1") < 0);
        assert_true(pci_parse_cpulist("1,") < 0);
        assert_true(pci_parse_cpulist("1 2") < 0);
        assert_true(pci_parse_cpulist("ff") < 0);
        assert_true(pci_parse_cpulist("70000") < 0);
        assert_true(pci_parse_cpulist(NULL) < 0);
}

static void test_address(void **state) {
        uint32_t domain;
        unsigned bus, dev, fn;

        assert_int_equal(pci_address_parse("0000:41:00.0", &domain, &bus, &dev, &fn), 0);
        assert_int_equal(domain, 0);
        assert_int_equal(bus, 0x41);
        assert_int_equal(dev, 0);
        assert_int_equal(fn, 0);
        assert_int_equal(pci_address_parse("10000:e1:1f.7", &domain, &bus, &dev, &fn), 0);
        assert_int_equal(domain, 0x10000);
        assert_int_equal(bus, 0xe1);
        assert_int_equal(dev, 0x1f);
        assert_int_equal(fn, 7);

        static const char *const bad[] = { "", "0000:41:00", "0000:41:00.8", "0000:41:20.0", "000:41:00.0",
                                           "0000:41:00.0 ", "0000:4G:00.0", "0000:41:00.00", "000000000:41:00.0",
                                           "0000:41:00.-", "0000-41-00.0", "0000:41:00:0", "0000:41:0A.0",
                                           "pci0000:00", "../0000:41:00.0" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (pci_address_is_valid(bad[i]))
                        fail_msg("\"%s\" is an address", bad[i]);

        assert_true(pci_host_bridge_is_valid("pci0000:00"));
        assert_true(pci_host_bridge_is_valid("pci10000:e0"));
        assert_false(pci_host_bridge_is_valid("pci0000:0"));
        assert_false(pci_host_bridge_is_valid("0000:00"));
        assert_false(pci_host_bridge_is_valid("pci0000:00:00"));
        assert_false(pci_host_bridge_is_valid(NULL));
}

static void test_gbps(void **state) {
        /* Encoding: 8b/10b up to Gen2, 128b/130b Gen3-5, 242/256 flits Gen6. */
        assert_true(pci_link_gbps(2.5, 1) == 2.0);
        assert_true(pci_link_gbps(5.0, 4) == 16.0);
        assert_true(pci_link_gbps(8.0, 4) > 31.50 && pci_link_gbps(8.0, 4) < 31.51);
        assert_true(pci_link_gbps(8.0, 2) > 15.75 && pci_link_gbps(8.0, 2) < 15.76);
        assert_true(pci_link_gbps(16.0, 16) > 252.0 && pci_link_gbps(16.0, 16) < 252.1);
        assert_true(pci_link_gbps(32.0, 16) > 504.1 && pci_link_gbps(32.0, 16) < 504.2);
        assert_true(pci_link_gbps(64.0, 16) > 967.9 && pci_link_gbps(64.0, 16) < 968.1);
        assert_true(pci_link_gbps(0, 16) == 0);
        assert_true(pci_link_gbps(16.0, 0) == 0);
}

static void check_split(const char *path, const char *function, const char *parent, const char *host_bridge,
                        unsigned depth) {
        _cleanup_(freep) char *f = NULL, *p = NULL, *h = NULL;
        unsigned d = 99;

        assert_int_equal(pci_syspath_split(path, &f, &p, &h, &d), 0);
        assert_string_equal(strempty(f), strempty(function));
        assert_string_equal(strempty(p), strempty(parent));
        assert_string_equal(strempty(h), strempty(host_bridge));
        assert_int_equal(d, depth);
}

static void test_syspath(void **state) {
        check_split("devices/pci0000:40/0000:40:01.1/0000:41:00.0", "0000:41:00.0", "0000:40:01.1", "pci0000:40", 1);
        check_split("devices/pci0000:40/0000:40:01.1/0000:41:00.0/net/eth0", "0000:41:00.0", "0000:40:01.1",
                    "pci0000:40", 1);
        check_split("devices/pci0000:00/0000:00:14.3", "0000:00:14.3", NULL, "pci0000:00", 0);
        check_split("devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/0-1.0/net/thunderbolt0", "0000:00:0d.2", NULL,
                    "pci0000:00", 0);
        /* Intel VMD: a second hierarchy below an endpoint of the first. */
        check_split("devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0", "10000:e1:00.0",
                    "10000:e0:06.0", "pci0000:00", 2);
        check_split("devices/virtual/net/veth0", NULL, NULL, NULL, 0);
        check_split("devices/platform/soc/net/eth0", NULL, NULL, NULL, 0);
        check_split("", NULL, NULL, NULL, 0);
        assert_int_equal(pci_syspath_split(NULL, NULL, NULL, NULL, NULL), 0);
}

static void test_kfd_properties(void **state) {
        const char *text = "cpu_cores_count 0\nsimd_count 416\nlocation_id 768\ndomain 0\nhive_id 14336318004329474611\n"
                           "bad x12\nempty \n";
        uint64_t v = 7;

        assert_int_equal(kfd_properties_get(text, "location_id", &v), 0);
        assert_int_equal(v, 768);
        assert_int_equal(kfd_properties_get(text, "hive_id", &v), 0);
        assert_true(v == UINT64_C(14336318004329474611));
        assert_int_equal(kfd_properties_get(text, "cpu_cores_count", &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(kfd_properties_get(text, "count", &v), -ENOENT);
        assert_int_equal(kfd_properties_get(text, "location", &v), -ENOENT);
        assert_int_equal(kfd_properties_get(text, "bad", &v), -EINVAL);
        assert_int_equal(kfd_properties_get(text, "empty", &v), -EINVAL);
        assert_int_equal(kfd_properties_get("", "domain", &v), -ENOENT);
        assert_string_equal(kfd_link_type_to_string(KFD_LINK_TYPE_XGMI), "XGMI");
        assert_string_equal(kfd_link_type_to_string(KFD_LINK_TYPE_PCIE), "PCIe");
        assert_null(kfd_link_type_to_string(200));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_link_speed),    cmocka_unit_test(test_link_width),
                cmocka_unit_test(test_numa_and_cpus), cmocka_unit_test(test_address),
                cmocka_unit_test(test_gbps),          cmocka_unit_test(test_syspath),
                cmocka_unit_test(test_kfd_properties),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
