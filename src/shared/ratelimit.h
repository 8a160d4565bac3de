/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ratelimit.h — token buckets, and per-key limiters built on them (bus senders, source addresses) */
#pragma once

#include "table.h"

/* Tokens are kept in millionths so that rates below one per second stay exact. */
#define TOKEN_SCALE UINT64_C(1000000)

typedef struct TokenBucket {
        uint64_t rate;          /* tokens per second */
        uint64_t burst;         /* capacity in tokens */
        uint64_t level;         /* millionths of a token */
        uint64_t updated_usec;  /* CLOCK_MONOTONIC of the last refill */
} TokenBucket;

/* A bucket that starts full. rate 0 means it never refills. */
void token_bucket_init(TokenBucket *b, uint64_t rate, uint64_t burst, uint64_t now_usec);
/* Refills for the time since the last call; a clock that went backwards refills nothing. */
void token_bucket_refill(TokenBucket *b, uint64_t now_usec);
/* Takes cost tokens if there are enough. Returns true when they were taken. */
bool token_bucket_take(TokenBucket *b, uint64_t cost, uint64_t now_usec);
bool token_bucket_is_full(TokenBucket *b, uint64_t now_usec);

/* Buckets per string key (a D-Bus sender's unique name), bounded in number: when max_keys are
 * tracked, full buckets (indistinguishable from forgotten ones) go first, then the longest idle. */
typedef struct RateLimit {
        uint64_t rate;  /* tokens per second */
        uint64_t burst; /* tokens a fresh key starts with, and the most it can save up */
        size_t max_keys;
        Table keys;
} RateLimit;

void ratelimit_init(RateLimit *rl, uint64_t rate, uint64_t burst, size_t max_keys);
void ratelimit_done(RateLimit *rl);

/* Takes a token for key at time now (CLOCK_MONOTONIC µs). Returns true if one was available. */
bool ratelimit_take(RateLimit *rl, const char *key, uint64_t now);
/* Microseconds until key has a token again (0 if it has one). */
uint64_t ratelimit_wait_usec(RateLimit *rl, const char *key, uint64_t now);
