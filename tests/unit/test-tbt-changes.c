/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for a Thunderbolt link's changes: what a rate change is, and routers remembered by UniqueId
 * when they leave, so that a replugged dock keeps counting where it was. */
#include "unit-test.h"

#include "daemon/tbt-topology.h"

static void test_rate_changed(void **state) {
        assert_true(tbt_rate_changed(40, 40, 20, 40));
        assert_true(tbt_rate_changed(80, 80, 120, 40)); /* USB4 v2 going asymmetric */
        assert_false(tbt_rate_changed(40, 40, 40, 40));
        /* Unknown on either side is no change. */
        assert_false(tbt_rate_changed(0, 0, 40, 40));
        assert_false(tbt_rate_changed(40, 40, 0, 40));
}

static void test_departures(void **state) {
        TbtDepartures d = {};
        TbtLinkChanges c = {}, back;
        char id[64];

        tbt_link_changes_add(&c, 1000 * USEC_PER_SEC);
        tbt_link_changes_add(&c, 1001 * USEC_PER_SEC);
        assert_int_equal(c.count, 2);
        assert_int_equal(window_sum(&c.window, 1001 * USEC_PER_SEC, 60 * USEC_PER_SEC), 2);

        assert_int_equal(tbt_departures_remember(&d, "dock-a", &c), 0);
        assert_int_equal(tbt_departures_remember(&d, "", &c), 0); /* no UniqueId: nothing to remember */
        assert_int_equal(d.n, 1);
        assert_false(tbt_departures_take(&d, "dock-b", &back));
        assert_true(tbt_departures_take(&d, "dock-a", &back));
        assert_int_equal(back.count, 2);
        assert_false(tbt_departures_take(&d, "dock-a", &back)); /* taken once */

        /* The same id twice: one entry, the latest. The oldest are forgotten beyond the limit. */
        c.count = 5;
        assert_int_equal(tbt_departures_remember(&d, "dock-a", &c), 0);
        c.count = 6;
        assert_int_equal(tbt_departures_remember(&d, "dock-a", &c), 0);
        assert_int_equal(d.n, 1);
        for (int i = 0; i < TBT_DEPARTED_MAX; i++) {
                snprintf(id, sizeof(id), "dock-%d", i);
                assert_int_equal(tbt_departures_remember(&d, id, &c), 0);
        }
        assert_int_equal(d.n, TBT_DEPARTED_MAX);
        assert_false(tbt_departures_take(&d, "dock-a", &back));
        assert_true(tbt_departures_take(&d, "dock-31", &back));
        assert_int_equal(back.count, 6);
        tbt_departures_done(&d);
        assert_int_equal(d.n, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rate_changed),
                cmocka_unit_test(test_departures),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
