/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-mode-table.h — what each of the kernel's link-mode bits is, and sets of them (pure C) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/macros.h"

/* Link-mode bits are the kernel's enum ethtool_link_mode_bit_indices (include/uapi/linux/ethtool.h);
 * 125 of them in Linux 6.18. Room for twice that: a newer kernel's bits beyond the table are kept (and
 * counted) but have no speed. */
#define LINK_MODE_BITS 256
#define LINK_MODE_WORDS (LINK_MODE_BITS / 32)

typedef struct LinkModeSet {
        uint32_t words[LINK_MODE_WORDS]; /* as the compact form carries them: word 0 holds bits 0..31 */
} LinkModeSet;

typedef enum LinkMedium {
        LINK_MEDIUM_NONE,         /* not a link mode: Autoneg, TP, Pause, FEC_* bits */
        LINK_MEDIUM_BASE_T,       /* twisted pair (BASE-T) */
        LINK_MEDIUM_SINGLE_PAIR,  /* single-pair Ethernet (T1, T1L, T1S) */
        LINK_MEDIUM_COPPER_CABLE, /* twinax direct-attach (CR, CX) */
        LINK_MEDIUM_BACKPLANE,    /* KR, KX */
        LINK_MEDIUM_FIBER,        /* SR, LR, ER, FR, DR, VR, BASE-X, FX, MLD */
        _LINK_MEDIUM_MAX,
} LinkMedium;

typedef struct LinkModeInfo {
        const char *name;    /* the kernel's link_mode_names[]: "25000baseCR/Full" */
        uint32_t speed_mbps; /* 0: not a speed (Autoneg, Pause, FEC, port bits) */
        uint8_t lanes;
        bool full_duplex;
        LinkMedium medium;
} LinkModeInfo;

/* What bit `bit` is; NULL beyond the table. */
const LinkModeInfo *link_mode_info(unsigned bit) _const_;
size_t link_mode_table_size(void) _const_;
const char *link_medium_to_string(LinkMedium m) _const_;

static inline bool link_mode_set_test(const LinkModeSet *s, unsigned bit) {
        return bit < LINK_MODE_BITS && (s->words[bit / 32] >> (bit % 32)) & 1;
}
static inline void link_mode_set_add(LinkModeSet *s, unsigned bit) {
        if (bit < LINK_MODE_BITS)
                s->words[bit / 32] |= UINT32_C(1) << (bit % 32);
}
bool link_mode_set_is_empty(const LinkModeSet *s) _pure_;
/* Whether any bit of the set is a speed (an Autoneg or Pause bit alone is not). */
bool link_mode_set_has_speeds(const LinkModeSet *s) _pure_;
/* The distinct speeds the set's modes run at, ascending, at most max of them; returns how many. */
size_t link_mode_set_speeds(const LinkModeSet *s, uint32_t *speeds, size_t max);
/* The fastest speed that a mode of a and a mode of b share (the same speed, both full duplex or both
 * half); 0 when none. */
uint32_t link_mode_sets_best_common_speed(const LinkModeSet *a, const LinkModeSet *b) _pure_;
/* Whether the set has a mode at that speed. */
bool link_mode_set_has_speed(const LinkModeSet *s, uint32_t speed_mbps) _pure_;
