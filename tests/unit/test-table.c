/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the sorted object table: order, lookups, removal while iterating. */
#include "unit-test.h"
#include "shared/table.h"

typedef struct Item {
        int key;
} Item;

static int compare(const void *key, const void *object) {
        return compare_int_key(key, ((const Item *) object)->key);
}

static void test_table(void **state) {
        Table t = TABLE_INIT(compare);
        Item items[1000];
        Item *it;

        /* Insert in a scrambled order; iteration must come out sorted. */
        for (int i = 0; i < 1000; i++) {
                items[i].key = (i * 7919) % 1000;
                assert_int_equal(table_put(&t, &items[i].key, &items[i]), 0);
        }
        assert_int_equal(table_size(&t), 1000);
        assert_int_equal(table_put(&t, &items[5].key, &items[5]), -EEXIST);

        int last = -1;
        TABLE_FOREACH(it, &t) {
                assert_true(it->key > last);
                last = it->key;
        }
        int k = 500;
        assert_int_equal(((Item *) table_get(&t, &k))->key, 500);
        k = 1000;
        assert_null(table_get(&t, &k));

        /* Remove every even key while iterating. */
        TABLE_FOREACH_SAFE(it, &t)
                if (it->key % 2 == 0)
                        assert_ptr_equal(table_remove(&t, &it->key), it);
        assert_int_equal(table_size(&t), 500);
        TABLE_FOREACH(it, &t)
                assert_true(it->key % 2 == 1);
        k = 3;
        assert_null(table_remove(&t, &(int) { 4 }));
        assert_non_null(table_remove(&t, &k));
        assert_int_equal(table_size(&t), 499);
        table_done(&t);
        assert_int_equal(table_size(&t), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table),
        };
        return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
