/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the class/infiniband reader on every fixture in tests/fixtures/rdma/ (built into
 * umockdev testbeds with the C API; the reader takes the testbed's sys directory as its root, so no
 * preload is involved), and on a plain tree whose GID attributes fail with EINVAL like the kernel's
 * empty entries do. A file cannot make read() fail, so this program is linked with --wrap=read and a
 * file whose content starts with "@errno:N" reads as an error N (see __wrap_read below). */
#include <fcntl.h>
#include <sys/stat.h>
#include <umockdev.h>

#include "unit-test.h"
#include "shared/string-util.h"
#include "sysfs/infiniband.h"
#include "sysfs/sysfs.h"

ssize_t __real_read(int fd, void *buf, size_t count);
ssize_t __wrap_read(int fd, void *buf, size_t count);

ssize_t __wrap_read(int fd, void *buf, size_t count) {
        static const char marker[] = "@errno:";
        ssize_t n = __real_read(fd, buf, count);
        char digits[8] = "";

        if (n < (ssize_t) sizeof(marker) || memcmp(buf, marker, sizeof(marker) - 1) != 0)
                return n;
        memcpy(digits, (char *) buf + sizeof(marker) - 1, MIN((size_t) n - (sizeof(marker) - 1), sizeof(digits) - 1));
        errno = atoi(digits);
        return -1;
}

typedef struct Bed {
        UMockdevTestbed *testbed;
        int root_fd;
} Bed;

static void bed_open_root(Bed *b) {
        /* The testbed hands out a copy. */
        gchar *sys = umockdev_testbed_get_sys_dir(b->testbed);
        b->root_fd = sysfs_root_open(sys);
        g_free(sys);
        assert_true(b->root_fd >= 0);
}

static void bed_open(Bed *b, const char *const *fixtures) {
        b->testbed = umockdev_testbed_new();
        assert_non_null(b->testbed);
        for (size_t i = 0; fixtures[i]; i++) {
                _cleanup_(freep) char *path = NULL;
                GError *error = NULL;

                assert_true(asprintf(&path, "%s/tests/fixtures/rdma/%s.umockdev", unit_top_dir(), fixtures[i]) > 0);
                if (!umockdev_testbed_add_from_file(b->testbed, path, &error)) {
                        print_error("%s: %s\n", path, error ? error->message : "?");
                        fail();
                }
        }
        bed_open_root(b);
}

static void bed_close(Bed *b) {
        safe_close(b->root_fd);
        g_object_unref(b->testbed);
}

/* Every fixture in one testbed: building a testbed is slow on a busy /tmp, and the fixtures must
 * coexist anyway (unique device, interface and PCI names). */
static const char *const all_fixtures[] = {
        "broken",      "cx3-dual-port",    "cx5-roce",   "cx6-ib-hdr", "cx6-ib-polling",
        "iwarp-cxgb4", "mthca-old-kernel", "rxe-virtio", NULL,
};
static Bed bed = { .root_fd = -EBADF };

static int bed_setup(void **state) {
        bed_open(&bed, all_fixtures);
        return 0;
}

static int bed_teardown(void **state) {
        bed_close(&bed);
        return 0;
}

static InfinibandDevice *read_device(const Bed *b, const char *name) {
        InfinibandDevice *d = NULL;
        assert_int_equal(infiniband_device_read(b->root_fd, name, &d), 0);
        assert_non_null(d);
        return d;
}

static void assert_gid(const InfinibandGid *g, unsigned index, const char *gid, RdmaGidType type, const char *netdev) {
        char buf[RDMA_GID_STRING_MAX];

        assert_int_equal(g->index, index);
        assert_string_equal(rdma_format_gid(g->gid, buf), gid);
        assert_int_equal(g->type, type);
        if (netdev)
                assert_string_equal(g->netdev, netdev);
        else
                assert_null(g->netdev);
}

static void assert_netdev(const InfinibandPort *p, size_t i, const char *name, InfinibandNetdevSource source) {
        assert_true(i < p->n_netdevs);
        assert_string_equal(p->netdevs[i].name, name);
        assert_int_equal(p->netdevs[i].source, source);
}

