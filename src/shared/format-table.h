/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* format-table.h — aligned text tables for humans: optional colour per cell, fitted to a width */
#pragma once

#include "macros.h"

typedef struct TextTable TextTable;

/* n_columns headers. A header starting with '>' is right-aligned (the '>' is not printed). */
TextTable *text_table_new(const char *const *headers, size_t n_columns);
TextTable *text_table_free(TextTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(TextTable *, text_table_free);

/* Adds the next cell, row by row. NULL prints as "-". The text is escaped for the terminal; colour
 * (an ANSI SGR sequence such as "\033[0;31m", or NULL) wraps the text, never the padding. */
int text_table_add(TextTable *t, const char *text, const char *colour);

/* Fit the table into width columns (0: no limit) by ellipsizing the widest column, again and again,
 * down to the width of its header; right-aligned (numeric) columns are never cut. */
void text_table_set_width(TextTable *t, size_t width);
/* Whether the colours given to text_table_add() are printed (off by default). */
void text_table_set_colour(TextTable *t, bool colour);

int text_table_print(TextTable *t, FILE *f, bool legend);
size_t text_table_rows(const TextTable *t);

/* Display width in code points: good enough for names and numbers, which is what tables hold. */
size_t text_display_width(const char *s);
/* A copy of s cut to width code points, the last one "…" when anything was cut. */
char *text_ellipsize(const char *s, size_t width);
