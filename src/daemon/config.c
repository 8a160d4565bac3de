/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ini.h>
#include <stdarg.h>
#include <sys/stat.h>

#include <sys/socket.h>

#include "config.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/socket-util.h"
#include "shared/string-util.h"

typedef int (*config_parser_t)(const char *value, void *field, char *why, size_t why_size);

typedef struct ConfigItem {
        const char *section;
        const char *key;
        config_parser_t parse;
        size_t offset;
} ConfigItem;

static int parse_log_level(const char *value, void *field, char *why, size_t n) {
        int level = log_level_from_string(value);
        if (level < 0) {
                snprintf(why, n, "expected one of err, warning, notice, info, debug");
                return -EINVAL;
        }
        *(int *) field = level;
        return 0;
}

static int parse_size_field(const char *value, void *field, char *why, size_t n) {
        uint64_t v;
        if (parse_size(value, &v) < 0 || v == 0 || v > (1ULL << 30)) {
                snprintf(why, n, "expected a size between 1 and 1G, such as 4M");
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

static int parse_duration_field(const char *value, void *field, char *why, size_t n) {
        uint64_t v;
        if (parse_duration_usec(value, &v) < 0) {
                snprintf(why, n, "expected a duration such as 30s, 5min or 0 for off");
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

static int parse_percent_field(const char *value, void *field, char *why, size_t n) {
        uint32_t v;
        if (parse_u32(value, &v) < 0 || v > 100) {
                snprintf(why, n, "expected a whole number of percent between 0 and 100");
                return -EINVAL;
        }
        *(unsigned *) field = v;
        return 0;
}

static int parse_bool_field(const char *value, void *field, char *why, size_t n) {
        int b = parse_boolean(value);
        if (b < 0) {
                snprintf(why, n, "expected yes or no");
                return -EINVAL;
        }
        *(bool *) field = b;
        return 0;
}

static int parse_deadline_field(const char *value, void *field, char *why, size_t n) {
        uint64_t v;
        if (parse_duration_usec(value, &v) < 0 || v < USEC_PER_SEC || v > 3600 * USEC_PER_SEC) {
                snprintf(why, n, "expected a duration between 1s and 1h");
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

static int parse_watch_interval(const char *value, void *field, char *why, size_t n) {
        uint64_t v;
        if (parse_duration_usec(value, &v) < 0 || (v != 0 && (v < 10 * USEC_PER_MSEC || v > 3600 * USEC_PER_SEC))) {
                snprintf(why, n, "expected 0 (off) or a duration between 10ms and 1h");
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

static int parse_group_name(const char *value, void *field, char *why, size_t n) {
        /* What groupadd accepts: no separators, no whitespace, not too long, not a number. */
        bool ok = !isempty(value) && strlen(value) <= 32 && strspn(value, "0123456789") != strlen(value);
        for (const char *p = value; ok && *p; p++)
                ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                     *p == '_' || *p == '-' || *p == '.';
        if (!ok) {
                snprintf(why, n, "expected a group name");
                return -EINVAL;
        }
        return free_and_strdup((char **) field, value) < 0 ? -ENOMEM : 0;
}

static int parse_directory_field(const char *value, void *field, char *why, size_t n) {
        if (isempty(value) || value[0] != '/') {
                snprintf(why, n, "expected an absolute directory path");
                return -EINVAL;
        }
        return free_and_strdup((char **) field, value) < 0 ? -ENOMEM : 0;
}

static int parse_listen_field(const char *value, void *field, char *why, size_t n) {
        struct sockaddr_storage sa;
        socklen_t len;
        if (socket_parse_listen_address(value, &sa, &len) < 0) {
                snprintf(why, n, "expected PORT, ADDRESS:PORT or [IPV6]:PORT with numeric addresses");
                return -EINVAL;
        }
        return free_and_strdup((char **) field, value) < 0 ? -ENOMEM : 0;
}

static const ConfigItem config_items[] = {
        { "Daemon", "LogLevel", parse_log_level, offsetof(Config, log_level) },
        { "Daemon", "PrivilegedGroup", parse_group_name, offsetof(Config, privileged_group) },
        { "Netlink", "ReceiveBufferBytes", parse_size_field, offsetof(Config, netlink_rcvbuf) },
        { "Udev", "ReceiveBufferBytes", parse_size_field, offsetof(Config, udev_rcvbuf) },
        { "Metrics", "TextfileDirectory", parse_directory_field, offsetof(Config, metrics_textfile_directory) },
        { "Metrics", "TextfileIntervalSec", parse_duration_field, offsetof(Config, metrics_textfile_interval_usec) },
        { "Metrics", "ListenAddress", parse_listen_field, offsetof(Config, metrics_listen) },
        { "Watch", "IntervalSec", parse_watch_interval, offsetof(Config, watch_interval_usec) },
        { "Health", "ErrorsWindowSec", config_parse_health_window, offsetof(Config, health.errors_window_usec) },
        { "Health", "FlapWindowSec", config_parse_health_window, offsetof(Config, health.flap_window_usec) },
        { "Health", "FlapChanges", config_parse_count, offsetof(Config, health.flap_changes) },
        { "Health", "PcieCorrectableErrorsPerMinute", config_parse_per_minute,
          offsetof(Config, health.pcie_correctable_per_minute) },
        { "Health", "LinkCrcErrorsPerMinute", config_parse_per_minute, offsetof(Config, health.crc_errors_per_minute) },
        { "Health", "SymbolErrorRate", config_parse_bit_error_rate, offsetof(Config, health.symbol_error_rate) },
        { "Health", "RcvErrorsPerMinute", config_parse_per_minute, offsetof(Config, health.rcv_errors_per_minute) },
        { "Health", "LinkDowns", config_parse_count, offsetof(Config, health.link_downs) },
        { "Health", "LinkErrorRecoveriesPerMinute", config_parse_per_minute,
          offsetof(Config, health.link_recoveries_per_minute) },
        { "Health", "BusyPercent", config_parse_share_percent, offsetof(Config, health.busy_share) },
        { "Health", "GpuBusyPercent", parse_percent_field, offsetof(Config, health.gpu_busy_percent) },
        { "Health", "FallbackIpGbps", config_parse_gbps, offsetof(Config, health.fallback_ip_gbps) },
        { "Health", "FallbackRdmaPercent", config_parse_share_percent, offsetof(Config, health.fallback_rdma_share) },
        { "Health", "FallbackSamples", config_parse_count, offsetof(Config, health.fallback_samples) },
        { "Health", "EscalationWindowSec", config_parse_escalation_window, offsetof(Config, health.escalation_window_usec) },
        { "Health", "EscalationEvents", config_parse_escalation_events, offsetof(Config, health.escalation_events) },
        { "Memory", "PollIntervalSec", parse_duration_field, offsetof(Config, memory_poll_usec) },
        { "Memory", "ChangeThresholdPercent", parse_percent_field, offsetof(Config, memory_change_percent) },
        { "Peers", "Address", config_parse_peer_addresses, offsetof(Config, peers.addresses) },
        { "Peers", "Discover", config_parse_link_kinds, offsetof(Config, peers.discover_kinds) },
        { "Peers", "PreSharedKeyFile", config_parse_key_file, offsetof(Config, peers.psk_file) },
        { "Reconciler", "TickSec", config_parse_positive_duration, offsetof(Config, peers.tick_usec) },
        { "Reconciler", "TcpTtlSec", config_parse_positive_duration, offsetof(Config, peers.tcp_ttl_usec) },
        { "Reconciler", "RdmaTtlSec", config_parse_positive_duration, offsetof(Config, peers.rdma_ttl_usec) },
        { "Reconciler", "TcpDurationSec", config_parse_probe_duration, offsetof(Config, peers.tcp_duration_usec) },
        { "Reconciler", "TcpSamples", config_parse_count, offsetof(Config, peers.tcp_samples) },
        { "Reconciler", "TcpStreams", config_parse_tcp_streams, offsetof(Config, peers.tcp_streams) },
        { "Reconciler", "RdmaDurationSec", config_parse_probe_duration, offsetof(Config, peers.rdma_duration_usec) },
        { "Reconciler", "RemeasureSettleSec", parse_duration_field, offsetof(Config, peers.remeasure_settle_usec) },
        { "Reconciler", "RemeasureIntervalSec", parse_duration_field,
          offsetof(Config, peers.remeasure_interval_usec) },
        { "Inhibit", "WhileUnitsActive", config_parse_unit_names, offsetof(Config, inhibit.units) },
        { "Inhibit", "What", config_parse_inhibit_what, offsetof(Config, inhibit.what) },
        { "Responder", "Listen", config_parse_listen_addresses, offsetof(Config, peers.listen) },
        { "Responder", "PreSharedKeyFile", config_parse_key_file, offsetof(Config, peers.responder_psk_file) },
        { "Responder", "MaxConnections", config_parse_count, offsetof(Config, peers.max_connections) },
        { "Responder", "RatePerSource", config_parse_count, offsetof(Config, peers.rate) },
        { "Responder", "BurstPerSource", config_parse_count, offsetof(Config, peers.burst) },
        { "Responder", "MaxStreams", config_parse_max_streams, offsetof(Config, peers.max_streams) },
        { "Responder", "MaxTestDurationSec", config_parse_probe_duration, offsetof(Config, peers.max_test_usec) },
        { "Responder", "MaxTestBytes", config_parse_test_bytes, offsetof(Config, peers.max_test_bytes) },
        { "Responder", "HandshakeTimeoutSec", config_parse_positive_duration,
          offsetof(Config, peers.handshake_timeout_usec) },
        { "Responder", "IdleTimeoutSec", config_parse_positive_duration, offsetof(Config, peers.idle_timeout_usec) },
        { "Responder", "RDMA", config_parse_tristate, offsetof(Config, peers.rdma) },
        { "Gpu", "Enabled", parse_bool_field, offsetof(Config, gpu_enabled) },
        { "Gpu", "TTLSec", parse_duration_field, offsetof(Config, gpu_ttl_usec) },
        { "Gpu", "RandomizedDelaySec", parse_duration_field, offsetof(Config, gpu_randomized_delay_usec) },
        { "Gpu", "DeadlineSec", parse_deadline_field, offsetof(Config, gpu_deadline_usec) },
        { "Gpu", "Quick", parse_bool_field, offsetof(Config, gpu_quick) },
        { "Fabric", "Sweep", parse_bool_field, offsetof(Config, fabric_sweep) },
        { "Fabric", "SweepIntervalSec", config_parse_sweep_interval, offsetof(Config, fabric.interval_usec) },
        { "Fabric", "SweepTimeoutSec", config_parse_sweep_timeout, offsetof(Config, fabric.timeout_usec) },
        { "Fabric", "MaxSwitches", config_parse_max_switches, offsetof(Config, fabric.max_switches) },
        { "Fabric", "OutstandingSmps", config_parse_outstanding_smps, offsetof(Config, fabric.outstanding_smps) },
};

void config_init(Config *c) {
        *c = (Config) {
                .log_level = -1,
                .netlink_rcvbuf = 8 << 20,
                .udev_rcvbuf = 4 << 20,
                .watch_interval_usec = 2 * USEC_PER_SEC,
                .memory_poll_usec = 10 * USEC_PER_SEC,
                .memory_change_percent = 1,
                .metrics_textfile_interval_usec = USEC_PER_SEC,
                .gpu_enabled = true,
                .gpu_ttl_usec = 3600 * USEC_PER_SEC,
                .gpu_randomized_delay_usec = 300 * USEC_PER_SEC,
                .gpu_deadline_usec = 120 * USEC_PER_SEC,
                .health = health_limits_default,
                .fabric = {
                        .interval_usec = FABRIC_SWEEP_INTERVAL_DEFAULT_SEC * USEC_PER_SEC,
                        .timeout_usec = FABRIC_SWEEP_TIMEOUT_DEFAULT_SEC * USEC_PER_SEC,
                        .max_switches = FABRIC_MAX_SWITCHES_DEFAULT,
                        .outstanding_smps = FABRIC_OUTSTANDING_SMPS_DEFAULT,
                },
        };
        peers_config_init(&c->peers);
        inhibit_config_init(&c->inhibit);
}

void config_done(Config *c) {
        c->privileged_group = mfree(c->privileged_group);
        peers_config_done(&c->peers);
        inhibit_config_done(&c->inhibit);
        c->metrics_textfile_directory = mfree(c->metrics_textfile_directory);
        c->metrics_listen = mfree(c->metrics_listen);
}

typedef struct ParseContext {
        Config *config;
        const char *path;
        FILE *file;
        unsigned line;
        unsigned error_line;
        int error;
        char error_text[512];
} ParseContext;

/* inih hands us values without their line number; count lines as they are read. */
static char *read_line(char *buf, int size, void *userdata) {
        ParseContext *ctx = userdata;
        char *s = fgets(buf, size, ctx->file);
        if (s)
                ctx->line++;
        return s;
}

static int handle_item(void *userdata, const char *section, const char *key, const char *value) {
        ParseContext *ctx = userdata;
        bool section_known = false;
        char why[160] = "";

        for (size_t i = 0; i < ELEMENTSOF(config_items); i++) {
                const ConfigItem *item = &config_items[i];
                if (!streq(item->section, section))
                        continue;
                section_known = true;
                if (!streq(item->key, key))
                        continue;
                if (item->parse(value, (uint8_t *) ctx->config + item->offset, why, sizeof(why)) < 0) {
                        if (ctx->error == 0) {
                                ctx->error = -EINVAL;
                                ctx->error_line = ctx->line;
                                /* A long value is cut so that the reason, which says what is wrong, is
                                 * never the part that is lost. */
                                snprintf(ctx->error_text, sizeof(ctx->error_text), "invalid %s=%.64s%s in [%s]: %s",
                                         key, value, strlen(value) > 64 ? "…" : "", section, why);
                        }
                        return 0;
                }
                return 1;
        }

        /* Unknown names are warnings, not errors, so one configuration can serve newer and older
         * versions of the daemon. */
        if (isempty(section))
                log_warning("%s:%u: %s= outside of any section, ignoring.", ctx->path, ctx->line, key);
        else if (!section_known)
                log_warning("%s:%u: unknown section [%s], ignoring %s=.", ctx->path, ctx->line, section, key);
        else
                log_warning("%s:%u: unknown key %s= in [%s], ignoring.", ctx->path, ctx->line, key, section);
        return 1;
}

int config_load(Config *c, const char *path, bool must_exist) {
        _cleanup_(fclosep) FILE *f = NULL;
        ParseContext ctx = { .config = c, .path = path };
        int r;

        f = fopen(path, "re");
        if (!f) {
                if (errno == ENOENT && !must_exist)
                        return 0;
                return log_error_errno(errno, "Cannot read configuration %s: %m", path);
        }
        ctx.file = f;

        struct stat st;
        if (fstat(fileno(f), &st) < 0)
                return log_error_errno(errno, "Cannot read configuration %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                                       "Cannot read configuration %s: not a regular file.", path);

        /* A value continued on an indented line would shift our line count; the format has no use
         * for it. */
        ini_allow_multiline = false;
        r = ini_parse_stream(read_line, &ctx, handle_item, &ctx);
        if (ctx.error < 0) {
                log_error("%s:%u: %s", path, ctx.error_line, ctx.error_text);
                return ctx.error;
        }
        if (r < 0 || ferror(f))
                return log_error_errno(errno ?: EIO, "Cannot read configuration %s: %m", path);
        if (r > 0) {
                log_error("%s:%d: syntax error (expected [Section] or Key=Value).", path, r);
                return -EINVAL;
        }
        char why[160];
        if (health_limits_check(&c->health, why, sizeof(why)) < 0) {
                log_error("%s: [Health]: %s.", path, why);
                return -EINVAL;
        }
        return 0;
}
