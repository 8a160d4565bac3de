/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/if_addr.h>

#include "link.h"
#include "rank.h"

static int ranked_compare(const void *a, const void *b) {
        const RankedAddress *x = a, *y = b;
        uint32_t sx = x->link->derived.speed_mbps, sy = y->link->derived.speed_mbps;

        if (x->type_order != y->type_order)
                return x->type_order - y->type_order;
        if (x->class_order != y->class_order)
                return x->class_order - y->class_order;
        if (sx != sy)
                return sx > sy ? -1 : 1;
        if (x->address->family != y->address->family)
                return x->address->family == AF_INET ? -1 : 1;
        if (x->link->ifindex != y->link->ifindex)
                return x->link->ifindex - y->link->ifindex;
        return memcmp(x->address->address, y->address->address, sizeof(x->address->address));
}

int rank_addresses(Links *links, RankPurpose purpose, RankedAddress **ret, size_t *ret_n) {
        _cleanup_(freep) RankedAddress *entries = NULL;
        size_t n = 0, allocated = 0;
        Link *l;

        TABLE_FOREACH(l, &links->table) {
                int type_order = rank_type_order(purpose, l->derived.connection_type);

                if (type_order < 0 || !link_is_up(l))
                        continue;
                for (size_t i = 0; i < l->addrs.n_addresses; i++) {
                        const LinkAddress *a = &l->addrs.addresses[i];
                        int class_order = rank_class_order(a->class);

                        /* Not yet usable, or no longer offered: not an address to hand out. */
                        if (class_order < 0 || (a->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED | IFA_F_DEPRECATED)))
                                continue;
                        if (n == allocated) {
                                allocated = MAX(allocated * 2, (size_t) 16);
                                RankedAddress *grown = reallocarray(entries, allocated, sizeof(RankedAddress));
                                if (!grown)
                                        return -ENOMEM;
                                entries = grown;
                        }
                        entries[n++] = (RankedAddress) {
                                .link = l,
                                .address = a,
                                .type_order = type_order,
                                .class_order = class_order,
                        };
                }
        }
        if (n > 1)
                qsort(entries, n, sizeof(RankedAddress), ranked_compare);
        *ret = TAKE_PTR(entries);
        *ret_n = n;
        return 0;
}
