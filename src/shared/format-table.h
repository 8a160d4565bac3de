/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* format-table.h — aligned text tables for humans (JSON output takes the data, not the table) */
#pragma once

#include "macros.h"

typedef struct TextTable TextTable;

/* Column headers, NULL-terminated. A header starting with '>' is right-aligned (the '>' is not
 * printed). */
TextTable *text_table_new(const char *header, ...);
TextTable *text_table_free(TextTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(TextTable *, text_table_free);

/* Adds one row; takes as many cells as there are columns. NULL prints as "-". Cells are escaped for
 * the terminal. */
int text_table_add_row(TextTable *t, ...);
int text_table_print(TextTable *t, FILE *f, bool legend);
size_t text_table_rows(const TextTable *t);
