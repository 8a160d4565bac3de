/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the responder's per-source table of token buckets. */
#include "unit-test.h"

#include <arpa/inet.h>

#include "probes/source-table.h"

#define SEC UINT64_C(1000000)

static struct in6_addr v4(const char *s) {
        struct sockaddr_in in = { .sin_family = AF_INET };
        struct in6_addr a;
        assert_int_equal(inet_pton(AF_INET, s, &in.sin_addr), 1);
        assert_int_equal(source_address_from_sockaddr((struct sockaddr *) &in, &a, NULL), 0);
        return a;
}

static void test_table(void **state) {
        _cleanup_(source_table_freep) SourceTable *t = source_table_new(3, 1, 2);
        struct in6_addr a = v4("10.0.0.1"), b = v4("10.0.0.2"), c = v4("10.0.0.3"), d = v4("10.0.0.4");

        assert_non_null(t);
        assert_int_equal(a.s6_addr[10], 0xff);
        assert_int_equal(a.s6_addr[15], 1);

        SourceEntry *ea = source_table_get(t, &a, 1 * SEC);
        assert_non_null(ea);
        assert_ptr_equal(source_table_get(t, &a, 2 * SEC), ea);
        SourceEntry *eb = source_table_get(t, &b, 3 * SEC);
        SourceEntry *ec = source_table_get(t, &c, 4 * SEC);
        assert_true(ea != eb && eb != ec && ea != ec);

        /* Full table: b's bucket is drained, a and c are full; the first full one (a) is reused. */
        assert_true(token_bucket_take(&eb->bucket, 2, 4 * SEC));
        assert_true(token_bucket_take(&ec->bucket, 1, 4 * SEC));
        SourceEntry *ed = source_table_get(t, &d, 4 * SEC);
        assert_ptr_equal(ed, ea);
        assert_memory_equal(&ed->address, &d, sizeof(d));
        assert_true(token_bucket_take(&ed->bucket, 2, 4 * SEC));

        /* Nobody full any more: the least recently used without connections goes (b, used at 3 s). */
        eb->connections = 0;
        SourceEntry *e2 = source_table_get(t, &a, 4 * SEC);
        assert_ptr_equal(e2, eb);

        /* Entries with open connections are never reused; with all busy there is no entry. */
        for (size_t i = 0; i < 3; i++)
                t->entries[i].connections = 1;
        struct in6_addr z = v4("10.9.9.9");
        assert_null(source_table_get(t, &z, 5 * SEC));
        /* A known address is still found. */
        assert_non_null(source_table_get(t, &d, 5 * SEC));
}

static void test_sockaddr(void **state) {
        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(7471) };
        struct sockaddr sa = { .sa_family = AF_UNIX };
        struct in6_addr a;
        uint16_t port;

        inet_pton(AF_INET6, "2001:db8::5", &in6.sin6_addr);
        assert_int_equal(source_address_from_sockaddr((struct sockaddr *) &in6, &a, &port), 0);
        assert_int_equal(port, 7471);
        assert_memory_equal(&a, &in6.sin6_addr, sizeof(a));
        assert_int_equal(source_address_from_sockaddr(&sa, &a, &port), -EAFNOSUPPORT);
        assert_null(source_table_new(0, 1, 1));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_sockaddr),
        };
        return cmocka_run_group_tests_name("source-table", tests, NULL, NULL);
}
