/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the health judgement: every threshold on both sides, the power-saving and tunnel traps,
 * and the reasons people read (what, how much, over what time). */
#include <math.h>

#include "unit-test.h"

#include "daemon/health.h"

/* Judges with fn and checks the health and the reason. */
#define JUDGE(fn, facts, want_health, want_reason)                                                         \
        do {                                                                                               \
                HealthVerdict _v = {};                                                                     \
                fn(facts, &_v);                                                                            \
                char *_r = health_verdict_reason(&_v);                                                     \
                assert_non_null(_r);                                                                       \
                if (health_verdict_health(&_v) != (want_health) || strcmp(_r, (want_reason)) != 0)        \
                        fail_msg("got %s \"%s\", wanted %s \"%s\"", health_to_string(health_verdict_health(&_v)), \
                                 _r, health_to_string(want_health), (want_reason));                        \
                free(_r);                                                                                  \
                health_verdict_done(&_v);                                                                  \
        } while (0)

static PciHealthFacts nic(double gts, unsigned width) {
        return (PciHealthFacts) {
                .sampled = true,
                .has_link = true,
                .link = { .gts = gts, .width = width },
                .capable = { .gts = 32, .width = 16 },
                .link_gbps = gts * width * 128 / 130,
                .load = { .traffic_gbps = 0, .gpu_busy_percent = -1 },
                .correctable = 0,
                .nonfatal = 0,
                .fatal = 0,
        };
}

static void test_pci_link(void **state) {
        PciHealthFacts f = nic(32, 16);

        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        /* Width below both ends: degraded at once, busy or not. */
        f = nic(32, 4);
        JUDGE(health_judge_pci, &f, HEALTH_DEGRADED, "trained at 32.0 GT/s x4; both ends support 32.0 GT/s x16");
        /* Speed below, idle: power saving, said as such, not degraded. */
        f = nic(16, 16);
        JUDGE(health_judge_pci, &f, HEALTH_OK,
              "16.0 GT/s x16 while idle, below the 32.0 GT/s both ends support: power saving");
        /* The same link moving a tenth of what it carries: degraded. */
        f.load.traffic_gbps = 90;
        JUDGE(health_judge_pci, &f, HEALTH_DEGRADED, "16.0 GT/s x16 while moving 90 Gb/s; both ends support 32.0 GT/s x16");
        /* Just below a tenth of 252 Gb/s: still idle enough. */
        f.load.traffic_gbps = 25;
        JUDGE(health_judge_pci, &f, HEALTH_OK,
              "16.0 GT/s x16 while idle, below the 32.0 GT/s both ends support: power saving");
}

static void test_pci_gpu(void **state) {
        PciHealthFacts f = nic(2.5, 16);

        f.capable = (PciLink) { .gts = 16, .width = 16 };
        f.load = (HealthLoad) { .traffic_gbps = NAN, .gpu_busy_percent = 0 };
        JUDGE(health_judge_pci, &f, HEALTH_OK, "2.5 GT/s x16 while idle, below the 16.0 GT/s both ends support: power saving");
        f.load.gpu_busy_percent = 97;
        JUDGE(health_judge_pci, &f, HEALTH_DEGRADED, "2.5 GT/s x16 while the GPU is 97 % busy; both ends support 16.0 GT/s x16");
        /* A GPU whose driver does not say how busy it is (NVIDIA): neither idle nor busy. */
        f.load = (HealthLoad) { .traffic_gbps = NAN, .gpu_busy_percent = -1, .gpu = true };
        JUDGE(health_judge_pci, &f, HEALTH_OK,
              "2.5 GT/s x16, below the 16.0 GT/s both ends support: power saving if idle (how busy the device is "
              "cannot be told)");
}

static void test_pci_never_judged(void **state) {
        PciHealthFacts f = nic(2.5, 1);

        /* A USB4 tunnel's fixed 2.5 GT/s x1 says nothing, even busy. */
        f.tunnel = true;
        f.load.traffic_gbps = 30;
        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        /* An SR-IOV VF: Unknown speed, x0. */
        f = nic(0, 0);
        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        /* A root port (its link is judged at the device) or an integrated function. */
        f = nic(8, 4);
        f.has_link = false;
        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        /* Not sampled yet. */
        f.sampled = false;
        JUDGE(health_judge_pci, &f, HEALTH_UNKNOWN, "not sampled yet");
}

