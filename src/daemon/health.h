/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* health.h — one judgement per link, port, PCI function and Thunderbolt hop: thresholds, windows, reasons */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "counter.h"
#include "sysfs/pci.h"

/*
 * Pure logic: the facts of one object in, Health and HealthReason out. derive-health.c gathers the
 * facts (they combine kinds: a PCI function is busy when its network link moves data) and publishes
 * the verdict. Every threshold is here, and in linkprobed(8) "HEALTH".
 */

typedef enum Health {
        HEALTH_OK,
        HEALTH_DEGRADED, /* trained below what both ends support, and not for power saving */
        HEALTH_ERRORS,   /* error counters rising */
        HEALTH_FLAPPING, /* more link changes than HEALTH_FLAP_CHANGES in the flapping window */
        HEALTH_UNKNOWN,  /* not watched, not sampled yet, or nothing to judge by */
        _HEALTH_MAX,
        _HEALTH_INVALID = -EINVAL,
} Health;

/*
 * Every window, rate and count the judge uses: linkprobed.conf's [Health] (linkprobed.conf(5) names the
 * source of each default). Rates are per minute, or per bit for symbol errors, and scaled to the window,
 * so a window changed keeps the judgement, and a 400G port is not held to a 40G port's count.
 */
typedef struct HealthLimits {
        uint64_t errors_window_usec;           /* ErrorsWindowSec=: errors are counted over it */
        uint64_t flap_window_usec;             /* FlapWindowSec=: link changes are counted over it */
        unsigned flap_changes;                 /* FlapChanges=: that many in the window is flapping */
        double pcie_correctable_per_minute;    /* PcieCorrectableErrorsPerMinute= (DCGM: replays, 8) */
        double crc_errors_per_minute;          /* LinkCrcErrorsPerMinute= */
        double symbol_error_rate;              /* SymbolErrorRate=: errors per bit (IBTA BER 1e-12) */
        double rcv_errors_per_minute;          /* RcvErrorsPerMinute= */
        unsigned link_downs;                   /* LinkDowns=: InfiniBand link downs in the flap window */
        double link_recoveries_per_minute;     /* LinkErrorRecoveriesPerMinute= (NVIDIA: above 5) */
        double busy_share;                     /* BusyPercent=/100: busy when moving that share */
        unsigned gpu_busy_percent;             /* GpuBusyPercent= */
        double fallback_ip_gbps;               /* FallbackIpGbps= */
        double fallback_rdma_share;            /* FallbackRdmaPercent=/100 */
        unsigned fallback_samples;             /* FallbackSamples= */
        uint64_t escalation_window_usec;       /* EscalationWindowSec= (NVIDIA: 24 h) */
        unsigned escalation_events;            /* EscalationEvents= (NVIDIA: 5); 0: never escalated */
} HealthLimits;

/* The windows are kept in buckets (counter.h): at most WINDOW_SPAN_USEC, at least one bucket. */
#define HEALTH_WINDOW_MIN_USEC WINDOW_BUCKET_USEC
#define HEALTH_WINDOW_MAX_USEC WINDOW_SPAN_USEC

/* The escalation window is kept as the times of the last events (HealthEvents): from a minute to a week,
 * and at most HEALTH_EVENTS_MAX events are counted in it. */
#define HEALTH_ESCALATION_WINDOW_MIN_USEC (60 * USEC_PER_SEC)
#define HEALTH_ESCALATION_WINDOW_MAX_USEC (7 * 24 * 3600 * USEC_PER_SEC)
#define HEALTH_EVENTS_MAX 16u

extern const HealthLimits health_limits_default;

/* Whether the limits make sense together; on failure why says what to change. */
int health_limits_check(const HealthLimits *l, char *why, size_t size);
/* How many events of rate_per_minute fit in window_usec (rounded down): more than that is judged. */
uint64_t health_limit_count(double rate_per_minute, uint64_t window_usec) _const_;
/* How many symbol errors a port at rate_gbps makes in window_usec at the bit error rate ber (rounded down;
 * a port whose rate is unknown is taken for 40 Gb/s, InfiniBand's most common rate of the 2010s): more
 * than that is judged. */
uint64_t health_symbol_error_count(double ber, double rate_gbps, uint64_t window_usec) _const_;
/* "in the last minute", "in the last 2 min", "in the last 45 s", "in the last 24 h". */
char *health_format_window(uint64_t usec, char *buf, size_t size);

const char *health_to_string(Health h) _const_;
Health health_from_string(const char *s) _pure_;
/* errors > flapping > degraded > ok > unknown: which of two verdicts is the worse. */
int health_severity(Health h) _const_;

#define HEALTH_VERDICT_MAX 6

/* What is wrong (or worth saying) about one object, collected reason by reason. */
typedef struct HealthVerdict {
        size_t n;
        Health health[HEALTH_VERDICT_MAX];
        char *text[HEALTH_VERDICT_MAX];
        bool oom;
} HealthVerdict;

