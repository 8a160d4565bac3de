/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * When linkprobe-probe-gpu runs. After READY=1 an inventory run (milliseconds) publishes the devices,
 * then a measuring run measures those without a result. Afterwards one timer waits for the oldest
 * result to pass the TTL (plus a random delay, so machines started together do not measure
 * together). At most one run at a time; none starts while an inhibitor of "gpu" is held. A device
 * that failed is retried after GPU_RETRY_USEC, doubling each time up to the TTL.
 */
#include <sys/random.h>

#include "config.h"
#include "gpu-prober.h"
#include "gpu.h"
#include "inhibit.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "status.h"

#define GPU_PROBE_PROGRAM "linkprobe-probe-gpu"

int gpu_prober_new(const GpuProberContext *c, GpuProber **ret) {
        GpuProber *p;

        p = new0(GpuProber, 1);
        if (!p)
                return -ENOMEM;
        *p = (GpuProber) { .c = *c };
        /* Joining a run costs nothing; starting one costs seconds of GPU time. */
        ratelimit_init(&p->ratelimit, 1, 5, 1024);
        *ret = p;
        return 0;
}

static void gpu_prober_drop_waiting(GpuProber *p) {
        for (size_t i = 0; i < p->n_waiting; i++)
                sd_bus_message_unref(p->waiting[i]);
        p->waiting = mfree(p->waiting);
        p->n_waiting = 0;
}

GpuProber *gpu_prober_free(GpuProber *p) {
        if (!p)
                return NULL;
        p->run = probe_run_free(p->run);
        p->timer = sd_event_source_disable_unref(p->timer);
        gpu_prober_drop_waiting(p);
        ratelimit_done(&p->ratelimit);
        free(p->last_run_error);
        return mfree(p);
}

static uint64_t random_below(uint64_t n) {
        uint64_t v = 0;

        if (n == 0)
                return 0;
        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
                v = (uint64_t) random() << 31 ^ (uint64_t) random();
        return v % n;
}

/* When g's result needs renewing, on CLOCK_BOOTTIME (so time asleep counts), UINT64_MAX for never. */
static uint64_t gpu_due(const GpuProber *p, const Gpu *g, uint64_t now_realtime, uint64_t now_boottime) {
        uint64_t at = g->measurement.measured_at_usec, ttl = p->c.config->gpu_ttl_usec;

        if (at == 0)
                return now_boottime; /* nothing known */
        if (ttl == 0)
                return UINT64_MAX;
        if (at > now_realtime || now_realtime - at >= ttl)
                return at > now_realtime ? now_boottime + ttl : now_boottime;
        return now_boottime + (ttl - (now_realtime - at));
}

static void gpu_prober_arm(GpuProber *p, uint64_t when) {
        int r;

        if (when == UINT64_MAX) {
                if (p->timer)
                        (void) sd_event_source_set_enabled(p->timer, SD_EVENT_OFF);
                return;
        }
        if (p->timer) {
                r = sd_event_source_set_time(p->timer, when);
                if (r >= 0)
                        r = sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT);
        } else
                r = -ENOENT;
        if (r < 0)
                log_warning_errno(r, "Cannot arm the GPU probe timer, the next run waits for ProbeGpus(): %m");
}

static void gpu_prober_schedule(GpuProber *p);

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        gpu_prober_schedule(userdata);
        return 0;
}

/* Answers the waiting ProbeGpus() calls: error 0 for the measured objects, else error and text. */
static void gpu_prober_answer(GpuProber *p, int error, const char *text) {
        if (p->n_waiting == 0)
                return;
        /* Clients that read the objects after the answer see the final values, and subscribers get the
         * PropertiesChanged before it. */
        bus_publisher_flush(p->c.publisher);
        if (p->answer)
                p->answer(p->waiting, p->n_waiting, error, text, p->answer_userdata);
        gpu_prober_drop_waiting(p);
}

/* A whole run failed (or could not start): every device says so, and automatic runs back off. */
static void gpu_prober_failed(GpuProber *p, GpuRunKind kind, const char *name, const char *message) {
        _cleanup_(freep) char *text = NULL;
        Gpu *g;

        if (asprintf(&text, "%s: %s", strna(name), strna(message)) < 0)
                text = NULL;
        log_warning("GPU %s run failed: %s", kind == GPU_RUN_INVENTORY ? "inventory" : "measuring", strna(text));
        TABLE_FOREACH(g, &p->c.gpus->table)
                gpu_set_probe_state(g, GPU_PROBE_FAILED, text ?: "failed");
        _cleanup_(freep) char *answer = NULL;
        if (text && asprintf(&answer, "The GPU probe failed: %s", text) < 0)
                answer = NULL;
        /* No device list means no facts about GPUs: say so where State is, and why. */
        if (bus_object_set_string(&p->c.status->bus, &p->last_run_error, text ?: "failed", "GpuProbeError") < 0)
                log_oom();
        daemon_status_set_degraded(p->c.status, "gpu-probe-failed", true);
        p->measure_requested = false;
        gpu_prober_answer(p, -EIO, answer ?: "The GPU probe failed.");
}

