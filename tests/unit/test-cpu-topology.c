/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the CPU package and NUMA node reader against tests/fixtures/cpu/topology-*.umockdev
 * (made by hand: what kernels write and leave out) and the real machines' trees (realdata-*): which
 * packages, their CPUs, cores and NUMA nodes, and what is not the kernel's. */
#include <umockdev.h>

#include "unit-test.h"

#include "sysfs/cpu-topology.h"
#include "sysfs/sysfs.h"

/* Reads one fixture (relative to tests/fixtures) into t; returns the reader's result. */
static int read_fixture(const char *fixture, SysfsCpuTopology *t) {
        _cleanup_(freep) char *path = NULL;
        UMockdevTestbed *testbed = umockdev_testbed_new();
        GError *error = NULL;
        int fd, r;

        assert_non_null(testbed);
        assert_true(asprintf(&path, "%s/tests/fixtures/%s", unit_top_dir(), fixture) > 0);
        if (!umockdev_testbed_add_from_file(testbed, path, &error))
                fail_msg("%s: %s", path, error ? error->message : "?");
        char *sys = umockdev_testbed_get_sys_dir(testbed);
        fd = sysfs_root_open(sys);
        assert_true(fd >= 0);
        r = sysfs_cpu_topology_read(fd, t);
        safe_close(fd);
        g_free(sys);
        g_object_unref(testbed);
        return r;
}

static void assert_package(const SysfsCpuPackage *p, uint32_t id, const char *cpus, unsigned n_cpus, unsigned cores,
                           const uint32_t *nodes, size_t n_nodes) {
        assert_int_equal(p->id, id);
        assert_string_equal(p->cpus, cpus);
        assert_int_equal(p->n_cpus, n_cpus);
        assert_int_equal(p->cores, cores);
        assert_int_equal(p->n_numa_nodes, n_nodes);
        for (size_t i = 0; i < n_nodes; i++)
                assert_int_equal(p->numa_nodes[i], nodes[i]);
}

static void test_one_package(void **state) {
        SysfsCpuTopology t;
        assert_int_equal(read_fixture("cpu/topology-one-package.umockdev", &t), 0);
        assert_int_equal(t.n_packages, 1);
        /* Eight CPUs, two threads on each of four cores. */
        assert_package(&t.packages[0], 0, "0-7", 8, 4, (const uint32_t[]) { 0 }, 1);
        assert_int_equal(t.n_numa_nodes, 1);
        assert_string_equal(t.numa_nodes[0].cpus, "0-7");
        assert_int_equal(t.unplaced_cpus, 0);
        sysfs_cpu_topology_done(&t);
}

static void test_two_packages_four_nodes(void **state) {
        SysfsCpuTopology t;
        assert_int_equal(read_fixture("cpu/topology-two-packages-four-nodes.umockdev", &t), 0);
        assert_int_equal(t.n_packages, 2);
        assert_package(&t.packages[0], 0, "0-7", 8, 8, (const uint32_t[]) { 0, 1 }, 2);
        assert_package(&t.packages[1], 1, "8-15", 8, 8, (const uint32_t[]) { 2, 3 }, 2);
        assert_int_equal(t.n_numa_nodes, 4);
        assert_int_equal(t.numa_nodes[3].id, 3);
        assert_string_equal(t.numa_nodes[3].cpus, "12-15");
        sysfs_cpu_topology_done(&t);
}

static void test_offline_cpus(void **state) {
        SysfsCpuTopology t;
        /* cpu2 (online 0, no topology/), cpu3 (package -1, an old kernel's offline CPU) and cpu5 (online 0
         * with its topology/ left) are in no package. */
        assert_int_equal(read_fixture("cpu/topology-offline-cpus.umockdev", &t), 0);
        assert_int_equal(t.n_packages, 1);
        assert_package(&t.packages[0], 0, "0-1,4", 3, 3, (const uint32_t[]) { 0 }, 1);
        assert_int_equal(t.unplaced_cpus, 3);
        sysfs_cpu_topology_done(&t);
}

static void test_missing_files(void **state) {
        SysfsCpuTopology t;
        /* No NUMA nodes at all; cores told apart by thread_siblings_list, then by die and core number. */
        assert_int_equal(read_fixture("cpu/topology-missing-files.umockdev", &t), 0);
        assert_int_equal(t.n_numa_nodes, 0);
        assert_int_equal(t.n_packages, 1);
        assert_package(&t.packages[0], 0, "0-3", 4, 3, NULL, 0);
        assert_int_equal(t.unplaced_cpus, 1);
        sysfs_cpu_topology_done(&t);

        /* No devices/system/cpu: nothing to say. */
        assert_int_equal(read_fixture("cpu/../pci/workstation-x8.umockdev", &t), -ENOENT);
        assert_int_equal(t.n_packages, 0);
}

