/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the kernel changes without telling anyone: the PCIe bandwidth controller retrains a link and
 * updates current_link_speed with no uevent; AER, InfiniBand and Ethernet error counters rise; bytes
 * move. One timer for all of it ([Watch] IntervalSec=, 2 s by default; 0: no timer, no wakeups): a
 * sample is one rtnetlink dump of every link's statistics and a few sysfs reads per published PCI
 * function and RDMA port. Each source records what it read on its objects; the derivation pass then
 * judges every object once (derive-health.c).
 */
#include <time.h>

#include "netlink.h"
#include "pci.h"
#include "rdma.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "watch.h"

struct Watch {
        WatchContext c;
        sd_event_source *timer;
        bool netlink_failing; /* said once until it works again */
};

static void watch_sample(Watch *w) {
        uint64_t now = now_usec(CLOCK_MONOTONIC), cpu = now_usec(CLOCK_THREAD_CPUTIME_ID);
        size_t n_links = 0, n_pci = 0, n_rdma = 0;
        int r;

        r = w->c.netlink ? netlink_sample_stats(w->c.netlink, now, &n_links) : 0;
        if (r < 0 && !w->netlink_failing)
                log_warning_errno(r, "Cannot read link statistics, rates and link health stay unknown: %m");
        else if (r >= 0 && w->netlink_failing)
                log_info("Link statistics can be read again.");
        w->netlink_failing = r < 0;
        if (w->c.pci)
                n_pci = pci_sample(w->c.pci, now, w->c.interval_usec);
        if (w->c.rdma)
                n_rdma = rdma_sample(w->c.rdma, now);

        *w->c.sampled = true;
        bus_publisher_schedule(w->c.publisher);
        log_debug("Watch: %zu links, %zu PCI functions, %zu RDMA ports sampled in %" PRIu64 " us of CPU.", n_links, n_pci,
                  n_rdma, now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu);
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
