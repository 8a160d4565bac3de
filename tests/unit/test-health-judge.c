/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the health judgement: every threshold on both sides, the power-saving and tunnel traps,
 * and the reasons people read (what, how much, over what time). */
#include <math.h>

#include "unit-test.h"

#include "daemon/health.h"

/* One verdict: Degraded (a degraded reason in the verdict) exactly when Health is degraded, unless a
 * graver health (errors, flapping) stands. */
static void assert_one_verdict(const HealthVerdict *v) {
        Health h = health_verdict_health(v);
        bool degraded = health_verdict_degraded(v);

        if (h == HEALTH_DEGRADED)
                assert_true(degraded);
        if (degraded)
                assert_true(h == HEALTH_DEGRADED || h == HEALTH_ERRORS || h == HEALTH_FLAPPING);
}

/* Judges with fn and checks the health and the reason, and that Degraded agrees. */
#define JUDGE(fn, facts, want_health, want_reason)                                                         \
        do {                                                                                               \
                HealthVerdict _v = {};                                                                     \
                fn(facts, &_v);                                                                            \
                char *_r = health_verdict_reason(&_v);                                                     \
                assert_non_null(_r);                                                                       \
                if (health_verdict_health(&_v) != (want_health) || strcmp(_r, (want_reason)) != 0)        \
                        fail_msg("got %s \"%s\", wanted %s \"%s\"", health_to_string(health_verdict_health(&_v)), \
                                 _r, health_to_string(want_health), (want_reason));                        \
                assert_one_verdict(&_v);                                                                   \
                free(_r);                                                                                  \
                health_verdict_done(&_v);                                                                  \
        } while (0)

/* The structural fact pci-tree.c computes: below what both ends support. */
static void trained(PciHealthFacts *f) {
        f->trained_low = (f->link.gts > 0 && f->capable.gts > 0 && f->link.gts < f->capable.gts) ||
                         (f->link.width > 0 && f->capable.width > 0 && f->link.width < f->capable.width);
}

static PciHealthFacts nic(double gts, unsigned width) {
        PciHealthFacts f = {
                .sampled = true,
                .watched = true,
                .has_link = true,
                .link = { .gts = gts, .width = width },
                .capable = { .gts = 32, .width = 16 },
                .link_gbps = gts * width * 128 / 130,
                .load = { .traffic_gbps = 0, .gpu_busy_percent = -1 },
                .correctable = 0,
                .nonfatal = 0,
                .fatal = 0,
        };
        trained(&f);
        return f;
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
        trained(&f);
        f.load = (HealthLoad) { .traffic_gbps = NAN, .gpu_busy_percent = 0 };
        JUDGE(health_judge_pci, &f, HEALTH_OK, "2.5 GT/s x16 while idle, below the 16.0 GT/s both ends support: power saving");
        f.load.gpu_busy_percent = 97;
        JUDGE(health_judge_pci, &f, HEALTH_DEGRADED, "2.5 GT/s x16 while the GPU is 97 % busy; both ends support 16.0 GT/s x16");
        /* A GPU whose driver does not say how busy it is (NVIDIA): at 2.5 GT/s, where GPUs park their link,
         * power saving; at any other speed below its best, degraded (no GPU parks there). */
        f.load = (HealthLoad) { .traffic_gbps = NAN, .gpu_busy_percent = -1, .gpu = true };
        JUDGE(health_judge_pci, &f, HEALTH_OK,
              "2.5 GT/s x16, below the 16.0 GT/s both ends support: a GPU parks its link there when idle, power "
              "saving (how busy it is cannot be told)");
        f.link.gts = 8;
        JUDGE(health_judge_pci, &f, HEALTH_DEGRADED,
              "trained at 8.0 GT/s x16; both ends support 16.0 GT/s x16 (how busy the device is cannot be told, and "
              "it does not park its link to save power)");
}