static void assert_status(const InfinibandPort *p, RdmaPortState state, RdmaPhysState phys, RdmaLinkLayer ll,
                          uint64_t mgbps, RdmaWidth width, RdmaSpeed speed) {
        assert_true(p->status.known & RDMA_PORT_FIELD_STATE);
        assert_int_equal(p->status.state, state);
        assert_int_equal(p->status.phys_state, phys);
        assert_int_equal(p->status.link_layer, ll);
        assert_int_equal(p->status.rate.mgbps, mgbps);
        assert_int_equal(p->status.rate.width, width);
        assert_int_equal(p->status.rate.speed, speed);
}

static void test_cx6_infiniband_hdr(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        InfinibandPort *p;

        d = read_device(&bed, "mlx5_0");
        assert_string_equal(d->syspath, "devices/pci0000:80/0000:80:01.1/0000:81:00.0/infiniband/mlx5_0");
        assert_int_equal(d->node_type, RDMA_NODE_TYPE_CA);
        assert_string_equal(d->node_type_text, "1: CA");
        assert_int_equal(d->node_guid, UINT64_C(0xb8cef60300a1b2c2));
        assert_int_equal(d->sys_image_guid, UINT64_C(0xb8cef60300a1b2c2));
        assert_string_equal(d->fw_ver, "20.31.1014");
        assert_string_equal(d->hca_type, "MT4123");
        assert_string_equal(d->board_id, "MT_0000000222");
        assert_string_equal(d->hw_rev, "0");
        assert_string_equal(d->node_desc, "node01 mlx5_0");
        assert_null(d->parent);
        assert_null(d->warnings);
        assert_int_equal(d->n_ports, 1);

        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        assert_null(infiniband_device_get_port(d, 2));
        assert_null(p->warnings);
        assert_int_equal(p->status.known, _RDMA_PORT_FIELD_ALL);
        assert_status(p, RDMA_PORT_STATE_ACTIVE, RDMA_PHYS_STATE_LINK_UP, RDMA_LINK_LAYER_INFINIBAND, 200000,
                      RDMA_WIDTH_4X, RDMA_SPEED_HDR);
        assert_int_equal(p->status.lid, 0x1a);
        assert_int_equal(p->status.sm_lid, 1);
        assert_int_equal(p->status.lmc, 0);
        assert_int_equal(p->status.sm_sl, 0);
        assert_int_equal(p->status.cap_mask, 0xa651e848);
        assert_string_equal(p->rate_text, "200 Gb/sec (4X HDR)");
        assert_string_equal(p->state_text, "4: ACTIVE");
        assert_int_equal(infiniband_port_transport(d, p), RDMA_TRANSPORT_INFINIBAND);

        /* Only the port GID is set; an InfiniBand GID has no interface (ndevs fails there). */
        assert_int_equal(p->n_gids, 1);
        assert_gid(&p->gids[0], 0, "fe80::b8ce:f603:a1:b2c2", RDMA_GID_TYPE_IB_ROCE_V1, NULL);
        /* The IPoIB interface comes from device/net. */
        assert_int_equal(p->n_netdevs, 1);
        assert_netdev(p, 0, "ibp129s0f0", INFINIBAND_NETDEV_DEVICE_NET);
}

static void test_cx6_port_polling(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        InfinibandPort *p;

        d = read_device(&bed, "mlx5_1");
        assert_null(d->warnings);
        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        assert_null(p->warnings);
        assert_status(p, RDMA_PORT_STATE_DOWN, RDMA_PHYS_STATE_POLLING, RDMA_LINK_LAYER_INFINIBAND, 10000, RDMA_WIDTH_4X,
                      RDMA_SPEED_SDR);
        assert_int_equal(p->status.lid, 0xffff);
        assert_int_equal(p->status.sm_lid, 0);
        assert_string_equal(rdma_phys_state_to_string(p->status.phys_state), "Polling");
        assert_netdev(p, 0, "ibp129s0f1", INFINIBAND_NETDEV_DEVICE_NET);
}

