/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for what the watch reads over time: a PCI function's trained link, its AER files (the
 * names of current and of older kernels, garbage, a missing total, counts beyond 64 bits), a GPU's
 * load (a suspended GPU is not woken), and an RDMA port's counters (data in 4-byte words, files and
 * directories missing, garbage). A tree shaped like sysfs in a temporary directory. */
#include <sys/stat.h>

#include "unit-test.h"

#include "shared/string-util.h"
#include "sysfs/watched.h"
#include "sysfs/sysfs.h"

static UnitTree tree;
static int root_fd = -EBADF;

#define GPU "devices/pci0000:00/0000:00:01.1/0000:01:00.0"
#define PORT "class/infiniband/mlx5_0/ports/1"

static void put(const char *dir, const char *attr, const char *content) {
        unit_tree_write(&tree, dir, attr, content);
}

static void rm(const char *dir, const char *attr) {
        unit_tree_unlink(&tree, dir, attr);
}

static int setup(void **state) {
        if (unit_tree_new(&tree, "sysfs-watch") < 0)
                return -1;
        put(PORT "/counters", ".keep", "");
        put("class/infiniband/rxe0/ports/1", ".keep", "");
        root_fd = tree.fd;
        return 0;
}

static int teardown(void **state) {
        return unit_tree_remove(&tree);
}

static void test_current_link(void **state) {
        PciLink l;

        put(GPU, "current_link_speed", "16.0 GT/s PCIe\n");
        put(GPU, "current_link_width", "8\n");
        assert_int_equal(pci_read_current_link(root_fd, GPU, &l), 0);
        assert_true(l.gts == 16 && l.width == 8 && l.generation == 4);
        /* What an SR-IOV VF says: known to be unknown. */
        put(GPU, "current_link_speed", "Unknown\n");
        put(GPU, "current_link_width", "0\n");
        assert_int_equal(pci_read_current_link(root_fd, GPU, &l), 0);
        assert_true(l.gts == 0 && l.width == 0);
        /* A D3cold device answers all ones: width 63 is no width. */
        put(GPU, "current_link_width", "63\n");
        assert_int_equal(pci_read_current_link(root_fd, GPU, &l), -ERANGE);
        put(GPU, "current_link_speed", "fast\n");
        put(GPU, "current_link_width", "8\n");
        assert_int_equal(pci_read_current_link(root_fd, GPU, &l), -EINVAL);
        /* A conventional PCI device, or one that went away. */
        assert_int_equal(pci_read_current_link(root_fd, "devices/pci0000:00/0000:00:1f.0", &l), -ENOENT);
        assert_int_equal(pci_read_current_link(root_fd, NULL, &l), -EINVAL);
}

