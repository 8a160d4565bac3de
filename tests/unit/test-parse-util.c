/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the strict parsers and the UTF-8 helpers. */
#include "unit-test.h"

#include "shared/parse-util.h"
#include "shared/string-util.h"

static void test_parse_u64(void **state) {
        uint64_t v;
        assert_int_equal(parse_u64("0", &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(parse_u64("18446744073709551615", &v), 0);
        assert_true(v == UINT64_MAX);
        assert_int_equal(parse_u64("18446744073709551616", &v), -ERANGE);
        static const char *const bad[] = { "", " 1", "1 ", "-1", "+1", "1.0", "0x10", "abc", "1a", "\n" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (parse_u64(bad[i], &v) != -EINVAL)
                        fail_msg("accepted \"%s\"", bad[i]);
        assert_int_equal(parse_u64(NULL, &v), -EINVAL);
}

static void test_parse_u32_int(void **state) {
        uint32_t u;
        int i;
        assert_int_equal(parse_u32("4294967295", &u), 0);
        assert_int_equal(parse_u32("4294967296", &u), -ERANGE);
        assert_int_equal(parse_int("-1", &i), 0);
        assert_int_equal(i, -1);
        assert_int_equal(parse_int("-2147483648", &i), 0);
        assert_int_equal(i, INT32_MIN);
        assert_int_equal(parse_int("2147483648", &i), -ERANGE);
        assert_int_equal(parse_int("--1", &i), -EINVAL);
        assert_int_equal(parse_int("-", &i), -EINVAL);
        int64_t l;
        assert_int_equal(parse_i64("-9223372036854775808", &l), 0);
        assert_true(l == INT64_MIN);
        assert_int_equal(parse_i64("-9223372036854775809", &l), -ERANGE);
}

static void test_parse_hex(void **state) {
        uint32_t v;
        assert_int_equal(parse_hex_u32("0x8086", &v), 0);
        assert_int_equal(v, 0x8086);
        assert_int_equal(parse_hex_u32("9a1b", &v), 0);
        assert_int_equal(v, 0x9a1b);
        assert_int_equal(parse_hex_u32("0X1", &v), 0);
        assert_int_equal(parse_hex_u32("0x", &v), -EINVAL);
        assert_int_equal(parse_hex_u32("0xg", &v), -EINVAL);
        assert_int_equal(parse_hex_u32("0x100000000", &v), -ERANGE);
        assert_int_equal(parse_hex_u32("-0x1", &v), -EINVAL);
}

static void test_parse_boolean(void **state) {
        assert_int_equal(parse_boolean("yes"), 1);
        assert_int_equal(parse_boolean("On"), 1);
        assert_int_equal(parse_boolean("1"), 1);
        assert_int_equal(parse_boolean("false"), 0);
        assert_int_equal(parse_boolean("0"), 0);
        assert_int_equal(parse_boolean("2"), -EINVAL);
        assert_int_equal(parse_boolean(""), -EINVAL);
}

static void test_parse_duration(void **state) {
        uint64_t v;
        assert_int_equal(parse_duration_usec("15", &v), 0);
        assert_true(v == 15 * USEC_PER_SEC);
        assert_int_equal(parse_duration_usec("500ms", &v), 0);
        assert_true(v == 500 * USEC_PER_MSEC);
        assert_int_equal(parse_duration_usec("5min", &v), 0);
        assert_true(v == 300 * USEC_PER_SEC);
        assert_int_equal(parse_duration_usec("1h", &v), 0);
        assert_true(v == 3600 * USEC_PER_SEC);
        assert_int_equal(parse_duration_usec("0", &v), 0);
        assert_true(v == 0);
        assert_int_equal(parse_duration_usec("1 h", &v), -EINVAL);
        assert_int_equal(parse_duration_usec("h", &v), -EINVAL);
        assert_int_equal(parse_duration_usec("5fortnights", &v), -EINVAL);
        assert_int_equal(parse_duration_usec("-5", &v), -EINVAL);
        assert_int_equal(parse_duration_usec("99999999999999999999d", &v), -ERANGE);
}

static void test_parse_size(void **state) {
        uint64_t v;
        assert_int_equal(parse_size("4096", &v), 0);
        assert_true(v == 4096);
        assert_int_equal(parse_size("8M", &v), 0);
        assert_true(v == 8 << 20);
        assert_int_equal(parse_size("1GiB", &v), 0);
        assert_true(v == 1 << 30);
        assert_int_equal(parse_size("1T", &v), -EINVAL);
        assert_int_equal(parse_size("M", &v), -EINVAL);
}

static void test_utf8(void **state) {
        assert_true(utf8_is_valid("eth0"));
        assert_true(utf8_is_valid("caf\xc3\xa9"));
        assert_true(utf8_is_valid("\xf0\x9f\x94\x97"));
        assert_false(utf8_is_valid("\xff"));
        assert_false(utf8_is_valid("\xc0\xaf"));          /* overlong '/' */
        assert_false(utf8_is_valid("\xed\xa0\x80"));      /* surrogate */
        assert_false(utf8_is_valid("\xf4\x90\x80\x80"));  /* past U+10FFFF */
        assert_false(utf8_is_valid("\xe2\x82"));          /* truncated */

        _cleanup_(freep) char *a = utf8_escape_invalid("et\xffh\\0");
        assert_string_equal(a, "et\\xffh\\0");
        _cleanup_(freep) char *b = utf8_escape_invalid("caf\xc3\xa9");
        assert_string_equal(b, "caf\xc3\xa9");
        _cleanup_(freep) char *c = escape_for_terminal("a\x1b[31mb\x7f");
        assert_string_equal(c, "a\\x1b[31mb\\x7f");
        _cleanup_(freep) char *d = utf8_escape_invalid("");
        assert_string_equal(d, "");
}

static void test_free_and_strdup(void **state) {
        _cleanup_(freep) char *p = NULL;
        assert_int_equal(free_and_strdup(&p, NULL), 0);
        assert_int_equal(free_and_strdup(&p, "a"), 1);
        assert_int_equal(free_and_strdup(&p, "a"), 0);
        assert_int_equal(free_and_strdup(&p, "b"), 1);
        assert_string_equal(p, "b");
        assert_int_equal(free_and_strdup(&p, NULL), 1);
        assert_null(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_u64),    cmocka_unit_test(test_parse_u32_int),
                cmocka_unit_test(test_parse_hex),    cmocka_unit_test(test_parse_boolean),
                cmocka_unit_test(test_parse_duration), cmocka_unit_test(test_parse_size),
                cmocka_unit_test(test_utf8),         cmocka_unit_test(test_free_and_strdup),
        };
        return cmocka_run_group_tests_name("parse-util", tests, NULL, NULL);
}