static void test_cx5_roce(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        InfinibandPort *p;

        d = read_device(&bed, "rocep59s0f0");
        assert_null(d->warnings);
        assert_string_equal(d->hca_type, "MT4119");
        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        assert_null(p->warnings);
        assert_status(p, RDMA_PORT_STATE_ACTIVE, RDMA_PHYS_STATE_LINK_UP, RDMA_LINK_LAYER_ETHERNET, 100000,
                      RDMA_WIDTH_4X, RDMA_SPEED_EDR);
        assert_int_equal(p->status.cap_mask, 0x04010000);
        assert_int_equal(infiniband_port_transport(d, p), RDMA_TRANSPORT_ROCE);

        /* Ten entries; the six empty slots after them are skipped. */
        assert_int_equal(p->n_gids, 10);
        assert_gid(&p->gids[0], 0, "fe80::e42:a1ff:fe2b:3c4d", RDMA_GID_TYPE_IB_ROCE_V1, "enp59s0f0np0");
        assert_gid(&p->gids[1], 1, "fe80::e42:a1ff:fe2b:3c4d", RDMA_GID_TYPE_ROCE_V2, "enp59s0f0np0");
        assert_gid(&p->gids[2], 2, "::ffff:192.168.10.21", RDMA_GID_TYPE_IB_ROCE_V1, "enp59s0f0np0");
        assert_gid(&p->gids[3], 3, "::ffff:192.168.10.21", RDMA_GID_TYPE_ROCE_V2, "enp59s0f0np0");
        assert_true(rdma_gid_is_ipv4_mapped(p->gids[3].gid));
        assert_gid(&p->gids[4], 4, "2001:db8:10:0:e42:a1ff:fe2b:3c4d", RDMA_GID_TYPE_IB_ROCE_V1, "enp59s0f0np0");
        assert_gid(&p->gids[5], 5, "2001:db8:10:0:e42:a1ff:fe2b:3c4d", RDMA_GID_TYPE_ROCE_V2, "enp59s0f0np0");
        assert_gid(&p->gids[6], 6, "fe80::e42:a1ff:fe2b:3c4d", RDMA_GID_TYPE_IB_ROCE_V1, "enp59s0f0np0.100");
        assert_gid(&p->gids[9], 9, "::ffff:10.100.0.21", RDMA_GID_TYPE_ROCE_V2, "enp59s0f0np0.100");

        /* The port's own interface first, the VLAN after it, the device/net duplicate dropped. */
        assert_int_equal(p->n_netdevs, 2);
        assert_netdev(p, 0, "enp59s0f0np0", INFINIBAND_NETDEV_GID_TABLE);
        assert_netdev(p, 1, "enp59s0f0np0.100", INFINIBAND_NETDEV_GID_TABLE);
}

static void test_rxe_over_virtio(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        InfinibandPort *p;

        d = read_device(&bed, "rxe0");
        assert_null(d->warnings);
        assert_string_equal(d->syspath, "devices/virtual/infiniband/rxe0");
        assert_null(d->fw_ver); /* rxe has no firmware: an empty line */
        assert_null(d->hca_type);
        assert_null(d->board_id);
        assert_string_equal(d->node_desc, "rxe");
        assert_string_equal(d->parent, "enp0s3");
        assert_int_equal(d->node_guid, UINT64_C(0x505400fffe123456));

        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        assert_null(p->warnings);
        /* virtio-net reports no speed; the kernel then assumes 1 Gb/s and shows 1X SDR. */
        assert_status(p, RDMA_PORT_STATE_ACTIVE, RDMA_PHYS_STATE_LINK_UP, RDMA_LINK_LAYER_ETHERNET, 2500, RDMA_WIDTH_1X,
                      RDMA_SPEED_SDR);
        assert_int_equal(infiniband_port_transport(d, p), RDMA_TRANSPORT_ROCE);
        assert_int_equal(p->n_gids, 4);
        assert_gid(&p->gids[2], 2, "::ffff:10.0.2.15", RDMA_GID_TYPE_IB_ROCE_V1, "enp0s3");
        assert_gid(&p->gids[3], 3, "::ffff:10.0.2.15", RDMA_GID_TYPE_ROCE_V2, "enp0s3");
        /* The GID table names it first; "parent" says the same and is not repeated. */
        assert_int_equal(p->n_netdevs, 1);
        assert_netdev(p, 0, "enp0s3", INFINIBAND_NETDEV_GID_TABLE);
}

