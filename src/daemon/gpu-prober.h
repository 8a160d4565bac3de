/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpu-prober.h — when linkprobe-probe-gpu runs: after start, past the TTL, on ProbeGpus(), never inhibited */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-object.h"
#include "probe-runner.h"
#include "shared/ratelimit.h"

typedef struct Config Config;
typedef struct DaemonStatus DaemonStatus;
typedef struct Gpus Gpus;
typedef struct Inhibitors Inhibitors;
typedef struct StateDirectory StateDirectory;

/*
 * Answers the ProbeGpus() calls that waited for a run: error 0 when the run measured (the objects
 * are final: the prober flushed them), -EIO when it failed, -EAGAIN when an inhibitor held it off;
 * text says so for people.
 */
typedef void (*gpu_prober_answer_t)(sd_bus_message *const *calls, size_t n, int error, const char *text,
                                    void *userdata);

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

/* What the prober works with; nothing runs before gpu_prober_start(). */
typedef struct GpuProberContext {
        Gpus *gpus;
        sd_event *event;
        const Config *config;
        DaemonStatus *status;
        Inhibitors *inhibitors;
        StateDirectory *state_directory;
        BusPublisher *publisher;
} GpuProberContext;

typedef struct GpuProber {
        GpuProberContext c;

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
        gpu_prober_answer_t answer;
        void *answer_userdata;
        /* Why the last run failed as a whole ("name: message"), NULL when it worked: with no device
         * list there is no Gpu object to say so (Manager.GpuProbeError). */
        char *last_run_error;
} GpuProber;

int gpu_prober_new(const GpuProberContext *c, GpuProber **ret);
GpuProber *gpu_prober_free(GpuProber *p);

/* After READY=1: republishes the persisted results and schedules the first runs. */
int gpu_prober_start(GpuProber *p);

/* An inhibitor of GPU probes came: a measuring run in progress is killed, its devices say
 * skipped-inhibited and its waiting callers hear so; nothing of it is published or saved. (An
 * inventory run, which only lists the devices, finishes.) */
void gpu_prober_inhibited(GpuProber *p);
/* An inhibitor of GPU probes went away: a run that came due meanwhile starts now. */
void gpu_prober_inhibit_released(GpuProber *p);

/*
 * ProbeGpus(): measure now, or join the measuring run in progress. Returns 0 when call (referenced)
 * will be answered through p->answer when that run ends, -EBUSY when GPU_WAITING_MAX callers wait
 * already, -EAGAIN when an inhibitor holds GPU probes off (the run follows when it goes).
 */
int gpu_prober_request(GpuProber *p, sd_bus_message *call);
