/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the Thunderbolt sysfs reader against every fixture in tests/fixtures/thunderbolt.
 * libumockdev builds each fixture into a plain directory tree that is opened as the sysfs root (no
 * preload is involved). The reader's results then feed the topology, checked with the real values
 * the fixtures carry. Bad input: garbage attributes, devices and files that vanish mid-read. */
#include <fcntl.h>
#include <sys/stat.h>
#include <umockdev.h>

#include "unit-test.h"

#include "sysfs/sysfs.h"
#include "sysfs/thunderbolt.h"
#include "daemon/tbt-topology.h"

typedef struct Bed {
        UMockdevTestbed *testbed;
        char *sys;
        int root_fd;
        TbtDevice **devices;
        size_t n;
        TbtTopology *topology;
} Bed;

static void bed_enumerate(Bed *b) {
        b->devices = tbt_device_array_free(b->devices, b->n);
        b->topology = tbt_topology_free(b->topology);
        assert_int_equal(tbt_enumerate(b->root_fd, &b->devices, &b->n), 0);
        assert_int_equal(tbt_topology_build(b->devices, b->n, &b->topology), 0);
}

static void bed_open(Bed *b, const char *fixture) {
        char path[PATH_MAX];
        GError *error = NULL;

        *b = (Bed) { .root_fd = -EBADF };
        snprintf(path, sizeof(path), "%s/tests/fixtures/thunderbolt/%s", unit_top_dir(), fixture);
        b->testbed = umockdev_testbed_new();
        assert_non_null(b->testbed);
        if (!umockdev_testbed_add_from_file(b->testbed, path, &error))
                fail_msg("%s: %s", path, error ? error->message : "?");
        b->sys = umockdev_testbed_get_sys_dir(b->testbed);
        b->root_fd = sysfs_root_open(b->sys);
        assert_true(b->root_fd >= 0);
        bed_enumerate(b);
}

static void bed_close(Bed *b) {
        tbt_device_array_free(b->devices, b->n);
        tbt_topology_free(b->topology);
        safe_close(b->root_fd);
        g_free(b->sys);
        g_object_unref(b->testbed); /* removes the tree */
}

static const TbtDevice *dev(const Bed *b, const char *name) {
        for (size_t i = 0; i < b->n; i++)
                if (streq(b->devices[i]->sysname, name))
                        return b->devices[i];
        fail_msg("no device %s", name);
        return NULL;
}

static bool has_dev(const Bed *b, const char *name) {
        for (size_t i = 0; i < b->n; i++)
                if (streq(b->devices[i]->sysname, name))
                        return true;
        return false;
}

static const TbtNode *node(const Bed *b, const char *name) {
        ssize_t i = tbt_topology_find(b->topology, name);
        if (i < 0)
                fail_msg("no node %s", name);
        return &b->topology->nodes[i];
}

static const char *link_class(const Bed *b, const char *name) {
        return tbt_link_class_to_string(node(b, name)->link.link_class);
}

static void assert_peer_of(const Bed *b, const char *ifname, const char *peer, const char *service) {
        _cleanup_(freep) char *p = NULL, *s = NULL;
        assert_int_equal(tbt_peer_for_net_interface(b->root_fd, ifname, &p, &s), 0);
        assert_string_equal(p, peer);
        assert_string_equal(s, service);
}