static void test_iwarp_rnic(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        InfinibandPort *p;

        d = read_device(&bed, "iwp3s0f4");
        assert_null(d->warnings);
        assert_int_equal(d->node_type, RDMA_NODE_TYPE_RNIC);
        assert_string_equal(d->node_type_text, "4: RNIC");
        assert_int_equal(d->n_ports, 2);

        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        assert_int_equal(infiniband_port_transport(d, p), RDMA_TRANSPORT_IWARP);
        assert_status(p, RDMA_PORT_STATE_ACTIVE, RDMA_PHYS_STATE_LINK_UP, RDMA_LINK_LAYER_ETHERNET, 100000,
                      RDMA_WIDTH_4X, RDMA_SPEED_EDR);
        /* An iWARP GID is the MAC address. */
        assert_int_equal(p->n_gids, 1);
        assert_gid(&p->gids[0], 0, "7:433a:1bc0::", RDMA_GID_TYPE_IB_ROCE_V1, "enp3s0f4");
        assert_int_equal(p->n_netdevs, 1);
        assert_netdev(p, 0, "enp3s0f4", INFINIBAND_NETDEV_GID_TABLE);

        p = infiniband_device_get_port(d, 2);
        assert_non_null(p);
        assert_status(p, RDMA_PORT_STATE_DOWN, RDMA_PHYS_STATE_DISABLED, RDMA_LINK_LAYER_ETHERNET, 2500, RDMA_WIDTH_1X,
                      RDMA_SPEED_SDR);
        assert_int_equal(p->n_netdevs, 1);
        assert_netdev(p, 0, "enp3s0f4d1", INFINIBAND_NETDEV_GID_TABLE);
}

static void test_cx3_dual_port(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        InfinibandPort *p;

        d = read_device(&bed, "mlx4_0");
        assert_null(d->warnings);
        assert_int_equal(d->n_ports, 2);
        assert_int_equal(d->sys_image_guid, UINT64_C(0x0002c90300abcd13));

        /* Port 1: InfiniBand FDR, IPoIB on dev_port 0. */
        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        assert_null(p->warnings);
        assert_status(p, RDMA_PORT_STATE_ACTIVE, RDMA_PHYS_STATE_LINK_UP, RDMA_LINK_LAYER_INFINIBAND, 56000,
                      RDMA_WIDTH_4X, RDMA_SPEED_FDR);
        assert_int_equal(p->status.lid, 3);
        assert_int_equal(infiniband_port_transport(d, p), RDMA_TRANSPORT_INFINIBAND);
        assert_int_equal(p->n_netdevs, 1);
        assert_netdev(p, 0, "ibp4s0", INFINIBAND_NETDEV_DEVICE_NET);

        /* Port 2: RoCE on the Ethernet interface with dev_port 1, not the IPoIB one. */
        p = infiniband_device_get_port(d, 2);
        assert_non_null(p);
        assert_null(p->warnings);
        assert_status(p, RDMA_PORT_STATE_ACTIVE, RDMA_PHYS_STATE_LINK_UP, RDMA_LINK_LAYER_ETHERNET, 40000, RDMA_WIDTH_4X,
                      RDMA_SPEED_QDR);
        assert_int_equal(infiniband_port_transport(d, p), RDMA_TRANSPORT_ROCE);
        assert_int_equal(p->n_gids, 4);
        assert_gid(&p->gids[3], 3, "::ffff:172.16.0.5", RDMA_GID_TYPE_ROCE_V2, "enp4s0d1");
        assert_int_equal(p->n_netdevs, 1);
        assert_netdev(p, 0, "enp4s0d1", INFINIBAND_NETDEV_GID_TABLE);
}

