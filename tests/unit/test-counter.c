/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the watch's counters: increases that survive resets and refuse garbage, rates, and
 * the windows of the last minutes that the health judgement counts in. */
#include <math.h>

#include "unit-test.h"

#include "daemon/counter.h"

static void test_advance(void **state) {
        uint64_t last = COUNTER_UNKNOWN, n = 99;

        /* The first reading is a baseline, not an increase. */
        assert_false(counter_advance(&last, 1000, 10000, &n));
        assert_int_equal(n, 0);
        assert_int_equal(last, 1000);
        assert_true(counter_advance(&last, 1500, 10000, &n));
        assert_int_equal(n, 500);
        /* Backwards: reset since, and counted up to 40 again. Never negative. */
        assert_true(counter_advance(&last, 40, 10000, &n));
        assert_int_equal(n, 40);
        /* Not readable now: unknown, and the next reading is a new baseline. */
        assert_false(counter_advance(&last, COUNTER_UNKNOWN, 10000, &n));
        assert_int_equal(n, 0);
        assert_false(counter_advance(&last, 50, 10000, &n));
        assert_true(counter_advance(&last, 50, 10000, &n));
        assert_int_equal(n, 0);
        /* A jump no device makes in the time: refused, and a new start. */
        assert_false(counter_advance(&last, UINT64_C(1) << 62, 10000, &n));
        assert_int_equal(n, 0);
        assert_true(counter_advance(&last, (UINT64_C(1) << 62) + 7, 10000, &n));
        assert_int_equal(n, 7);
}

static void test_rates(void **state) {
        /* 1.25 GB in one second is 10 Gbit/s. */
        assert_true(fabs(counter_rate_gbps(1250000000, USEC_PER_SEC) - 10.0) < 1e-9);
        assert_true(fabs(counter_rate_gbps(125000000, 2 * USEC_PER_SEC) - 0.5) < 1e-9);
        assert_true(isnan(counter_rate_gbps(1, 0)));
        /* 8 Tbit/s is the most a link moves: more in two seconds is garbage. */
        assert_int_equal(counter_max_bytes(2 * USEC_PER_SEC), UINT64_C(2000000000000));
        assert_int_equal(counter_max_bytes(UINT64_MAX), UINT64_MAX);
        assert_int_equal(counter_max_events(0), 1);
        assert_int_equal(counter_max_events(USEC_PER_SEC), 1000000);
}

static void test_window(void **state) {
        const uint64_t t0 = 1000 * USEC_PER_SEC; /* any boot time */
        Window w = {};

        assert_int_equal(window_sum(&w, t0, 60 * USEC_PER_SEC), 0);
        window_add(&w, t0, 3);
        window_add(&w, t0 + 5 * USEC_PER_SEC, 4);
        assert_int_equal(window_sum(&w, t0 + 5 * USEC_PER_SEC, 60 * USEC_PER_SEC), 7);
        /* 40 s later: still within the last minute and the last two. */
        window_add(&w, t0 + 45 * USEC_PER_SEC, 10);
        assert_int_equal(window_sum(&w, t0 + 45 * USEC_PER_SEC, 60 * USEC_PER_SEC), 17);
        /* 90 s after the first: out of the last minute, still in the last two. */
        assert_int_equal(window_sum(&w, t0 + 90 * USEC_PER_SEC, 60 * USEC_PER_SEC), 10);
        assert_int_equal(window_sum(&w, t0 + 90 * USEC_PER_SEC, 120 * USEC_PER_SEC), 17);
        /* Three minutes on, nothing is left, with or without a new event. */
        assert_int_equal(window_sum(&w, t0 + 200 * USEC_PER_SEC, 120 * USEC_PER_SEC), 0);
        window_add(&w, t0 + 200 * USEC_PER_SEC, 1);
        assert_int_equal(window_sum(&w, t0 + 200 * USEC_PER_SEC, 120 * USEC_PER_SEC), 1);
        /* Much later, the old buckets were emptied as the window moved on. */
        window_add(&w, t0 + 3600 * USEC_PER_SEC, 2);
        assert_int_equal(window_sum(&w, t0 + 3600 * USEC_PER_SEC, 120 * USEC_PER_SEC), 2);
        /* A span longer than the window is the whole window; one shorter than a bucket is one bucket. */
        assert_int_equal(window_sum(&w, t0 + 3600 * USEC_PER_SEC, 3600 * USEC_PER_SEC), 2);
        assert_int_equal(window_sum(&w, t0 + 3600 * USEC_PER_SEC, 1), 2);
}

/* An event is counted for its whole span, wherever in its bucket it fell: one at a bucket's end was
 * counted for a few milliseconds in a 15 s window (a link that flapped 20 times was judged flapping for
 * less than the applet's merge window, and nobody was told). Never for a bucket more than the span. */
static void test_window_holds_an_event_for_its_span(void **state) {
        const uint64_t bucket_end = 1005 * USEC_PER_SEC; /* 1005 s = 67 buckets of 15 s */

        for (uint64_t span = 15 * USEC_PER_SEC; span <= 120 * USEC_PER_SEC; span += 15 * USEC_PER_SEC)
                for (uint64_t before = 1; before <= 15 * USEC_PER_SEC; before += 7 * USEC_PER_SEC / 2) {
                        const uint64_t at = bucket_end - before;
                        Window w = {};

                        window_add(&w, at, 20);
                        for (uint64_t later = 0; later <= span; later += USEC_PER_SEC / 4)
                                assert_int_equal(window_sum(&w, at + later, span), 20);
                        assert_int_equal(window_sum(&w, at + span + WINDOW_BUCKET_USEC, span), 0);
                }
        /* Spans past the longest are the longest, whose events are all kept. */
        Window w = {};
        window_add(&w, bucket_end - 1, 3);
        assert_int_equal(window_sum(&w, bucket_end - 1 + WINDOW_SPAN_USEC, 3600 * USEC_PER_SEC), 3);
        assert_int_equal(window_sum(&w, bucket_end - 1 + WINDOW_SPAN_USEC + WINDOW_BUCKET_USEC, 3600 * USEC_PER_SEC), 0);
}

static void test_window_saturates(void **state) {
        Window w = {};

        window_add(&w, 0, UINT64_MAX);
        window_add(&w, 0, 5);
        assert_int_equal(window_sum(&w, 0, 60 * USEC_PER_SEC), UINT32_MAX);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_advance),
                cmocka_unit_test(test_rates),
                cmocka_unit_test(test_window),
                cmocka_unit_test(test_window_holds_an_event_for_its_span),
                cmocka_unit_test(test_window_saturates),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
