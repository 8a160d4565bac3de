/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ratelimit.h"

typedef struct Bucket {
        char *key;
        uint64_t tokens;
        uint64_t updated; /* when tokens were last topped up */
} Bucket;

static int bucket_compare(const void *key, const void *object) {
        return strcmp(key, ((const Bucket *) object)->key);
}

void ratelimit_init(RateLimit *rl, uint64_t burst, uint64_t interval_usec, size_t max_keys) {
        *rl = (RateLimit) {
                .burst = MAX(burst, (uint64_t) 1),
                .interval_usec = MAX(interval_usec, (uint64_t) 1),
                .max_keys = MAX(max_keys, (size_t) 1),
                .keys = TABLE_INIT(bucket_compare),
        };
}

static void bucket_free(Bucket *b) {
        free(b->key);
        free(b);
}

void ratelimit_done(RateLimit *rl) {
        Bucket *b;
        TABLE_FOREACH(b, &rl->keys)
                bucket_free(b);
        table_done(&rl->keys);
}

static void bucket_refill(RateLimit *rl, Bucket *b, uint64_t now) {
        if (now <= b->updated)
                return;
        uint64_t earned = (now - b->updated) / rl->interval_usec;
        if (earned == 0)
                return;
        b->tokens = MIN(rl->burst, b->tokens + earned);
        /* Keep the remainder of a partial interval, so a steady caller is not short-changed. */
        b->updated = b->tokens == rl->burst ? now : b->updated + earned * rl->interval_usec;
}

/* A full bucket is indistinguishable from a forgotten one; drop those first, then the stalest. */
static void ratelimit_make_room(RateLimit *rl, uint64_t now) {
        Bucket *b, *oldest = NULL;

        TABLE_FOREACH_SAFE(b, &rl->keys) {
                bucket_refill(rl, b, now);
                if (b->tokens >= rl->burst) {
                        table_remove(&rl->keys, b->key);
                        bucket_free(b);
                }
        }
        if (table_size(&rl->keys) < rl->max_keys)
                return;
        TABLE_FOREACH(b, &rl->keys)
                if (!oldest || b->updated < oldest->updated)
                        oldest = b;
        if (oldest) {
                table_remove(&rl->keys, oldest->key);
                bucket_free(oldest);
        }
}

static Bucket *ratelimit_bucket(RateLimit *rl, const char *key, uint64_t now) {
        Bucket *b = table_get(&rl->keys, key);
        if (b) {
                bucket_refill(rl, b, now);
                return b;
        }
        if (table_size(&rl->keys) >= rl->max_keys)
                ratelimit_make_room(rl, now);

        b = new0(Bucket, 1);
        if (!b)
                return NULL;
        b->key = strdup(key);
        b->tokens = rl->burst;
        b->updated = now;
        if (!b->key || table_put(&rl->keys, b->key, b) < 0) {
                bucket_free(b);
                return NULL;
        }
        return b;
}

bool ratelimit_take(RateLimit *rl, const char *key, uint64_t now) {
        Bucket *b = ratelimit_bucket(rl, key, now);

        /* Out of memory: refuse, the safe side for a limiter. */
        if (!b || b->tokens == 0)
                return false;
        b->tokens--;
        return true;
}

uint64_t ratelimit_wait_usec(RateLimit *rl, const char *key, uint64_t now) {
        Bucket *b = ratelimit_bucket(rl, key, now);
        if (!b)
                return rl->interval_usec;
        if (b->tokens > 0)
                return 0;
        return b->updated + rl->interval_usec > now ? b->updated + rl->interval_usec - now : 0;
}
