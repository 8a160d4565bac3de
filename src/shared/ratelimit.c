/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ratelimit.h"

void token_bucket_init(TokenBucket *b, uint64_t rate, uint64_t burst, uint64_t now_usec) {
        *b = (TokenBucket) {
                .rate = rate,
                .burst = burst,
                .level = burst * TOKEN_SCALE,
                .updated_usec = now_usec,
        };
}

void token_bucket_refill(TokenBucket *b, uint64_t now_usec) {
        uint64_t cap = b->burst * TOKEN_SCALE;

        if (now_usec <= b->updated_usec)
                return;
        uint64_t elapsed = now_usec - b->updated_usec;
        b->updated_usec = now_usec;
        if (b->rate == 0 || b->level >= cap)
                return;
        /* elapsed [usec] * rate [tokens/s] is millionths of a token; saturate instead of wrapping. */
        uint64_t add;
        if (__builtin_mul_overflow(elapsed, b->rate, &add) || add > cap - b->level)
                b->level = cap;
        else
                b->level += add;
}

bool token_bucket_take(TokenBucket *b, uint64_t cost, uint64_t now_usec) {
        uint64_t need;

        token_bucket_refill(b, now_usec);
        if (__builtin_mul_overflow(cost, TOKEN_SCALE, &need) || b->level < need)
                return false;
        b->level -= need;
        return true;
}

bool token_bucket_is_full(TokenBucket *b, uint64_t now_usec) {
        token_bucket_refill(b, now_usec);
        return b->level >= b->burst * TOKEN_SCALE;
}

typedef struct KeyedBucket {
        char *key;
        TokenBucket bucket;
} KeyedBucket;

static int keyed_compare(const void *key, const void *object) {
        return strcmp(key, ((const KeyedBucket *) object)->key);
}

void ratelimit_init(RateLimit *rl, uint64_t rate, uint64_t burst, size_t max_keys) {
        *rl = (RateLimit) {
                .rate = rate,
                .burst = MAX(burst, (uint64_t) 1),
                .max_keys = MAX(max_keys, (size_t) 1),
                .keys = TABLE_INIT(keyed_compare),
        };
}

static void keyed_free(KeyedBucket *k) {
        free(k->key);
        free(k);
}

void ratelimit_done(RateLimit *rl) {
        KeyedBucket *k;
        TABLE_FOREACH(k, &rl->keys)
                keyed_free(k);
        table_done(&rl->keys);
}

static void ratelimit_make_room(RateLimit *rl, uint64_t now) {
        KeyedBucket *k, *oldest = NULL;

        TABLE_FOREACH_SAFE(k, &rl->keys)
                if (token_bucket_is_full(&k->bucket, now)) {
                        table_remove(&rl->keys, k->key);
                        keyed_free(k);
                }
        if (table_size(&rl->keys) < rl->max_keys)
                return;
        TABLE_FOREACH(k, &rl->keys)
                if (!oldest || k->bucket.updated_usec < oldest->bucket.updated_usec)
                        oldest = k;
        if (oldest) {
                table_remove(&rl->keys, oldest->key);
                keyed_free(oldest);
        }
}

static TokenBucket *ratelimit_bucket(RateLimit *rl, const char *key, uint64_t now) {
        KeyedBucket *k = table_get(&rl->keys, key);
        if (k)
                return &k->bucket;
        if (table_size(&rl->keys) >= rl->max_keys)
                ratelimit_make_room(rl, now);

        k = new0(KeyedBucket, 1);
        if (!k)
                return NULL;
        k->key = strdup(key);
        token_bucket_init(&k->bucket, rl->rate, rl->burst, now);
        if (!k->key || table_put(&rl->keys, k->key, k) < 0) {
                keyed_free(k);
                return NULL;
        }
        return &k->bucket;
}

bool ratelimit_take(RateLimit *rl, const char *key, uint64_t now) {
        TokenBucket *b = ratelimit_bucket(rl, key, now);
        /* Out of memory: refuse, the safe side for a limiter. */
        return b && token_bucket_take(b, 1, now);
}

uint64_t ratelimit_wait_usec(RateLimit *rl, const char *key, uint64_t now) {
        TokenBucket *b = ratelimit_bucket(rl, key, now);

        if (!b || b->rate == 0)
                return UINT64_MAX;
        token_bucket_refill(b, now);
        if (b->level >= TOKEN_SCALE)
                return 0;
        /* level grows by rate millionths of a token per microsecond. */
        return (TOKEN_SCALE - b->level + b->rate - 1) / b->rate;
}
