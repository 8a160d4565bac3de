/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* string-table.h — enums to names and back through a table indexed by the enum */
#pragma once

#include "macros.h"

/* table[i] for 0 <= i < n (NULL for a hole in the table), else NULL. */
const char *string_table_lookup_to_string(const char *const *table, size_t n, int i) _pure_;
/* The index of s in table, or -EINVAL (also for NULL). */
int string_table_lookup_from_string(const char *const *table, size_t n, const char *s) _pure_;

/* Defines name_to_string(type) -> const char* (NULL when out of range) over table[]. */
#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, table)                                    \
        const char *name##_to_string(type v) {                                                     \
                return string_table_lookup_to_string(table, ELEMENTSOF(table), (int) v);           \
        }

/* Defines name_from_string(const char *) -> type (-EINVAL, the enum's _INVALID, when unknown). */
#define DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type, table)                                  \
        type name##_from_string(const char *s) {                                                   \
                return (type) string_table_lookup_from_string(table, ELEMENTSOF(table), s);        \
        }

#define DEFINE_STRING_TABLE_LOOKUP(name, type, table)                                              \
        DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, table)                                    \
        DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type, table)
