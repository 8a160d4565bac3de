/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the network-interface sysfs reader against a tree shaped like real sysfs: a PCI NIC,
 * Wi-Fi, thunderbolt-net behind an XDomain service, a virtual link, and broken attributes. */
#include <fcntl.h>
#include <sys/stat.h>

#include "unit-test.h"
#include "sysfs/net.h"

static char root[] = "/tmp/linkprobe-test-net-XXXXXX";
static int root_fd = -EBADF;

static void mk(const char *fmt, ...) _printf_(1, 2);
static void mk(const char *fmt, ...) {
        char rel[512], cmd[1200];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rel, sizeof(rel), fmt, ap);
        va_end(ap);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", root, rel);
        assert_int_equal(system(cmd), 0);
}

static void put(const char *rel, const char *content) {
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static void ln(const char *target, const char *rel) {
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        assert_int_equal(symlink(target, path), 0);
}

#define PCI "devices/pci0000:00/0000:00:1c.0/0000:05:00.0"
#define TB "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/0-301/0-301.0"

static int setup(void **state) {
        if (!mkdtemp(root))
                return -1;
        mk("class/net");
        mk("bus/pci/drivers/igc");
        mk("bus/pci/drivers/iwlwifi");
        mk("bus/thunderbolt");
        mk("class/ieee80211/phy0");

        /* enp5s0: Intel i225 at 2.5 Gb/s */
        mk(PCI "/net/enp5s0");
        ln("../../../../bus/pci/drivers/igc", PCI "/driver");
        ln("../../../../bus/pci", PCI "/subsystem");
        ln("../../../0000:05:00.0", PCI "/net/enp5s0/device");
        put(PCI "/net/enp5s0/ifindex", "2\n");
        put(PCI "/net/enp5s0/speed", "2500\n");
        put(PCI "/net/enp5s0/duplex", "full\n");
        put(PCI "/net/enp5s0/uevent", "INTERFACE=enp5s0\nIFINDEX=2\n");
        ln("../../" PCI "/net/enp5s0", "class/net/enp5s0");

        /* wlp0s20f3: Wi-Fi, down (the kernel answers speed with EINVAL; here: -1) */
        mk("devices/pci0000:00/0000:00:14.3/net/wlp0s20f3");
        ln("../../../bus/pci/drivers/iwlwifi", "devices/pci0000:00/0000:00:14.3/driver");
        ln("../../../0000:00:14.3", "devices/pci0000:00/0000:00:14.3/net/wlp0s20f3/device");
        ln("../../../../../class/ieee80211/phy0", "devices/pci0000:00/0000:00:14.3/net/wlp0s20f3/phy80211");
        put("devices/pci0000:00/0000:00:14.3/net/wlp0s20f3/ifindex", "3\n");
        put("devices/pci0000:00/0000:00:14.3/net/wlp0s20f3/speed", "-1\n");
        put("devices/pci0000:00/0000:00:14.3/net/wlp0s20f3/duplex", "unknown\n");
        put("devices/pci0000:00/0000:00:14.3/net/wlp0s20f3/uevent", "DEVTYPE=wlan\nINTERFACE=wlp0s20f3\nIFINDEX=3\n");
        ln("../../devices/pci0000:00/0000:00:14.3/net/wlp0s20f3", "class/net/wlp0s20f3");

        /* thunderbolt0: thunderbolt-net behind an XDomain service, driver named only in uevent */
        mk(TB "/net/thunderbolt0");
        ln("../../../../../../../bus/thunderbolt", TB "/subsystem");
        put(TB "/uevent", "DRIVER=thunderbolt-net\nMODALIAS=tbsvc:knetworkp00000001v00000001r00000001\n");
        ln("../../../0-301.0", TB "/net/thunderbolt0/device");
        put(TB "/net/thunderbolt0/ifindex", "7\n");
        put(TB "/net/thunderbolt0/uevent", "INTERFACE=thunderbolt0\nIFINDEX=7\n");
        ln("../../" TB "/net/thunderbolt0", "class/net/thunderbolt0");

        /* veth0: virtual, broken speed attribute */
        mk("devices/virtual/net/veth0");
        put("devices/virtual/net/veth0/ifindex", "9\n");
        put("devices/virtual/net/veth0/speed", "fast\n");
        put("devices/virtual/net/veth0/duplex", "sideways\n");
        put("devices/virtual/net/veth0/uevent", "INTERFACE=veth0\nIFINDEX=9\n");
        ln("../../devices/virtual/net/veth0", "class/net/veth0");

        root_fd = sysfs_root_open(root);
        return root_fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        char cmd[600];
        safe_close(root_fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_pci_nic(void **state) {
        _cleanup_(sysfs_net_facts_done) SysfsNetFacts f = {};
        assert_int_equal(sysfs_net_read(root_fd, "enp5s0", 2, SYSFS_NET_SPEED | SYSFS_NET_DEVICE, &f), 0);
        assert_int_equal(f.speed_mbps, 2500);
        assert_string_equal(f.duplex, "full");
        assert_string_equal(f.driver, "igc");
        assert_string_equal(f.device_subsystem, "pci");
        assert_string_equal(f.device_path, PCI);
        assert_null(f.devtype);
        assert_false(f.wireless);
}

static void test_wifi(void **state) {
        _cleanup_(sysfs_net_facts_done) SysfsNetFacts f = {};
        assert_int_equal(sysfs_net_read(root_fd, "wlp0s20f3", 3, SYSFS_NET_SPEED | SYSFS_NET_DEVICE, &f), 0);
        assert_int_equal(f.speed_mbps, -1);
        assert_null(f.duplex);
        assert_string_equal(f.devtype, "wlan");
        assert_string_equal(f.driver, "iwlwifi");
        assert_true(f.wireless);
}

static void test_thunderbolt_net(void **state) {
        _cleanup_(sysfs_net_facts_done) SysfsNetFacts f = {};
        assert_int_equal(sysfs_net_read(root_fd, "thunderbolt0", 7, SYSFS_NET_DEVICE, &f), 0);
        assert_string_equal(f.driver, "thunderbolt-net");
        assert_string_equal(f.device_subsystem, "thunderbolt");
        assert_string_equal(f.device_path, TB);
        assert_int_equal(f.speed_mbps, -1); /* not asked for */
}

static void test_virtual_and_garbage(void **state) {
        _cleanup_(sysfs_net_facts_done) SysfsNetFacts f = {};
        assert_int_equal(sysfs_net_read(root_fd, "veth0", 9, SYSFS_NET_SPEED | SYSFS_NET_DEVICE, &f), 0);
        assert_int_equal(f.speed_mbps, -1);
        assert_null(f.duplex);
        assert_null(f.device_path);
        assert_null(f.driver);
}

static void test_renamed_or_gone(void **state) {
        SysfsNetFacts f = {};
        /* Netlink says index 4 is called enp5s0, sysfs says enp5s0 is index 2: renamed meanwhile. */
        assert_int_equal(sysfs_net_read(root_fd, "enp5s0", 4, SYSFS_NET_SPEED, &f), -ESTALE);
        assert_int_equal(sysfs_net_read(root_fd, "gone0", 5, SYSFS_NET_SPEED, &f), -ENOENT);
        assert_int_equal(sysfs_net_read(root_fd, "..", 5, SYSFS_NET_SPEED, &f), -EINVAL);
        assert_int_equal(sysfs_net_read(root_fd, "a/b", 5, SYSFS_NET_SPEED, &f), -EINVAL);
        assert_int_equal(sysfs_net_read(root_fd, "", 5, SYSFS_NET_SPEED, &f), -EINVAL);
        assert_false(sysfs_net_name_is_valid("."));
        assert_true(sysfs_net_name_is_valid("v\xff\xfe"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pci_nic),           cmocka_unit_test(test_wifi),
                cmocka_unit_test(test_thunderbolt_net),   cmocka_unit_test(test_virtual_and_garbage),
                cmocka_unit_test(test_renamed_or_gone),
        };
        return cmocka_run_group_tests_name("sysfs-net", tests, setup, teardown);
}
