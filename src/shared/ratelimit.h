/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ratelimit.h — token buckets per key (a bus sender, a source address), bounded in memory */
#pragma once

#include "table.h"

typedef struct RateLimit {
        uint64_t burst;         /* tokens a fresh key starts with, and the most it can save up */
        uint64_t interval_usec; /* one token returns every interval */
        size_t max_keys;        /* beyond this, the longest-idle keys are forgotten */
        Table keys;
} RateLimit;

void ratelimit_init(RateLimit *rl, uint64_t burst, uint64_t interval_usec, size_t max_keys);
void ratelimit_done(RateLimit *rl);

/* Takes a token for key at time now (CLOCK_MONOTONIC µs). Returns true if one was available. */
bool ratelimit_take(RateLimit *rl, const char *key, uint64_t now);
/* Microseconds until key has a token again (0 if it has one). */
uint64_t ratelimit_wait_usec(RateLimit *rl, const char *key, uint64_t now);
