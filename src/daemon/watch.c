/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the kernel changes without telling anyone: the PCIe bandwidth controller retrains a link and
 * updates current_link_speed with no uevent; AER, InfiniBand and Ethernet error counters rise; bytes
 * move. One timer for all of it ([Watch] IntervalSec=, 2 s by default; 0: no timer, no wakeups): a
 * sample is one rtnetlink dump of every link's statistics and a few sysfs reads per published PCI
 * function and RDMA port, each kind's by its sampler (link-watch.c, pci-watch.c, rdma-watch.c: watch.h's
 * one shape), which records what it read on its objects; the derivation pass then judges every object
 * once (derive-health.c).
 *
 * The timer's samples keep out of the way: at 2001 links one dump is some 3 ms of work and the signals
 * it causes 20 to 60 ms, in one piece they would hold up every bus call and link event meanwhile. A
 * sampler that can read in slices (the links' dump, a datagram at a time) does so at WATCH_PRIORITY,
 * below bus calls and netlink events, and the publisher sends the signals in slices too (bus-object.h).
 */
#include <time.h>

#include "shared/log.h"
#include "shared/time-util.h"
#include "watch.h"

struct Watch {
        WatchContext c;
        sd_event_source *timer;
        bool failing[WATCH_SAMPLERS_MAX]; /* said once until it works again */
        /* The sample under way: the sampler it is at (n_samplers: none), what each read, since when. */
        size_t current;
        bool running;
        bool sliced;
        size_t counts[WATCH_SAMPLERS_MAX];
        uint64_t started;
};

static void watch_sampler_result(Watch *w, size_t i, int r, size_t n) {
        const WatchSampler *s = &w->c.samplers[i];

        if (r < 0 && !w->failing[i] && s->failed)
                log_warning_errno(r, "%s: %m", s->failed);
        else if (r >= 0 && w->failing[i] && s->recovered)
                log_info("%s", s->recovered);
        w->failing[i] = r < 0;
        w->counts[i] = n;
}

static void watch_finish(Watch *w) {
        char counts[160] = "";
        size_t len = 0;

        for (size_t i = 0; i < w->c.n_samplers; i++) {
                /* "3 links, 2 PCI functions": a debug line, cut short rather than allocated. */
                int k = snprintf(counts + len, sizeof(counts) - len, "%s%zu %s", i > 0 ? ", " : "", w->counts[i],
                                 w->c.samplers[i].objects);
                if (k > 0 && (size_t) k < sizeof(counts) - len)
                        len += (size_t) k;
        }
        w->running = false;
        *w->c.sampled = true;
        bus_publisher_schedule(w->c.publisher);
        log_debug("Watch: %s sampled over %" PRIu64 " us%s.", counts, now_usec(CLOCK_MONOTONIC) - w->started,
                  w->sliced ? ", in slices" : ", at once");
}

static void on_sampler_done(void *userdata, size_t n, int r);

/* From the sampler it is at to the end: each sliced one returns here from on_sampler_done(). */
static void watch_continue(Watch *w) {
        for (; w->current < w->c.n_samplers; w->current++) {
                const WatchSampler *s = &w->c.samplers[w->current];
                size_t n = 0;
                int r;

                if (w->sliced && s->start) {
                        r = s->start(s->source, w->c.interval_usec, on_sampler_done, w);
                        if (r >= 0)
                                return;
                        if (r != -EOPNOTSUPP) {
                                watch_sampler_result(w, w->current, r, 0);
                                continue;
                        }
                }
                r = s->sample(s->source, now_usec(CLOCK_MONOTONIC), w->c.interval_usec, &n);
                watch_sampler_result(w, w->current, r, n);
        }
        watch_finish(w);
}

static void on_sampler_done(void *userdata, size_t n, int r) {
        Watch *w = userdata;

        watch_sampler_result(w, w->current, r, n);
        w->current++;
        watch_continue(w);
}

static void watch_sample(Watch *w, bool sliced) {
        w->running = true;
        w->sliced = sliced;
        w->current = 0;
        w->started = now_usec(CLOCK_MONOTONIC);
        memset(w->counts, 0, sizeof(w->counts));
        watch_continue(w);
}

static int on_watch_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Watch *w = userdata;
        int r;

        /* The loop was too busy to finish the last one within an interval: this one is skipped, the
         * next reading's rate covers both. */
        if (w->running)
                log_debug("Watch: the last sample is still being read, skipping one.");
        else
                watch_sample(w, true);
        r = sd_event_source_set_time_relative(s, w->c.interval_usec);
        if (r < 0)
                return log_error_errno(r, "Failed to rearm the watch timer: %m");
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int watch_new(const WatchContext *c, Watch **ret) {
        _cleanup_(watch_freep) Watch *w = NULL;
        int r;

        *ret = NULL;
        if (c->interval_usec == 0)
                return 0;
        w = new0(Watch, 1);
        if (!w)
                return log_oom();
        w->c = *c;
        /* Rates are computed over the time that really passed, so the wakeup may slide by a tenth of
         * the interval to share the CPU's wakeup with other timers. */
        r = sd_event_add_time_relative(c->event, &w->timer, CLOCK_MONOTONIC, c->interval_usec, c->interval_usec / 10,
                                       on_watch_timer, w);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the watch timer: %m");
        (void) sd_event_source_set_description(w->timer, "watch");
        (void) sd_event_source_set_priority(w->timer, WATCH_PRIORITY);
        (void) sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
        *ret = TAKE_PTR(w);
        return 0;
}

void watch_start(Watch *w) {
        if (!w)
                return;
        watch_sample(w, false);
        (void) sd_event_source_set_time_relative(w->timer, w->c.interval_usec);
        (void) sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT);
}

Watch *watch_free(Watch *w) {
        if (!w)
                return NULL;
        if (w->running && w->current < w->c.n_samplers && w->c.samplers[w->current].cancel)
                w->c.samplers[w->current].cancel(w->c.samplers[w->current].source);
        sd_event_source_disable_unref(w->timer);
        return mfree(w);
}
