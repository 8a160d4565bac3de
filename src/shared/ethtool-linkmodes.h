/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ethtool-linkmodes.h — ethtool's netlink replies (LINKMODES, LINKSTATE) parsed into link-mode sets */
#pragma once

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "link-mode-table.h"
#include "shared/macros.h"

struct nlattr;
struct nlmsghdr;

/*
 * Pure C, no D-Bus, no globals: the daemon's worker (src/daemon/link-ethtool.c), the test build's replayed
 * source, the unit tests and the fuzz target all feed the same functions with the messages the kernel
 * sends (Documentation/networking/ethtool-netlink.rst: attributes only, no family header; link modes as
 * bitsets in the compact or the verbose form).
 */

/* ---- one bitset attribute ---- */

/* A bitset nest, compact or verbose: its value and, unless it is a list (NOMASK), its mask. Bits beyond
 * LINK_MODE_BITS are dropped. -EBADMSG on a malformed set (a compact one without SIZE or VALUE, a
 * value shorter than SIZE says, a verbose bit without an index). */
int ethtool_bitset_parse(const struct nlattr *nest, LinkModeSet *ret_value, LinkModeSet *ret_mask,
                         bool *ret_nomask);

/* ---- whole messages ---- */

typedef enum EthtoolMessageKind {
        ETHTOOL_MESSAGE_LINKMODES, /* LINKMODES_GET_REPLY or LINKMODES_NTF */
        ETHTOOL_MESSAGE_LINKSTATE, /* LINKSTATE_GET_REPLY */
        ETHTOOL_MESSAGE_LINKINFO,  /* LINKINFO_GET_REPLY or LINKINFO_NTF: only its header is read */
        ETHTOOL_MESSAGE_OTHER,     /* another message of the family (the monitor group carries many) */
        _ETHTOOL_MESSAGE_KIND_MAX,
} EthtoolMessageKind;

/* What LINKMODES says about one device. Unknown numbers are 0 (speed, lanes) or -1 (duplex, autoneg). */
typedef struct EthtoolLinkModes {
        bool have_ours;   /* ETHTOOL_A_LINKMODES_OURS: advertised (value) and supported (mask) */
        bool have_peer;   /* ETHTOOL_A_LINKMODES_PEER: the partner's advertisement (lp_advertised) */
        LinkModeSet supported, advertised, partner;
        uint32_t speed_mbps;
        uint32_t lanes;
        int duplex;  /* 0 half, 1 full */
        int autoneg; /* 0 off, 1 on */
} EthtoolLinkModes;

/* What LINKSTATE says: whether the link is up and, when it is down, why (the extended state). */
typedef struct EthtoolLinkState {
        int link;         /* 1 up, 0 down, -1 unknown */
        int ext_state;    /* enum ethtool_link_ext_state; -1 none given */
        int ext_substate; /* 0 none given */
} EthtoolLinkState;

typedef struct EthtoolMessage {
        EthtoolMessageKind kind;
        uint8_t cmd;     /* the genetlink command, as the kernel numbers its messages */
        int ifindex;     /* from the header; 0 when absent */
        char name[16];   /* from the header (IFNAMSIZ); "" when absent */
        EthtoolLinkModes modes;
        EthtoolLinkState state;
} EthtoolMessage;

void ethtool_link_modes_init(EthtoolLinkModes *m);
void ethtool_link_state_init(EthtoolLinkState *s);

/* The attributes of one message (what follows the genetlink header), for the command cmd. -EBADMSG on a
 * malformed message; nothing is kept of it. */
int ethtool_message_parse_attrs(uint8_t cmd, const void *attrs, size_t len, EthtoolMessage *ret);
/* One whole netlink message as it arrives (nlmsghdr, genlmsghdr, attributes), len the bytes available;
 * the family id is not checked (the caller knows whom it asked). -EBADMSG when the lengths do not hold,
 * -EPROTO for an NLMSG_ERROR (ret->ifindex 0), a negative errno when the kernel answered one. */
int ethtool_message_parse(const struct nlmsghdr *nlh, size_t len, EthtoolMessage *ret);

/* "cable issue: unsupported cable", "autonegotiation: no partner detected": the extended state as a
 * person reads it; "" when none is given. Written into buf. */
const char *ethtool_link_ext_state_format(int ext_state, int ext_substate, char *buf, size_t size);