static void test_tb4_dock_peer(void **state) {
        Bed b;
        const TbtDevice *d;

        bed_open(&b, "tb4-dock-peer.umockdev");
        assert_int_equal(b.n, 5);

        d = dev(&b, "domain0");
        assert_int_equal(d->kind, TBT_KIND_DOMAIN);
        assert_int_equal(d->domain_index, 0);
        assert_null(d->parent);
        assert_string_equal(d->syspath, "devices/pci0000:00/0000:00:0d.2/domain0");
        assert_string_equal(d->controller, "0000:00:0d.2");
        assert_int_equal(d->security, TBT_SECURITY_USER);
        assert_int_equal(d->iommu_dma_protection, 1);
        assert_int_equal(d->deauthorization, 1);
        assert_int_equal(strv_length(d->boot_acl), 16);
        assert_string_equal(d->boot_acl[15], "");

        d = dev(&b, "0-0");
        assert_int_equal(d->kind, TBT_KIND_ROUTER);
        assert_int_equal(d->router_type, TBT_ROUTER_HOST);
        assert_string_equal(d->parent, "domain0");
        assert_true(d->has_route && d->route == 0);
        assert_true(d->has_vendor_id && d->vendor_id == 0x8087);
        assert_true(d->has_device_id && d->device_id == 0x9a1b);
        assert_string_equal(d->vendor_name, "Intel");
        assert_string_equal(d->device_name, "Tiger Lake");
        assert_string_equal(d->unique_id, "a0b05c35-637b-8780-ffff-ffffffffffff");
        assert_int_equal(d->generation, 4);
        assert_int_equal(d->usb4_version, 1);
        assert_int_equal(d->authorized, TBT_AUTHORIZED_YES);
        assert_int_equal(d->boot, -1);
        assert_null(d->nvm_version);
        assert_int_equal(d->rx.lanes, 0);
        assert_int_equal(d->rx.lane_gbps, 0);
        assert_int_equal(d->n_ports, 2);
        assert_int_equal(d->ports[0].number, 1);
        assert_int_equal(d->ports[0].link, TBT_PORT_LINK_USB4);
        assert_int_equal(d->ports[1].number, 3);
        assert_int_equal(d->ports[1].link, TBT_PORT_LINK_NONE);

        d = dev(&b, "0-1");
        assert_int_equal(d->router_type, TBT_ROUTER_HUB);
        assert_string_equal(d->parent, "0-0");
        assert_string_equal(d->nvm_version, "29.0");
        assert_int_equal(d->boot, 0);
        assert_int_equal(d->rx.lanes, 2);
        assert_int_equal(d->rx.lane_gbps, 20);
        assert_int_equal(d->tx.lanes, 2);
        assert_int_equal(d->tx.lane_gbps, 20);

        d = dev(&b, "0-301");
        assert_int_equal(d->kind, TBT_KIND_PEER);
        assert_string_equal(d->parent, "0-1");
        assert_string_equal(d->device_name, "peerhost");
        assert_string_equal(d->vendor_name, "Intel Corp.");
        assert_int_equal(d->max_hop_id, 21);
        assert_int_equal(d->generation, 0);
        assert_int_equal(d->authorized, _TBT_AUTHORIZED_INVALID);
        assert_true(d->route == 0x301);

        d = dev(&b, "0-301.0");
        assert_int_equal(d->kind, TBT_KIND_SERVICE);
        assert_string_equal(d->parent, "0-301");
        assert_string_equal(d->service_key, "network");
        assert_int_equal(d->protocol_id, 1);
        assert_int_equal(d->protocol_version, 1);
        assert_int_equal(d->protocol_revision, 1);
        assert_int_equal(d->protocol_settings, 7);
        assert_string_equal(d->driver, "thunderbolt-net");
        assert_string_equal(d->net_interface, "thunderbolt0");

        assert_peer_of(&b, "thunderbolt0", "0-301", "0-301.0");
        assert_string_equal(node(&b, "0-301")->net_interface, "thunderbolt0");
        assert_string_equal(link_class(&b, "0-1"), "Thunderbolt 4");
        assert_string_equal(link_class(&b, "0-301"), "Thunderbolt 4"); /* usb4_port3/link=usb4 */
        assert_int_equal(node(&b, "0-301")->path_rx_gbps, 40);
        assert_int_equal(node(&b, "0-301")->depth, 2);
        assert_int_equal(tbt_topology_path_generation(b.topology, (size_t) tbt_topology_find(b.topology, "0-301")),
                         4);
        assert_null(b.topology->problems);
        bed_close(&b);
}

static void test_tb3_chain(void **state) {
        Bed b;

        bed_open(&b, "tb3-chain.umockdev");
        assert_int_equal(b.n, 4);
        assert_int_equal(dev(&b, "0-0")->router_type, TBT_ROUTER_HOST); /* no USB4_TYPE: route 0 */
        assert_int_equal(dev(&b, "0-0")->usb4_version, 0);
        assert_int_equal(dev(&b, "0-0")->generation, 3);
        assert_int_equal(dev(&b, "0-1")->router_type, _TBT_ROUTER_TYPE_INVALID);
        assert_int_equal(dev(&b, "0-301")->authorized, TBT_AUTHORIZED_NO);
        assert_string_equal(dev(&b, "0-301")->parent, "0-1");
        assert_string_equal(dev(&b, "0-301")->nvm_version, "16.0");
        assert_int_equal(dev(&b, "domain0")->iommu_dma_protection, 0);
        assert_string_equal(dev(&b, "domain0")->boot_acl[0], "");
        assert_int_equal(node(&b, "0-1")->type, TBT_NODE_HUB);
        assert_int_equal(node(&b, "0-301")->type, TBT_NODE_DEVICE);
        assert_string_equal(link_class(&b, "0-301"), "Thunderbolt 3");
        assert_int_equal(node(&b, "0-301")->path_tx_gbps, 40);
        bed_close(&b);
}