static void test_aer_parse(void **state) {
        PciAerCounters c;

        assert_int_equal(pci_aer_parse("Receiver Error 2\nBad TLP 0\nBad DLLP 0\nRELAY_NUM Rollover 0\n"
                                       "Replay Timer Timeout 0\nAdvisory Non-Fatal 0\nCorrected Internal Error 0\n"
                                       "Header Log Overflow 0\nTOTAL_ERR_COR 2\n",
                                       PCI_AER_CORRECTABLE, &c),
                         0);
        assert_int_equal(c.total, 2);
        assert_int_equal(c.n_kinds, 8);
        assert_string_equal(c.kinds[0].name, "Receiver Error");
        assert_int_equal(c.kinds[0].count, 2);
        assert_string_equal(c.kinds[3].name, "RELAY_NUM Rollover");
        /* Older kernels' names. */
        assert_int_equal(pci_aer_parse("RxErr 37\nBad TLP 1\nTOTAL_ERR_COR 38", PCI_AER_CORRECTABLE, &c), 0);
        assert_string_equal(c.kinds[0].name, "RxErr");
        assert_int_equal(c.total, 38);
        assert_int_equal(pci_aer_parse("Undefined 0\nDLP 1\nTOTAL_ERR_FATAL 1\n", PCI_AER_FATAL, &c), 0);
        assert_int_equal(c.total, 1);
        assert_int_equal(pci_aer_parse("TOTAL_ERR_NONFATAL 0\n", PCI_AER_NONFATAL, &c), 0);
        assert_int_equal(c.n_kinds, 0);

        /* The wrong total, none, garbage, something after the total, a count beyond 64 bits. */
        assert_int_equal(pci_aer_parse("RxErr 1\nTOTAL_ERR_FATAL 1\n", PCI_AER_CORRECTABLE, &c), -EINVAL);
        assert_int_equal(pci_aer_parse("RxErr 1\n", PCI_AER_CORRECTABLE, &c), -EINVAL);
        assert_int_equal(pci_aer_parse("", PCI_AER_CORRECTABLE, &c), -EINVAL);
        assert_int_equal(pci_aer_parse("RxErr lots\nTOTAL_ERR_COR 1\n", PCI_AER_CORRECTABLE, &c), -EINVAL);
        assert_int_equal(pci_aer_parse("12\nTOTAL_ERR_COR 1\n", PCI_AER_CORRECTABLE, &c), -EINVAL);
        assert_int_equal(pci_aer_parse("TOTAL_ERR_COR 1\nRxErr 1\n", PCI_AER_CORRECTABLE, &c), -EINVAL);
        assert_int_equal(pci_aer_parse("RxErr 99999999999999999999999\nTOTAL_ERR_COR 1\n", PCI_AER_CORRECTABLE, &c),
                         -ERANGE);
        assert_int_equal(pci_aer_parse("TOTAL_ERR_COR 18446744073709551615\n", PCI_AER_CORRECTABLE, &c), -ERANGE);
        assert_int_equal(pci_aer_parse("Bad\x01Name 1\nTOTAL_ERR_COR 1\n", PCI_AER_CORRECTABLE, &c), -EINVAL);
        assert_int_equal(pci_aer_parse(NULL, PCI_AER_CORRECTABLE, &c), -EINVAL);

        /* More kinds than kept: the total still counts them all. */
        _cleanup_(freep) char *many = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&many, &len);
        for (int i = 0; i < PCI_AER_KINDS_MAX + 5; i++)
                fprintf(f, "Kind %d 1\n", i);
        fprintf(f, "TOTAL_ERR_COR %d\n", PCI_AER_KINDS_MAX + 5);
        fclose(f);
        assert_int_equal(pci_aer_parse(many, PCI_AER_CORRECTABLE, &c), 0);
        assert_int_equal(c.n_kinds, PCI_AER_KINDS_MAX);
        assert_int_equal(c.total, PCI_AER_KINDS_MAX + 5);
}

static void test_aer_read(void **state) {
        PciAerCounters c;

        put(GPU, "aer_dev_correctable", "Receiver Error 5\nTOTAL_ERR_COR 5\n");
        assert_int_equal(pci_aer_read(root_fd, GPU, PCI_AER_CORRECTABLE, &c), 0);
        assert_int_equal(c.total, 5);
        /* A kernel before 4.19, or a device without AER. */
        assert_int_equal(pci_aer_read(root_fd, GPU, PCI_AER_FATAL, &c), -ENOENT);
        put(GPU, "aer_dev_nonfatal", "\x00\x01");
        assert_int_equal(pci_aer_read(root_fd, GPU, PCI_AER_NONFATAL, &c), -EINVAL);
        assert_string_equal(pci_aer_severity_to_attribute(PCI_AER_NONFATAL), "aer_dev_nonfatal");
}

