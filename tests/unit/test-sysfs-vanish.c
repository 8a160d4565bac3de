/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Devices that vanish in the middle of being read, at every point of the read: for each attribute file
 * below a device (an RDMA device with its ports and GID tables, a Thunderbolt dock with everything
 * behind it, a network interface with its backing PCI function), the device is removed the moment
 * the reader reads that file, and the read fails with ENODEV as sysfs does for a removed kobject;
 * every later access finds nothing. The readers must not crash or leak, must leave every other
 * device exactly as it was, and, where their contract says so, must leave the vanished one out.
 *
 * No file can make read() remove a directory, so this program is linked with --wrap=read: a file
 * whose content starts with "@vanish:" names the directory (relative to the sysfs root) to take away.
 * "Taking away" is a rename, undone after each step, so one testbed serves the whole sweep. */
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <umockdev.h>

#include "unit-test.h"
#include "shared/string-util.h"
#include "sysfs/infiniband.h"
#include "sysfs/net.h"
#include "sysfs/sysfs.h"
#include "sysfs/thunderbolt.h"

ssize_t __real_read(int fd, void *buf, size_t count);
ssize_t __wrap_read(int fd, void *buf, size_t count);

static int vanish_root_fd = -EBADF;
static unsigned vanished; /* how many reads triggered a removal */

#define MARKER "@vanish:"
#define GONE_SUFFIX ".vanished"

ssize_t __wrap_read(int fd, void *buf, size_t count) {
        char target[PATH_MAX], gone[PATH_MAX + sizeof(GONE_SUFFIX)];
        ssize_t n = __real_read(fd, buf, count);

        if (n < (ssize_t) strlen(MARKER) || memcmp(buf, MARKER, strlen(MARKER)) != 0 || vanish_root_fd < 0)
                return n;
        snprintf(target, sizeof(target), "%.*s", (int) (n - (ssize_t) strlen(MARKER)), (char *) buf + strlen(MARKER));
        snprintf(gone, sizeof(gone), "%s" GONE_SUFFIX, target);
        if (renameat(vanish_root_fd, target, vanish_root_fd, gone) < 0)
                abort();
        vanished++;
        errno = ENODEV;
        return -1;
}

/* ---- a testbed and the sweep over its files ---- */

typedef struct Bed {
        UMockdevTestbed *testbed;
        char *sys;
        int root_fd;
} Bed;

static void bed_open(Bed *b, const char *dir, const char *const *fixtures) {
        *b = (Bed) { .root_fd = -EBADF };
        b->testbed = umockdev_testbed_new();
        assert_non_null(b->testbed);
        for (size_t i = 0; fixtures[i]; i++) {
                char path[PATH_MAX];
                GError *error = NULL;
                snprintf(path, sizeof(path), "%s/tests/fixtures/%s/%s.umockdev", unit_top_dir(), dir, fixtures[i]);
                if (!umockdev_testbed_add_from_file(b->testbed, path, &error))
                        fail_msg("%s: %s", path, error ? error->message : "?");
        }
        b->sys = umockdev_testbed_get_sys_dir(b->testbed);
        b->root_fd = sysfs_root_open(b->sys);
        assert_true(b->root_fd >= 0);
        vanish_root_fd = b->root_fd;
}

static void bed_close(Bed *b) {
        vanish_root_fd = -EBADF;
        safe_close(b->root_fd);
        g_free(b->sys);
        g_object_unref(b->testbed);
}

static const char *current_file; /* the armed file, for messages */
static char **collected;
static size_t collected_prefix;

static int collect_file(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        if (type == FTW_F && S_ISREG(st->st_mode))
                assert_int_equal(strv_consume(&collected, strdup(path + collected_prefix)), 0);
        return 0;
}

/* Every regular file below dir (relative to the root), as paths relative to the root, in order. */
static char **files_below(const Bed *b, const char *dir) {
        char path[PATH_MAX];

        collected = NULL;
        collected_prefix = strlen(b->sys) + 1;
        snprintf(path, sizeof(path), "%s/%s", b->sys, dir);
        assert_int_equal(nftw(path, collect_file, 16, FTW_PHYS), 0);
        assert_non_null(collected);
        return TAKE_PTR(collected);
}

static char *read_all(const Bed *b, const char *rel, size_t *ret_size) {
        char path[PATH_MAX];
        gchar *text = NULL;
        gsize size = 0;
        snprintf(path, sizeof(path), "%s/%s", b->sys, rel);
        assert_true(g_file_get_contents(path, &text, &size, NULL));
        *ret_size = size;
        return text;
}