static void test_tb5_direct_peer(void **state) {
        Bed b;

        bed_open(&b, "tb5-direct-peer.umockdev");
        assert_int_equal(dev(&b, "0-0")->usb4_version, 2);
        assert_int_equal(dev(&b, "0-1")->kind, TBT_KIND_PEER);
        assert_int_equal(dev(&b, "0-1")->rx.lane_gbps, 40);
        assert_string_equal(link_class(&b, "0-1"), "Thunderbolt 5");
        assert_int_equal(node(&b, "0-1")->link.rx_gbps, 80);
        assert_int_equal(node(&b, "0-1")->path_tx_gbps, 80);
        assert_false(node(&b, "0-1")->link.degraded);
        assert_int_equal(tbt_topology_path_generation(b.topology, (size_t) tbt_topology_find(b.topology, "0-1")), 5);
        assert_peer_of(&b, "thunderbolt0", "0-1", "0-1.0");
        assert_int_equal(dev(&b, "0-1.0")->protocol_settings, 0xf);
        bed_close(&b);
}

static void test_tb5_asymmetric(void **state) {
        Bed b;

        bed_open(&b, "tb5-asymmetric-dock.umockdev");
        assert_int_equal(dev(&b, "0-1")->rx.lanes, 3);
        assert_int_equal(dev(&b, "0-1")->tx.lanes, 1);
        assert_string_equal(dev(&b, "0-1")->nvm_version, "3a.1");
        assert_string_equal(link_class(&b, "0-1"), "Thunderbolt 5 asymmetric (rx 120 Gb/s)");
        assert_int_equal(node(&b, "0-1")->link.rx_gbps, 120);
        assert_int_equal(node(&b, "0-1")->link.tx_gbps, 40);
        assert_string_equal(link_class(&b, "0-301"), "Thunderbolt 5");
        assert_int_equal(node(&b, "0-301")->path_rx_gbps, 80);
        assert_int_equal(node(&b, "0-301")->path_tx_gbps, 40);
        assert_string_equal(link_class(&b, "0-501"), "Thunderbolt 4");
        assert_int_equal(node(&b, "0-501")->path_rx_gbps, 40);
        assert_int_equal(node(&b, "0-501")->path_tx_gbps, 40);
        assert_false(node(&b, "0-501")->link.degraded); /* the device is USB4 v1: 20 is its best */
        assert_string_equal(link_class(&b, "0-3"), "Thunderbolt 5 asymmetric (tx 120 Gb/s)");
        assert_int_equal(node(&b, "0-3")->path_tx_gbps, 120);
        bed_close(&b);
}

static void test_peers_two_docks(void **state) {
        Bed b;

        bed_open(&b, "peers-two-docks.umockdev");
        assert_int_equal(b.n, 8);
        assert_string_equal(dev(&b, "0-30301")->parent, "0-301");
        assert_string_equal(dev(&b, "0-501")->parent, "0-1");
        assert_int_equal(node(&b, "0-30301")->depth, 3);
        assert_int_equal(node(&b, "0-501")->depth, 2);
        assert_string_equal(link_class(&b, "0-30301"), "Thunderbolt 4");
        assert_string_equal(link_class(&b, "0-501"), "Thunderbolt 3"); /* usb4_port5/link=tbt */
        assert_int_equal(tbt_topology_path_generation(b.topology, (size_t) tbt_topology_find(b.topology, "0-501")),
                         3);
        assert_int_equal(
                tbt_topology_path_generation(b.topology, (size_t) tbt_topology_find(b.topology, "0-30301")), 4);
        assert_peer_of(&b, "thunderbolt0", "0-30301", "0-30301.0");
        assert_peer_of(&b, "thunderbolt1", "0-501", "0-501.0");
        assert_string_equal(node(&b, "0-501")->net_interface, "thunderbolt1");
        assert_string_equal(dev(&b, "0-501")->device_name, "Mac mini");
        assert_null(b.topology->problems);
        bed_close(&b);
}