static void test_old_kernel(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        InfinibandPort *p;

        d = read_device(&bed, "mthca0");
        assert_null(d->warnings);
        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        /* No gid_attrs before 4.9 is not worth a warning. */
        assert_null(p->warnings);
        /* "10 Gb/sec (4X)": SDR from the per-lane rate. */
        assert_status(p, RDMA_PORT_STATE_ACTIVE, RDMA_PHYS_STATE_LINK_UP, RDMA_LINK_LAYER_INFINIBAND, 10000,
                      RDMA_WIDTH_4X, RDMA_SPEED_SDR);
        assert_int_equal(p->n_gids, 1);
        assert_gid(&p->gids[0], 0, "fe80::2:c902:20:1a2d", RDMA_GID_TYPE_UNKNOWN, NULL);
        /* No dev_port before 3.15: dev_id says the same. */
        assert_int_equal(p->n_netdevs, 1);
        assert_netdev(p, 0, "ib0", INFINIBAND_NETDEV_DEVICE_NET);
}

static void assert_warning(char **warnings, const char *s) {
        if (!strv_contains(warnings, s)) {
                print_error("missing warning: %s\n", s);
                STRV_FOREACH(i, warnings)
                        print_error("  have: %s\n", *i);
                fail();
        }
}

static void test_broken(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL, *d1 = NULL;
        InfinibandPort *p;

        d = read_device(&bed, "broken0");
        assert_int_equal(d->node_type, RDMA_NODE_TYPE_UNKNOWN);
        assert_string_equal(d->node_type_text, "CA");
        assert_int_equal(d->node_guid, 0);
        assert_int_equal(d->sys_image_guid, 0);
        assert_string_equal(d->fw_ver, "1.0");
        assert_null(d->board_id);
        /* Not UTF-8 but kept byte for byte; escaping is the publisher's business. */
        assert_string_equal(d->node_desc, "node\xff-01");
        assert_warning(d->warnings, "node_type: cannot parse \"CA\"");
        assert_warning(d->warnings, "node_guid: cannot parse \"b8ce:f603:00a1\"");
        assert_warning(d->warnings, "sys_image_guid: cannot read: No such file or directory");
        assert_warning(d->warnings, "board_id: cannot read: Bad message");
        assert_warning(d->warnings, "ports/abc: not a port number");
        assert_int_equal(strv_length(d->warnings), 5);
        assert_int_equal(d->n_ports, 3);

        /* Port 1: nothing parses, everything is kept as text and explained. */
        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        assert_int_equal(p->status.known, 0);
        assert_string_equal(p->state_text, "4 ACTIVE");
        assert_string_equal(p->rate_text, "fast (4X EDR)");
        assert_warning(p->warnings, "state: cannot parse \"4 ACTIVE\"");
        assert_warning(p->warnings, "phys_state: cannot parse \"LinkUp\"");
        assert_warning(p->warnings, "link_layer: cannot parse \"Infiniband\"");
        assert_warning(p->warnings, "rate: cannot parse \"fast (4X EDR)\"");
        assert_warning(p->warnings, "lid: cannot parse \"0xZZ\"");
        assert_warning(p->warnings, "sm_lid: cannot read: No such file or directory");
        assert_warning(p->warnings, "lid_mask_count: 9 is out of range");
        assert_warning(p->warnings, "sm_sl: cannot parse \"x\"");
        assert_warning(p->warnings, "cap_mask: cannot parse \"0x1ffffffff\"");
        assert_warning(p->warnings, "gids/0: cannot parse \"not-a-gid\"");
        assert_warning(p->warnings, "gid_attrs/types/1: unknown GID type \"RoCE v3\"");
        assert_warning(p->warnings, "gids/junk: not a GID table index");
        assert_int_equal(strv_length(p->warnings), 12);
        /* The GIDs that do parse are kept; an empty ndevs entry is no interface. */
        assert_int_equal(p->n_gids, 2);
        assert_gid(&p->gids[0], 1, "fe80::1", RDMA_GID_TYPE_UNKNOWN, NULL);
        assert_gid(&p->gids[1], 2, "fe80::2", RDMA_GID_TYPE_ROCE_V2, NULL);
        assert_int_equal(p->n_netdevs, 0);
        assert_int_equal(infiniband_port_transport(d, p), RDMA_TRANSPORT_UNKNOWN);

        /* Port 2: numbers this code does not know are "unknown", not errors. */
        p = infiniband_device_get_port(d, 2);
        assert_non_null(p);
        assert_true(p->status.known & RDMA_PORT_FIELD_STATE);
        assert_int_equal(p->status.state, RDMA_PORT_STATE_UNKNOWN);
        assert_true(p->status.known & RDMA_PORT_FIELD_PHYS_STATE);
        assert_int_equal(p->status.phys_state, RDMA_PHYS_STATE_UNKNOWN);
        assert_true(p->status.known & RDMA_PORT_FIELD_LINK_LAYER);
        assert_int_equal(p->status.link_layer, RDMA_LINK_LAYER_UNKNOWN);
        assert_false(p->status.known & RDMA_PORT_FIELD_RATE);
        assert_warning(p->warnings, "rate: cannot parse \"100 Gb/sec (3X EDR)\"");
        assert_warning(p->warnings, "gids: cannot list: No such file or directory");

        /* Port 3: a named speed whose figure does not match. */
        p = infiniband_device_get_port(d, 3);
        assert_non_null(p);
        assert_int_equal(p->status.state, RDMA_PORT_STATE_ACTIVE);
        assert_int_equal(p->status.rate.mgbps, 0);
        assert_warning(p->warnings, "rate: cannot parse \"100 Gb/sec (1X EDR)\"");

        /* A device without ports/ is still a device. */
        d1 = read_device(&bed, "broken1");
        assert_int_equal(d1->n_ports, 0);
        assert_int_equal(d1->node_guid, 1);
        assert_warning(d1->warnings, "ports: cannot list: No such file or directory");
        assert_int_equal(strv_length(d1->warnings), 1);
}