static void test_garbage(void **state) {
        SysfsCpuTopology t;
        assert_int_equal(read_fixture("cpu/topology-garbage.umockdev", &t), -EINVAL);
        assert_true(t.n_packages == 0 && t.packages == NULL && t.numa_nodes == NULL);
        assert_int_equal(read_fixture("cpu/topology-garbage-cpulist.umockdev", &t), -EINVAL);
        assert_true(t.n_packages == 0 && t.numa_nodes == NULL);
}

static void test_real_machines(void **state) {
        SysfsCpuTopology t;

        /* Dell PowerEdge R910: four Xeon E7-4870, each its own NUMA node, the CPUs dealt round-robin. */
        assert_int_equal(read_fixture("pci/realdata-dell-r910-qib.umockdev", &t), 0);
        assert_int_equal(t.n_packages, 4);
        assert_package(&t.packages[0], 0, "0,4,8,12,16,20,24,28,32,36", 10, 10, (const uint32_t[]) { 0 }, 1);
        assert_package(&t.packages[3], 3, "3,7,11,15,19,23,27,31,35,39", 10, 10, (const uint32_t[]) { 3 }, 1);
        assert_int_equal(t.n_numa_nodes, 4);
        sysfs_cpu_topology_done(&t);

        /* Supermicro 4029GP: two Xeon Silver 4108 of 8 cores with 2 threads (core_cpus_list "0,16"). */
        assert_int_equal(read_fixture("pci/realdata-supermicro-4029gp.umockdev", &t), 0);
        assert_int_equal(t.n_packages, 2);
        assert_package(&t.packages[0], 0, "0-7,16-23", 16, 8, (const uint32_t[]) { 0 }, 1);
        assert_package(&t.packages[1], 1, "8-15,24-31", 16, 8, (const uint32_t[]) { 1 }, 1);
        sysfs_cpu_topology_done(&t);

        /* POWER9 with V100s: the GPUs' memory as six NUMA nodes without CPUs, in no package; hwloc kept
         * 16 of each package's CPUs (SMT4: four cores); packages and nodes are numbered 0 and 8. */
        assert_int_equal(read_fixture("cpu/realdata-power9-v100-numanodes.umockdev", &t), 0);
        assert_int_equal(t.n_packages, 2);
        assert_int_equal(t.packages[1].id, 8);
        assert_int_equal(t.packages[0].n_cpus, 16);
        assert_int_equal(t.packages[0].cores, 4);
        assert_int_equal(t.n_numa_nodes, 8);
        assert_int_equal(t.numa_nodes[2].id, 250);
        assert_string_equal(t.numa_nodes[2].cpus, "");
        assert_package(&t.packages[0], 0, "0-15", 16, 4, (const uint32_t[]) { 0 }, 1);
        assert_package(&t.packages[1], 8, "88-103", 16, 4, (const uint32_t[]) { 8 }, 1);
        sysfs_cpu_topology_done(&t);
}

static void test_cpulist(void **state) {
        _cleanup_(freep) char *a = sysfs_cpulist_format((const unsigned[]) { 0, 1, 2, 4, 6, 7 }, 6),
                              *b = sysfs_cpulist_format(NULL, 0), *c = sysfs_cpulist_format((const unsigned[]) { 9 }, 1);
        assert_string_equal(a, "0-2,4,6-7");
        assert_string_equal(b, "");
        assert_string_equal(c, "9");
        assert_true(sysfs_cpulist_contains("0-3,8", 8));
        assert_true(sysfs_cpulist_contains("0-3,8", 2));
        assert_false(sysfs_cpulist_contains("0-3,8", 4));
        assert_false(sysfs_cpulist_contains("", 0));
        assert_false(sysfs_cpulist_contains("x", 0));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_one_package),
                cmocka_unit_test(test_two_packages_four_nodes),
                cmocka_unit_test(test_offline_cpus),
                cmocka_unit_test(test_missing_files),
                cmocka_unit_test(test_garbage),
                cmocka_unit_test(test_real_machines),
                cmocka_unit_test(test_cpulist),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
