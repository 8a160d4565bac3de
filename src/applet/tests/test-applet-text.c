/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The applet's text: names from the bus cleaned of what a menu, a tooltip or a notification daemon would
 * interpret, and its units. */
#include <glib.h>

#include "tests/unit/unit-test.h"
#include "applet/applet-text.h"

static void check(char *got, const char *want) {
        assert_string_equal(got, want);
        g_free(got);
}

static void test_clean(void **state) {
        check(text_clean("eth0", 0), "eth0");
        /* Control characters, DEL, C1 and invalid UTF-8 become U+FFFD, one each. */
        check(text_clean("a\nb\tc\x1b[31m", 0), "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd[31m");
        check(text_clean("x\x7f\xc2\x85y", 0), "x\xef\xbf\xbd\xef\xbf\xbdy");
        check(text_clean("bad\xff\xfe", 0), "bad\xef\xbf\xbd\xef\xbf\xbd");
        /* A right-to-left override would reorder the rest of the line. */
        check(text_clean("dock\xe2\x80\xaetxt.exe", 0), "dock\xef\xbf\xbdtxt.exe");
        check(text_clean("Ünïcödé dock", 0), "Ünïcödé dock");
        check(text_clean(NULL, 0), "");
        check(text_clean("abcdef", 3), "abc…");
        check(text_clean("abc", 3), "abc");
}

static void test_markup(void **state) {
        check(text_markup("<b>&_x", 0), "&lt;b&gt;&amp;_x");
        check(text_markup("a'\"b", 0), "a&apos;&quot;b");
        check(text_markup_lines("link <i>f&0\nok"), "link &lt;i&gt;f&amp;0\nok");
        check(text_clean_lines("a\nb\x01", 4), "a\nb\xef\xbf\xbd");
}

static void test_menu_label(void **state) {
        /* dbusmenu reads "_x" as a mnemonic: shown as it is, the underscore doubled. */
        check(text_menu_label("veth_a_b", 0), "veth__a__b");
        check(text_menu_label("<b>&_x", 0), "<b>&__x");
        check(text_menu_label("\x1b_", 0), "\xef\xbf\xbd__");
}

static void test_units(void **state) {
        check(format_mbps(0), "speed unknown");
        check(format_mbps(100), "100 Mb/s");
        check(format_mbps(2500), "2.5 Gb/s");
        check(format_mbps(10000), "10 Gb/s");
        check(format_gbps(40), "40 Gb/s");
        check(format_gbps(12.5), "12.5 Gb/s");
        check(format_gbps(0), "rate unknown");
        check(format_gbps(-1), "rate unknown");
        check(format_gbps(0.0 / 0.0), "rate unknown");
}

static void test_health(void **state) {
        assert_int_equal(health_rank("ok"), HEALTH_OK);
        assert_int_equal(health_rank(""), HEALTH_NONE);
        assert_int_equal(health_rank(NULL), HEALTH_NONE);
        assert_int_equal(health_rank("something new"), HEALTH_UNKNOWN);
        assert_true(health_rank("errors") > health_rank("flapping"));
        assert_true(health_rank("flapping") > health_rank("degraded"));
        assert_true(health_is_bad(health_rank("degraded")));
        assert_false(health_is_bad(health_rank("unknown")));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_clean),
                cmocka_unit_test(test_markup),
                cmocka_unit_test(test_menu_label),
                cmocka_unit_test(test_units),
                cmocka_unit_test(test_health),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