static void test_two_domains(void **state) {
        Bed b;

        bed_open(&b, "two-domains.umockdev");
        assert_int_equal(b.n, 6);
        assert_int_equal(dev(&b, "domain1")->domain_index, 1);
        assert_string_equal(dev(&b, "domain1")->controller, "0000:c4:00.6");
        assert_null(dev(&b, "domain1")->boot_acl); /* no preboot ACL on this controller */
        assert_string_equal(dev(&b, "1-0")->parent, "domain1");
        assert_int_equal(dev(&b, "1-0")->domain_index, 1);
        assert_string_equal(dev(&b, "1-1")->parent, "1-0");
        assert_null(dev(&b, "0-0")->device_name);
        assert_null(dev(&b, "0-0")->vendor_name);
        assert_string_equal(link_class(&b, "0-1"), "Thunderbolt 3"); /* a generation 3 dock on USB4 */
        assert_string_equal(link_class(&b, "1-1"), "USB4 20G");
        assert_int_equal(node(&b, "1-1")->path_rx_gbps, 20);
        assert_int_equal(dev(&b, "1-1")->authorized, TBT_AUTHORIZED_NO);
        assert_int_equal(node(&b, "domain1")->depth, 0);
        assert_int_equal(node(&b, "1-1")->depth, 1);
        bed_close(&b);
}

static void test_retimers(void **state) {
        Bed b;
        const TbtDevice *d;

        bed_open(&b, "retimers.umockdev");
        assert_int_equal(b.n, 6);
        /* Current kernels put retimers below usb4_portN, older ones below the router: same parent. */
        d = dev(&b, "0-0:1.1");
        assert_int_equal(d->kind, TBT_KIND_RETIMER);
        assert_string_equal(d->parent, "0-0");
        assert_int_equal(d->retimer_port, 1);
        assert_int_equal(d->retimer_index, 1);
        assert_true(d->has_vendor_id && d->vendor_id == 0x8087);
        assert_true(d->has_device_id && d->device_id == 0x15ee);
        assert_string_equal(d->nvm_version, "21.0");
        assert_int_equal(dev(&b, "0-0:1.2")->retimer_index, 2);
        d = dev(&b, "0-0:3.1");
        assert_string_equal(d->parent, "0-0");
        assert_int_equal(d->retimer_port, 3);
        assert_string_equal(d->nvm_version, "20.4");
        assert_int_equal(node(&b, "0-0:3.1")->type, TBT_NODE_RETIMER);
        assert_false(node(&b, "0-0:3.1")->has_link);
        assert_int_equal(dev(&b, "0-1")->boot, 1);
        assert_null(b.topology->problems);
        bed_close(&b);
}

static void test_host_no_drom(void **state) {
        Bed b;

        bed_open(&b, "host-no-drom.umockdev");
        assert_null(dev(&b, "0-0")->device_name);
        assert_null(dev(&b, "0-0")->vendor_name);
        assert_true(dev(&b, "0-0")->has_device_id && dev(&b, "0-0")->device_id == 0xa73e);
        assert_string_equal(dev(&b, "0-0")->unique_id, "a1b20c35-637b-8780-ffff-ffffffffffff");
        assert_string_equal(dev(&b, "0-1")->device_name, "Thunderbolt 4 Cable Hub");
        assert_int_equal(node(&b, "0-0")->type, TBT_NODE_HOST);
        assert_string_equal(link_class(&b, "0-1"), "Thunderbolt 4");
        bed_close(&b);
}

static void test_unauthorized(void **state) {
        Bed b;

        bed_open(&b, "unauthorized.umockdev");
        assert_int_equal(dev(&b, "domain0")->security, TBT_SECURITY_SECURE);
        assert_string_equal(dev(&b, "domain0")->boot_acl[0], "d2000000-0070-4608-ffff-ffffffffff11");
        assert_int_equal(dev(&b, "0-1")->authorized, TBT_AUTHORIZED_SECURE);
        assert_int_equal(dev(&b, "0-301")->authorized, TBT_AUTHORIZED_NO);
        assert_int_equal(dev(&b, "0-3")->authorized, TBT_AUTHORIZED_NO);
        assert_string_equal(dev(&b, "0-3")->nvm_version, "1b.0");
        assert_string_equal(link_class(&b, "0-3"), "Thunderbolt 3");
        bed_close(&b);
}

