/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counter.h — kernel counters sampled over time: increases that survive resets, rates, recent windows */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shared/macros.h"
#include "shared/parse-util.h"

/*
 * Pure logic: no I/O, no D-Bus. The watch reads a counter from the kernel every interval; these
 * helpers turn the readings into what is published and judged:
 *
 *  - counter_advance(): how much the counter rose since the last reading. A counter that went
 *    backwards was reset (a device reset, a driver reload): what it says now is what it counted since
 *    then, as Prometheus' rate() takes it, never a negative increase. A jump no device could make in
 *    the time (max_per_sec) is taken as a new start too, never as traffic or errors.
 *  - counter_rate_gbps(): an increase in bytes over an interval, in Gbit/s.
 *  - Window: how many events (errors, link changes) fell into the last minutes, in buckets of
 *    WINDOW_BUCKET_USEC, so that "37 in the last minute" costs 40 bytes per counter whatever the
 *    interval.
 */

/* What a counter property says when the kernel has no such counter (an older kernel, a driver
 * without it) or it could not be read: 2^64-1, which no real counter reaches. */
#define COUNTER_UNKNOWN UINT64_MAX

#define WINDOW_BUCKET_USEC (15 * USEC_PER_SEC)
/* The longest span a window answers for: 2 minutes. */
#define WINDOW_SPAN_BUCKETS 8u
#define WINDOW_SPAN_USEC (WINDOW_SPAN_BUCKETS * WINDOW_BUCKET_USEC)
/* The span's buckets and the one it starts in: an event is counted for the whole span after it, not
 * only until its bucket leaves a span counted in whole buckets from now back (an event at a bucket's
 * end would have been counted for a few milliseconds in a 15 s window). */
#define WINDOW_BUCKETS (WINDOW_SPAN_BUCKETS + 1u)

/**
 * counter_advance() - the increase of a counter since its last reading
 * @last: the last reading (COUNTER_UNKNOWN: none yet); set to value
 * @value: the reading now (COUNTER_UNKNOWN: not readable now)
 * @max_increase: the most it can plausibly rise since the last reading
 * @ret_increase: the increase, 0 when there is no baseline or the reading is not plausible
 *
 * Returns true when the increase is known (both readings known and plausible; a reset counts as
 * known, the new value being the increase), false otherwise: the caller then has no rate for this
 * interval.
 */
bool counter_advance(uint64_t *last, uint64_t value, uint64_t max_increase, uint64_t *ret_increase);

/* bytes moved in interval_usec, in 10^9 bits per second; NaN when interval_usec is 0. */
double counter_rate_gbps(uint64_t bytes, uint64_t interval_usec) _const_;

/* The most bytes a link can move in interval_usec: 1 TB/s (8 Tbit/s), well above any port today,
 * so that only a garbage or wrapped reading is refused. */
uint64_t counter_max_bytes(uint64_t interval_usec) _const_;
/* The most errors or events a counter can count in interval_usec: a million a second. */
uint64_t counter_max_events(uint64_t interval_usec) _const_;

typedef struct Window {
        uint32_t epoch; /* index of the newest bucket: CLOCK_MONOTONIC / WINDOW_BUCKET_USEC; 0 = empty */
        uint32_t count[WINDOW_BUCKETS];
} Window;

/* Adds n events at now_usec (CLOCK_MONOTONIC); buckets that fell out of the window are emptied. */
void window_add(Window *w, uint64_t now_usec, uint64_t n);
/* Events in the last span_usec at now_usec (at most WINDOW_SPAN_USEC), counted in whole buckets: from
 * the one that holds now_usec - span_usec to the current one. An event is counted for at least
 * span_usec after it happened and less than span_usec + WINDOW_BUCKET_USEC. */
uint64_t window_sum(const Window *w, uint64_t now_usec, uint64_t span_usec) _pure_;
