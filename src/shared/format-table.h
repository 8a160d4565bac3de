/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* format-table.h — aligned text tables for humans: optional colour per cell, fitted to a width */
#pragma once

#include <limits.h>

#include "macros.h"

typedef struct TextTable TextTable;

/* n_columns headers. A header starting with '>' is right-aligned (the '>' is not printed). */
TextTable *text_table_new(const char *const *headers, size_t n_columns);
TextTable *text_table_free(TextTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(TextTable *, text_table_free);

/* Adds the next cell, row by row. NULL prints as "-". The text is escaped for the terminal; colour
 * (an ANSI SGR sequence such as "\033[0;31m", or NULL) wraps the text, never the padding. */
int text_table_add(TextTable *t, const char *text, const char *colour);

/* How a column gives way when the table is wider than the width it must fit. All zero: the defaults.
 *
 *   weight     its share, against the other columns', of the room left above every column's minimum
 *              (0: 100). A column whose share reaches its widest cell gets that, and the rest is shared
 *              again among the others, as systemd's format-table.c does.
 *   min_width  never cut narrower than this, nor narrower than its header (0: 4; TEXT_WIDTH_WHOLE: never
 *              cut). A column whose cells are all narrower is simply as wide as they are.
 *   optional   0: essential, always shown. N > 0: left out of the table, highest N first (the rightmost
 *              first among equals), while the minimum widths of the columns shown still do not fit.
 *
 * Right-aligned columns hold numbers and are never cut, whatever min_width says: a cut number is a wrong
 * one. So the table is never wider than the width unless its essential columns at their minimum are. */
typedef struct TextColumnFit {
        unsigned weight;
        unsigned min_width;
        unsigned optional;
} TextColumnFit;

#define TEXT_WIDTH_WHOLE UINT_MAX

/* Sets how column gives way (see TextColumnFit); without it every column has the defaults. */
void text_table_set_fit(TextTable *t, size_t column, TextColumnFit fit);

/* The width the table must fit (0: no limit, every column as wide as its widest cell). */
void text_table_set_width(TextTable *t, size_t width);
/* Whether a table with a legend whose essential columns do not fit side by side is printed as records,
 * one "HEADER  value" line per cell (the default), or keeps its rows past the width (a matrix, which is
 * read across and down and means nothing as records). */
void text_table_set_keep_rows(TextTable *t, bool keep);
/* Whether the colours given to text_table_add() are printed (off by default). */
void text_table_set_colour(TextTable *t, bool colour);

int text_table_print(TextTable *t, FILE *f, bool legend);
size_t text_table_rows(const TextTable *t);

/* Display width in code points: good enough for names and numbers, which is what tables hold. */
size_t text_display_width(const char *s);
/* A copy of s cut to width code points, the last one "…" when anything was cut. */
char *text_ellipsize(const char *s, size_t width);