static void test_degraded_links(void **state) {
        Bed b;

        bed_open(&b, "degraded-usb4v2.umockdev");
        assert_string_equal(link_class(&b, "0-1"), "Thunderbolt 4");
        assert_true(node(&b, "0-1")->link.degraded);
        assert_string_equal(node(&b, "0-1")->link.degraded_reason,
                            "both ends are USB4 v2 (40 Gb/s per lane) but the link runs at 20 Gb/s per lane");
        bed_close(&b);

        bed_open(&b, "single-lane.umockdev");
        assert_string_equal(link_class(&b, "0-1"), "USB4 20G");
        assert_true(node(&b, "0-1")->link.degraded);
        assert_string_equal(node(&b, "0-1")->link.degraded_reason, "one lane although both ends support two");
        assert_string_equal(link_class(&b, "0-3"), "Thunderbolt 3 single lane");
        assert_true(node(&b, "0-3")->link.degraded);
        assert_int_equal(node(&b, "0-3")->path_rx_gbps, 20);
        bed_close(&b);
}

static void test_legacy(void **state) {
        Bed b;

        bed_open(&b, "legacy-tb2.umockdev");
        assert_null(dev(&b, "domain0")->boot_acl);
        assert_int_equal(dev(&b, "domain0")->deauthorization, -1);
        assert_int_equal(dev(&b, "domain0")->security, TBT_SECURITY_NONE);
        assert_string_equal(link_class(&b, "0-1"), "Thunderbolt 2");
        assert_string_equal(link_class(&b, "0-201"), "Thunderbolt 1");
        assert_false(node(&b, "0-201")->link.degraded);
        assert_int_equal(node(&b, "0-201")->path_rx_gbps, 10);
        assert_int_equal(node(&b, "0-1")->type, TBT_NODE_HUB);
        assert_int_equal(tbt_topology_path_generation(b.topology, (size_t) tbt_topology_find(b.topology, "0-201")),
                         0);
        bed_close(&b);
}

static void test_garbage(void **state) {
        Bed b;
        const TbtDevice *d;

        bed_open(&b, "garbage.umockdev");
        /* 0-5 has a DEVTYPE nobody knows: skipped, everything else is published with unknowns. */
        assert_false(has_dev(&b, "0-5"));
        assert_int_equal(b.n, 7);

        d = dev(&b, "domain0");
        assert_int_equal(d->security, _TBT_SECURITY_INVALID);
        assert_int_equal(d->iommu_dma_protection, -1);
        assert_int_equal(d->deauthorization, -1);
        assert_null(d->boot_acl);

        d = dev(&b, "0-0");
        assert_int_equal(d->usb4_version, 0);
        assert_int_equal(d->router_type, TBT_ROUTER_HOST); /* bad USB4_TYPE, but route 0 */
        assert_int_equal(d->authorized, _TBT_AUTHORIZED_INVALID);
        assert_false(d->has_device_id);
        assert_false(d->has_vendor_id);
        assert_null(d->device_name);
        assert_string_equal(d->vendor_name, "Intel");
        assert_int_equal(d->generation, 0);
        assert_null(d->nvm_version);
        assert_null(d->unique_id);
        assert_int_equal(d->n_ports, 2);
        assert_int_equal(d->ports[0].link, _TBT_PORT_LINK_INVALID);
        assert_int_equal(d->ports[1].link, TBT_PORT_LINK_USB4);

        d = dev(&b, "0-1");
        assert_int_equal(d->rx.lanes, 0);
        assert_int_equal(d->rx.lane_gbps, 0);
        assert_int_equal(d->tx.lanes, 0);
        assert_int_equal(d->tx.lane_gbps, 0);
        assert_int_equal(d->generation, 0);
        assert_int_equal(d->boot, -1);
        assert_int_equal(d->usb4_version, 1);
        assert_string_equal(d->device_name, "\\xff\\xfeDock"); /* invalid UTF-8 escaped */
        assert_null(d->vendor_name);                         /* NUL byte inside */
        assert_string_equal(d->unique_id, "d2000000-0070-4608-ffff-ffffffffff41");
        assert_string_equal(link_class(&b, "0-1"), "Unknown");
        assert_int_equal(node(&b, "0-1")->link.rx_gbps, 0);

        d = dev(&b, "0-3");
        assert_int_equal(d->rx.lanes, 0);
        assert_int_equal(d->rx.lane_gbps, 0); /* 4294967296.0 Gb/s */
        assert_int_equal(d->tx.lanes, 2);
        assert_int_equal(d->tx.lane_gbps, 0); /* 20.5 Gb/s */
        assert_false(d->has_vendor_id);       /* 0x100000000 */
        assert_string_equal(d->device_name, "Huge Numbers");

        d = dev(&b, "0-301"); /* a uevent and nothing else */
        assert_int_equal(d->kind, TBT_KIND_ROUTER);
        assert_string_equal(d->parent, "0-1");
        assert_null(d->unique_id);
        assert_null(d->device_name);
        assert_int_equal(d->authorized, _TBT_AUTHORIZED_INVALID);
        assert_int_equal(node(&b, "0-301")->type, TBT_NODE_DEVICE);
        assert_int_equal(node(&b, "0-301")->depth, 2);
        assert_int_equal(node(&b, "0-301")->path_rx_gbps, 0);

        d = dev(&b, "0-501");
        assert_int_equal(d->max_hop_id, 0);
        assert_int_equal(d->rx.lanes, 2);
        assert_int_equal(d->rx.lane_gbps, 0);
        assert_int_equal(node(&b, "0-1")->type, TBT_NODE_HUB);

        d = dev(&b, "0-501.0");
        assert_int_equal(d->protocol_id, -1);
        assert_int_equal(d->protocol_version, 1);
        assert_int_equal(d->protocol_revision, -1);
        assert_int_equal(d->protocol_settings, -1);
        assert_null(d->net_interface);
        assert_null(d->driver);
        assert_null(b.topology->problems);
        bed_close(&b);
}