void health_verdict_done(HealthVerdict *v);
/* Adds a reason; HEALTH_OK for one that only informs ("power saving"). */
void health_verdict_add(HealthVerdict *v, Health h, const char *format, ...) _printf_(3, 4);
/* The worst health added, HEALTH_OK when none was. */
Health health_verdict_health(const HealthVerdict *v) _pure_;
/* The reasons of the verdict, worst first, joined by "; "; informing ones only when the verdict is ok.
 * "" when there are none; NULL out of memory. */
char *health_verdict_reason(const HealthVerdict *v);

/*
 * What an object publishes of its verdict (derive-health.c writes it, health-bus.h publishes it): one
 * struct that every judged kind embeds, instead of four field sets. Degraded and DegradedReason come
 * from the same verdict as Health, so they cannot disagree.
 */
/*
 * An object's degradation events: each time its verdict turned to errors or flapping (what the rates and
 * counts judge; a structural Degraded stands, it does not happen). NVIDIA's NIC health monitor escalates
 * after 5 such events in 24 h; so does health_escalate(). Kept in memory only: a restart forgets them.
 */
typedef struct HealthEvents {
        uint64_t at[HEALTH_EVENTS_MAX]; /* CLOCK_MONOTONIC usec of the most recent events, oldest first */
        unsigned n;
        bool in_event; /* the last verdict judged errors or flapping, before escalation */
} HealthEvents;

/* Counts an event when the verdict v turns to errors or flapping, forgets those older than the escalation
 * window, and escalates: with EscalationEvents= of them in the window, v gets an errors reason that says
 * so, until fewer are left in it. Call once per judgement of the object (now: CLOCK_MONOTONIC usec). */
void health_escalate(HealthEvents *e, const HealthLimits *limits, uint64_t now, HealthVerdict *v);

/* An object's published Health and Degraded, one per object of every kind that has them: derive-health.c
 * fills it from one verdict, health-bus.h marshals it. */
typedef struct HealthState {
        Health health;         /* Health */
        HealthEvents events;   /* the degradation events that escalate it */
        bool degraded;         /* Degraded: health_verdict_degraded() */
        char *health_reason;   /* HealthReason */
        char *degraded_reason; /* DegradedReason: the degraded reasons, else what the kind says instead */
} HealthState;

/* A new object's state: Health unknown, nothing degraded. */
#define HEALTH_STATE_INIT ((HealthState) { .health = HEALTH_UNKNOWN })
void health_state_done(HealthState *s);

/* The one predicate behind every published Degraded: whether the verdict holds a degraded reason. So a
 * Degraded object is Health=degraded, or worse (errors, flapping); a link below its best for power
 * saving has only an informing reason, and is neither. */
bool health_verdict_degraded(const HealthVerdict *v) _pure_;
/* The degraded reasons joined by "; " (DegradedReason); "" when there are none; NULL out of memory. */
char *health_verdict_degraded_reason(const HealthVerdict *v);
/* Keeps only the degraded reasons: what is judged from structure alone, as both ends' capabilities,
 * stands while the watch is off. */
void health_verdict_keep_degraded(HealthVerdict *v);

/* "1,415": a count with thousands separators. */
char *health_format_count(uint64_t n, char *buf, size_t size);
/* "42 Gb/s", "4.2 Gb/s", "0.42 Gb/s". */
char *health_format_gbps(double gbps, char *buf, size_t size);

/* ---- the facts of each kind ---- */

/* How busy a device (and what is below a port) is. */
typedef struct HealthLoad {
        double traffic_gbps; /* the busier direction of its links and ports; NaN unknown */
        int gpu_busy_percent; /* -1: not a GPU, or not known */
        bool gpu;             /* a GPU: busy unknown without gpu_busy_percent */
} HealthLoad;

/* One PCIe link that trained below what both ends support (pci-tree.c says so: the structural fact),
 * and what it carries; the judge says whether that is degraded or power saving. */
typedef struct PciLinkFacts {
        PciLink link;     /* as trained (either end's reading) */
        PciLink capable;  /* the lower of both ends' maximum; 0 fields unknown */
        double link_gbps; /* link after encoding; 0 unknown */
        HealthLoad load;  /* what the function below the link, and everything below it, moves */
} PciLinkFacts;

