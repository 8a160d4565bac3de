/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The judgement of one object from its facts: which health, and a reason that says what, how much and
 * over what time. Thresholds in health.h; the words here are what people read in `linkprobectl health`,
 * the journal and HealthReason. */
#include <math.h>
#include <stdarg.h>

#include "health.h"
#include "pci-tree.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

static const char *const health_table[_HEALTH_MAX] = {
        [HEALTH_OK] = "ok",
        [HEALTH_DEGRADED] = "degraded",
        [HEALTH_ERRORS] = "errors",
        [HEALTH_FLAPPING] = "flapping",
        [HEALTH_UNKNOWN] = "unknown",
};
DEFINE_STRING_TABLE_LOOKUP(health, Health, health_table)

int health_severity(Health h) {
        switch (h) {
        case HEALTH_UNKNOWN:
                return 0;
        case HEALTH_OK:
                return 1;
        case HEALTH_DEGRADED:
                return 2;
        case HEALTH_FLAPPING:
                return 3;
        case HEALTH_ERRORS:
                return 4;
        case _HEALTH_MAX:
        case _HEALTH_INVALID:
                break;
        }
        return 0;
}

/* The defaults, and where each comes from (linkprobed.conf(5), [Health]). */
const HealthLimits health_limits_default = {
        .errors_window_usec = 60 * USEC_PER_SEC,
        .flap_window_usec = 120 * USEC_PER_SEC,
        .flap_changes = 5,
        /* DCGM's PCIe replay-rate check: more than 8 replays a minute (replays are correctable errors). */
        .pcie_correctable_per_minute = 8,
        /* No published figure: ten frames a minute lost to a bad cable or optic. */
        .crc_errors_per_minute = 10,
        /* IBTA: a link's bit error rate at most 1e-12 (about 120 symbol errors an hour at 4X QDR). */
        .symbol_error_rate = 1e-12,
        .rcv_errors_per_minute = 10,
        /* NVIDIA's NIC health monitor: any link_downed increment is fatal; link_error_recovery above 5 a
         * minute is degradation. */
        .link_downs = 1,
        .link_recoveries_per_minute = 5,
        .busy_share = 0.10,
        .gpu_busy_percent = 25,
        .fallback_ip_gbps = 1.0,
        .fallback_rdma_share = 0.05,
        .fallback_samples = 5,
        /* NVIDIA's NIC health monitor: escalates after 5 degradation events in 24 hours. */
        .escalation_window_usec = 24 * 3600 * USEC_PER_SEC,
        .escalation_events = 5,
};

int health_limits_check(const HealthLimits *l, char *why, size_t size) {
        if (l->errors_window_usec < HEALTH_WINDOW_MIN_USEC || l->errors_window_usec > HEALTH_WINDOW_MAX_USEC ||
            l->flap_window_usec < HEALTH_WINDOW_MIN_USEC || l->flap_window_usec > HEALTH_WINDOW_MAX_USEC) {
                snprintf(why, size, "ErrorsWindowSec= and FlapWindowSec= must be between %us and %us",
                         (unsigned) (HEALTH_WINDOW_MIN_USEC / USEC_PER_SEC), (unsigned) (HEALTH_WINDOW_MAX_USEC / USEC_PER_SEC));
                return -EINVAL;
        }
        if (l->flap_changes == 0 || l->link_downs == 0 || l->fallback_samples == 0) {
                snprintf(why, size, "FlapChanges=, LinkDowns= and FallbackSamples= must be at least 1");
                return -EINVAL;
        }
        if (l->escalation_window_usec < HEALTH_ESCALATION_WINDOW_MIN_USEC ||
            l->escalation_window_usec > HEALTH_ESCALATION_WINDOW_MAX_USEC || l->escalation_events > HEALTH_EVENTS_MAX) {
                snprintf(why, size, "EscalationWindowSec= must be between %us and %us, EscalationEvents= at most %u",
                         (unsigned) (HEALTH_ESCALATION_WINDOW_MIN_USEC / USEC_PER_SEC),
                         (unsigned) (HEALTH_ESCALATION_WINDOW_MAX_USEC / USEC_PER_SEC), HEALTH_EVENTS_MAX);
                return -EINVAL;
        }
        return 0;
}

