/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the sysfs base reader: bounded reads, strict parsing, links that try to leave the
 * root, directories and uevent files. The tree is built in a temporary directory per run. */
#include <fcntl.h>
#include <sys/stat.h>

#include "unit-test.h"
#include "sysfs/sysfs.h"

static char root[] = "/tmp/linkprobe-test-sysfs-XXXXXX";
static int root_fd = -EBADF;

static void write_file(const char *rel, const char *content, size_t len) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, len), (ssize_t) len);
        close(fd);
}

#define WRITE(rel, s) write_file(rel, s, sizeof(s) - 1)

static void make_dir(const char *rel) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        assert_int_equal(mkdir(path, 0755), 0);
}

static void make_link(const char *target, const char *rel) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state) {
        if (!mkdtemp(root))
                return -1;
        make_dir("devices");
        make_dir("devices/pci0000:00");
        make_dir("devices/pci0000:00/0000:00:03.0");
        make_dir("devices/pci0000:00/0000:00:03.0/net");
        make_dir("devices/pci0000:00/0000:00:03.0/net/eth0");
        make_dir("bus");
        make_dir("bus/pci");
        make_dir("bus/pci/drivers");
        make_dir("bus/pci/drivers/virtio-pci");
        make_link("../../../bus/pci/drivers/virtio-pci", "devices/pci0000:00/0000:00:03.0/driver");
        make_link("../../../0000:00:03.0", "devices/pci0000:00/0000:00:03.0/net/eth0/device");
        make_dir("class");
        make_dir("class/net");
        make_link("../../devices/pci0000:00/0000:00:03.0/net/eth0", "class/net/eth0");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/mtu", "1500\n");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/speed", "-1\n");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/carrier", "1\n");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/type", "0x1\n");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/uevent", "INTERFACE=eth0\nIFINDEX=2\nnoequals\n=x\nDEVTYPE=\n");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/empty", "");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/garbage", "12abc\n");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/nul", "1\0002\n");
        WRITE("devices/pci0000:00/0000:00:03.0/net/eth0/huge", "99999999999999999999999\n");
        char big[SYSFS_ATTR_MAX + 10];
        memset(big, 'x', sizeof(big));
        write_file("devices/pci0000:00/0000:00:03.0/net/eth0/toolong", big, sizeof(big));
        /* Links that try to leave the root: an absolute one and one with too many "..". */
        make_link("/etc/passwd", "class/net/absolute");
        make_link("../../../../../../../../../../etc/passwd", "class/net/dotdot");
        make_dir("ports");
        make_dir("ports/10");
        make_dir("ports/2");
        make_dir("ports/1");
        root_fd = sysfs_root_open(root);
        return root_fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        char cmd[600];
        safe_close(root_fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_read_values(void **state) {
        _cleanup_(freep) char *s = NULL;
        uint32_t u;
        int i;

        assert_int_equal(sysfs_read_u32(root_fd, "class/net/eth0", "mtu", &u), 0);
        assert_int_equal(u, 1500);
        assert_int_equal(sysfs_read_int(root_fd, "class/net/eth0", "speed", &i), 0);
        assert_int_equal(i, -1);
        assert_int_equal(sysfs_read_bool(root_fd, "class/net/eth0", "carrier"), 1);
        assert_int_equal(sysfs_read_hex_u32(root_fd, "class/net/eth0", "type", &u), 0);
        assert_int_equal(u, 1);
        assert_int_equal(sysfs_read_string(root_fd, "class/net/eth0", "empty", &s), 0);
        assert_string_equal(s, "");
        assert_int_equal(sysfs_read_u32(root_fd, "class/net/eth0", "empty", &u), -EINVAL);
}

static void test_read_errors(void **state) {
        _cleanup_(freep) char *s = NULL;
        uint32_t u;
        uint64_t v;

        assert_int_equal(sysfs_read_u32(root_fd, "class/net/eth0", "missing", &u), -ENOENT);
        assert_int_equal(sysfs_read_u32(root_fd, "class/net/nonexistent", "mtu", &u), -ENOENT);
        assert_int_equal(sysfs_read_u32(root_fd, "class/net/eth0", "garbage", &u), -EINVAL);
        assert_int_equal(sysfs_read_u64(root_fd, "class/net/eth0", "huge", &v), -ERANGE);
        assert_int_equal(sysfs_read_string(root_fd, "class/net/eth0", "nul", &s), -EBADMSG);
        assert_int_equal(sysfs_read_string(root_fd, "class/net/eth0", "toolong", &s), -EFBIG);
        assert_int_equal(sysfs_read_bool(root_fd, "class/net/eth0", "mtu"), -EINVAL);
        assert_int_equal(sysfs_read_u32(-EBADF, "class/net/eth0", "mtu", &u), -EBADF);
}

static void test_stay_in_root(void **state) {
        _cleanup_(freep) char *s = NULL;

        /* Both links resolve inside the root, where there is no etc/passwd. */
        assert_int_equal(sysfs_read_string(root_fd, "class/net", "absolute", &s), -ENOENT);
        assert_int_equal(sysfs_read_string(root_fd, "class/net", "dotdot", &s), -ENOENT);
        assert_int_equal(sysfs_read_string(root_fd, "../../../../etc", "passwd", &s), -ENOENT);
        assert_int_equal(sysfs_read_string(root_fd, "/etc", "passwd", &s), -ENOENT);
}

static void test_links(void **state) {
        _cleanup_(freep) char *driver = NULL, *canonical = NULL, *device = NULL;

        assert_int_equal(sysfs_read_link_basename(root_fd, "class/net/eth0/device", "driver", &driver), 0);
        assert_string_equal(driver, "virtio-pci");
        assert_int_equal(sysfs_resolve(root_fd, "class/net", "eth0", &canonical), 0);
        assert_string_equal(canonical, "devices/pci0000:00/0000:00:03.0/net/eth0");
        assert_int_equal(sysfs_resolve(root_fd, "class/net/eth0", "device", &device), 0);
        assert_string_equal(device, "devices/pci0000:00/0000:00:03.0");
        assert_int_equal(sysfs_exists(root_fd, "class/net/eth0", "device"), 1);
        assert_int_equal(sysfs_exists(root_fd, "class/net/eth0", "phy80211"), 0);
        _cleanup_(freep) char *none = NULL;
        assert_int_equal(sysfs_read_link_basename(root_fd, "class/net/eth0", "mtu", &none), -EINVAL);
        assert_int_equal(sysfs_read_link_basename(root_fd, "class/net/eth0", "nothing", &none), -ENOENT);
}

static void test_list_dir(void **state) {
        _cleanup_(strv_freep) char **l = NULL;

        assert_int_equal(sysfs_list_dir(root_fd, "ports", &l), 0);
        assert_int_equal(strv_length(l), 3);
        assert_string_equal(l[0], "1");
        assert_string_equal(l[1], "2");
        assert_string_equal(l[2], "10");
        _cleanup_(strv_freep) char **missing = NULL;
        assert_int_equal(sysfs_list_dir(root_fd, "nothing", &missing), -ENOENT);
        assert_null(missing);
}

static void test_uevent(void **state) {
        _cleanup_(strv_freep) char **env = NULL;

        assert_int_equal(sysfs_read_uevent(root_fd, "class/net/eth0", &env), 0);
        assert_string_equal(sysfs_uevent_get(env, "INTERFACE"), "eth0");
        assert_string_equal(sysfs_uevent_get(env, "IFINDEX"), "2");
        assert_string_equal(sysfs_uevent_get(env, "DEVTYPE"), "");
        assert_null(sysfs_uevent_get(env, "IFIN"));
        assert_null(sysfs_uevent_get(env, "noequals"));
        assert_null(sysfs_uevent_get(NULL, "X"));
}

static void test_path_join(void **state) {
        _cleanup_(freep) char *a = NULL, *b = NULL, *c = NULL;
        assert_int_equal(sysfs_path_join("a", "b", &a), 0);
        assert_string_equal(a, "a/b");
        assert_int_equal(sysfs_path_join(NULL, "b", &b), 0);
        assert_string_equal(b, "b");
        assert_int_equal(sysfs_path_join("a", "", &c), 0);
        assert_string_equal(c, "a");
        char *d = NULL;
        assert_int_equal(sysfs_path_join(NULL, NULL, &d), -EINVAL);
        char longname[5000];
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        assert_int_equal(sysfs_path_join(longname, "b", &d), -ENAMETOOLONG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_read_values), cmocka_unit_test(test_read_errors),
                cmocka_unit_test(test_stay_in_root), cmocka_unit_test(test_links),
                cmocka_unit_test(test_list_dir),    cmocka_unit_test(test_uevent),
                cmocka_unit_test(test_path_join),
        };
        return cmocka_run_group_tests_name("sysfs", tests, setup, teardown);
}