static void test_enumerate_and_find_netdev(void **state) {
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **l = NULL;
        static const char *const names[] = { "broken0", "broken1", "iwp3s0f4", "mlx4_0", "mlx5_0",
                                             "mlx5_1",  "mthca0",  "rocep59s0f0", "rxe0" };
        static const struct {
                const char *ifname;
                const char *device;
                unsigned port;
        } links[] = {
                { "ibp129s0f0", "mlx5_0", 1 },        { "ibp129s0f1", "mlx5_1", 1 },
                { "enp59s0f0np0", "rocep59s0f0", 1 }, { "enp59s0f0np0.100", "rocep59s0f0", 1 },
                { "enp0s3", "rxe0", 1 },              { "enp3s0f4", "iwp3s0f4", 1 },
                { "enp3s0f4d1", "iwp3s0f4", 2 },      { "ibp4s0", "mlx4_0", 1 },
                { "enp4s0d1", "mlx4_0", 2 },          { "ib0", "mthca0", 1 },
                { "lo", NULL, 0 },                    { "eth0", NULL, 0 },
                { "", NULL, 0 },
        };
        size_t n = 99;

        assert_int_equal(infiniband_subsystem_present(bed.root_fd), 1);
        assert_int_equal(infiniband_enumerate(bed.root_fd, &l, &n), 0);
        assert_int_equal(n, ELEMENTSOF(names));
        for (size_t i = 0; i < n; i++)
                assert_string_equal(l[i]->name, names[i]);
        assert_null(l[n]);

        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                _cleanup_(freep) char *device = NULL;
                InfinibandDevice *d = NULL;
                InfinibandPort *p = infiniband_find_netdev(l, links[i].ifname, &d);
                unsigned port = 0;

                print_message("# %s\n", links[i].ifname);
                if (!links[i].device) {
                        assert_null(p);
                        assert_int_equal(infiniband_lookup_netdev(bed.root_fd, links[i].ifname, &device, &port), 0);
                        assert_null(device);
                        continue;
                }
                assert_non_null(p);
                assert_string_equal(d->name, links[i].device);
                assert_int_equal(p->number, links[i].port);
                assert_int_equal(infiniband_lookup_netdev(bed.root_fd, links[i].ifname, &device, &port), 1);
                assert_string_equal(device, links[i].device);
                assert_int_equal(port, links[i].port);
        }
        assert_null(infiniband_find_netdev(NULL, "ib0", NULL));
}