/* The reviewer's testbeds: an HCA at 8 GT/s x16 in a 16 GT/s x16 slot whose traffic is unknown, and the
 * root port above an HCA that trained x8. Both are degraded, with the reason, on both ends. */
static void test_pci_hca_and_its_port(void **state) {
        PciHealthFacts f = nic(8, 16);

        f.capable = (PciLink) { .gts = 16, .width = 16 };
        trained(&f);
        f.load.traffic_gbps = NAN;
        JUDGE(health_judge_pci, &f, HEALTH_DEGRADED,
              "trained at 8.0 GT/s x16; both ends support 16.0 GT/s x16 (how busy the device is cannot be told, and "
              "it does not park its link to save power)");

        PciHealthFacts port = { .sampled = true, .watched = true, .below_address = "0000:41:00.0" };
        port.below = (PciLinkFacts) { .link = { .gts = 16, .width = 8 }, .capable = { .gts = 16, .width = 16 },
                                      .link_gbps = 126, .load = { .traffic_gbps = 0, .gpu_busy_percent = -1 } };
        JUDGE(health_judge_pci, &port, HEALTH_DEGRADED,
              "the link below, to 0000:41:00.0: trained at 16.0 GT/s x8; both ends support 16.0 GT/s x16");
        /* The link below idle at a lower speed: power saving on the port as on the device. */
        port.below.link = (PciLink) { .gts = 8, .width = 16 };
        JUDGE(health_judge_pci, &port, HEALTH_OK,
              "the link below, to 0000:41:00.0: 8.0 GT/s x16 while idle, below the 16.0 GT/s both ends support: "
              "power saving");
}

/* Before the first sample how busy a device is is not known yet: a width below both ends is judged at
 * once, a speed waits for the sample. Without the watch it never comes: the speed is judged then as
 * with an unknown load. */
static void test_pci_before_the_first_sample(void **state) {
        PciHealthFacts f = nic(32, 8);

        f.sampled = false;
        JUDGE(health_judge_pci, &f, HEALTH_DEGRADED,
              "trained at 32.0 GT/s x8; both ends support 32.0 GT/s x16; not sampled yet");
        f = nic(16, 16);
        f.sampled = false;
        JUDGE(health_judge_pci, &f, HEALTH_UNKNOWN, "not sampled yet");
        f.watched = false;
        f.load.traffic_gbps = NAN;
        JUDGE(health_judge_pci, &f, HEALTH_DEGRADED,
              "trained at 16.0 GT/s x16; both ends support 32.0 GT/s x16 (how busy the device is cannot be told, and "
              "it does not park its link to save power); not sampled yet");
}

static void test_verdict_degraded(void **state) {
        HealthVerdict v = {};
        _cleanup_(freep) char *reason = NULL, *none = NULL;

        health_verdict_add(&v, HEALTH_OK, "16.0 GT/s x16 while idle: power saving");
        assert_false(health_verdict_degraded(&v));
        none = health_verdict_degraded_reason(&v);
        assert_string_equal(none, "");
        health_verdict_add(&v, HEALTH_ERRORS, "37 CRC errors in the last minute");
        health_verdict_add(&v, HEALTH_DEGRADED, "trained at x8");
        health_verdict_add(&v, HEALTH_DEGRADED, "the link below, to 0000:41:00.0: trained at x4");
        assert_true(health_verdict_degraded(&v));
        reason = health_verdict_degraded_reason(&v);
        assert_string_equal(reason, "trained at x8; the link below, to 0000:41:00.0: trained at x4");
        /* The watch off: what structure says stands, nothing else. */
        health_verdict_keep_degraded(&v);
        assert_int_equal(v.n, 2);
        assert_int_equal(health_verdict_health(&v), HEALTH_DEGRADED);
        health_verdict_done(&v);
}

