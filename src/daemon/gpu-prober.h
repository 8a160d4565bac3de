/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpu-prober.h — when linkprobe-probe-gpu runs: after start, past the TTL, on ProbeGpus(), never inhibited */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "probe-runner.h"
#include "shared/ratelimit.h"

typedef struct Manager Manager;

/* The inventory run lists devices only (milliseconds); it gets at most this much time. */
#define GPU_INVENTORY_DEADLINE_USEC (30 * USEC_PER_SEC)
/* After a failure, the next automatic attempt waits this long (doubling up to the TTL). */
#define GPU_RETRY_USEC (10 * 60 * USEC_PER_SEC)
/* ProbeGpus() calls waiting for one run. */
#define GPU_WAITING_MAX 64

typedef enum GpuRunKind {
        GPU_RUN_NONE,
        GPU_RUN_INVENTORY,
        GPU_RUN_MEASURE,
} GpuRunKind;

/* A number held for a device that is gone, so that it gets it back and nobody else does. */
typedef struct GpuSlot {
        unsigned number;
        char *key;
} GpuSlot;

typedef struct GpuProber {
        Manager *manager;

        ProbeRun *run;
        GpuRunKind running;
        uint64_t run_started_realtime;

        bool inventory_done;    /* a run has listed the devices since start */
        bool measure_requested; /* ProbeGpus(): measure as soon as nothing holds it off */
        unsigned failures;      /* consecutive failed runs */
        uint64_t retry_after;   /* CLOCK_BOOTTIME; no automatic run before, after a failure */
        sd_event_source *timer; /* the one timer: the next run that is due */

        sd_bus_message **waiting; /* ProbeGpus() calls answered when the next measuring run ends */
        size_t n_waiting;
        RateLimit ratelimit;      /* ProbeGpus(), per sender */

        GpuSlot *retired; /* oldest first */
        size_t n_retired;
} GpuProber;

/* Allocates the prober and the table (before anything else touches GPUs). */
int gpu_prober_new(Manager *m);
GpuProber *gpu_prober_free(GpuProber *p);

/* After READY=1: republishes the persisted results and schedules the first runs. */
int gpu_prober_start(Manager *m);

/* An inhibitor of GPU probes went away: a run that came due meanwhile starts now. */
void gpu_prober_inhibit_released(Manager *m);

/*
 * ProbeGpus(): measure now, or join the measuring run in progress. Returns 1 when message will be
 * answered when that run ends (with the gpu objects' paths, or Error.Failed), or a negative errno
 * with error set (Inhibited, Busy, NotSupported).
 */
int gpu_prober_request(Manager *m, sd_bus_message *message, sd_bus_error *error);
