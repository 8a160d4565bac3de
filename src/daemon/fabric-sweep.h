/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fabric-sweep.h — [Fabric] Sweep=yes: the whole InfiniBand subnet walked by linkprobe-probe-fabric (libibnetdisc) as a child, every switch and switch-to-switch link published */
#pragma once

#include <systemd/sd-event.h>

#include "probe-runner.h"
#include "shared/macros.h"

typedef struct Switches Switches;

#define FABRIC_SWEEP_PROGRAM "linkprobe-probe-fabric"
/* Events (port changes, Refresh()) start a sweep at most this often; more of them in between make one
 * more sweep when the gap has passed. */
#define FABRIC_SWEEP_MIN_GAP_USEC (2 * USEC_PER_SEC)
/* What the probe's document may hold per switch (36 links of ~250 bytes), on top of a fixed part. */
#define FABRIC_SWEEP_OUTPUT_PER_SWITCH 16384
#define FABRIC_SWEEP_OUTPUT_BASE (1U << 20)

typedef struct FabricSweepConfig {
        uint64_t interval_usec;
        uint64_t timeout_usec;
        unsigned max_switches;
        unsigned outstanding_smps; /* --outstanding-smps */
} FabricSweepConfig;

typedef struct FabricSweep {
        sd_event *event;
        Switches *switches;
        FabricSweepConfig config;

        ProbeRun *run;
        bool again;              /* asked for while one ran */
        uint64_t last_start;     /* CLOCK_MONOTONIC */
        sd_event_source *timer;  /* the next sweep: the interval, or the end of the gap */
        char *last_error;        /* why the last sweep was not applied; NULL when it was */
        /* The running sweep's document, checked and judged while the probe exits (its exit status
         * still decides whether it is applied). */
        struct FabricSweepParsed *prepared;
        bool warned_truncated;
        unsigned sweeps, failures;
        /* Called after a sweep was applied (the caller flushes the bus and renders metrics). */
        void (*applied)(void *userdata);
        void *userdata;
} FabricSweep;

int fabric_sweep_new(sd_event *event, Switches *switches, const FabricSweepConfig *config, FabricSweep **ret);
FabricSweep *fabric_sweep_free(FabricSweep *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(FabricSweep *, fabric_sweep_free);

/* A sweep now, or as soon as the running one ended and the gap passed (start, port events, Refresh()). */
void fabric_sweep_request(FabricSweep *s);

/*
 * Applies a probe document to the switches: 0, or -EBADMSG with *ret_error saying why (a document that
 * is not the probe's, an incomplete walk); nothing is changed then. Exported for tests and fuzzing.
 */
int fabric_sweep_apply_document(Switches *switches, json_object *doc, unsigned max_switches, uint64_t now,
                                char **ret_error, bool *ret_truncated);
