/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the kernel changes without telling anyone: the PCIe bandwidth controller retrains a link and
 * updates current_link_speed with no uevent; AER, InfiniBand and Ethernet error counters rise; bytes
 * move. One timer for all of it ([Watch] IntervalSec=, 2 s by default; 0: no timer, no wakeups): a
 * sample is one rtnetlink dump of every link's statistics and a few sysfs reads per published PCI
 * function and RDMA port, each kind's by its sampler (link-watch.c, pci-watch.c, rdma-watch.c: watch.h's
 * one shape), which records what it read on its objects; the derivation pass then judges every object
 * once (derive-health.c).
 */
#include <time.h>

#include "shared/log.h"
#include "shared/time-util.h"
#include "watch.h"

struct Watch {
        WatchContext c;
        sd_event_source *timer;
        bool failing[WATCH_SAMPLERS_MAX]; /* said once until it works again */
};

static void watch_sample(Watch *w) {
        uint64_t now = now_usec(CLOCK_MONOTONIC), cpu = now_usec(CLOCK_THREAD_CPUTIME_ID);
        char counts[160] = "";
        size_t len = 0;

        for (size_t i = 0; i < w->c.n_samplers; i++) {
                const WatchSampler *s = &w->c.samplers[i];
                size_t n = 0;
                int r;

                r = s->sample(s->source, now, w->c.interval_usec, &n);
                if (r < 0 && !w->failing[i] && s->failed)
                        log_warning_errno(r, "%s: %m", s->failed);
                else if (r >= 0 && w->failing[i] && s->recovered)
                        log_info("%s", s->recovered);
                w->failing[i] = r < 0;
                /* "3 links, 2 PCI functions": a debug line, cut short rather than allocated. */
                int k = snprintf(counts + len, sizeof(counts) - len, "%s%zu %s", i > 0 ? ", " : "", n, s->objects);
                if (k > 0 && (size_t) k < sizeof(counts) - len)
                        len += (size_t) k;
        }

        *w->c.sampled = true;
        bus_publisher_schedule(w->c.publisher);
        log_debug("Watch: %s sampled in %" PRIu64 " us of CPU.", counts, now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu);
}

static int on_watch_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Watch *w = userdata;
        int r;

        watch_sample(w);
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
        (void) sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
        *ret = TAKE_PTR(w);
        return 0;
}

void watch_start(Watch *w) {
        if (!w)
                return;
        watch_sample(w);
        (void) sd_event_source_set_time_relative(w->timer, w->c.interval_usec);
        (void) sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT);
}

Watch *watch_free(Watch *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->timer);
        return mfree(w);
}