static uint64_t whole(double n) {
        n = floor(n);
        return n <= 0 ? 0 : n > 1e18 ? UINT64_MAX : (uint64_t) n;
}

uint64_t health_limit_count(double rate_per_minute, uint64_t window_usec) {
        return whole(rate_per_minute * (double) window_usec / (double) (60 * USEC_PER_SEC));
}

uint64_t health_symbol_error_count(double ber, double rate_gbps, uint64_t window_usec) {
        return whole(ber * (rate_gbps > 0 ? rate_gbps : 40) * 1e9 * (double) window_usec / (double) USEC_PER_SEC);
}

char *health_format_window(uint64_t usec, char *buf, size_t size) {
        uint64_t sec = usec / USEC_PER_SEC;

        if (sec == 60)
                snprintf(buf, size, "in the last minute");
        else if (sec == 3600)
                snprintf(buf, size, "in the last hour");
        else if (sec % 3600 == 0)
                snprintf(buf, size, "in the last %" PRIu64 " h", sec / 3600);
        else if (sec % 60 == 0)
                snprintf(buf, size, "in the last %" PRIu64 " min", sec / 60);
        else
                snprintf(buf, size, "in the last %" PRIu64 " s", sec);
        return buf;
}

static const HealthLimits *limits_of(const HealthLimits *l) {
        return l ?: &health_limits_default;
}

void health_verdict_done(HealthVerdict *v) {
        for (size_t i = 0; i < v->n; i++)
                free(v->text[i]);
        *v = (HealthVerdict) {};
}

void health_state_done(HealthState *s) {
        free(s->health_reason);
        free(s->degraded_reason);
        *s = HEALTH_STATE_INIT;
}

void health_verdict_add(HealthVerdict *v, Health h, const char *format, ...) {
        va_list ap;
        char *s;
        int r;

        if (v->n >= HEALTH_VERDICT_MAX)
                return;
        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        if (r < 0) {
                v->oom = true;
                return;
        }
        v->health[v->n] = h;
        v->text[v->n++] = s;
}

Health health_verdict_health(const HealthVerdict *v) {
        Health worst = HEALTH_OK;
        bool unknown = false;

        /* Unknown only when nothing was found wrong: what is known to be wrong is said. */
        for (size_t i = 0; i < v->n; i++) {
                if (v->health[i] == HEALTH_UNKNOWN)
                        unknown = true;
                else if (health_severity(v->health[i]) > health_severity(worst))
                        worst = v->health[i];
        }
        return worst == HEALTH_OK && unknown ? HEALTH_UNKNOWN : worst;
}

/* The reasons joined by "; ": worst first, and within one health in the order they were found; informing
 * ones only when the verdict is ok. degraded_only: the degraded ones alone (DegradedReason). */
