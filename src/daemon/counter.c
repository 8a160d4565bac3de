/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>

#include "counter.h"

bool counter_advance(uint64_t *last, uint64_t value, uint64_t max_increase, uint64_t *ret_increase) {
        uint64_t previous = *last, increase;

        *last = value;
        *ret_increase = 0;
        if (previous == COUNTER_UNKNOWN || value == COUNTER_UNKNOWN)
                return false;
        /* Backwards: reset to zero since the last reading and counted up to value. */
        increase = value >= previous ? value - previous : value;
        if (increase > max_increase)
                return false;
        *ret_increase = increase;
        return true;
}

double counter_rate_gbps(uint64_t bytes, uint64_t interval_usec) {
        if (interval_usec == 0)
                return NAN;
        return (double) bytes * 8.0 / ((double) interval_usec * 1e3);
}

uint64_t counter_max_bytes(uint64_t interval_usec) {
        /* 10^12 bytes per second is 10^6 per microsecond. */
        return interval_usec > UINT64_MAX / 1000000 ? UINT64_MAX : interval_usec * 1000000;
}

uint64_t counter_max_events(uint64_t interval_usec) {
        /* A million a second is one per microsecond; at least one in any interval. */
        return MAX(interval_usec, (uint64_t) 1);
}

static uint32_t epoch_of(uint64_t now_usec) {
        /* +1 so that 0 means "never used", whatever the clock says at boot. */
        return (uint32_t) (now_usec / WINDOW_BUCKET_USEC) + 1;
}

void window_add(Window *w, uint64_t now_usec, uint64_t n) {
        uint32_t e = epoch_of(now_usec);
        uint32_t *bucket;

        if (w->epoch == 0)
                w->epoch = e;
        if (e > w->epoch) {
                /* Buckets between the newest and now saw nothing. */
                for (uint32_t k = 1; k <= MIN(e - w->epoch, WINDOW_BUCKETS); k++)
                        w->count[(w->epoch + k) % WINDOW_BUCKETS] = 0;
                w->epoch = e;
        }
        /* A clock that went backwards (it cannot: CLOCK_MONOTONIC) files the events under the newest
         * bucket rather than losing them. */
        bucket = &w->count[w->epoch % WINDOW_BUCKETS];
        *bucket = n >= UINT32_MAX - *bucket ? UINT32_MAX : *bucket + (uint32_t) n;
}

uint64_t window_sum(const Window *w, uint64_t now_usec, uint64_t span_usec) {
        uint64_t span = MIN(span_usec, (uint64_t) WINDOW_SPAN_USEC), sum = 0;
        uint32_t e = epoch_of(now_usec), first = epoch_of(now_usec > span ? now_usec - span : 0);

        if (w->epoch == 0)
                return 0;
        /* The bucket where the span starts counts whole: what happened late in it is still within the
         * span (at most WINDOW_SPAN_BUCKETS + 1 buckets, the ring's size). Those newer than the newest
         * written are empty, those a ring's length older than it overwritten. */
        for (uint32_t b = first; b <= e; b++) {
                if (b > w->epoch || b + WINDOW_BUCKETS <= w->epoch)
                        continue;
                sum += w->count[b % WINDOW_BUCKETS];
        }
        return sum;
}
