/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>

#include "source-table.h"

SourceTable *source_table_new(size_t size, uint64_t rate, uint64_t burst) {
        if (size == 0)
                return NULL;
        SourceTable *t = calloc(1, sizeof(SourceTable) + size * sizeof(SourceEntry));
        if (!t)
                return NULL;
        t->size = size;
        t->rate = rate;
        t->burst = burst;
        return t;
}

SourceTable *source_table_free(SourceTable *t) {
        free(t);
        return NULL;
}

/* A linear scan: the table holds at most a few thousand entries and is consulted once per
 * connection, so a hash buys nothing worth its code. */
SourceEntry *source_table_get(SourceTable *t, const struct in6_addr *address, uint64_t now_usec) {
        SourceEntry *free_slot = NULL, *full = NULL, *lru = NULL;

        for (size_t i = 0; i < t->size; i++) {
                SourceEntry *e = &t->entries[i];

                if (!e->used) {
                        if (!free_slot)
                                free_slot = e;
                        continue;
                }
                if (memcmp(&e->address, address, sizeof(*address)) == 0) {
                        e->last_usec = now_usec;
                        return e;
                }
                if (e->connections > 0)
                        continue;
                if (!full && token_bucket_is_full(&e->bucket, now_usec))
                        full = e;
                if (!lru || e->last_usec < lru->last_usec)
                        lru = e;
        }

        SourceEntry *e = free_slot ?: full ?: lru;
        if (!e)
                return NULL;
        *e = (SourceEntry) {
                .address = *address,
                .used = true,
                .last_usec = now_usec,
        };
        token_bucket_init(&e->bucket, t->rate, t->burst, now_usec);
        return e;
}

int source_address_from_sockaddr(const struct sockaddr *sa, struct in6_addr *ret, uint16_t *ret_port) {
        switch (sa->sa_family) {
        case AF_INET: {
                const struct sockaddr_in *in = (const struct sockaddr_in *) (const void *) sa;
                struct in6_addr a = {};
                a.s6_addr[10] = 0xff;
                a.s6_addr[11] = 0xff;
                memcpy(&a.s6_addr[12], &in->sin_addr, 4);
                *ret = a;
                if (ret_port)
                        *ret_port = ntohs(in->sin_port);
                return 0;
        }
        case AF_INET6: {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) (const void *) sa;
                *ret = in6->sin6_addr;
                if (ret_port)
                        *ret_port = ntohs(in6->sin6_port);
                return 0;
        }
        default:
                return -EAFNOSUPPORT;
        }
}
