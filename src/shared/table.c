/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "table.h"

/* Index of key, or -(insertion point) - 1 when absent. */
static ssize_t table_find(const Table *t, const void *key) {
        size_t lo = 0, hi = t->n_items;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = t->compare(key, t->items[mid]);
                if (c == 0)
                        return (ssize_t) mid;
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return -(ssize_t) lo - 1;
}

void *table_get(const Table *t, const void *key) {
        ssize_t i = table_find(t, key);
        return i >= 0 ? t->items[i] : NULL;
}

int table_put(Table *t, const void *key, void *object) {
        ssize_t i = table_find(t, key);
        size_t at;

        if (i >= 0)
                return -EEXIST;
        at = (size_t) (-i - 1);

        if (t->n_items == t->n_allocated) {
                size_t n = MAX(t->n_allocated * 2, (size_t) 16);
                void **grown = reallocarray(t->items, n, sizeof(void *));
                if (!grown)
                        return -ENOMEM;
                t->items = grown;
                t->n_allocated = n;
        }
        memmove(t->items + at + 1, t->items + at, (t->n_items - at) * sizeof(void *));
        t->items[at] = object;
        t->n_items++;
        return 0;
}

void *table_remove(Table *t, const void *key) {
        ssize_t i = table_find(t, key);
        void *object;

        if (i < 0)
                return NULL;
        object = t->items[i];
        memmove(t->items + i, t->items + i + 1, (t->n_items - (size_t) i - 1) * sizeof(void *));
        t->n_items--;
        return object;
}

void table_done(Table *t) {
        t->items = mfree(t->items);
        t->n_items = t->n_allocated = 0;
}

int compare_int_key(const void *a, int b) {
        int ka = *(const int *) a;
        return (ka > b) - (ka < b);
}