typedef struct PciHealthFacts {
        const HealthLimits *limits; /* NULL: health_limits_default */
        bool sampled;         /* the watch read it at least once */
        bool watched;         /* the watch runs: without it, how busy a device is is never known */
        bool has_link;        /* the link above it (an endpoint or upstream port) */
        bool tunnel;          /* that link is a Thunderbolt/USB4 PCIe tunnel: never judged by its rate */
        bool trained_low;     /* that link trained below what both ends support */
        PciLink link;         /* as trained (either end's reading) */
        PciLink capable;      /* the lower of both ends' maximum; 0 fields unknown */
        double link_gbps;     /* link after encoding; 0 unknown */
        HealthLoad load;
        /* A root or downstream port shows the link below it, to the function named, when that trained
         * low; NULL when none did. */
        const char *below_address;
        PciLinkFacts below;
        uint64_t speed_changes, width_changes; /* in the flapping window, power saving excluded */
        uint64_t correctable, nonfatal, fatal; /* in the errors window; COUNTER_UNKNOWN: no AER */
        const char *correctable_kinds;         /* "Receiver Error, Bad TLP": what rose last; NULL */
} PciHealthFacts;

typedef struct LinkHealthFacts {
        const HealthLimits *limits; /* NULL: health_limits_default */
        /* The structural fact (derive-link.c, link-capability.c): trained below the fastest speed both ends'
         * link modes share, and its reason. Known without the watch, so it stands whether or not statistics
         * were sampled; the judge makes it the verdict's degraded reason. */
        bool trained_low;
        const char *trained_low_reason;
        bool sampled; /* statistics arrived */
        uint64_t crc_errors;      /* in the errors window; COUNTER_UNKNOWN: no statistics */
        uint64_t carrier_changes; /* in the flapping window */
} LinkHealthFacts;

typedef struct RdmaHealthFacts {
        const HealthLimits *limits; /* NULL: health_limits_default */
        double rate_gbps;         /* the port's rate (symbol errors are judged per bit); 0 unknown */
        bool sampled;
        bool any_counter;         /* at least one counter file was readable */
        uint64_t symbol_errors;   /* in the errors window; COUNTER_UNKNOWN when the file is missing */
        uint64_t rcv_errors;
        uint64_t link_downed;     /* in the flapping window */
        uint64_t link_recoveries;
        bool fallback;            /* sustained IP traffic and none over RDMA (health_rdma_fallback()) */
        double ip_gbps;           /* the busier direction over the IP stack, for the reason */
        /* Structural: the link trained below what both ends support (rdma-remote.c, from the
         * neighbour's PortInfo). Judged whether or not the counters were sampled. */
        bool degraded;
        const char *degraded_reason;
        const char *device;
        unsigned port;
} RdmaHealthFacts;

typedef struct TbtHealthFacts {
        const HealthLimits *limits; /* NULL: health_limits_default */
        bool has_link;
        bool degraded;
        const char *degraded_reason;
        uint64_t changes; /* in the flapping window */
} TbtHealthFacts;

/* What an RDMA port and its own network interface moved in the last sample, in Gb/s; NaN unknown. */
typedef struct RdmaTraffic {
        double port_rx_gbps, port_tx_gbps; /* the port's counters */
        double ip_rx_gbps, ip_tx_gbps;     /* its interface's, over the IP stack */
        bool infiniband;                   /* the port's counters include its IPoIB interface's packets */
} RdmaTraffic;

/* Where the suspicion of a fallback to sockets stands, from sample to sample. */
typedef struct RdmaFallback {
        uint64_t since; /* CLOCK_MONOTONIC usec of the first sample of the current run; 0 none */
        bool suspected;
} RdmaFallback;

/* The larger of two rates, either NaN when unknown (NaN only when both are). */
double health_busier(double a, double b) _const_;
/* The busier direction of the IP traffic (NaN unknown). */
double health_rdma_ip_gbps(const RdmaTraffic *t) _pure_;
/* One sample of the fallback rule: sustained traffic over the IP stack of the port's interface
 * (fallback_ip_gbps) with RDMA below fallback_rdma_share of it, for fallback_samples samples of
 * interval_usec in a row. On InfiniBand what RDMA itself moved is the port's counters less
 * IPoIB's; on RoCE the RDMA engine bypasses the interface's counters, and the port counts only it.
 * Returns the new suspicion (also in s->suspected). */
bool health_rdma_fallback(RdmaFallback *s, const RdmaTraffic *t, const HealthLimits *limits, uint64_t now,
                          uint64_t interval_usec);

/* The judgements; each adds its reasons to v. */
void health_judge_pci(const PciHealthFacts *f, HealthVerdict *v);
void health_judge_link(const LinkHealthFacts *f, HealthVerdict *v);
void health_judge_rdma(const RdmaHealthFacts *f, HealthVerdict *v);
void health_judge_thunderbolt(const TbtHealthFacts *f, HealthVerdict *v);

/* Whether a PCIe link change from a to b is what power management does: a speed change to or from
 * 2.5 GT/s with the width kept (an idle GPU parks its link there). Those are counted in LinkChanges
 * but not held against the link as flapping. */
bool health_pci_change_is_power_saving(const PciLink *a, const PciLink *b) _pure_;