static void test_pci_flapping(void **state) {
        PciHealthFacts f = nic(32, 16);

        f.speed_changes = HEALTH_FLAP_CHANGES - 1;
        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        f.speed_changes = 1415;
        JUDGE(health_judge_pci, &f, HEALTH_FLAPPING, "1,415 speed changes in the last 2 min");
        f.speed_changes = 0;
        f.width_changes = 5;
        JUDGE(health_judge_pci, &f, HEALTH_FLAPPING, "5 width changes in the last 2 min");
        f.speed_changes = 3;
        JUDGE(health_judge_pci, &f, HEALTH_FLAPPING, "3 speed and 5 width changes in the last 2 min");
}

static void test_pci_errors(void **state) {
        PciHealthFacts f = nic(32, 16);

        f.correctable = HEALTH_ERRORS_PER_WINDOW - 1;
        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        f.correctable = 37;
        f.correctable_kinds = "Receiver Error";
        JUDGE(health_judge_pci, &f, HEALTH_ERRORS, "37 correctable AER errors (Receiver Error) in the last minute");
        /* Any uncorrectable error, fatal first; errors before flapping before degraded. */
        f.fatal = 1;
        f.link = (PciLink) { .gts = 32, .width = 8 };
        f.speed_changes = 6;
        JUDGE(health_judge_pci, &f, HEALTH_ERRORS,
              "1 fatal AER error in the last minute; 37 correctable AER errors (Receiver Error) in the last minute; "
              "6 speed changes in the last 2 min; trained at 32.0 GT/s x8; both ends support 32.0 GT/s x16");
        /* A device without AER: unknown counters are no errors. */
        f = nic(32, 16);
        f.correctable = f.nonfatal = f.fatal = COUNTER_UNKNOWN;
        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        f.nonfatal = 2;
        JUDGE(health_judge_pci, &f, HEALTH_ERRORS, "2 non-fatal uncorrectable AER errors in the last minute");
}

static void test_power_saving_changes(void **state) {
        PciLink a = { .gts = 2.5, .width = 16 }, b = { .gts = 16, .width = 16 }, c = { .gts = 8, .width = 16 },
                d = { .gts = 16, .width = 8 };

        assert_true(health_pci_change_is_power_saving(&a, &b));
        assert_true(health_pci_change_is_power_saving(&b, &a));
        assert_false(health_pci_change_is_power_saving(&b, &c)); /* 16 -> 8: a retrain */
        assert_false(health_pci_change_is_power_saving(&b, &d)); /* the width moved */
        assert_false(health_pci_change_is_power_saving(&b, &b));
}

static void test_link(void **state) {
        LinkHealthFacts f = { .sampled = true };

        JUDGE(health_judge_link, &f, HEALTH_OK, "");
        f.crc_errors = 12;
        f.carrier_changes = 8;
        JUDGE(health_judge_link, &f, HEALTH_ERRORS, "12 CRC errors in the last minute; 8 carrier changes in the last 2 min");
        f.crc_errors = 1;
        JUDGE(health_judge_link, &f, HEALTH_FLAPPING, "8 carrier changes in the last 2 min");
        f.crc_errors = COUNTER_UNKNOWN;
        JUDGE(health_judge_link, &f, HEALTH_UNKNOWN, "the kernel gives no statistics");
        f.sampled = false;
        JUDGE(health_judge_link, &f, HEALTH_UNKNOWN, "not sampled yet");
}

/* The structural fact from both ends' link modes is an input: Health says it word for word, with or
 * without samples, and a graver health stands above it. */
static void test_link_degraded(void **state) {
        const char *why = "10000 Mb/s while both ends support 25000 Mb/s";
        LinkHealthFacts f = { .degraded = true, .degraded_reason = why };

        JUDGE(health_judge_link, &f, HEALTH_DEGRADED, why); /* not sampled: no "unknown" beside it */
        f.sampled = true;
        JUDGE(health_judge_link, &f, HEALTH_DEGRADED, why);
        /* Graver verdicts come first; the structural reason stays in the list after them. */
        f.carrier_changes = 8;
        JUDGE(health_judge_link, &f, HEALTH_FLAPPING,
              "8 carrier changes in the last 2 min; 10000 Mb/s while both ends support 25000 Mb/s");
        f.crc_errors = 12;
        JUDGE(health_judge_link, &f, HEALTH_ERRORS,
              "12 CRC errors in the last minute; 8 carrier changes in the last 2 min; 10000 Mb/s while both ends "
              "support 25000 Mb/s");
        f = (LinkHealthFacts) { .degraded = true, .sampled = true };
        JUDGE(health_judge_link, &f, HEALTH_DEGRADED, "trained below what both ends support");
}

