/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the text table: alignment, escaping, colour that never moves a column, and fitting a
 * width: columns shrink by weight down to their minimum while numbers stay whole, and optional columns
 * are left out when the minimums do not fit. */
#include "unit-test.h"
#include "shared/format-table.h"

static char *print(TextTable *t, bool legend) {
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        assert_non_null(f);
        assert_int_equal(text_table_print(t, f, legend), 0);
        fclose(f);
        return s;
}

static TextTable *sample(void) {
        static const char *const headers[] = { ">IDX", "NAME", "ADDRESSES" };
        TextTable *t = text_table_new(headers, ELEMENTSOF(headers));

        assert_non_null(t);
        assert_int_equal(text_table_add(t, "1", NULL), 0);
        assert_int_equal(text_table_add(t, "lo", "\033[0;32m"), 0);
        assert_int_equal(text_table_add(t, "127.0.0.1/8 ::1/128", NULL), 0);
        assert_int_equal(text_table_add(t, "65536", NULL), 0);
        assert_int_equal(text_table_add(t, "e\x01x", NULL), 0);
        assert_int_equal(text_table_add(t, NULL, NULL), 0);
        return t;
}

static void test_aligned(void **state) {
        _cleanup_(text_table_freep) TextTable *t = sample();
        _cleanup_(freep) char *out = print(t, true);

        /* Right-aligned numbers, control characters escaped, NULL as "-", no padding after the last. */
        assert_string_equal(out, "  IDX  NAME    ADDRESSES\n"
                                 "    1  lo      127.0.0.1/8 ::1/128\n"
                                 "65536  e\\x01x  -\n");
        assert_int_equal(text_table_rows(t), 2);
}

static void test_colour_wraps_the_text_only(void **state) {
        _cleanup_(text_table_freep) TextTable *t = sample();
        _cleanup_(freep) char *out = NULL;

        text_table_set_colour(t, true);
        out = print(t, false);
        assert_string_equal(out, "    1  \033[0;32mlo\033[0m      127.0.0.1/8 ::1/128\n"
                                 "65536  e\\x01x  -\n");
}

static void test_fit(void **state) {
        _cleanup_(text_table_freep) TextTable *t = sample();
        _cleanup_(freep) char *out = NULL;

        /* 5 + 2 + 6 + 2 + 19 = 34 columns; in 26 the addresses give way (to 11), the number does not. */
        text_table_set_width(t, 26);
        out = print(t, true);
        assert_string_equal(out, "  IDX  NAME    ADDRESSES\n"
                                 "    1  lo      127.0.0.1/…\n"
                                 "65536  e\\x01x  -\n");
        /* Narrower than the headers allow: records, never a cut header or number; in 5 columns not even
         * a label and a value fit on a line, so each value takes the line it needs. */
        text_table_set_width(t, 5);
        free(out);
        out = print(t, true);
        assert_string_equal(out, "IDX        1\n"
                                 "NAME       lo\n"
                                 "ADDRESSES  127.0.0.1/8 ::1/128\n"
                                 "\n"
                                 "IDX        65536\n"
                                 "NAME       e\\x01x\n"
                                 "ADDRESSES  -\n");
}

/* Two text columns of 20 and a number; every line checked against the width. */
static TextTable *wide(void) {
        static const char *const headers[] = { "A", "B", ">N" };
        TextTable *t = text_table_new(headers, ELEMENTSOF(headers));

        assert_non_null(t);
        assert_int_equal(text_table_add(t, "aaaaaaaaaaaaaaaaaaaa", NULL), 0);
        assert_int_equal(text_table_add(t, "bbbbbbbbbbbbbbbbbbbb", NULL), 0);
        assert_int_equal(text_table_add(t, "123", NULL), 0);
        return t;
}

static void test_weights(void **state) {
        _cleanup_(text_table_freep) TextTable *t = wide();
        _cleanup_(freep) char *out = NULL;

        /* Floors 4 + 4 + 3 and two separators leave 16 of 31, shared 3:1. */
        text_table_set_fit(t, 0, (TextColumnFit) { .weight = 300 });
        text_table_set_width(t, 31);
        out = print(t, false);
        assert_string_equal(out, "aaaaaaaaaaaaaaa…  bbbbbbb…  123\n");
        /* Room enough for all: nothing cut, nothing padded beyond the widest cell. */
        text_table_set_width(t, 47);
        free(out);
        out = print(t, false);
        assert_string_equal(out, "aaaaaaaaaaaaaaaaaaaa  bbbbbbbbbbbbbbbbbbbb  123\n");
}

static void test_min_width(void **state) {
        _cleanup_(text_table_freep) TextTable *t = wide();
        _cleanup_(freep) char *out = NULL;

        /* B keeps 10; the 10 left are shared 3:1 (7 and 2), the one that division leaves goes left. */
        text_table_set_fit(t, 0, (TextColumnFit) { .weight = 300 });
        text_table_set_fit(t, 1, (TextColumnFit) { .min_width = 10 });
        text_table_set_width(t, 31);
        out = print(t, false);
        assert_string_equal(out, "aaaaaaaaaaa…  bbbbbbbbbbb…  123\n");
        /* TEXT_WIDTH_WHOLE: never cut; the other gives way alone. */
        text_table_set_fit(t, 1, (TextColumnFit) { .min_width = TEXT_WIDTH_WHOLE });
        free(out);
        out = print(t, false);
        assert_string_equal(out, "aaa…  bbbbbbbbbbbbbbbbbbbb  123\n");
}

