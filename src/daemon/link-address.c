/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <netlink/route/addr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link-address.h"
#include "shared/macros.h"

static const char *scope_to_string(uint8_t scope, char buf[static 4]) {
        /* The names iproute2 prints, so `ip -j addr` and we agree. */
        switch (scope) {
        case 0:
                return "global";
        case 200:
                return "site";
        case 253:
                return "link";
        case 254:
                return "host";
        case 255:
                return "nowhere";
        }
        snprintf(buf, 4, "%u", scope);
        return buf;
}

static int address_compare(const LinkAddress *a, const LinkAddress *b) {
        if (a->family != b->family)
                return a->family == AF_INET ? -1 : 1;
        int c = memcmp(a->address, b->address, sizeof(a->address));
        if (c != 0)
                return c;
        return (int) a->prefixlen - (int) b->prefixlen;
}

static int address_qsort_compare(const void *a, const void *b) {
        return address_compare(a, b);
}

int link_address_from_netlink(struct rtnl_addr *ra, LinkAddress *ret) {
        struct nl_addr *local = rtnl_addr_get_local(ra);
        int family = rtnl_addr_get_family(ra);
        size_t len = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;

        if (len == 0 || !local || nl_addr_get_len(local) != len)
                return -EAFNOSUPPORT;
        *ret = (LinkAddress) {
                .family = family,
                .prefixlen = (uint8_t) rtnl_addr_get_prefixlen(ra),
                .scope = (uint8_t) rtnl_addr_get_scope(ra),
                .flags = (uint32_t) rtnl_addr_get_flags(ra),
        };
        memcpy(ret->address, nl_addr_get_binary_addr(local), len);
        if (!inet_ntop(family, ret->address, ret->text, sizeof(ret->text)))
                return -errno;
        char scope[4];
        snprintf(ret->scope_text, sizeof(ret->scope_text), "%s", scope_to_string(ret->scope, scope));
        ret->class = address_class(family, ret->address);
        return 0;
}

int link_addresses_apply(LinkAddresses *s, const LinkAddress *a, bool removed) {
        size_t i;

        for (i = 0; i < s->n_addresses; i++) {
                int c = address_compare(a, &s->addresses[i]);
                if (c == 0)
                        break;
                if (c < 0) {
                        if (removed)
                                return 0;
                        goto insert;
                }
        }

        if (i < s->n_addresses) {
                if (removed) {
                        memmove(s->addresses + i, s->addresses + i + 1, (s->n_addresses - i - 1) * sizeof(LinkAddress));
                        s->n_addresses--;
                        return 1;
                }
                if (memcmp(&s->addresses[i], a, sizeof(*a)) == 0)
                        return 0;
                s->addresses[i] = *a;
                return 1;
        }
        if (removed)
                return 0;

insert:;
        LinkAddress *grown = reallocarray(s->addresses, s->n_addresses + 1, sizeof(LinkAddress));
        if (!grown)
                return -ENOMEM;
        s->addresses = grown;
        memmove(s->addresses + i + 1, s->addresses + i, (s->n_addresses - i) * sizeof(LinkAddress));
        s->addresses[i] = *a;
        s->n_addresses++;
        return 1;
}

void link_addresses_restart_sync(LinkAddresses *s) {
        s->n_synced = 0;
        s->synced = mfree(s->synced);
}

int link_addresses_sync(LinkAddresses *s, const LinkAddress *a) {
        LinkAddress *grown = reallocarray(s->synced, s->n_synced + 1, sizeof(LinkAddress));
        if (!grown)
                return -ENOMEM;
        s->synced = grown;
        s->synced[s->n_synced++] = *a;
        return 0;
}

bool link_addresses_sweep(LinkAddresses *s, bool complete) {
        bool changed;

        if (!complete) {
                /* What the dump saw is applied over what we had: nothing is taken away on its word. */
                changed = false;
                for (size_t i = 0; i < s->n_synced; i++) {
                        int r = link_addresses_apply(s, &s->synced[i], false);
                        if (r < 0)
                                break; /* out of memory: the resync that follows tries again */
                        changed |= r > 0;
                }
                link_addresses_restart_sync(s);
                return changed;
        }
        if (s->n_synced > 1)
                qsort(s->synced, s->n_synced, sizeof(LinkAddress), address_qsort_compare);
        changed = s->n_synced != s->n_addresses ||
                  (s->n_synced > 0 && memcmp(s->synced, s->addresses, s->n_synced * sizeof(LinkAddress)) != 0);
        free(s->addresses);
        s->addresses = TAKE_PTR(s->synced);
        s->n_addresses = s->n_synced;
        s->n_synced = 0;
        return changed;
}

void link_addresses_done(LinkAddresses *s) {
        free(s->addresses);
        free(s->synced);
        *s = (LinkAddresses) {};
}
