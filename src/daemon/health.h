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

/* Errors are counted over the last minute, link changes over the last two. */
#define HEALTH_ERRORS_WINDOW_USEC (60 * USEC_PER_SEC)
#define HEALTH_FLAP_WINDOW_USEC (120 * USEC_PER_SEC)
/* That many link changes (PCIe speed or width, carrier, InfiniBand link downs and recoveries,
 * Thunderbolt rate, lanes or replugs) in the flapping window: flapping. */
#define HEALTH_FLAP_CHANGES 5
/* Correctable AER errors, InfiniBand symbol and receive errors, Ethernet CRC errors: that many in the
 * errors window. Any uncorrectable AER error (fatal or not) is errors at once. */
#define HEALTH_ERRORS_PER_WINDOW 10
/* Busy: moving at least this share of what the PCIe link carries as trained, or a GPU at least this
 * busy. Below a speed both ends support, a busy device is degraded, an idle one saving power. */
#define HEALTH_BUSY_SHARE 0.10
#define HEALTH_GPU_BUSY_PERCENT 25
/* Suspected fallback to sockets: at least this much over the IP stack of an RDMA port's interface, with
 * RDMA traffic below HEALTH_FALLBACK_RDMA_SHARE of it, for HEALTH_FALLBACK_SAMPLES samples in a row. */
#define HEALTH_FALLBACK_IP_GBPS 1.0
#define HEALTH_FALLBACK_RDMA_SHARE 0.05
#define HEALTH_FALLBACK_SAMPLES 5

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
        bool sampled;
        bool any_counter;         /* at least one counter file was readable */
        uint64_t symbol_errors;   /* in the errors window; COUNTER_UNKNOWN when the file is missing */
        uint64_t rcv_errors;
        uint64_t link_downed;     /* in the flapping window */
        uint64_t link_recoveries;
        bool fallback;            /* sustained IP traffic and none over RDMA (health_rdma_fallback()) */
        double ip_gbps;           /* the busier direction over the IP stack, for the reason */
        const char *device;
        unsigned port;
} RdmaHealthFacts;

typedef struct TbtHealthFacts {
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
 * (HEALTH_FALLBACK_IP_GBPS) with RDMA below HEALTH_FALLBACK_RDMA_SHARE of it, for HEALTH_FALLBACK_SAMPLES
 * samples of interval_usec in a row. On InfiniBand what RDMA itself moved is the port's counters less
 * IPoIB's; on RoCE the RDMA engine bypasses the interface's counters, and the port counts only it.
 * Returns the new suspicion (also in s->suspected). */
bool health_rdma_fallback(RdmaFallback *s, const RdmaTraffic *t, uint64_t now, uint64_t interval_usec);

/* The judgements; each adds its reasons to v. */
void health_judge_pci(const PciHealthFacts *f, HealthVerdict *v);
void health_judge_link(const LinkHealthFacts *f, HealthVerdict *v);
void health_judge_rdma(const RdmaHealthFacts *f, HealthVerdict *v);
void health_judge_thunderbolt(const TbtHealthFacts *f, HealthVerdict *v);

/* Whether a PCIe link change from a to b is what power management does: a speed change to or from
 * 2.5 GT/s with the width kept (an idle GPU parks its link there). Those are counted in LinkChanges
 * but not held against the link as flapping. */
bool health_pci_change_is_power_saving(const PciLink *a, const PciLink *b) _pure_;
