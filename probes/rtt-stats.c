/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>

#include "rtt-stats.h"

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

double samples_median(double *v, size_t n) {
        if (n == 0)
                return 0;
        qsort(v, n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int rtt_stats_compute(const double *samples, size_t n, RttStats *ret) {
        _cleanup_(freep) double *sorted = NULL;
        RttStats s = { .samples = n };
        double sum = 0;

        if (!samples || n == 0)
                return -EINVAL;

        sorted = malloc(n * sizeof(double));
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, samples, n * sizeof(double));
        s.median_usec = samples_median(sorted, n);
        s.min_usec = sorted[0];
        s.max_usec = sorted[n - 1];
        for (size_t i = 0; i < n; i++)
                sum += samples[i];
        s.mean_usec = sum / (double) n;

        if (n > 1) {
                double diffs = 0, j = 0;
                for (size_t i = 1; i < n; i++) {
                        double d = fabs(samples[i] - samples[i - 1]);
                        diffs += d;
                        j += (d - j) / 16;
                }
                s.jitter_usec = diffs / (double) (n - 1);
                s.jitter_rfc3550_usec = j;
        }

        *ret = s;
        return 0;
}

double goodput_gbps(uint64_t bytes, uint64_t usec) {
        if (usec == 0)
                return 0;
        return (double) bytes * 8.0 / ((double) usec * 1000.0);
}