static void gpu_prober_back_off(GpuProber *p, bool failed) {
        uint64_t ttl = p->c.config->gpu_ttl_usec, delay;

        if (!failed) {
                p->failures = 0;
                p->retry_after = 0;
                return;
        }
        p->failures++;
        delay = GPU_RETRY_USEC;
        if (ttl > 0 && ttl < delay)
                delay = ttl;
        for (unsigned i = 1; i < p->failures && delay < MAX(ttl, GPU_RETRY_USEC); i++)
                delay *= 2;
        delay = MIN(delay, MAX(ttl, GPU_RETRY_USEC));
        p->retry_after = now_usec(CLOCK_BOOTTIME) + delay;
        log_debug("Next automatic GPU probe in %" PRIu64 " s at the earliest.", delay / USEC_PER_SEC);
}

static void on_probe_done(ProbeRun *run, const ProbeResult *result, void *userdata) {
        GpuProber *p = userdata;
        GpuRunKind kind = p->running;
        bool measured = kind == GPU_RUN_MEASURE;
        int failed_devices = 0;

        p->run = NULL;
        p->running = GPU_RUN_NONE;

        if (result->outcome == PROBE_OUTCOME_OK) {
                failed_devices = gpus_apply_document(p->c.gpus, result->document, measured, p->run_started_realtime,
                                                     p->c.config->gpu_quick);
                if (failed_devices < 0) {
                        gpu_prober_failed(p, kind, "bad-output", "the document has no device list");
                        gpu_prober_back_off(p, true);
                } else {
                        p->inventory_done = true;
                        daemon_status_set_degraded(p->c.status, "gpu-probe-failed", false);
                        (void) bus_object_set_string(&p->c.status->bus, &p->last_run_error, NULL, "GpuProbeError");
                        if (measured) {
                                Gpu *g;
                                uint64_t now = now_usec(CLOCK_REALTIME);
                                TABLE_FOREACH(g, &p->c.gpus->table)
                                        gpu_update_stale(g, now, p->c.config->gpu_ttl_usec);
                                p->measure_requested = false;
                                gpu_prober_answer(p, 0, NULL);
                        }
                        if (table_size(&p->c.gpus->table) == 0)
                                log_debug("No OpenCL devices found.");
                        gpu_prober_back_off(p, failed_devices > 0);
                }
        } else if (result->outcome == PROBE_OUTCOME_UNSUPPORTED) {
                Gpu *g;
                p->inventory_done = true;
                TABLE_FOREACH(g, &p->c.gpus->table)
                        gpu_set_probe_state(g, GPU_PROBE_UNSUPPORTED, result->error_message);
                p->measure_requested = false;
                gpu_prober_answer(p, 0, NULL);
                gpu_prober_back_off(p, true);
        } else {
                gpu_prober_failed(p, kind, result->error_name, result->error_message);
                gpu_prober_back_off(p, true);
        }

        (void) gpus_save(p->c.gpus, p->c.state_directory);
        gpu_prober_schedule(p);
}

static void gpu_prober_start_run(GpuProber *p, GpuRunKind kind) {
        uint64_t deadline = p->c.config->gpu_deadline_usec;
        char deadline_arg[64];
        const char *args[4] = {};
        size_t n = 0;
        Gpu *g;
        int r;

        if (kind == GPU_RUN_INVENTORY)
                deadline = MIN(deadline, GPU_INVENTORY_DEADLINE_USEC);
        snprintf(deadline_arg, sizeof(deadline_arg), "--deadline=%" PRIu64 "ms", deadline / USEC_PER_MSEC);
        if (kind == GPU_RUN_MEASURE)
                args[n++] = "--measure";
        if (kind == GPU_RUN_MEASURE && p->c.config->gpu_quick)
                args[n++] = "--quick";
        args[n++] = deadline_arg;

        p->run_started_realtime = now_usec(CLOCK_REALTIME);
        r = probe_run_start(p->c.event, probe_directory(), GPU_PROBE_PROGRAM, (char *const *) args, deadline,
                            on_probe_done, p, &p->run);
        if (r < 0) {
                _cleanup_(freep) char *message = NULL;

                p->run = NULL;
                if (asprintf(&message, "cannot run %s/%s: %s", probe_directory(), GPU_PROBE_PROGRAM, strerror(-r)) < 0)
                        message = NULL;
                gpu_prober_failed(p, kind, "cannot-run", message ?: strerror(-r));
                gpu_prober_back_off(p, true);
                (void) gpus_save(p->c.gpus, p->c.state_directory);
                /* The back-off makes the next schedule arm the timer instead of recursing. */
                gpu_prober_schedule(p);
                return;
        }
        p->running = kind;
        log_debug("Started a GPU %s run.", kind == GPU_RUN_INVENTORY ? "inventory" : "measuring");
        if (kind == GPU_RUN_MEASURE)
                TABLE_FOREACH(g, &p->c.gpus->table)
                        gpu_set_probe_state(g, GPU_PROBE_RUNNING, NULL);
}