static void write_all(const Bed *b, const char *rel, const char *text, size_t size) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", b->sys, rel);
        assert_true(g_file_set_contents(path, text, (gssize) size, NULL));
}

/* Arms file rel: reading it takes dir away. */
static void arm(const Bed *b, const char *rel, const char *dir) {
        char marker[PATH_MAX + 16];
        snprintf(marker, sizeof(marker), MARKER "%s", dir);
        write_all(b, rel, marker, strlen(marker));
}

/* Puts dir back if it went and the file's content back as it was. */
static void restore(const Bed *b, const char *rel, const char *dir, const char *content, size_t size) {
        char gone[PATH_MAX + sizeof(GONE_SUFFIX)];
        snprintf(gone, sizeof(gone), "%s" GONE_SUFFIX, dir);
        if (renameat(b->root_fd, gone, b->root_fd, dir) < 0)
                assert_int_equal(errno, ENOENT);
        write_all(b, rel, content, size);
}

typedef void (*check_fn)(const Bed *b, const char *dir, bool did_vanish);

/* Returns how many of the files were actually read (and made the device vanish). */
static unsigned sweep(const Bed *b, const char *dir, check_fn check) {
        _cleanup_(strv_freep) char **files = files_below(b, dir);
        unsigned hits = 0;

        STRV_FOREACH(f, files) {
                size_t size;
                gchar *content = read_all(b, *f, &size);
                unsigned before = vanished;

                current_file = *f;
                arm(b, *f, dir);
                check(b, dir, false);
                bool did_vanish = vanished > before;
                hits += did_vanish;
                restore(b, *f, dir, content, size);
                /* The same question once more, with the answer known: was it really left out? */
                if (did_vanish) {
                        arm(b, *f, dir);
                        check(b, dir, true);
                        restore(b, *f, dir, content, size);
                }
                g_free(content);
        }
        print_message("# %s: %zu files, %u read mid-way (each one a vanishing point)\n", dir, strv_length(files), hits);
        return hits;
}

/* ---- RDMA ---- */

static const char *const rdma_fixtures[] = { "cx6-ib-hdr", "cx5-roce", NULL };
#define MLX5_0 "devices/pci0000:80/0000:80:01.1/0000:81:00.0/infiniband/mlx5_0"
#define ROCE "devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/rocep59s0f0"

static void assert_same_rdma_device(const InfinibandDevice *a, const InfinibandDevice *b) {
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->node_guid, b->node_guid);
        assert_int_equal(a->n_ports, b->n_ports);
        for (size_t i = 0; i < a->n_ports; i++) {
                assert_int_equal(a->ports[i]->status.known, b->ports[i]->status.known);
                assert_int_equal(a->ports[i]->status.state, b->ports[i]->status.state);
                assert_int_equal(a->ports[i]->status.rate.mgbps, b->ports[i]->status.rate.mgbps);
                assert_int_equal(a->ports[i]->n_gids, b->ports[i]->n_gids);
                assert_int_equal(a->ports[i]->n_netdevs, b->ports[i]->n_netdevs);
        }
}

static InfinibandDevice **rdma_baseline;

static void check_rdma(const Bed *b, const char *dir, bool did_vanish) {
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **l = NULL;
        InfinibandDevice *d = NULL;
        const char *name = streq(dir, MLX5_0) ? "mlx5_0" : "rocep59s0f0";
        size_t n = 0, found = 0;

        assert_int_equal(infiniband_enumerate(b->root_fd, &l, &n), 0);
        for (size_t i = 0; i < n; i++) {
                if (streq(l[i]->name, name)) {
                        /* infiniband_enumerate(): "a device that disappears while being read is left out". */
                        if (did_vanish)
                                fail_msg("%s vanished mid-read (at %s) but was enumerated", name, current_file);
                        continue;
                }
                for (size_t k = 0; rdma_baseline[k]; k++)
                        if (streq(rdma_baseline[k]->name, l[i]->name)) {
                                assert_same_rdma_device(rdma_baseline[k], l[i]);
                                found++;
                        }
        }
        assert_int_equal(found, 1); /* the other device, untouched */

        /* Read alone (a udev event's path), the same moment: an error, or what was there. */
        int r = infiniband_device_read(b->root_fd, name, &d);
        assert_true(r == 0 || r == -ENOENT || r == -ENODEV);
        infiniband_device_free(d);
        InfinibandPort *p = NULL;
        r = infiniband_port_read(b->root_fd, name, 1, &p);
        assert_true(r == 0 || r == -ENOENT || r == -ENODEV);
        infiniband_port_free(p);
}