static void test_port_read_and_names(void **state) {
        _cleanup_(infiniband_port_freep) InfinibandPort *p = NULL, *q = NULL;
        InfinibandDevice *d = NULL;
        InfinibandPort *unused = NULL;

        assert_int_equal(infiniband_port_read(bed.root_fd, "mlx4_0", 2, &p), 0);
        assert_int_equal(p->number, 2);
        assert_int_equal(p->status.link_layer, RDMA_LINK_LAYER_ETHERNET);
        assert_int_equal(p->n_gids, 4);
        assert_netdev(p, 0, "enp4s0d1", INFINIBAND_NETDEV_GID_TABLE);
        /* A single port read maps device/net by dev_port just like the whole device does. */
        assert_int_equal(infiniband_port_read(bed.root_fd, "mlx4_0", 1, &q), 0);
        assert_netdev(q, 0, "ibp4s0", INFINIBAND_NETDEV_DEVICE_NET);

        assert_int_equal(infiniband_port_read(bed.root_fd, "mlx4_0", 3, &unused), -ENOENT);
        assert_int_equal(infiniband_port_read(bed.root_fd, "mlx4_9", 1, &unused), -ENOENT);
        assert_int_equal(infiniband_device_read(bed.root_fd, "mlx4_9", &d), -ENOENT);
        static const char *const bad[] = { "", ".", "..", "../mlx4_0", "a/b", "/mlx4_0",
                                           "0123456789012345678901234567890123456789012345678901234567890123" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                assert_int_equal(infiniband_device_read(bed.root_fd, bad[i], &d), -EINVAL);
                assert_int_equal(infiniband_port_read(bed.root_fd, bad[i], 1, &unused), -EINVAL);
        }
        assert_int_equal(infiniband_device_read(bed.root_fd, NULL, &d), -EINVAL);
        assert_null(d);
        assert_null(unused);
}

static void test_no_subsystem(void **state) {
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **l = NULL;
        _cleanup_(freep) char *device = NULL;
        size_t n = 99;
        Bed b;

        /* A testbed with only a network interface: no class/infiniband at all. */
        b.testbed = umockdev_testbed_new();
        umockdev_testbed_add_from_string(b.testbed,
                                         "P: /devices/virtual/net/dummy0\nE: INTERFACE=dummy0\nE: SUBSYSTEM=net\nA: type=1\\n\n",
                                         NULL);
        bed_open_root(&b);

        assert_int_equal(infiniband_subsystem_present(b.root_fd), 0);
        assert_int_equal(infiniband_enumerate(b.root_fd, &l, &n), 0);
        assert_int_equal(n, 0);
        assert_non_null(l);
        assert_null(l[0]);
        assert_int_equal(infiniband_lookup_netdev(b.root_fd, "dummy0", &device, NULL), 0);
        bed_close(&b);
}

/* A plain tree for what umockdev cannot express: attributes whose read() fails. */
static char plain_root[] = "/tmp/linkprobe-test-infiniband-XXXXXX";

