/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the token bucket and the per-key limiter built on it (bus senders). */
#include "unit-test.h"
#include "shared/parse-util.h"
#include "shared/ratelimit.h"

#define SEC UINT64_C(1000000)

static void test_bucket(void **state) {
        TokenBucket b;

        token_bucket_init(&b, 10, 20, 1000 * SEC);
        for (int i = 0; i < 20; i++)
                assert_true(token_bucket_take(&b, 1, 1000 * SEC));
        assert_false(token_bucket_take(&b, 1, 1000 * SEC));
        /* 10 per second: one token every 100 ms. */
        assert_false(token_bucket_take(&b, 1, 1000 * SEC + 99999));
        assert_true(token_bucket_take(&b, 1, 1000 * SEC + 100000));
        assert_false(token_bucket_take(&b, 1, 1000 * SEC + 100000));
        /* Never more than the burst, however long it waited. */
        assert_true(token_bucket_is_full(&b, 5000 * SEC));
        assert_false(token_bucket_take(&b, 21, 5000 * SEC));
        assert_true(token_bucket_take(&b, 20, 5000 * SEC));
        /* A clock that goes backwards refills nothing and breaks nothing. */
        assert_false(token_bucket_take(&b, 1, 10 * SEC));
        assert_false(token_bucket_take(&b, 1, 5000 * SEC));
        /* A cost that would overflow is simply refused. */
        assert_false(token_bucket_take(&b, UINT64_MAX, 9000 * SEC));
}

static void test_bucket_edges(void **state) {
        TokenBucket b;

        token_bucket_init(&b, 0, 2, 0);
        assert_true(token_bucket_take(&b, 2, 0));
        assert_false(token_bucket_take(&b, 1, UINT64_MAX));   /* rate 0: never refills */

        token_bucket_init(&b, UINT64_MAX / 2, 3, 0);
        assert_true(token_bucket_take(&b, 3, 0));
        assert_true(token_bucket_take(&b, 3, UINT64_MAX));    /* the refill saturates at the burst */
        assert_false(token_bucket_take(&b, 1, UINT64_MAX));
}

static void test_burst_and_refill(void **state) {
        RateLimit rl;
        ratelimit_init(&rl, 1, 3, 16);
        uint64_t t = 1000 * USEC_PER_SEC;

        assert_true(ratelimit_take(&rl, ":1.5", t));
        assert_true(ratelimit_take(&rl, ":1.5", t));
        assert_true(ratelimit_take(&rl, ":1.5", t));
        assert_false(ratelimit_take(&rl, ":1.5", t));
        assert_true(ratelimit_wait_usec(&rl, ":1.5", t) == USEC_PER_SEC);
        /* Another sender is not affected. */
        assert_true(ratelimit_take(&rl, ":1.6", t));
        /* Half an interval: still nothing; a whole one: one token. */
        assert_false(ratelimit_take(&rl, ":1.5", t + USEC_PER_SEC / 2));
        assert_true(ratelimit_wait_usec(&rl, ":1.5", t + USEC_PER_SEC / 2) == USEC_PER_SEC / 2);
        assert_true(ratelimit_take(&rl, ":1.5", t + USEC_PER_SEC));
        assert_false(ratelimit_take(&rl, ":1.5", t + USEC_PER_SEC));
        /* A long pause refills to the burst, not beyond. */
        uint64_t later = t + 100 * USEC_PER_SEC;
        for (int i = 0; i < 3; i++)
                assert_true(ratelimit_take(&rl, ":1.5", later));
        assert_false(ratelimit_take(&rl, ":1.5", later));
        ratelimit_done(&rl);
}

static void test_flood_of_senders_is_bounded(void **state) {
        RateLimit rl;
        char key[32];
        ratelimit_init(&rl, 1, 1, 64);
        uint64_t t = USEC_PER_SEC;

        for (int i = 0; i < 10000; i++) {
                snprintf(key, sizeof(key), ":1.%d", i);
                assert_true(ratelimit_take(&rl, key, t + (uint64_t) i));
                assert_true(table_size(&rl.keys) <= 64);
        }
        /* The most recent sender is still limited. */
        assert_false(ratelimit_take(&rl, key, t + 10000));
        ratelimit_done(&rl);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bucket),
                cmocka_unit_test(test_bucket_edges),
                cmocka_unit_test(test_burst_and_refill),
                cmocka_unit_test(test_flood_of_senders_is_bounded),
        };
        return cmocka_run_group_tests_name("ratelimit", tests, NULL, NULL);
}