static void test_rdma(void **state) {
        RdmaHealthFacts f = { .sampled = true, .any_counter = true, .device = "mlx5_0", .port = 1 };

        JUDGE(health_judge_rdma, &f, HEALTH_OK, "");
        f.symbol_errors = 250;
        JUDGE(health_judge_rdma, &f, HEALTH_ERRORS, "250 symbol errors in the last minute");
        f.symbol_errors = COUNTER_UNKNOWN; /* a missing file is no error */
        f.link_downed = 1;
        f.link_recoveries = 4;
        JUDGE(health_judge_rdma, &f, HEALTH_FLAPPING, "1 link down and 4 link error recoveries in the last 2 min");
        f.link_downed = f.link_recoveries = 0;
        f.fallback = true;
        f.ip_gbps = 42.2;
        JUDGE(health_judge_rdma, &f, HEALTH_OK,
              "42 Gb/s over TCP/IP and none over RDMA on mlx5_0 port 1: a job may have fallen back to sockets");
        f.any_counter = false;
        JUDGE(health_judge_rdma, &f, HEALTH_UNKNOWN, "the port has no counters");
}

static void test_thunderbolt(void **state) {
        TbtHealthFacts f = { .has_link = true };

        JUDGE(health_judge_thunderbolt, &f, HEALTH_OK, "");
        f.degraded = true;
        f.degraded_reason = "both ends have two lanes but the link came up on one";
        JUDGE(health_judge_thunderbolt, &f, HEALTH_DEGRADED, "both ends have two lanes but the link came up on one");
        f.changes = 6;
        JUDGE(health_judge_thunderbolt, &f, HEALTH_FLAPPING,
              "6 link changes (rate, lanes or replugs) in the last 2 min; both ends have two lanes but the link came up "
              "on one");
        f = (TbtHealthFacts) { .has_link = false, .changes = 100 };
        JUDGE(health_judge_thunderbolt, &f, HEALTH_OK, "");
}

static void test_format(void **state) {
        char buf[32];

        assert_string_equal(health_format_count(0, buf, sizeof(buf)), "0");
        assert_string_equal(health_format_count(999, buf, sizeof(buf)), "999");
        assert_string_equal(health_format_count(1000, buf, sizeof(buf)), "1,000");
        assert_string_equal(health_format_count(1234567, buf, sizeof(buf)), "1,234,567");
        assert_string_equal(health_format_count(UINT64_MAX, buf, sizeof(buf)), "18,446,744,073,709,551,615");
        assert_string_equal(health_format_count(1234567, buf, 4), "1,2");
        assert_string_equal(health_format_gbps(42.2, buf, sizeof(buf)), "42 Gb/s");
        assert_string_equal(health_format_gbps(4.24, buf, sizeof(buf)), "4.2 Gb/s");
        assert_string_equal(health_format_gbps(0.424, buf, sizeof(buf)), "0.42 Gb/s");
        assert_string_equal(health_format_gbps(NAN, buf, sizeof(buf)), "? Gb/s");
        assert_int_equal(health_from_string("flapping"), HEALTH_FLAPPING);
        assert_int_equal(health_from_string("fine"), _HEALTH_INVALID);
        assert_string_equal(health_to_string(HEALTH_UNKNOWN), "unknown");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pci_link),          cmocka_unit_test(test_pci_gpu),
                cmocka_unit_test(test_pci_never_judged),  cmocka_unit_test(test_pci_flapping),
                cmocka_unit_test(test_pci_errors),        cmocka_unit_test(test_power_saving_changes),
                cmocka_unit_test(test_link),              cmocka_unit_test(test_link_degraded),
                cmocka_unit_test(test_rdma),
                cmocka_unit_test(test_thunderbolt),       cmocka_unit_test(test_format),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