static void plain_write(const char *rel, const char *content) {
        char path[512];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", plain_root, rel);
        for (char *slash = strchr(path + strlen(plain_root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                (void) mkdir(path, 0755);
                *slash = '/';
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
}

static int plain_teardown(void **state) {
        char cmd[128];

        if (strstr(plain_root, "XXXXXX"))
                return 0;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", plain_root);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_gid_attrs_that_fail(void **state) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        _cleanup_(closep) int root_fd = -EBADF;
        InfinibandPort *p;
        char buf[8];

        assert_non_null(mkdtemp(plain_root));
        /* The wrapper itself, first. */
        plain_write("probe", "@errno:22\n");
        root_fd = sysfs_root_open(plain_root);
        assert_true(root_fd >= 0);
        assert_int_equal(sysfs_read_buffer(root_fd, NULL, "probe", buf, sizeof(buf)), -EINVAL);

        plain_write("class/infiniband/fake0/node_type", "1: CA\n");
        plain_write("class/infiniband/fake0/node_guid", "0000:0000:0000:00aa\n");
        plain_write("class/infiniband/fake0/sys_image_guid", "0000:0000:0000:00aa\n");
        static const char *const attrs[][2] = {
                { "state", "4: ACTIVE\n" }, { "phys_state", "5: LinkUp\n" }, { "rate", "25 Gb/sec (1X EDR)\n" },
                { "link_layer", "Ethernet\n" }, { "lid", "0x0\n" }, { "sm_lid", "0x0\n" },
                { "lid_mask_count", "0\n" }, { "sm_sl", "0\n" }, { "cap_mask", "0x04010000\n" },
        };
        for (size_t i = 0; i < ELEMENTSOF(attrs); i++) {
                char rel[128];
                snprintf(rel, sizeof(rel), "class/infiniband/fake0/ports/1/%s", attrs[i][0]);
                plain_write(rel, attrs[i][1]);
        }
#define PORT "class/infiniband/fake0/ports/1/"
        /* Entry 0: a type, and EINVAL for ndevs: an entry without an interface. */
        plain_write(PORT "gids/0", "fe80:0000:0000:0000:0000:0000:0000:00aa\n");
        plain_write(PORT "gid_attrs/types/0", "RoCE v2\n");
        plain_write(PORT "gid_attrs/ndevs/0", "@errno:22\n");
        /* Entry 1: EINVAL for the type, an interface. */
        plain_write(PORT "gids/1", "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
        plain_write(PORT "gid_attrs/types/1", "@errno:22\n");
        plain_write(PORT "gid_attrs/ndevs/1", "eth9\n");
        /* Entry 2: empty, as the kernel shows it, with both attributes failing: never read. */
        plain_write(PORT "gids/2", "0000:0000:0000:0000:0000:0000:0000:0000\n");
        plain_write(PORT "gid_attrs/types/2", "@errno:22\n");
        plain_write(PORT "gid_attrs/ndevs/2", "@errno:22\n");
        /* Entry 3: ENODATA for the type (seen between kernel versions) and EIO for ndevs: a real
         * error, reported. */
        plain_write(PORT "gids/3", "0000:0000:0000:0000:0000:ffff:0a00:0003\n");
        plain_write(PORT "gid_attrs/types/3", "@errno:61\n");
        plain_write(PORT "gid_attrs/ndevs/3", "@errno:5\n");
        /* Entry 4: the GID itself fails to read. */
        plain_write(PORT "gids/4", "@errno:5\n");
#undef PORT

        assert_int_equal(infiniband_device_read(root_fd, "fake0", &d), 0);
        assert_null(d->warnings);
        p = infiniband_device_get_port(d, 1);
        assert_non_null(p);
        assert_int_equal(p->status.rate.mgbps, 25000);
        assert_int_equal(p->n_gids, 3);
        assert_gid(&p->gids[0], 0, "fe80::aa", RDMA_GID_TYPE_ROCE_V2, NULL);
        assert_gid(&p->gids[1], 1, "::ffff:10.0.0.1", RDMA_GID_TYPE_UNKNOWN, "eth9");
        assert_gid(&p->gids[2], 3, "::ffff:10.0.0.3", RDMA_GID_TYPE_UNKNOWN, NULL);
        assert_warning(p->warnings, "gid_attrs/ndevs/3: cannot read: Input/output error");
        assert_warning(p->warnings, "gids/4: cannot read: Input/output error");
        assert_int_equal(strv_length(p->warnings), 2);
        assert_int_equal(p->n_netdevs, 1);
        assert_netdev(p, 0, "eth9", INFINIBAND_NETDEV_GID_TABLE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cx6_infiniband_hdr),
                cmocka_unit_test(test_cx6_port_polling),
                cmocka_unit_test(test_cx5_roce),
                cmocka_unit_test(test_rxe_over_virtio),
                cmocka_unit_test(test_iwarp_rnic),
                cmocka_unit_test(test_cx3_dual_port),
                cmocka_unit_test(test_old_kernel),
                cmocka_unit_test(test_broken),
                cmocka_unit_test(test_enumerate_and_find_netdev),
                cmocka_unit_test(test_port_read_and_names),
                cmocka_unit_test(test_no_subsystem),
                cmocka_unit_test_teardown(test_gid_attrs_that_fail, plain_teardown),
        };
        return cmocka_run_group_tests_name("infiniband-reader", tests, bed_setup, bed_teardown);
}
