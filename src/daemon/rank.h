/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rank.h — RankAddresses(): this node's addresses best-first for a purpose ("ring", "coordinator") */
#pragma once

#include "classify.h"

typedef struct Link Link;
typedef struct LinkAddress LinkAddress;
typedef struct Links Links;

typedef struct RankedAddress {
        const Link *link;
        const LinkAddress *address;
        int type_order;
        int class_order;
} RankedAddress;

/**
 * rank_addresses() - every address worth handing out, best first
 * @links: the links, with their derived ConnectionType and SpeedMbps
 * @purpose: RANK_PURPOSE_RING (Thunderbolt and RDMA first) or RANK_PURPOSE_COORDINATOR
 * @ret: an array to free(); its pointers are valid until the links change
 * @ret_n: its length
 *
 * Only links that are up, of a type the purpose uses, and addresses that are usable (not tentative,
 * failed or deprecated; never loopback). Interface type first, address class second, then the
 * faster link, IPv4 (it needs no scope id), and finally index and address, so the order is total.
 *
 * Return: 0 or -ENOMEM.
 */
int rank_addresses(Links *links, RankPurpose purpose, RankedAddress **ret, size_t *ret_n);