static void gpu_prober_schedule(GpuProber *p) {
        uint64_t now_bt = now_usec(CLOCK_BOOTTIME), now_rt = now_usec(CLOCK_REALTIME), next = UINT64_MAX;
        GpuRunKind kind = GPU_RUN_MEASURE;
        Gpu *g;

        if (p->run)
                return; /* called again when it ends */

        TABLE_FOREACH(g, &p->c.gpus->table)
                gpu_update_stale(g, now_rt, p->c.config->gpu_ttl_usec);

        if (!p->inventory_done)
                kind = GPU_RUN_INVENTORY;
        /* Asked for: now, whatever the back-off says. */
        if (p->measure_requested)
                next = now_bt;
        else if (!p->inventory_done)
                next = MAX(now_bt, p->retry_after);
        else {
                TABLE_FOREACH(g, &p->c.gpus->table)
                        next = MIN(next, gpu_due(p, g, now_rt, now_bt));
                if (next != UINT64_MAX)
                        next = MAX(next, p->retry_after);
        }

        if (next > now_bt) {
                /* Renewals wander by up to RandomizedDelaySec=, so that a cluster started together does
                 * not measure together. */
                if (next != UINT64_MAX && p->c.config->gpu_randomized_delay_usec > 0)
                        next += random_below(p->c.config->gpu_randomized_delay_usec + 1);
                gpu_prober_arm(p, next);
                return;
        }
        gpu_prober_arm(p, UINT64_MAX);

        if (inhibitors_cover(p->c.inhibitors, "gpu")) {
                log_debug("A GPU %s run is due but inhibited.", kind == GPU_RUN_INVENTORY ? "inventory" : "measuring");
                TABLE_FOREACH(g, &p->c.gpus->table)
                        gpu_set_probe_state(g, GPU_PROBE_SKIPPED_INHIBITED, NULL);
                /* Callers that asked before the inhibitor came are not kept waiting for it. */
                gpu_prober_answer(p, -EAGAIN, "GPU probes were inhibited before the measurement could start.");
                return; /* gpu_prober_inhibit_released() comes back here */
        }
        gpu_prober_start_run(p, kind);
}

int gpu_prober_start(GpuProber *p) {
        int r;

        r = sd_event_add_time(p->c.event, &p->timer, CLOCK_BOOTTIME, UINT64_MAX, 0, on_timer, p);
        if (r < 0)
                return log_error_errno(r, "Cannot create the GPU probe timer: %m");
        (void) sd_event_source_set_enabled(p->timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(p->timer, "gpu-probe");
        /* A renewal a little late costs nothing; let the kernel batch the wake-up with others. */
        (void) sd_event_source_set_time_accuracy(p->timer, MAX(p->c.config->gpu_ttl_usec / 100, USEC_PER_MSEC));

        (void) gpus_load(p->c.gpus, p->c.state_directory);
        gpu_prober_schedule(p);
        return 0;
}

void gpu_prober_inhibited(GpuProber *p) {
        Gpu *g;

        /* An inventory run only lists devices (milliseconds, no load on them): it finishes. */
        if (!p || !p->run || p->running != GPU_RUN_MEASURE)
                return;
        /* "Inhibit" means now: the run is killed (its process group), and nothing of it is published
         * or saved. What was due is due again once the last inhibitor goes. */
        log_info("Stopping the GPU measuring run: GPU probes are inhibited.");
        p->run = probe_run_free(p->run);
        p->running = GPU_RUN_NONE;
        TABLE_FOREACH(g, &p->c.gpus->table)
                gpu_set_probe_state(g, GPU_PROBE_SKIPPED_INHIBITED, NULL);
        gpu_prober_answer(p, -EAGAIN, "GPU probes were inhibited while the measurement ran.");
}

void gpu_prober_inhibit_released(GpuProber *p) {
        if (p && p->timer)
                gpu_prober_schedule(p);
}

int gpu_prober_request(GpuProber *p, sd_bus_message *call) {
        Gpu *g;

        if (p->n_waiting >= GPU_WAITING_MAX)
                return -EBUSY;

        /* A measurement in progress is as fresh as one started now: wait for it. */
        if (p->running != GPU_RUN_MEASURE && inhibitors_cover(p->c.inhibitors, "gpu")) {
                /* Measured as soon as the last inhibitor goes. */
                p->measure_requested = true;
                TABLE_FOREACH(g, &p->c.gpus->table)
                        gpu_set_probe_state(g, GPU_PROBE_SKIPPED_INHIBITED, NULL);
                return -EAGAIN;
        }

        sd_bus_message **grown = reallocarray(p->waiting, p->n_waiting + 1, sizeof(sd_bus_message *));
        if (!grown)
                return -ENOMEM;
        p->waiting = grown;
        p->waiting[p->n_waiting++] = sd_bus_message_ref(call);
        if (p->running != GPU_RUN_MEASURE) {
                p->measure_requested = true;
                gpu_prober_schedule(p);
        }
        return 0;
}
