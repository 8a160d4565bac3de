/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-capability.h — what both ends of an Ethernet link support, the best they share, and whether it trained below */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/ethtool-linkmodes.h"

/* More than the distinct speeds in the kernel's table (17 in Linux 6.18). */
#define LINK_SPEEDS_MAX 24

/* The structural fact about one link, computed once per change in the derivation pass: the bus, the
 * metrics, the CLI and the health judge read it, none recomputes it. */
typedef struct LinkCapability {
        /* Allocated only when there is something in them: a node of 2000 veths pays nothing. */
        uint32_t *supported_speeds; /* SupportedSpeedsMbps, ascending */
        size_t n_supported;
        uint32_t *partner_speeds; /* PartnerSpeedsMbps */
        size_t n_partner;
        uint32_t best_common_mbps; /* BestCommonSpeedMbps; 0 unknown */
        /* The structural fact: the link trained below best_common_mbps, and how ("10000 Mb/s while both ends
         * support 25000 Mb/s"). The health judge makes it the verdict's degraded reason, and derive-health.c
         * publishes Degraded and DegradedReason from the verdict, so Degraded and Health cannot disagree. */
        bool trained_low;
        char *trained_low_reason;
        /* Otherwise why nothing could be judged: a static "unknown: ..." text, or NULL for a link at its best
         * (DegradedReason of a Link that is not Degraded). */
        const char *note;
        char *link_down_reason; /* LinkDownReason: the driver's extended state while down; NULL "" */
} LinkCapability;

/* Where the partner's advertisement came from. */
typedef enum LinkPartnerSource {
        LINK_PARTNER_NONE,
        LINK_PARTNER_ETHTOOL, /* lp_advertised, what autonegotiation heard */
        LINK_PARTNER_LLDP,    /* the switch port's IEEE 802.3 MAC/PHY TLV (issue 26 item 1) */
} LinkPartnerSource;

/* One link's facts as its sources recorded them. */
typedef struct LinkCapabilityFacts {
        bool asked;    /* a kind whose link modes are asked (Ethernet, veth) */
        bool answered; /* ethtool answered at least once */
        int modes_error, state_error;
        const EthtoolLinkModes *modes;
        const EthtoolLinkState *state;
        bool carrier;
        uint32_t active_speed_mbps; /* what the link trained at; 0 unknown */
        /* The LLDP fallback: the speeds the switch port says it can run at (its IEEE 802.3 MAC/PHY
         * configuration/status TLV: the advertised capabilities, and the operational MAU type's speed),
         * ascending, as the switch source recorded them. Used only when ethtool's partner advertisement is
         * empty: a fixed-speed port that does not autonegotiate still says what it runs. */
        const uint32_t *lldp_partner_speeds;
        size_t n_lldp_partner_speeds;
} LinkCapabilityFacts;

/* The text of the verdict: trained_low_reason, else the note, else "". */
const char *link_capability_reason(const LinkCapability *c) _pure_;

/* The judgement, pure (derive-link.c gathers the facts and publishes): facts in, the capability out
 * (its strings allocated). -ENOMEM. */
int link_capability_judge(const LinkCapabilityFacts *f, LinkCapability *ret);
void link_capability_done(LinkCapability *c);