static void test_optional_columns(void **state) {
        static const char *const headers[] = { "A", "B", "C", ">N" };
        _cleanup_(text_table_freep) TextTable *t = text_table_new(headers, ELEMENTSOF(headers));
        _cleanup_(freep) char *out = NULL;

        assert_non_null(t);
        assert_int_equal(text_table_add(t, "aaaaaaaa", NULL), 0);
        assert_int_equal(text_table_add(t, "bbbbbbbb", NULL), 0);
        assert_int_equal(text_table_add(t, "cccccccc", NULL), 0);
        assert_int_equal(text_table_add(t, "123", NULL), 0);
        text_table_set_fit(t, 0, (TextColumnFit) { .optional = 1 });
        text_table_set_fit(t, 2, (TextColumnFit) { .optional = 2 });
        /* All four at their minimum: 4 + 4 + 4 + 3 + 6 = 21. */
        text_table_set_width(t, 21);
        out = print(t, true);
        assert_string_equal(out, "A     B     C       N\n"
                                 "aaa…  bbb…  ccc…  123\n");
        /* One less: C (ranked 2) goes first, and what it leaves is shared. */
        text_table_set_width(t, 20);
        free(out);
        out = print(t, true);
        assert_string_equal(out, "A        B         N\n"
                                 "aaaaaa…  bbbbb…  123\n");
        /* Then A; then only the essential columns are left. */
        text_table_set_width(t, 12);
        free(out);
        out = print(t, true);
        assert_string_equal(out, "B          N\n"
                                 "bbbbbb…  123\n");
        /* When even those do not fit side by side (4 + 2 + 3 > 8), each row is a record, line by line;
         * without a legend (read by programs) the rows stay rows, at their minimum past the width. */
        text_table_set_width(t, 8);
        free(out);
        out = print(t, true);
        assert_string_equal(out, "B  bbbb…\n"
                                 "N  123\n");
        free(out);
        out = print(t, false);
        assert_string_equal(out, "bbb…  123\n");
        /* No width: everything, whole. */
        text_table_set_width(t, 0);
        free(out);
        out = print(t, true);
        assert_string_equal(out, "A         B         C           N\n"
                                 "aaaaaaaa  bbbbbbbb  cccccccc  123\n");
}

/* A figure longer than the view expected (116.42 Gb/s instead of 16.42 Gb/s) at a width where the
 * essential columns only just fitted: the table becomes records, and no line is wider than the width. */
static void test_records_fit_any_cell(void **state) {
        static const char *const headers[] = { "ADDRESS", ">UPLOAD", ">DOWNLOAD", "LAST ERROR" };
        _cleanup_(text_table_freep) TextTable *t = text_table_new(headers, ELEMENTSOF(headers));
        _cleanup_(freep) char *out = NULL;

        assert_non_null(t);
        text_table_set_fit(t, 0, (TextColumnFit) { .min_width = TEXT_WIDTH_WHOLE });
        text_table_set_fit(t, 3, (TextColumnFit) { .min_width = 10 });
        assert_int_equal(text_table_add(t, "fe80::1%veth-with-a-long-name", NULL), 0);
        assert_int_equal(text_table_add(t, "116.42 Gb/s", NULL), 0);
        assert_int_equal(text_table_add(t, "9.5 Gb/s", NULL), 0);
        assert_int_equal(text_table_add(t, "connection refused by the responder", NULL), 0);
        assert_int_equal(text_table_add(t, "127.0.0.1", NULL), 0);
        assert_int_equal(text_table_add(t, "1.00 Gb/s", NULL), 0);
        assert_int_equal(text_table_add(t, "-", NULL), 0);
        assert_int_equal(text_table_add(t, "-", NULL), 0);
        text_table_set_width(t, 30);
        out = print(t, true);
        /* The address may not be cut: it wraps; the error may: it is cut to the room (18 >= 10). */
        assert_string_equal(out, "ADDRESS     fe80::1%veth-with-\n"
                                 "            a-long-name\n"
                                 "UPLOAD      116.42 Gb/s\n"
                                 "DOWNLOAD    9.5 Gb/s\n"
                                 "LAST ERROR  connection refuse…\n"
                                 "\n"
                                 "ADDRESS     127.0.0.1\n"
                                 "UPLOAD      1.00 Gb/s\n"
                                 "DOWNLOAD    -\n"
                                 "LAST ERROR  -\n");
        for (const char *line = out; *line;) {
                const char *nl = strchr(line, '\n');
                _cleanup_(freep) char *copy = strndup(line, (size_t) (nl - line));
                assert_true(text_display_width(copy) <= 30);
                line = nl + 1;
        }
}

static void test_ellipsize(void **state) {
        _cleanup_(freep) char *a = text_ellipsize("Thunderbolt", 5), *b = text_ellipsize("caf\xc3\xa9s", 4),
                              *c = text_ellipsize("abc", 3), *d = text_ellipsize("abc", 0);
        assert_string_equal(a, "Thun…");
        assert_string_equal(b, "caf…");
        assert_string_equal(c, "abc");
        assert_string_equal(d, "");
        assert_int_equal(text_display_width("caf\xc3\xa9"), 4);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_aligned),
                cmocka_unit_test(test_colour_wraps_the_text_only),
                cmocka_unit_test(test_fit),
                cmocka_unit_test(test_weights),
                cmocka_unit_test(test_min_width),
                cmocka_unit_test(test_optional_columns),
                cmocka_unit_test(test_records_fit_any_cell),
                cmocka_unit_test(test_ellipsize),
        };
        return cmocka_run_group_tests_name("format-table", tests, NULL, NULL);
}
