/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the CPU cache reader against tests/fixtures/cpu: the last level, its largest
 * instance and all of them together, and what the kernel may not say. */
#include <umockdev.h>

#include "unit-test.h"

#include "sysfs/cpu-cache.h"
#include "sysfs/sysfs.h"

/* Reads one fixture's last-level cache; returns the reader's result. */
static int read_fixture(const char *fixture, SysfsCpuCache *ret) {
        _cleanup_(freep) char *path = NULL;
        UMockdevTestbed *testbed = umockdev_testbed_new();
        GError *error = NULL;
        int fd, r;

        assert_non_null(testbed);
        assert_true(asprintf(&path, "%s/tests/fixtures/cpu/%s", unit_top_dir(), fixture) > 0);
        if (!umockdev_testbed_add_from_file(testbed, path, &error))
                fail_msg("%s: %s", path, error ? error->message : "?");
        char *sys = umockdev_testbed_get_sys_dir(testbed);
        fd = sysfs_root_open(sys);
        assert_true(fd >= 0);
        *ret = (SysfsCpuCache) {};
        r = sysfs_cpu_last_level_cache(fd, ret);
        safe_close(fd);
        g_free(sys);
        g_object_unref(testbed);
        return r;
}

#define KIB UINT64_C(1024)
#define MIB (KIB * 1024)

static void test_this_host(void **state) {
        SysfsCpuCache c;
        assert_int_equal(read_fixture("this-host-2core.umockdev", &c), 0);
        assert_int_equal(c.level, 3);
        assert_true(c.bytes == 32 * MIB && c.total_bytes == 32 * MIB);
        assert_int_equal(c.instances, 1);
}

static void test_chiplets_add_up(void **state) {
        SysfsCpuCache c;
        assert_int_equal(read_fixture("zen4-two-ccds.umockdev", &c), 0);
        assert_int_equal(c.level, 3);
        assert_true(c.bytes == 32 * MIB);
        assert_true(c.total_bytes == 64 * MIB);
        assert_int_equal(c.instances, 2);
}

static void test_hybrid_has_one_last_level(void **state) {
        SysfsCpuCache c;
        /* The E-cores' larger L2 is not the last level. */
        assert_int_equal(read_fixture("hybrid-p-e-cores.umockdev", &c), 0);
        assert_int_equal(c.level, 3);
        assert_true(c.bytes == 24 * MIB && c.total_bytes == 24 * MIB);
        assert_int_equal(c.instances, 1);
}

static void test_without_shared_cpu_list(void **state) {
        SysfsCpuCache c;
        assert_int_equal(read_fixture("arm-l2-no-shared-list.umockdev", &c), 0);
        assert_int_equal(c.level, 2);
        assert_true(c.bytes == 2 * MIB && c.total_bytes == 4 * MIB);
        assert_int_equal(c.instances, 2);
}

static void test_what_the_kernel_may_not_say(void **state) {
        SysfsCpuCache c;
        assert_int_equal(read_fixture("vm-no-cacheinfo.umockdev", &c), -ENOENT);
        assert_int_equal(read_fixture("garbage-size.umockdev", &c), -EINVAL);
}

static void test_size_parse(void **state) {
        uint64_t v;
        assert_int_equal(sysfs_cache_size_parse("32K", &v), 0);
        assert_true(v == 32 * KIB);
        assert_int_equal(sysfs_cache_size_parse("0K", &v), 0);
        assert_true(v == 0);
        static const char *const bad[] = { "", "K", "32", "32k", "32KB", " 32K", "32 K", "-1K", "0x20K", NULL };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (sysfs_cache_size_parse(bad[i], &v) != -EINVAL)
                        fail_msg("accepted \"%s\"", strna(bad[i]));
        assert_int_equal(sysfs_cache_size_parse("99999999999999999999K", &v), -ERANGE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_this_host),
                cmocka_unit_test(test_chiplets_add_up),
                cmocka_unit_test(test_hybrid_has_one_last_level),
                cmocka_unit_test(test_without_shared_cpu_list),
                cmocka_unit_test(test_what_the_kernel_may_not_say),
                cmocka_unit_test(test_size_parse),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
