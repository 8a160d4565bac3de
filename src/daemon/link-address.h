/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-address.h — one link's IP addresses as rtnetlink says them: parsed once, kept sorted, and the
 * set a full dump collects swept into place (link.c owns the links and says what changed). */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify.h"

struct rtnl_addr;

typedef struct LinkAddress {
        int family;
        uint8_t address[16];
        uint8_t prefixlen;
        uint8_t scope;
        uint32_t flags; /* IFA_F_* */
        /* Made once when the address arrives, from the fields above: the bus and the metrics print
         * them for every request (GetManagedObjects at 2000 links), and IPv6 formatting is dear. */
        char text[INET6_ADDRSTRLEN]; /* as inet_ntop() writes it */
        char scope_text[8];          /* as iproute2 names it ("link", "host"), else its number */
        AddressClass class;
} LinkAddress;

typedef struct LinkAddresses {
        LinkAddress *addresses; /* sorted: IPv4 first, then by address and prefix length */
        size_t n_addresses;
        /* What the running full dump (start-up, overrun, Refresh) said so far, swept into place at its end. */
        LinkAddress *synced;
        size_t n_synced;
} LinkAddresses;

/* IPv4 and IPv6 addresses only: -EAFNOSUPPORT for the rest. */
int link_address_from_netlink(struct rtnl_addr *ra, LinkAddress *ret);

/* An event: adds, replaces or removes one address. Answers 1 if the set changed, 0 if not, -ENOMEM. */
int link_addresses_apply(LinkAddresses *s, const LinkAddress *a, bool removed);

/* A full dump: forget what an earlier (interrupted) try collected, collect, then sweep. complete: the
 * dump saw every address (not interrupted); an incomplete one adds what it saw and removes nothing, as
 * it may have missed some. Answers whether the set changed. */
void link_addresses_restart_sync(LinkAddresses *s);
int link_addresses_sync(LinkAddresses *s, const LinkAddress *a);
bool link_addresses_sweep(LinkAddresses *s, bool complete);

void link_addresses_done(LinkAddresses *s);