/* The fallback rule, sample by sample (every 2 s): 5 samples in a row of IP traffic with no RDMA. */
static void test_rdma_fallback(void **state) {
        const uint64_t s = USEC_PER_SEC, interval = 2 * USEC_PER_SEC;
        RdmaFallback state_ = {};
        RdmaTraffic roce = { .port_rx_gbps = 0.01, .port_tx_gbps = 0, .ip_rx_gbps = 20, .ip_tx_gbps = 3 };

        assert_true(health_rdma_ip_gbps(&roce) == 20);
        for (unsigned i = 0; i < health_limits_default.fallback_samples - 1; i++)
                assert_false(health_rdma_fallback(&state_, &roce, NULL, (100 + 2 * i) * s, interval));
        assert_true(health_rdma_fallback(&state_, &roce, NULL, (100 + 2 * (health_limits_default.fallback_samples - 1)) * s, interval));
        assert_true(state_.suspected);
        /* RDMA moves again (5 % of the IP traffic): the suspicion ends at once, and starts over. */
        roce.port_rx_gbps = 1.0;
        assert_false(health_rdma_fallback(&state_, &roce, NULL, 200 * s, interval));
        assert_int_equal(state_.since, 0);
        /* Below 1 Gb/s over IP: nothing to suspect. */
        roce = (RdmaTraffic) { .port_rx_gbps = 0, .port_tx_gbps = 0, .ip_rx_gbps = 0.9, .ip_tx_gbps = 0.9 };
        for (unsigned i = 0; i < 10; i++)
                assert_false(health_rdma_fallback(&state_, &roce, NULL, (300 + 2 * i) * s, interval));
        /* InfiniBand: the port's counters include IPoIB's 20 Gb/s, so RDMA itself moved nothing. */
        RdmaTraffic ib = { .port_rx_gbps = 20.05, .port_tx_gbps = 3, .ip_rx_gbps = 20, .ip_tx_gbps = 3,
                           .infiniband = true };
        for (unsigned i = 0; i < health_limits_default.fallback_samples; i++)
                health_rdma_fallback(&state_, &ib, NULL, (400 + 2 * i) * s, interval);
        assert_true(state_.suspected);
        /* The same counters on RoCE: the port moved 20 Gb/s of its own, no fallback. */
        ib.infiniband = false;
        assert_false(health_rdma_fallback(&state_, &ib, NULL, 500 * s, interval));
        /* Unknown port counters or unknown IP traffic: no suspicion. */
        RdmaTraffic unknown = { .port_rx_gbps = NAN, .port_tx_gbps = NAN, .ip_rx_gbps = 30, .ip_tx_gbps = 30 };
        for (unsigned i = 0; i < 10; i++)
                assert_false(health_rdma_fallback(&state_, &unknown, NULL, (600 + 2 * i) * s, interval));
        unknown = (RdmaTraffic) { .port_rx_gbps = 0, .port_tx_gbps = 0, .ip_rx_gbps = NAN, .ip_tx_gbps = NAN };
        assert_false(health_rdma_fallback(&state_, &unknown, NULL, 700 * s, interval));
        assert_true(isnan(health_rdma_ip_gbps(&unknown)));
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
        /* A root port with nothing trained low below it (its own link is judged at the device) or an
         * integrated function. */
        f = nic(8, 4);
        f.has_link = false;
        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        /* Not sampled yet. */
        f.sampled = false;
        JUDGE(health_judge_pci, &f, HEALTH_UNKNOWN, "not sampled yet");
}

