/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for linkprobed.conf parsing: defaults, every key, bad values with their line, unknown
 * names as warnings. */
#include <sys/stat.h>
#include <syslog.h>

#include "unit-test.h"
#include "daemon/config.h"
#include "daemon/inhibit.h"
#include "daemon/unit-watch.h"
#include "shared/log.h"
#include "shared/parse-util.h"

static char path[] = "/tmp/linkprobe-test-config-XXXXXX";

static void write_config(const char *text) {
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static int setup(void **state) {
        int fd = mkstemp(path);
        if (fd < 0)
                return -1;
        close(fd);
        log_set_max_level(LOG_CRIT); /* the expected errors need not clutter the output */
        return 0;
}

static int teardown(void **state) {
        unlink(path);
        return 0;
}

static void test_defaults(void **state) {
        Config c;
        config_init(&c);
        assert_int_equal(c.log_level, -1);
        assert_true(c.memory_poll_usec == 10 * USEC_PER_SEC);
        assert_int_equal(c.memory_change_percent, 1);
        assert_true(c.netlink_rcvbuf == 8 << 20);
        /* A missing default file is fine, a missing explicit one is not. */
        assert_int_equal(config_load(&c, "/nonexistent/linkprobed.conf", false), 0);
        assert_int_equal(config_load(&c, "/nonexistent/linkprobed.conf", true), -ENOENT);
        config_done(&c);
}

static void test_every_key(void **state) {
        Config c;
        config_init(&c);
        write_config("# comment\n; comment\n\n[Daemon]\nLogLevel=debug\nPrivilegedGroup=netadmins\n[Netlink]\nReceiveBufferBytes=16M\n"
                     "[Udev]\nReceiveBufferBytes=512K\n[Memory]\nPollIntervalSec=500ms\nChangeThresholdPercent=5\n");
        assert_int_equal(config_load(&c, path, true), 0);
        assert_int_equal(c.log_level, LOG_DEBUG);
        assert_string_equal(c.privileged_group, "netadmins");
        assert_true(c.netlink_rcvbuf == 16 << 20);
        assert_true(c.udev_rcvbuf == 512 << 10);
        assert_true(c.memory_poll_usec == 500 * USEC_PER_MSEC);
        assert_int_equal(c.memory_change_percent, 5);
        write_config("[Memory]\nPollIntervalSec=0\n");
        assert_int_equal(config_load(&c, path, true), 0);
        assert_true(c.memory_poll_usec == 0);
        config_done(&c);
}

static void test_bad_values(void **state) {
        static const char *const bad[] = {
                "[Memory]\nPollIntervalSec=soon\n",
                "[Memory]\nPollIntervalSec=-1\n",
                "[Memory]\nChangeThresholdPercent=101\n",
                "[Memory]\nChangeThresholdPercent=1.5\n",
                "[Netlink]\nReceiveBufferBytes=0\n",
                "[Netlink]\nReceiveBufferBytes=2G\n",
                "[Daemon]\nLogLevel=chatty\n",
                "[Memory]\nno equals sign here\n",
                "[Memory\nPollIntervalSec=1\n",
                "[Daemon]\nPrivilegedGroup=\n",
                "[Daemon]\nPrivilegedGroup=a b\n",
                "[Daemon]\nPrivilegedGroup=1000\n",
                "[Health]\nErrorsWindowSec=10s\n",
                "[Health]\nFlapWindowSec=3min\n",
                "[Health]\nFlapWindowSec=90.5\n",
                "[Health]\nFlapChanges=0\n",
                "[Health]\nSymbolErrorRate=0\n",
                "[Health]\nSymbolErrorRate=1\n",
                "[Health]\nSymbolErrorRate=1e-12x\n",
                "[Health]\nPcieCorrectableErrorsPerMinute=-1\n",
                "[Health]\nPcieCorrectableErrorsPerMinute=nan\n",
                "[Health]\nLinkCrcErrorsPerMinute=inf\n",
                "[Health]\nBusyPercent=101\n",
                "[Health]\nFallbackIpGbps=\n",
                "[Health]\nLinkDowns=none\n",
                "[Health]\nEscalationWindowSec=30\n",
                "[Health]\nEscalationWindowSec=8d\n",
                "[Health]\nEscalationEvents=17\n",
                "[Health]\nEscalationEvents=-1\n",
                "[Fabric]\nSweep=maybe\n",
                "[Fabric]\nSweepIntervalSec=9\n",
                "[Fabric]\nSweepIntervalSec=86401\n",
                "[Fabric]\nSweepIntervalSec=10.5\n",
                "[Fabric]\nSweepTimeoutSec=0\n",
                "[Fabric]\nSweepTimeoutSec=2h\n",
                "[Fabric]\nMaxSwitches=0\n",
                "[Fabric]\nMaxSwitches=8193\n",
                "[Fabric]\nMaxSwitches=-1\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Config c;
                config_init(&c);
                write_config(bad[i]);
                if (config_load(&c, path, true) != -EINVAL)
                        fail_msg("accepted: %s", bad[i]);
                config_done(&c);
        }
}

/* [Health]: every key, and the defaults of health_limits_default when the section is not there. */
static void test_health(void **state) {
        Config c;

        config_init(&c);
        assert_memory_equal(&c.health, &health_limits_default, sizeof(HealthLimits));
        write_config("[Health]\nErrorsWindowSec=30\nFlapWindowSec=1min\nFlapChanges=3\n"
                     "PcieCorrectableErrorsPerMinute=2.5\nLinkCrcErrorsPerMinute=0\nSymbolErrorRate=1e-15\n"
                     "RcvErrorsPerMinute=20\nLinkDowns=2\nLinkErrorRecoveriesPerMinute=10\nBusyPercent=2.5\n"
                     "GpuBusyPercent=50\nFallbackIpGbps=0.5\nFallbackRdmaPercent=10\nFallbackSamples=3\n"
                     "EscalationWindowSec=12h\nEscalationEvents=0\n");
        assert_int_equal(config_load(&c, path, true), 0);
        assert_true(c.health.errors_window_usec == 30 * USEC_PER_SEC && c.health.flap_window_usec == 60 * USEC_PER_SEC);
        assert_int_equal(c.health.flap_changes, 3);
        assert_true(c.health.pcie_correctable_per_minute == 2.5 && c.health.crc_errors_per_minute == 0);
        assert_true(c.health.symbol_error_rate == 1e-15 && c.health.rcv_errors_per_minute == 20);
        assert_true(c.health.link_downs == 2 && c.health.link_recoveries_per_minute == 10);
        assert_true(c.health.busy_share == 0.025 && c.health.gpu_busy_percent == 50);
        assert_true(c.health.fallback_ip_gbps == 0.5 && c.health.fallback_rdma_share == 0.10);
        assert_int_equal(c.health.fallback_samples, 3);
        assert_true(c.health.escalation_window_usec == 12 * 3600 * USEC_PER_SEC && c.health.escalation_events == 0);
        config_done(&c);
}

/* [Fabric]: off by default, every key within its bounds. */
static void test_fabric(void **state) {
        Config c;

        config_init(&c);
        assert_false(c.fabric_sweep);
        assert_true(c.fabric.interval_usec == 300 * USEC_PER_SEC && c.fabric.timeout_usec == 60 * USEC_PER_SEC);
        assert_int_equal(c.fabric.max_switches, 1024);
        write_config("[Fabric]\nSweep=yes\nSweepIntervalSec=10min\nSweepTimeoutSec=1\nMaxSwitches=8192\n");
        assert_int_equal(config_load(&c, path, true), 0);
        assert_true(c.fabric_sweep);
        assert_true(c.fabric.interval_usec == 600 * USEC_PER_SEC && c.fabric.timeout_usec == USEC_PER_SEC);
        assert_int_equal(c.fabric.max_switches, 8192);
        config_done(&c);
}

static void test_unknown_names_are_ignored(void **state) {
        Config c;
        config_init(&c);
        write_config("[Memory]\nPollIntervalSec=3s\nNoSuchKey=1\n[NoSuchSection]\nX=1\n");
        assert_int_equal(config_load(&c, path, true), 0);
        assert_true(c.memory_poll_usec == 3 * USEC_PER_SEC);
}

static void test_inhibit_units(void **state) {
        Config c;
        config_init(&c);
        assert_null(c.inhibit.units);
        assert_int_equal(c.inhibit.what, INHIBIT_GPU | INHIBIT_RDMA);
        /* Lines add up, duplicates are kept once, an empty value clears. */
        write_config("[Inhibit]\nWhileUnitsActive=inference.service\nWhileUnitsActive=batch@night.service "
                     "inference.service\nWhat=gpu\n");
        assert_int_equal(config_load(&c, path, true), 0);
        assert_int_equal(strv_length(c.inhibit.units), 2);
        assert_string_equal(c.inhibit.units[0], "inference.service");
        assert_string_equal(c.inhibit.units[1], "batch@night.service");
        assert_int_equal(c.inhibit.what, INHIBIT_GPU);
        config_done(&c);

        config_init(&c);
        write_config("[Inhibit]\nWhileUnitsActive=a.service\nWhileUnitsActive=\n");
        assert_int_equal(config_load(&c, path, true), 0);
        assert_null(c.inhibit.units);
        config_done(&c);

        static const char *const bad[] = {
                "[Inhibit]\nWhileUnitsActive=inference\n",
                "[Inhibit]\nWhileUnitsActive=foo@.service\n",
                "[Inhibit]\nWhileUnitsActive=@x.service\n",
                "[Inhibit]\nWhileUnitsActive=a@b@c.service\n",
                "[Inhibit]\nWhileUnitsActive=.service\n",
                "[Inhibit]\nWhileUnitsActive=a/b.service\n",
                "[Inhibit]\nWhileUnitsActive=a.nonsense\n",
                "[Inhibit]\nWhat=\n",
                "[Inhibit]\nWhat=tpu\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                config_init(&c);
                write_config(bad[i]);
                if (config_load(&c, path, true) != -EINVAL)
                        fail_msg("accepted: %s", bad[i]);
                config_done(&c);
        }
}

static void test_unit_names_and_states(void **state) {
        char name[257];

        assert_true(unit_name_is_valid("sshd.service"));
        assert_true(unit_name_is_valid("getty@tty1.service"));
        assert_true(unit_name_is_valid("dev-disk-by\\x2duuid.device"));
        assert_true(unit_name_is_valid("user-1000.slice"));
        assert_false(unit_name_is_valid(""));
        assert_false(unit_name_is_valid(NULL));
        assert_false(unit_name_is_valid("sshd"));
        assert_false(unit_name_is_valid("sshd.service "));
        /* systemd's limit is 255 bytes, the NUL not counted. */
        memset(name, 'x', sizeof(name));
        strcpy(name + 255 - strlen(".service"), ".service");
        assert_true(unit_name_is_valid(name));
        memset(name, 'x', sizeof(name));
        strcpy(name + 256 - strlen(".service"), ".service");
        assert_false(unit_name_is_valid(name));

        assert_true(unit_active_state_is_running("active"));
        assert_true(unit_active_state_is_running("activating"));
        assert_true(unit_active_state_is_running("deactivating"));
        assert_true(unit_active_state_is_running("reloading"));
        assert_true(unit_active_state_is_running("refreshing"));
        assert_false(unit_active_state_is_running("inactive"));
        assert_false(unit_active_state_is_running("failed"));
        assert_false(unit_active_state_is_running("maintenance"));
        assert_false(unit_active_state_is_running(NULL));
}

static void test_not_a_file(void **state) {
        Config c;
        config_init(&c);
        assert_int_equal(config_load(&c, "/tmp", true), -EISDIR);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),    cmocka_unit_test(test_every_key),
                cmocka_unit_test(test_health),      cmocka_unit_test(test_fabric),
                cmocka_unit_test(test_bad_values),  cmocka_unit_test(test_unknown_names_are_ignored),
                cmocka_unit_test(test_not_a_file),  cmocka_unit_test(test_inhibit_units),
                cmocka_unit_test(test_unit_names_and_states),
        };
        return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