static void test_gpu_busy(void **state) {
        int busy = -1;

        assert_int_equal(pci_read_gpu_busy(root_fd, GPU, &busy), -ENOENT);
        put(GPU, "gpu_busy_percent", "97\n");
        put(GPU "/power", "runtime_status", "active\n");
        assert_int_equal(pci_read_gpu_busy(root_fd, GPU, &busy), 0);
        assert_int_equal(busy, 97);
        /* Suspended: idle, and gpu_busy_percent is not read (it would wake the GPU on some kernels). */
        put(GPU, "gpu_busy_percent", "garbage\n");
        put(GPU "/power", "runtime_status", "suspended\n");
        busy = -1;
        assert_int_equal(pci_read_gpu_busy(root_fd, GPU, &busy), 0);
        assert_int_equal(busy, 0);
        put(GPU "/power", "runtime_status", "active\n");
        assert_int_equal(pci_read_gpu_busy(root_fd, GPU, &busy), -EINVAL);
        put(GPU, "gpu_busy_percent", "101\n");
        assert_int_equal(pci_read_gpu_busy(root_fd, GPU, &busy), -ERANGE);
        rm(GPU, "gpu_busy_percent");
}

static void test_infiniband_counters(void **state) {
        InfinibandCounters c;

        put(PORT "/counters", "symbol_error", "3\n");
        put(PORT "/counters", "link_error_recovery", "0\n");
        put(PORT "/counters", "link_downed", "1\n");
        put(PORT "/counters", "port_rcv_errors", "14\n");
        put(PORT "/counters", "port_xmit_discards", "0\n");
        put(PORT "/counters", "port_rcv_data", "230539874932483\n");
        put(PORT "/counters", "port_xmit_data", "1000\n");
        assert_int_equal(infiniband_port_counters_read(root_fd, "mlx5_0", 1, &c), _INFINIBAND_COUNTER_MAX);
        assert_int_equal(c.value[INFINIBAND_SYMBOL_ERROR], 3);
        assert_int_equal(c.value[INFINIBAND_PORT_RCV_ERRORS], 14);
        /* Data counts 4-byte words: in bytes here. */
        assert_int_equal(c.value[INFINIBAND_PORT_RCV_DATA], UINT64_C(922159499729932));
        assert_int_equal(c.value[INFINIBAND_PORT_XMIT_DATA], 4000);

        /* Garbage, a word count that cannot be bytes, a file missing on an older kernel: those
         * counters unknown, the others read. */
        put(PORT "/counters", "symbol_error", "N/A\n");
        put(PORT "/counters", "port_rcv_data", "18446744073709551614\n");
        rm(PORT "/counters", "link_downed");
        assert_int_equal(infiniband_port_counters_read(root_fd, "mlx5_0", 1, &c), _INFINIBAND_COUNTER_MAX - 3);
        assert_int_equal(c.value[INFINIBAND_SYMBOL_ERROR], INFINIBAND_COUNTER_UNKNOWN);
        assert_int_equal(c.value[INFINIBAND_PORT_RCV_DATA], INFINIBAND_COUNTER_UNKNOWN);
        assert_int_equal(c.value[INFINIBAND_LINK_DOWNED], INFINIBAND_COUNTER_UNKNOWN);
        assert_int_equal(c.value[INFINIBAND_PORT_RCV_ERRORS], 14);

        /* A soft device without counters; a port that went away; names that are not one. */
        assert_int_equal(infiniband_port_counters_read(root_fd, "rxe0", 1, &c), 0);
        assert_int_equal(c.value[INFINIBAND_SYMBOL_ERROR], INFINIBAND_COUNTER_UNKNOWN);
        assert_int_equal(infiniband_port_counters_read(root_fd, "mlx5_0", 2, &c), -ENODEV);
        assert_int_equal(infiniband_port_counters_read(root_fd, "../mlx5_0", 1, &c), -EINVAL);
        assert_int_equal(infiniband_port_counters_read(root_fd, "", 1, &c), -EINVAL);
        assert_string_equal(infiniband_counter_to_string(INFINIBAND_PORT_XMIT_DISCARDS), "port_xmit_discards");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_current_link), cmocka_unit_test(test_aer_parse),
                cmocka_unit_test(test_aer_read),     cmocka_unit_test(test_gpu_busy),
                cmocka_unit_test(test_infiniband_counters),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