static void remove_path(const Bed *b, const char *rel) {
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", b->sys, rel);
        assert_int_equal(system(cmd), 0);
}

/* A device unplugged between listing bus/thunderbolt/devices and reading it: its bus link dangles.
 * Reading it says -ENODEV; enumeration skips it and keeps the rest. */
static void test_vanish_between_list_and_read(void **state) {
        _cleanup_(strv_freep) char **names = NULL;
        TbtDevice *d = NULL;
        Bed b;

        bed_open(&b, "peers-two-docks.umockdev");
        assert_int_equal(sysfs_list_dir(b.root_fd, "bus/thunderbolt/devices", &names), 0);
        assert_int_equal(strv_length(names), 8);
        remove_path(&b, "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/0-501");

        assert_int_equal(tbt_device_read(b.root_fd, "0-501", &d), -ENODEV);
        assert_int_equal(tbt_device_read(b.root_fd, "0-501.0", &d), -ENODEV);
        assert_null(d);
        bed_enumerate(&b);
        assert_int_equal(b.n, 6);
        assert_false(has_dev(&b, "0-501"));
        assert_true(has_dev(&b, "0-30301"));
        assert_null(b.topology->problems);
        assert_int_equal(tbt_peer_for_net_interface(b.root_fd, "thunderbolt1", NULL, NULL), -ENOENT);

        /* The whole dock chain goes: its subtree with it. */
        remove_path(&b, "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1");
        bed_enumerate(&b);
        assert_int_equal(b.n, 2);
        bed_close(&b);
}

/* Single attributes gone (or unreadable) mid-read make single fields unknown, nothing more. */
static void test_attribute_vanishes(void **state) {
        Bed b;
        TbtDevice *d = NULL;

        bed_open(&b, "tb4-dock-peer.umockdev");
        remove_path(&b, "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/rx_speed");
        remove_path(&b, "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/uevent");
        remove_path(&b, "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/device_name");
        assert_int_equal(tbt_device_read(b.root_fd, "0-1", &d), 0);
        assert_int_equal(d->kind, TBT_KIND_ROUTER); /* from name and attributes */
        assert_int_equal(d->rx.lane_gbps, 0);
        assert_int_equal(d->rx.lanes, 2);
        assert_int_equal(d->tx.lane_gbps, 20);
        assert_null(d->device_name);
        assert_int_equal(d->usb4_version, 0);
        assert_int_equal(d->router_type, _TBT_ROUTER_TYPE_INVALID);
        d = tbt_device_free(d);

        remove_path(&b, "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/0-301/uevent");
        assert_int_equal(tbt_device_read(b.root_fd, "0-301", &d), 0);
        assert_int_equal(d->kind, TBT_KIND_PEER); /* maxhopid and no generation */
        d = tbt_device_free(d);
        bed_close(&b);
}

