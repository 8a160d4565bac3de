/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* time-util.h — microsecond clocks and ISO 8601 timestamps */
#pragma once

#include <time.h>

#include "parse-util.h"

static inline uint64_t timespec_to_usec(const struct timespec *ts) {
        return (uint64_t) ts->tv_sec * USEC_PER_SEC + (uint64_t) ts->tv_nsec / NSEC_PER_USEC;
}

static inline uint64_t now_usec(clockid_t clock) {
        struct timespec ts;
        clock_gettime(clock, &ts);
        return timespec_to_usec(&ts);
}

#define ISO8601_MAX sizeof("2026-11-21T12:34:56.123456Z")
/* Formats a CLOCK_REALTIME microsecond timestamp as UTC "YYYY-MM-DDTHH:MM:SS.uuuuuuZ". */
char *format_iso8601(char buf[static ISO8601_MAX], uint64_t realtime_usec);
