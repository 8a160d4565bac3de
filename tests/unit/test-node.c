/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the node readers: /proc/meminfo, /proc/cpuinfo of several architectures, and the
 * material-change rule. */
#include "unit-test.h"
#include "daemon/memory.h"
#include "daemon/node.h"

static void test_meminfo(void **state) {
        uint64_t total, available;
        assert_int_equal(meminfo_parse("MemTotal:       24684096 kB\nMemFree:        23000000 kB\n"
                                       "MemAvailable:   24200000 kB\nBuffers:           12345 kB\n",
                                       &total, &available), 0);
        assert_true(total == 24684096ULL * 1024);
        assert_true(available == 24200000ULL * 1024);
        /* Kernels before 3.14: MemFree stands in. */
        assert_int_equal(meminfo_parse("MemTotal: 1000 kB\nMemFree: 500 kB\n", &total, &available), 0);
        assert_true(available == 500 * 1024);
        assert_int_equal(meminfo_parse("MemFree: 500 kB\n", &total, &available), -EBADMSG);
        assert_int_equal(meminfo_parse("", &total, &available), -EBADMSG);
        assert_int_equal(meminfo_parse("garbage\n\n:::\nMemTotal: 1 kB\n", &total, &available), 0);
        assert_int_equal(meminfo_parse("MemTotal: 99999999999999999999 kB\n", &total, &available), -ERANGE);
}

static void test_cpuinfo(void **state) {
        _cleanup_(freep) char *x86 = cpuinfo_model("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                                                   "model name\t: Intel(R) Xeon(R) Processor @ 2.80GHz\nflags\t: fpu\n");
        assert_string_equal(x86, "Intel(R) Xeon(R) Processor @ 2.80GHz");
        _cleanup_(freep) char *riscv = cpuinfo_model("processor\t: 0\nhart\t: 1\nisa\t: rv64imafdc\nuarch\t: sifive,u74-mc\n");
        assert_string_equal(riscv, "sifive,u74-mc");
        _cleanup_(freep) char *ppc = cpuinfo_model("processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n");
        assert_string_equal(ppc, "POWER9 (raw), altivec supported");
        _cleanup_(freep) char *rpi = cpuinfo_model("processor\t: 0\nBogoMIPS\t: 108.00\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n");
        assert_string_equal(rpi, "Raspberry Pi 4 Model B Rev 1.4");
        /* arm64 servers print no model at all. */
        assert_null(cpuinfo_model("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"));
        assert_null(cpuinfo_model("model name\t:   \n"));
        assert_null(cpuinfo_model(""));
}

static void test_material_change(void **state) {
        const uint64_t total = 100ULL << 30;
        /* 1% of 100 GiB is ~1 GiB. */
        assert_false(memory_change_is_material(50ULL << 30, (50ULL << 30) + (512ULL << 20), total, 1));
        assert_true(memory_change_is_material(50ULL << 30, (50ULL << 30) + (2ULL << 30), total, 1));
        assert_true(memory_change_is_material(50ULL << 30, (48ULL << 30), total, 1));
        assert_false(memory_change_is_material(50ULL << 30, 50ULL << 30, total, 0));
        assert_true(memory_change_is_material(50ULL << 30, (50ULL << 30) + 1, total, 0));
        assert_false(memory_change_is_material(10, 90, total, 100));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_meminfo),
                cmocka_unit_test(test_cpuinfo),
                cmocka_unit_test(test_material_change),
        };
        return cmocka_run_group_tests_name("node", tests, NULL, NULL);
}