/* The read-one call serves udev add/change events: a change is seen on the next read. */
static void test_read_one(void **state) {
        char path[PATH_MAX];
        TbtDevice *d = NULL;
        Bed b;
        int fd;

        bed_open(&b, "tb3-chain.umockdev");
        assert_int_equal(tbt_device_read(b.root_fd, "0-301", &d), 0);
        assert_int_equal(d->authorized, TBT_AUTHORIZED_NO);
        d = tbt_device_free(d);

        snprintf(path, sizeof(path), "%s/bus/thunderbolt/devices/0-301/authorized", b.sys);
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "1\n", 2), 2);
        close(fd);
        assert_int_equal(tbt_device_read(b.root_fd, "0-301", &d), 0);
        assert_int_equal(d->authorized, TBT_AUTHORIZED_YES);
        d = tbt_device_free(d);

        assert_int_equal(tbt_device_read(b.root_fd, "0-7", &d), -ENODEV);
        assert_int_equal(tbt_device_read(b.root_fd, "", &d), -EINVAL);
        assert_int_equal(tbt_device_read(b.root_fd, "..", &d), -EINVAL);
        assert_int_equal(tbt_device_read(b.root_fd, "../../etc", &d), -EINVAL);
        assert_int_equal(tbt_device_read(b.root_fd, NULL, &d), -EINVAL);
        assert_null(d);
        assert_null(tbt_device_free(NULL));
        bed_close(&b);
}

static void test_net_interface_errors(void **state) {
        char path[PATH_MAX];
        Bed b;

        bed_open(&b, "tb4-dock-peer.umockdev");
        snprintf(path, sizeof(path), "%s/class/net/lo", b.sys);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_int_equal(tbt_peer_for_net_interface(b.root_fd, "lo", NULL, NULL), -ENXIO);
        /* an interface on some other bus device */
        snprintf(path, sizeof(path), "%s/class/net/eth0", b.sys);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/class/net/eth0/device", b.sys);
        assert_int_equal(symlink("../../../devices/pci0000:00/0000:00:0d.2", path), 0);
        assert_int_equal(tbt_peer_for_net_interface(b.root_fd, "eth0", NULL, NULL), -ENXIO);
        /* an interface whose device is a router, not a service */
        snprintf(path, sizeof(path), "%s/class/net/odd0", b.sys);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/class/net/odd0/device", b.sys);
        assert_int_equal(symlink("../../../devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1", path), 0);
        assert_int_equal(tbt_peer_for_net_interface(b.root_fd, "odd0", NULL, NULL), -ENXIO);

        assert_int_equal(tbt_peer_for_net_interface(b.root_fd, "wlan7", NULL, NULL), -ENOENT);
        assert_int_equal(tbt_peer_for_net_interface(b.root_fd, "../x", NULL, NULL), -EINVAL);
        assert_int_equal(tbt_peer_for_net_interface(b.root_fd, "averyveryverylongname", NULL, NULL), -EINVAL);
        bed_close(&b);
}

static void test_no_bus(void **state) {
        char dir[] = "/tmp/linkprobe-test-tbt-XXXXXX";
        TbtDevice **devices = NULL;
        size_t n = 99;
        int fd;

        assert_non_null(mkdtemp(dir));
        fd = sysfs_root_open(dir);
        assert_true(fd >= 0);
        assert_int_equal(tbt_enumerate(fd, &devices, &n), 0);
        assert_int_equal(n, 0);
        tbt_device_array_free(devices, n);
        assert_int_equal(tbt_enumerate(-EBADF, &devices, &n), -EBADF);
        close(fd);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tb4_dock_peer),
                cmocka_unit_test(test_tb3_chain),
                cmocka_unit_test(test_tb5_direct_peer),
                cmocka_unit_test(test_tb5_asymmetric),
                cmocka_unit_test(test_peers_two_docks),
                cmocka_unit_test(test_two_domains),
                cmocka_unit_test(test_retimers),
                cmocka_unit_test(test_host_no_drom),
                cmocka_unit_test(test_unauthorized),
                cmocka_unit_test(test_degraded_links),
                cmocka_unit_test(test_legacy),
                cmocka_unit_test(test_garbage),
                cmocka_unit_test(test_vanish_between_list_and_read),
                cmocka_unit_test(test_attribute_vanishes),
                cmocka_unit_test(test_read_one),
                cmocka_unit_test(test_net_interface_errors),
                cmocka_unit_test(test_no_bus),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