static void test_rdma_devices_vanish_mid_read(void **state) {
        Bed b;
        size_t n;

        bed_open(&b, "rdma", rdma_fixtures);
        assert_int_equal(infiniband_enumerate(b.root_fd, &rdma_baseline, &n), 0);
        assert_int_equal(n, 2);
        assert_true(sweep(&b, MLX5_0, check_rdma) >= 10);
        assert_true(sweep(&b, ROCE, check_rdma) >= 20);
        rdma_baseline = infiniband_device_list_free(rdma_baseline);
        bed_close(&b);
}

/* ---- Thunderbolt ---- */

static const char *const tbt_fixtures[] = { "peers-two-docks", NULL };
#define DOCK "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1"

static TbtDevice **tbt_baseline;
static size_t n_tbt_baseline;

static const TbtDevice *tbt_find(TbtDevice **devices, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(devices[i]->sysname, name))
                        return devices[i];
        return NULL;
}

/* The device a file belongs to: the last directory on its path that is a device of the baseline. */
static const char *tbt_owner(const char *file) {
        const char *owner = NULL;
        gchar **parts = g_strsplit(file, "/", -1);

        for (size_t i = 0; parts && parts[i] && parts[i + 1]; i++) {
                const TbtDevice *d = tbt_find(tbt_baseline, n_tbt_baseline, parts[i]);
                if (d)
                        owner = d->sysname; /* the baseline's string: outlives parts */
        }
        g_strfreev(parts);
        return owner;
}

static void check_tbt(const Bed *b, const char *dir, bool did_vanish) {
        TbtDevice **devices = NULL;
        size_t n = 0;

        assert_int_equal(tbt_enumerate(b->root_fd, &devices, &n), 0);
        /* What is above the dock is read whole, every time. */
        for (const char *const *name = (const char *const[]) { "domain0", "0-0", NULL }; *name; name++) {
                const TbtDevice *a = tbt_find(tbt_baseline, n_tbt_baseline, *name), *d = tbt_find(devices, n, *name);
                assert_non_null(d);
                assert_int_equal(d->kind, a->kind);
                assert_int_equal(d->vendor_id, a->vendor_id);
                assert_int_equal(d->device_id, a->device_id);
                assert_int_equal(d->security, a->security);
                assert_int_equal(d->authorized, a->authorized);
                assert_int_equal(d->rx.lanes, a->rx.lanes);
                assert_string_equal(strempty(d->device_name), strempty(a->device_name));
        }
        /* tbt_device_read(): -ENODEV "when the device is not (or no longer) there"; so the device that
         * went while it was being read is not enumerated. (Those read before it are: they were there.) */
        if (did_vanish) {
                const char *being_read = tbt_owner(current_file);
                if (being_read && tbt_find(devices, n, being_read))
                        fail_msg("%s vanished mid-read (at %s) but was enumerated", being_read, current_file);
        }
        /* Whatever of the dock's subtree was read must still be sane. */
        for (size_t i = 0; i < n; i++) {
                const TbtDevice *d = devices[i];
                assert_non_null(d->sysname);
                assert_true(d->rx.lanes <= TBT_LANES_MAX && d->tx.lanes <= TBT_LANES_MAX);
                assert_true(d->rx.lane_gbps <= TBT_LANE_GBPS_MAX && d->tx.lane_gbps <= TBT_LANE_GBPS_MAX);
        }
        tbt_device_array_free(devices, n);

        TbtDevice *d = NULL;
        int r = tbt_device_read(b->root_fd, "0-1", &d);
        assert_true(r == 0 || r == -ENODEV);
        tbt_device_free(d);
        r = tbt_peer_for_net_interface(b->root_fd, "thunderbolt0", NULL, NULL);
        assert_true(r == 0 || r == -ENOENT || r == -ENXIO);
}

static void test_thunderbolt_dock_vanishes_mid_read(void **state) {
        Bed b;

        bed_open(&b, "thunderbolt", tbt_fixtures);
        assert_int_equal(tbt_enumerate(b.root_fd, &tbt_baseline, &n_tbt_baseline), 0);
        assert_int_equal(n_tbt_baseline, 8);
        assert_true(sweep(&b, DOCK, check_tbt) >= 20);
        tbt_baseline = tbt_device_array_free(tbt_baseline, n_tbt_baseline);
        bed_close(&b);
}

