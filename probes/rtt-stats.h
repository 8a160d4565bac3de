/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rtt-stats.h — summaries of round-trip samples: median, spread and two definitions of jitter */
#pragma once

#include "shared/macros.h"

typedef struct RttStats {
        size_t samples;
        double min_usec, max_usec, mean_usec, median_usec;
        /* exo's jitter: the mean absolute difference of consecutive samples, in sample order. */
        double jitter_usec;
        /* RFC 3550 section 6.4.1: J += (|D| - J) / 16 over consecutive samples, starting at 0. */
        double jitter_rfc3550_usec;
} RttStats;

/**
 * rtt_stats_compute() - summarise round-trip samples
 * @samples: the samples in the order they were taken (not modified)
 * @n: how many; at least 1
 * @ret: receives the summary; both jitters are 0 for a single sample
 *
 * Return: 0, -EINVAL for no samples, -ENOMEM.
 */
int rtt_stats_compute(const double *samples, size_t n, RttStats *ret);

/* The median of n values, sorting them in place; 0 for none. */
double samples_median(double *v, size_t n);

/* Gbit/s (decimal, as iperf3 prints) of bytes moved in usec; 0 when usec is 0. */
double goodput_gbps(uint64_t bytes, uint64_t usec) _const_;
