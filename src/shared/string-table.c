/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "string-table.h"

const char *string_table_lookup_to_string(const char *const *table, size_t n, int i) {
        if (i < 0 || (size_t) i >= n)
                return NULL;
        return table[i];
}

int string_table_lookup_from_string(const char *const *table, size_t n, const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (int) i;
        return -EINVAL;
}