/* ---- network interfaces ---- */

#define NIC "devices/pci0000:00/0000:00:1c.0/0000:05:00.0"

static void check_net(const Bed *b, const char *dir, bool did_vanish) {
        _cleanup_(sysfs_net_facts_done) SysfsNetFacts f = {};
        int r = sysfs_net_read(b->root_fd, "enp5s0", 2, SYSFS_NET_SPEED | SYSFS_NET_DEVICE, &f);

        /* Gone before the ifindex check: gone. After it: what was read, the rest unknown. */
        assert_true(r == 0 || r == -ENOENT || r == -ENODEV);
        if (r == 0) {
                assert_true(f.speed_mbps == 2500 || f.speed_mbps == -1);
                assert_true(!f.duplex || streq(f.duplex, "full"));
                assert_true(!f.driver || streq(f.driver, "igc"));
        }
        /* The other interface never notices. */
        _cleanup_(sysfs_net_facts_done) SysfsNetFacts g = {};
        assert_int_equal(sysfs_net_read(b->root_fd, "veth0", 9, SYSFS_NET_SPEED | SYSFS_NET_DEVICE, &g), 0);
        assert_int_equal(g.speed_mbps, 10000);
        assert_string_equal(g.duplex, "full");
}

static void put(const Bed *b, const char *rel, const char *content) {
        write_all(b, rel, content, strlen(content));
}

static void mkdir_p(const Bed *b, const char *rel) {
        char cmd[PATH_MAX * 2];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", b->sys, rel);
        assert_int_equal(system(cmd), 0);
}

static void test_network_interface_vanishes_mid_read(void **state) {
        static const char *const none[] = { NULL };
        _cleanup_(sysfs_net_facts_done) SysfsNetFacts f = {};
        Bed b;

        /* An empty testbed as a scratch root, with a NIC shaped like test-sysfs-net.c's. */
        bed_open(&b, "rdma", none);
        mkdir_p(&b, NIC "/net/enp5s0");
        mkdir_p(&b, "bus/pci/drivers/igc");
        mkdir_p(&b, "devices/virtual/net/veth0");
        mkdir_p(&b, "class/net");
        assert_int_equal(symlinkat("../../../../bus/pci/drivers/igc", b.root_fd, NIC "/driver"), 0);
        assert_int_equal(symlinkat("../../../0000:05:00.0", b.root_fd, NIC "/net/enp5s0/device"), 0);
        put(&b, NIC "/uevent", "DRIVER=igc\nPCI_ID=8086:15F3\n");
        put(&b, NIC "/vendor", "0x8086\n");
        put(&b, NIC "/net/enp5s0/ifindex", "2\n");
        put(&b, NIC "/net/enp5s0/speed", "2500\n");
        put(&b, NIC "/net/enp5s0/duplex", "full\n");
        put(&b, NIC "/net/enp5s0/uevent", "INTERFACE=enp5s0\nIFINDEX=2\n");
        assert_int_equal(symlinkat("../../" NIC "/net/enp5s0", b.root_fd, "class/net/enp5s0"), 0);
        put(&b, "devices/virtual/net/veth0/ifindex", "9\n");
        put(&b, "devices/virtual/net/veth0/speed", "10000\n");
        put(&b, "devices/virtual/net/veth0/duplex", "full\n");
        put(&b, "devices/virtual/net/veth0/uevent", "INTERFACE=veth0\nIFINDEX=9\n");
        assert_int_equal(symlinkat("../../devices/virtual/net/veth0", b.root_fd, "class/net/veth0"), 0);

        assert_int_equal(sysfs_net_read(b.root_fd, "enp5s0", 2, SYSFS_NET_SPEED | SYSFS_NET_DEVICE, &f), 0);
        assert_int_equal(f.speed_mbps, 2500);
        assert_string_equal(f.driver, "igc");
        assert_true(sweep(&b, NIC, check_net) >= 3);
        bed_close(&b);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rdma_devices_vanish_mid_read),
                cmocka_unit_test(test_thunderbolt_dock_vanishes_mid_read),
                cmocka_unit_test(test_network_interface_vanishes_mid_read),
        };
        return cmocka_run_group_tests_name("sysfs-vanish", tests, NULL, NULL);
}
