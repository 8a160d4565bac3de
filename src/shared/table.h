/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* table.h — a sorted array of object pointers with binary search: lookups by key, ordered iteration */
#pragma once

#include "macros.h"

/* Compares a key (whatever the table's owner chose: an int*, a char*) with an object in the table. */
typedef int (*table_compare_fn)(const void *key, const void *object);

typedef struct Table {
        void **items;
        size_t n_items;
        size_t n_allocated;
        table_compare_fn compare;
} Table;

#define TABLE_INIT(cmp) ((Table) { .compare = (cmp) })

void *table_get(const Table *t, const void *key);
/* Inserts object under key. -EEXIST if the key is taken, -ENOMEM. */
int table_put(Table *t, const void *key, void *object);
/* Removes and returns the object under key, or NULL. */
void *table_remove(Table *t, const void *key);
/* Frees the array (not the objects). */
void table_done(Table *t);

static inline size_t table_size(const Table *t) {
        return t->n_items;
}

/* Iterates in key order. The body must not insert; removing the current object is allowed when
 * iterating with TABLE_FOREACH_SAFE, which walks from the end. */
#define TABLE_FOREACH(obj, t)                                                                   \
        for (size_t _i_##obj = 0; _i_##obj < (t)->n_items && ((obj) = (t)->items[_i_##obj], 1); \
             _i_##obj++)
#define TABLE_FOREACH_SAFE(obj, t)                                                              \
        for (size_t _i_##obj = (t)->n_items;                                                    \
             _i_##obj > 0 && _i_##obj <= (t)->n_items && ((obj) = (t)->items[_i_##obj - 1], 1);  \
             _i_##obj--)

int compare_int_key(const void *a, int b);