static void test_pci_flapping(void **state) {
        PciHealthFacts f = nic(32, 16);

        f.speed_changes = health_limits_default.flap_changes - 1;
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

        f.correctable = 8; /* DCGM: more than 8 a minute */
        JUDGE(health_judge_pci, &f, HEALTH_OK, "");
        f.correctable = 37;
        f.correctable_kinds = "Receiver Error";
        JUDGE(health_judge_pci, &f, HEALTH_ERRORS, "37 correctable AER errors (Receiver Error) in the last minute");
        /* Any uncorrectable error, fatal first; errors before flapping before degraded. */
        f.fatal = 1;
        f.link = (PciLink) { .gts = 32, .width = 8 };
        trained(&f);
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
        LinkHealthFacts f = { .trained_low = true, .trained_low_reason = why };

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
        f = (LinkHealthFacts) { .trained_low = true, .sampled = true };
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
        /* Trained below both ends (the neighbour's PortInfo): degraded even without counters, the
         * reason first; errors stay graver. */
        f.fallback = false;
        f.degraded = true;
        f.degraded_reason = "1X while both ends support 4X";
        JUDGE(health_judge_rdma, &f, HEALTH_DEGRADED, "1X while both ends support 4X; the port has no counters");
        f.any_counter = true;
        JUDGE(health_judge_rdma, &f, HEALTH_DEGRADED, "1X while both ends support 4X");
        f.degraded_reason = NULL;
        JUDGE(health_judge_rdma, &f, HEALTH_DEGRADED, "trained below what both ends support");
        f.rcv_errors = 11;
        JUDGE(health_judge_rdma, &f, HEALTH_ERRORS,
              "11 receive errors in the last minute; trained below what both ends support");
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

/* [Health] (linkprobed.conf(5)): every limit moves its judgement, windows say so in the reason, and
 * symbol errors are judged per bit at the port's rate. */
static void test_limits(void **state) {
        HealthLimits l = health_limits_default;
        char buf[32], why[128];

        assert_int_equal(health_limits_check(&l, why, sizeof(why)), 0);
        /* IBTA's 1e-12: 12 errors a minute at 4X HDR (200 Gb/s), 24 at NDR, 2.4 at 4X QDR (40 Gb/s, about 144
         * an hour), and a port whose rate is unknown taken for 40 Gb/s; more than that is judged. */
        assert_int_equal(health_symbol_error_count(1e-12, 200, 60 * USEC_PER_SEC), 12);
        assert_int_equal(health_symbol_error_count(1e-12, 400, 60 * USEC_PER_SEC), 24);
        assert_int_equal(health_symbol_error_count(1e-12, 40, 60 * USEC_PER_SEC), 2);
        assert_int_equal(health_symbol_error_count(1e-12, 0, 60 * USEC_PER_SEC), 2);
        assert_int_equal(health_symbol_error_count(1e-15, 40, 60 * USEC_PER_SEC), 0);
        assert_int_equal(health_limit_count(8, 60 * USEC_PER_SEC), 8);
        assert_int_equal(health_limit_count(8, 15 * USEC_PER_SEC), 2);
        assert_int_equal(health_limit_count(0, 60 * USEC_PER_SEC), 0);
        assert_int_equal(health_limit_count(5, 120 * USEC_PER_SEC), 10);
        assert_string_equal(health_format_window(60 * USEC_PER_SEC, buf, sizeof(buf)), "in the last minute");
        assert_string_equal(health_format_window(120 * USEC_PER_SEC, buf, sizeof(buf)), "in the last 2 min");
        assert_string_equal(health_format_window(45 * USEC_PER_SEC, buf, sizeof(buf)), "in the last 45 s");

        /* The same 20 symbol errors: errors on a 40G port, nothing on a 400G one. */
        RdmaHealthFacts f = { .sampled = true, .any_counter = true, .device = "mlx5_0", .port = 1,
                              .symbol_errors = 20, .rcv_errors = 0, .rate_gbps = 40 };
        JUDGE(health_judge_rdma, &f, HEALTH_ERRORS, "20 symbol errors in the last minute");
        f.rate_gbps = 400;
        JUDGE(health_judge_rdma, &f, HEALTH_OK, "");
        /* NVIDIA's monitor: any link down is fatal; recoveries above 5 a minute. */
        f.link_downed = 1;
        JUDGE(health_judge_rdma, &f, HEALTH_FLAPPING, "1 link down and 0 link error recoveries in the last 2 min");
        f.link_downed = 0;
        f.link_recoveries = 10;
        JUDGE(health_judge_rdma, &f, HEALTH_OK, "");
        f.link_recoveries = 11;
        JUDGE(health_judge_rdma, &f, HEALTH_FLAPPING, "0 link downs and 11 link error recoveries in the last 2 min");

        /* Stricter limits, shorter windows: said in the reason. */
        l.errors_window_usec = 30 * USEC_PER_SEC;
        l.crc_errors_per_minute = 2;
        LinkHealthFacts link = { .limits = &l, .sampled = true, .crc_errors = 1 };
        JUDGE(health_judge_link, &link, HEALTH_OK, "");
        link.crc_errors = 2; /* more than 2 a minute over 30 s */
        JUDGE(health_judge_link, &link, HEALTH_ERRORS, "2 CRC errors in the last 30 s");
        l.flap_changes = 2;
        l.flap_window_usec = 45 * USEC_PER_SEC;
        link.crc_errors = 0;
        link.carrier_changes = 2;
        JUDGE(health_judge_link, &link, HEALTH_FLAPPING, "2 carrier changes in the last 45 s");
        /* Busy from 50 %: a link at a tenth of its rate is idle then. */
        l.busy_share = 0.5;
        PciHealthFacts pci = nic(16, 16);
        pci.limits = &l;
        pci.load.traffic_gbps = 90;
        JUDGE(health_judge_pci, &pci, HEALTH_OK,
              "16.0 GT/s x16 while idle, below the 32.0 GT/s both ends support: power saving");

        /* What does not go together is refused, with what to change. */
        l = health_limits_default;
        l.errors_window_usec = 10 * USEC_PER_SEC;
        assert_int_equal(health_limits_check(&l, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "ErrorsWindowSec="));
        l = health_limits_default;
        l.fallback_samples = 0;
        assert_int_equal(health_limits_check(&l, why, sizeof(why)), -EINVAL);
}

/* One judgement of an object whose verdict is h: what health_escalate() makes of it. */
static Health escalate(HealthEvents *e, const HealthLimits *l, uint64_t now, Health h, char **reason) {
        HealthVerdict v = {};
        Health r;

        if (h != HEALTH_OK)
                health_verdict_add(&v, h, "%s", health_to_string(h));
        health_escalate(e, l, now, &v);
        r = health_verdict_health(&v);
        *reason = health_verdict_reason(&v);
        assert_non_null(*reason);
        health_verdict_done(&v);
        return r;
}

/* NVIDIA's NIC health monitor: 5 degradation events in 24 h escalate. An event is a turn to errors or
 * flapping, counted once however long it lasts; a structural degraded is none. */
static void test_escalation(void **state) {
        const uint64_t hour = 3600 * USEC_PER_SEC;
        HealthEvents e = {};
        char *reason;

        assert_true(health_limits_default.escalation_window_usec == 24 * hour);
        assert_int_equal(health_limits_default.escalation_events, 5);
        /* Four events, each judged for several samples, and degraded between them: no escalation. */
        for (unsigned i = 0; i < 4; i++) {
                for (unsigned k = 0; k < 3; k++) {
                        assert_int_equal(escalate(&e, NULL, (i + 1) * hour + k, i % 2 ? HEALTH_ERRORS : HEALTH_FLAPPING,
                                                  &reason),
                                         i % 2 ? HEALTH_ERRORS : HEALTH_FLAPPING);
                        free(reason);
                }
                assert_int_equal(escalate(&e, NULL, (i + 1) * hour + 10, HEALTH_DEGRADED, &reason), HEALTH_DEGRADED);
                free(reason);
        }
        assert_int_equal(e.n, 4);
        /* The fifth escalates, and it stands while the object is ok again... */
        assert_int_equal(escalate(&e, NULL, 5 * hour, HEALTH_FLAPPING, &reason), HEALTH_ERRORS);
        assert_string_equal(reason, "5 degradation events (errors or flapping) in the last 24 h: escalated; flapping");
        free(reason);
        assert_int_equal(escalate(&e, NULL, 6 * hour, HEALTH_OK, &reason), HEALTH_ERRORS);
        assert_string_equal(reason, "5 degradation events (errors or flapping) in the last 24 h: escalated");
        free(reason);
        /* ...until the first event is 24 h old. */
        assert_int_equal(escalate(&e, NULL, 25 * hour, HEALTH_OK, &reason), HEALTH_OK);
        assert_string_equal(reason, "");
        free(reason);
        assert_int_equal(e.n, 4);

        /* [Health]: 2 events in 1 h; 0 events never escalates. */
        HealthLimits l = health_limits_default;
        l.escalation_window_usec = hour;
        l.escalation_events = 2;
        e = (HealthEvents) {};
        assert_int_equal(escalate(&e, &l, 100 * hour, HEALTH_ERRORS, &reason), HEALTH_ERRORS);
        free(reason);
        assert_int_equal(escalate(&e, &l, 100 * hour + 1, HEALTH_OK, &reason), HEALTH_OK);
        free(reason);
        assert_int_equal(escalate(&e, &l, 100 * hour + 2, HEALTH_FLAPPING, &reason), HEALTH_ERRORS);
        assert_string_equal(reason, "2 degradation events (errors or flapping) in the last hour: escalated; flapping");
        free(reason);
        l.escalation_events = 0;
        assert_int_equal(escalate(&e, &l, 100 * hour + 3, HEALTH_FLAPPING, &reason), HEALTH_FLAPPING);
        free(reason);

        /* More events than are kept: the oldest are forgotten, the count stays at the most kept. */
        l = health_limits_default;
        e = (HealthEvents) {};
        for (unsigned i = 0; i < 2 * HEALTH_EVENTS_MAX; i++) {
                assert_int_equal(escalate(&e, &l, hour + 2 * i, HEALTH_ERRORS, &reason), HEALTH_ERRORS);
                free(reason);
                assert_int_equal(escalate(&e, &l, hour + 2 * i + 1, HEALTH_OK, &reason),
                                 i + 1 >= 5 ? HEALTH_ERRORS : HEALTH_OK);
                free(reason);
        }
        assert_int_equal(e.n, HEALTH_EVENTS_MAX);

        /* Out of range windows and counts are refused. */
        char why[256];
        l = health_limits_default;
        l.escalation_events = HEALTH_EVENTS_MAX + 1;
        assert_int_equal(health_limits_check(&l, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "EscalationEvents="));
        l = health_limits_default;
        l.escalation_window_usec = 30 * USEC_PER_SEC;
        assert_int_equal(health_limits_check(&l, why, sizeof(why)), -EINVAL);
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
        assert_string_equal(health_format_window(3600 * USEC_PER_SEC, buf, sizeof(buf)), "in the last hour");
        assert_string_equal(health_format_window(24 * 3600 * USEC_PER_SEC, buf, sizeof(buf)), "in the last 24 h");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pci_link),          cmocka_unit_test(test_pci_gpu),
                cmocka_unit_test(test_pci_never_judged),  cmocka_unit_test(test_pci_flapping),
                cmocka_unit_test(test_pci_errors),        cmocka_unit_test(test_power_saving_changes),
                cmocka_unit_test(test_link),              cmocka_unit_test(test_link_degraded),
                cmocka_unit_test(test_rdma),
                cmocka_unit_test(test_thunderbolt),       cmocka_unit_test(test_format),
                cmocka_unit_test(test_pci_hca_and_its_port), cmocka_unit_test(test_pci_before_the_first_sample),
                cmocka_unit_test(test_verdict_degraded),  cmocka_unit_test(test_rdma_fallback),
                cmocka_unit_test(test_limits),            cmocka_unit_test(test_escalation),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
