/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the per-key token bucket: bursts, refill, independence of keys, bounded memory. */
#include "unit-test.h"
#include "shared/parse-util.h"
#include "shared/ratelimit.h"

static void test_burst_and_refill(void **state) {
        RateLimit rl;
        ratelimit_init(&rl, 3, USEC_PER_SEC, 16);
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
        ratelimit_init(&rl, 1, USEC_PER_SEC, 64);
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
                cmocka_unit_test(test_burst_and_refill),
                cmocka_unit_test(test_flood_of_senders_is_bounded),
        };
        return cmocka_run_group_tests_name("ratelimit", tests, NULL, NULL);
}