static char *verdict_join(const HealthVerdict *v, bool degraded_only) {
        Health worst = health_verdict_health(v);
        char *s = NULL;
        size_t len = 0;
        FILE *f;

        if (v->oom)
                return NULL;
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        const char *sep = "";
        for (int severity = 4; severity >= 0; severity--)
                for (size_t i = 0; i < v->n; i++) {
                        if (health_severity(v->health[i]) != severity)
                                continue;
                        if (degraded_only ? v->health[i] != HEALTH_DEGRADED
                                          : v->health[i] == HEALTH_OK && worst != HEALTH_OK)
                                continue;
                        fprintf(f, "%s%s", sep, v->text[i]);
                        sep = "; ";
                }
        if (fclose(f) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

char *health_verdict_reason(const HealthVerdict *v) {
        return verdict_join(v, false);
}

bool health_verdict_degraded(const HealthVerdict *v) {
        for (size_t i = 0; i < v->n; i++)
                if (v->health[i] == HEALTH_DEGRADED)
                        return true;
        return false;
}

char *health_verdict_degraded_reason(const HealthVerdict *v) {
        return verdict_join(v, true);
}

void health_verdict_keep_degraded(HealthVerdict *v) {
        size_t kept = 0;

        for (size_t i = 0; i < v->n; i++) {
                if (v->health[i] != HEALTH_DEGRADED) {
                        free(v->text[i]);
                        continue;
                }
                v->health[kept] = v->health[i];
                v->text[kept++] = v->text[i];
        }
        v->n = kept;
}

char *health_format_count(uint64_t n, char *buf, size_t size) {
        char digits[32];
        size_t len, o = 0;

        len = (size_t) snprintf(digits, sizeof(digits), "%" PRIu64, n);
        for (size_t i = 0; i < len && o + 1 < size; i++) {
                if (i > 0 && (len - i) % 3 == 0 && o + 2 < size)
                        buf[o++] = ',';
                buf[o++] = digits[i];
        }
        buf[o] = '\0';
        return buf;
}

char *health_format_gbps(double gbps, char *buf, size_t size) {
        if (!isfinite(gbps) || gbps < 0)
                snprintf(buf, size, "? Gb/s");
        else if (gbps >= 10)
                snprintf(buf, size, "%.0f Gb/s", gbps);
        else if (gbps >= 1)
                snprintf(buf, size, "%.1f Gb/s", gbps);
        else
                snprintf(buf, size, "%.2f Gb/s", gbps);
        return buf;
}

/* "1 CRC error", "37 CRC errors". */
static void add_count(HealthVerdict *v, Health h, uint64_t n, const char *one, const char *many, const char *suffix,
                      const char *window) {
        char count[32];
        health_verdict_add(v, h, "%s %s%s %s", health_format_count(n, count, sizeof(count)), n == 1 ? one : many,
                           strempty(suffix), window);
}

bool health_pci_change_is_power_saving(const PciLink *a, const PciLink *b) {
        if (a->width != b->width || a->gts == b->gts)
                return false;
        return a->gts == 2.5 || b->gts == 2.5;
}

typedef enum Busy {
        BUSY_NO,
        BUSY_YES,
        BUSY_UNKNOWN,
} Busy;

static Busy load_busy(const HealthLoad *l, double link_gbps, const HealthLimits *limits, char *what, size_t size) {
        char rate[32];

        if (l->gpu_busy_percent >= 0 && (unsigned) l->gpu_busy_percent >= limits->gpu_busy_percent) {
                snprintf(what, size, "the GPU is %d %% busy", l->gpu_busy_percent);
                return BUSY_YES;
        }
        if (isfinite(l->traffic_gbps) && link_gbps > 0 && l->traffic_gbps >= limits->busy_share * link_gbps) {
                snprintf(what, size, "moving %s", health_format_gbps(l->traffic_gbps, rate, sizeof(rate)));
                return BUSY_YES;
        }
        /* A GPU's work is not in any network counter: without the kernel's word it is unknown. */
        if (l->gpu && l->gpu_busy_percent < 0)
                return BUSY_UNKNOWN;
        if (!isfinite(l->traffic_gbps) && l->gpu_busy_percent < 0)
                return BUSY_UNKNOWN;
        return BUSY_NO;
}

/* The qualification of a link that trained below what both ends support: the structural fact comes
 * from pci-tree.c, the judge only says what it means. Narrower than both ends: degraded, busy or not
 * (no power management narrows a link). Slower: degraded when the device is busy; power saving when it
 * is idle; and when how busy it is cannot be told, power saving only at the 2.5 GT/s a GPU parks its
 * link at, degraded otherwise (a NIC or an HCA does not slow its link to save power). speed_pending: the
 * first sample, which tells how busy it is, is still to come; the speed is judged then. `where` names
 * the link when it is not the function's own ("the link below, to 0000:41:00.0: "). */
static void judge_pci_link(const PciLinkFacts *l, const char *where, bool speed_pending, const HealthLimits *limits,
                           HealthVerdict *v) {
        char now[48], both[48], what[64];

        pci_link_format(&l->link, now, sizeof(now));
        pci_link_format(&l->capable, both, sizeof(both));

        if (l->capable.width > 0 && l->link.width < l->capable.width) {
                health_verdict_add(v, HEALTH_DEGRADED, "%strained at %s; both ends support %s", where, now, both);
                return;
        }
        if (l->capable.gts <= 0 || l->link.gts >= l->capable.gts || speed_pending)
                return;
        switch (load_busy(&l->load, l->link_gbps, limits, what, sizeof(what))) {
        case BUSY_YES:
                health_verdict_add(v, HEALTH_DEGRADED, "%s%s while %s; both ends support %s", where, now, what, both);
                break;
        case BUSY_NO:
                health_verdict_add(v, HEALTH_OK, "%s%s while idle, below the %.1f GT/s both ends support: power saving",
                                   where, now, l->capable.gts);
                break;
        case BUSY_UNKNOWN:
                if (l->load.gpu && l->link.gts == 2.5)
                        health_verdict_add(v, HEALTH_OK,
                                           "%s%s, below the %.1f GT/s both ends support: a GPU parks its link there "
                                           "when idle, power saving (how busy it is cannot be told)",
                                           where, now, l->capable.gts);
                else
                        health_verdict_add(v, HEALTH_DEGRADED,
                                           "%strained at %s; both ends support %s (how busy the device is cannot be "
                                           "told, and it does not park its link to save power)",
                                           where, now, both);
                break;
        }
}

/* The links a function is judged by: its own (above it), and for a port the one below it that trained
 * low. A tunnel reports a fixed 2.5 GT/s whatever it carries; an SR-IOV VF reports no speed and x0 (its
 * link is its physical function's): neither says anything about the link. */
static void judge_pci_links(const PciHealthFacts *f, HealthVerdict *v) {
        bool pending = f->watched && !f->sampled;
        const HealthLimits *limits = limits_of(f->limits);

        if (f->has_link && f->trained_low && !f->tunnel && f->link.gts > 0 && f->link.width > 0)
                judge_pci_link(&(PciLinkFacts) { f->link, f->capable, f->link_gbps, f->load }, "", pending, limits, v);
        if (f->below_address && f->below.link.gts > 0 && f->below.link.width > 0) {
                char where[64];
                snprintf(where, sizeof(where), "the link below, to %s: ", f->below_address);
                judge_pci_link(&f->below, where, pending, limits, v);
        }
}

void health_judge_pci(const PciHealthFacts *f, HealthVerdict *v) {
        const HealthLimits *limits = limits_of(f->limits);
        char count[32], errors_window[32], flap_window[32];

        /* What both ends' capabilities say needs no counters: it is judged before the first sample, and
         * without the watch. */
        judge_pci_links(f, v);
        if (!f->sampled) {
                health_verdict_add(v, HEALTH_UNKNOWN, "not sampled yet");
                return;
        }
        health_format_window(limits->errors_window_usec, errors_window, sizeof(errors_window));
        health_format_window(limits->flap_window_usec, flap_window, sizeof(flap_window));
        if (f->fatal != COUNTER_UNKNOWN && f->fatal > 0)
                add_count(v, HEALTH_ERRORS, f->fatal, "fatal AER error", "fatal AER errors", NULL, errors_window);
        if (f->nonfatal != COUNTER_UNKNOWN && f->nonfatal > 0)
                add_count(v, HEALTH_ERRORS, f->nonfatal, "non-fatal uncorrectable AER error",
                          "non-fatal uncorrectable AER errors", NULL, errors_window);
        if (f->correctable != COUNTER_UNKNOWN &&
            f->correctable > health_limit_count(limits->pcie_correctable_per_minute, limits->errors_window_usec)) {
                char kinds[96] = "";
                if (!isempty(f->correctable_kinds))
                        snprintf(kinds, sizeof(kinds), " (%s)", f->correctable_kinds);
                add_count(v, HEALTH_ERRORS, f->correctable, "correctable AER error", "correctable AER errors", kinds,
                          errors_window);
        }
        if (f->speed_changes + f->width_changes >= limits->flap_changes) {
                if (f->width_changes == 0)
                        add_count(v, HEALTH_FLAPPING, f->speed_changes, "speed change", "speed changes", NULL,
                                  flap_window);
                else if (f->speed_changes == 0)
                        add_count(v, HEALTH_FLAPPING, f->width_changes, "width change", "width changes", NULL,
                                  flap_window);
                else
                        health_verdict_add(v, HEALTH_FLAPPING, "%s speed and %" PRIu64 " width changes %s",
                                           health_format_count(f->speed_changes, count, sizeof(count)), f->width_changes,
                                           flap_window);
        }
}

void health_judge_link(const LinkHealthFacts *f, HealthVerdict *v) {
        const HealthLimits *limits = limits_of(f->limits);
        char errors_window[32], flap_window[32];

        /* The judge only qualifies the structural verdict: it is the reason word for word, and a graver
         * health (errors, flapping) added below takes precedence over it. */
        if (f->trained_low)
                health_verdict_add(v, HEALTH_DEGRADED, "%s",
                                   isempty(f->trained_low_reason) ? "trained below what both ends support"
                                                                  : f->trained_low_reason);
        if (!f->sampled || f->crc_errors == COUNTER_UNKNOWN) {
                /* What is known to be wrong is said alone; "unknown" only when nothing is. */
                if (!f->trained_low)
                        health_verdict_add(v, HEALTH_UNKNOWN,
                                           f->sampled ? "the kernel gives no statistics" : "not sampled yet");
                return;
        }
        health_format_window(limits->errors_window_usec, errors_window, sizeof(errors_window));
        health_format_window(limits->flap_window_usec, flap_window, sizeof(flap_window));
        if (f->crc_errors > health_limit_count(limits->crc_errors_per_minute, limits->errors_window_usec))
                add_count(v, HEALTH_ERRORS, f->crc_errors, "CRC error", "CRC errors", NULL, errors_window);
        if (f->carrier_changes >= limits->flap_changes)
                add_count(v, HEALTH_FLAPPING, f->carrier_changes, "carrier change", "carrier changes", NULL,
                          flap_window);
}

void health_judge_rdma(const RdmaHealthFacts *f, HealthVerdict *v) {
        const HealthLimits *limits = limits_of(f->limits);
        char rate[32], errors_window[32], flap_window[32];

        if (f->degraded)
                health_verdict_add(v, HEALTH_DEGRADED, "%s", isempty(f->degraded_reason) ? "trained below what both ends support"
                                                                                            : f->degraded_reason);
        if (!f->sampled || !f->any_counter) {
                health_verdict_add(v, HEALTH_UNKNOWN, f->sampled ? "the port has no counters" : "not sampled yet");
                return;
        }
        health_format_window(limits->errors_window_usec, errors_window, sizeof(errors_window));
        health_format_window(limits->flap_window_usec, flap_window, sizeof(flap_window));
        /* Symbol errors per bit: a 400G port moves ten times the bits of a 40G port in the window. */
        if (f->symbol_errors != COUNTER_UNKNOWN &&
            f->symbol_errors > health_symbol_error_count(limits->symbol_error_rate, f->rate_gbps,
                                                          limits->errors_window_usec))
                add_count(v, HEALTH_ERRORS, f->symbol_errors, "symbol error", "symbol errors", NULL, errors_window);
        if (f->rcv_errors != COUNTER_UNKNOWN &&
            f->rcv_errors > health_limit_count(limits->rcv_errors_per_minute, limits->errors_window_usec))
                add_count(v, HEALTH_ERRORS, f->rcv_errors, "receive error", "receive errors", NULL, errors_window);
        uint64_t downs = f->link_downed == COUNTER_UNKNOWN ? 0 : f->link_downed,
                 recoveries = f->link_recoveries == COUNTER_UNKNOWN ? 0 : f->link_recoveries;
        if (downs >= limits->link_downs ||
            recoveries > health_limit_count(limits->link_recoveries_per_minute, limits->flap_window_usec))
                health_verdict_add(v, HEALTH_FLAPPING, "%" PRIu64 " link %s and %" PRIu64 " link error %s %s", downs,
                                   downs == 1 ? "down" : "downs", recoveries, recoveries == 1 ? "recovery" : "recoveries",
                                   flap_window);
        if (f->fallback)
                health_verdict_add(v, HEALTH_OK,
                                   "%s over TCP/IP and none over RDMA on %s port %u: a job may have fallen back to "
                                   "sockets",
                                   health_format_gbps(f->ip_gbps, rate, sizeof(rate)), strempty(f->device), f->port);
}

double health_busier(double a, double b) {
        return isnan(a) ? b : isnan(b) ? a : MAX(a, b);
}

double health_rdma_ip_gbps(const RdmaTraffic *t) {
        return health_busier(t->ip_rx_gbps, t->ip_tx_gbps);
}

bool health_rdma_fallback(RdmaFallback *s, const RdmaTraffic *t, const HealthLimits *limits, uint64_t now,
                          uint64_t interval_usec) {
        double ip_rx = t->infiniband ? t->ip_rx_gbps : 0, ip_tx = t->infiniband ? t->ip_tx_gbps : 0;
        double ip = health_rdma_ip_gbps(t);
        double rdma = health_busier(MAX(t->port_rx_gbps - (isnan(ip_rx) ? 0 : ip_rx), 0.0),
                             MAX(t->port_tx_gbps - (isnan(ip_tx) ? 0 : ip_tx), 0.0));

        /* fmax() of NaN is the other operand: a port whose counters are unknown moved nothing known. */
        if (isnan(t->port_rx_gbps) && isnan(t->port_tx_gbps))
                rdma = NAN;
        limits = limits_of(limits);
        if (isnan(ip) || isnan(rdma) || ip < limits->fallback_ip_gbps || rdma >= limits->fallback_rdma_share * ip) {
                *s = (RdmaFallback) {};
                return false;
        }
        if (s->since == 0 || s->since > now)
                s->since = now;
        s->suspected = now - s->since >= (limits->fallback_samples - 1) * interval_usec;
        return s->suspected;
}

void health_judge_thunderbolt(const TbtHealthFacts *f, HealthVerdict *v) {
        const HealthLimits *limits = limits_of(f->limits);
        char flap_window[32];

        if (!f->has_link)
                return;
        health_format_window(limits->flap_window_usec, flap_window, sizeof(flap_window));
        if (f->changes >= limits->flap_changes)
                add_count(v, HEALTH_FLAPPING, f->changes, "link change (rate, lanes or a replug)",
                          "link changes (rate, lanes or replugs)", NULL, flap_window);
        if (f->degraded)
                health_verdict_add(v, HEALTH_DEGRADED, "%s", isempty(f->degraded_reason) ? "trained below what both ends support"
                                                                                            : f->degraded_reason);
}

/* ---- escalation ---- */

static bool is_event(Health h) {
        return IN_SET(h, HEALTH_ERRORS, HEALTH_FLAPPING);
}

void health_escalate(HealthEvents *e, const HealthLimits *limits, uint64_t now, HealthVerdict *v) {
        char window[32];
        bool event = is_event(health_verdict_health(v));
        unsigned old = 0;

        limits = limits_of(limits);
        if (event && !e->in_event) {
                if (e->n == HEALTH_EVENTS_MAX) {
                        memmove(e->at, e->at + 1, (HEALTH_EVENTS_MAX - 1) * sizeof(e->at[0]));
                        e->n--;
                }
                e->at[e->n++] = now;
        }
        e->in_event = event;
        /* Oldest first: those that left the window are a prefix. */
        while (old < e->n && now - e->at[old] >= limits->escalation_window_usec)
                old++;
        if (old > 0) {
                memmove(e->at, e->at + old, (e->n - old) * sizeof(e->at[0]));
                e->n -= old;
        }
        if (limits->escalation_events == 0 || e->n < limits->escalation_events)
                return;
        health_format_window(limits->escalation_window_usec, window, sizeof(window));
        health_verdict_add(v, HEALTH_ERRORS, "%u degradation events (errors or flapping) %s: escalated", e->n, window);
}
