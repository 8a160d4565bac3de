/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-mode-table.c — the kernel's link modes as a table (bit -> speed, lanes, duplex, medium, after
 * net/ethtool/common.c), and what sets of them run at. */
#include "link-mode-table.h"

#define DUPLEX_NAME_HALF "Half"
#define DUPLEX_NAME_FULL "Full"
#define DUPLEX_IS_FULL_HALF false
#define DUPLEX_IS_FULL_FULL true
/* The kernel's name for a speed mode is SPEED "base" TYPE "/" DUPLEX (net/ethtool/common.c); lanes as
 * its link_mode_params[] count them (the digit after the type: KR4 four, DR8_2 eight, CR one). */
#define MODE(speed, type, duplex, l, m)                                                        \
        {                                                                                      \
                .name = #speed "base" type "/" DUPLEX_NAME_##duplex, .speed_mbps = (speed),    \
                .lanes = (l), .full_duplex = DUPLEX_IS_FULL_##duplex, .medium = LINK_MEDIUM_##m \
        }
/* Bits that are not speeds: the port types, Autoneg, Pause, FEC modes. */
#define SPECIAL(n) { .name = (n), .medium = LINK_MEDIUM_NONE }

static const LinkModeInfo link_modes[] = {
        [0] = MODE(10, "T", HALF, 1, BASE_T),
        [1] = MODE(10, "T", FULL, 1, BASE_T),
        [2] = MODE(100, "T", HALF, 1, BASE_T),
        [3] = MODE(100, "T", FULL, 1, BASE_T),
        [4] = MODE(1000, "T", HALF, 1, BASE_T),
        [5] = MODE(1000, "T", FULL, 1, BASE_T),
        [6] = SPECIAL("Autoneg"),
        [7] = SPECIAL("TP"),
        [8] = SPECIAL("AUI"),
        [9] = SPECIAL("MII"),
        [10] = SPECIAL("FIBRE"),
        [11] = SPECIAL("BNC"),
        [12] = MODE(10000, "T", FULL, 1, BASE_T),
        [13] = SPECIAL("Pause"),
        [14] = SPECIAL("Asym_Pause"),
        [15] = MODE(2500, "X", FULL, 1, FIBER),
        [16] = SPECIAL("Backplane"),
        [17] = MODE(1000, "KX", FULL, 1, BACKPLANE),
        [18] = MODE(10000, "KX4", FULL, 4, BACKPLANE),
        [19] = MODE(10000, "KR", FULL, 1, BACKPLANE),
        [20] = SPECIAL("10000baseR_FEC"),
        [21] = MODE(20000, "MLD2", FULL, 2, BACKPLANE),
        [22] = MODE(20000, "KR2", FULL, 2, BACKPLANE),
        [23] = MODE(40000, "KR4", FULL, 4, BACKPLANE),
        [24] = MODE(40000, "CR4", FULL, 4, COPPER_CABLE),
        [25] = MODE(40000, "SR4", FULL, 4, FIBER),
        [26] = MODE(40000, "LR4", FULL, 4, FIBER),
        [27] = MODE(56000, "KR4", FULL, 4, BACKPLANE),
        [28] = MODE(56000, "CR4", FULL, 4, COPPER_CABLE),
        [29] = MODE(56000, "SR4", FULL, 4, FIBER),
        [30] = MODE(56000, "LR4", FULL, 4, FIBER),
        [31] = MODE(25000, "CR", FULL, 1, COPPER_CABLE),
        [32] = MODE(25000, "KR", FULL, 1, BACKPLANE),
        [33] = MODE(25000, "SR", FULL, 1, FIBER),
        [34] = MODE(50000, "CR2", FULL, 2, COPPER_CABLE),
        [35] = MODE(50000, "KR2", FULL, 2, BACKPLANE),
        [36] = MODE(100000, "KR4", FULL, 4, BACKPLANE),
        [37] = MODE(100000, "SR4", FULL, 4, FIBER),
        [38] = MODE(100000, "CR4", FULL, 4, COPPER_CABLE),
        [39] = MODE(100000, "LR4_ER4", FULL, 4, FIBER),
        [40] = MODE(50000, "SR2", FULL, 2, FIBER),
        [41] = MODE(1000, "X", FULL, 1, FIBER),
        [42] = MODE(10000, "CR", FULL, 1, COPPER_CABLE),
        [43] = MODE(10000, "SR", FULL, 1, FIBER),
        [44] = MODE(10000, "LR", FULL, 1, FIBER),
        [45] = MODE(10000, "LRM", FULL, 1, FIBER),
        [46] = MODE(10000, "ER", FULL, 1, FIBER),
        [47] = MODE(2500, "T", FULL, 1, BASE_T),
        [48] = MODE(5000, "T", FULL, 1, BASE_T),
        [49] = SPECIAL("None"),
        [50] = SPECIAL("RS"),
        [51] = SPECIAL("BASER"),
        [52] = MODE(50000, "KR", FULL, 1, BACKPLANE),
        [53] = MODE(50000, "SR", FULL, 1, FIBER),
        [54] = MODE(50000, "CR", FULL, 1, COPPER_CABLE),
        [55] = MODE(50000, "LR_ER_FR", FULL, 1, FIBER),
        [56] = MODE(50000, "DR", FULL, 1, FIBER),
        [57] = MODE(100000, "KR2", FULL, 2, BACKPLANE),
        [58] = MODE(100000, "SR2", FULL, 2, FIBER),
        [59] = MODE(100000, "CR2", FULL, 2, COPPER_CABLE),
        [60] = MODE(100000, "LR2_ER2_FR2", FULL, 2, FIBER),
        [61] = MODE(100000, "DR2", FULL, 2, FIBER),
        [62] = MODE(200000, "KR4", FULL, 4, BACKPLANE),
        [63] = MODE(200000, "SR4", FULL, 4, FIBER),
        [64] = MODE(200000, "LR4_ER4_FR4", FULL, 4, FIBER),
        [65] = MODE(200000, "DR4", FULL, 4, FIBER),
        [66] = MODE(200000, "CR4", FULL, 4, COPPER_CABLE),
        [67] = MODE(100, "T1", FULL, 1, SINGLE_PAIR),
        [68] = MODE(1000, "T1", FULL, 1, SINGLE_PAIR),
        [69] = MODE(400000, "KR8", FULL, 8, BACKPLANE),
        [70] = MODE(400000, "SR8", FULL, 8, FIBER),
        [71] = MODE(400000, "LR8_ER8_FR8", FULL, 8, FIBER),
        [72] = MODE(400000, "DR8", FULL, 8, FIBER),
        [73] = MODE(400000, "CR8", FULL, 8, COPPER_CABLE),
        [74] = SPECIAL("LLRS"),
        [75] = MODE(100000, "KR", FULL, 1, BACKPLANE),
        [76] = MODE(100000, "SR", FULL, 1, FIBER),
        [77] = MODE(100000, "LR_ER_FR", FULL, 1, FIBER),
        [78] = MODE(100000, "CR", FULL, 1, COPPER_CABLE),
        [79] = MODE(100000, "DR", FULL, 1, FIBER),
        [80] = MODE(200000, "KR2", FULL, 2, BACKPLANE),
        [81] = MODE(200000, "SR2", FULL, 2, FIBER),
        [82] = MODE(200000, "LR2_ER2_FR2", FULL, 2, FIBER),
        [83] = MODE(200000, "DR2", FULL, 2, FIBER),
        [84] = MODE(200000, "CR2", FULL, 2, COPPER_CABLE),
        [85] = MODE(400000, "KR4", FULL, 4, BACKPLANE),
        [86] = MODE(400000, "SR4", FULL, 4, FIBER),
        [87] = MODE(400000, "LR4_ER4_FR4", FULL, 4, FIBER),
        [88] = MODE(400000, "DR4", FULL, 4, FIBER),
        [89] = MODE(400000, "CR4", FULL, 4, COPPER_CABLE),
        [90] = MODE(100, "FX", HALF, 1, FIBER),
        [91] = MODE(100, "FX", FULL, 1, FIBER),
        [92] = MODE(10, "T1L", FULL, 1, SINGLE_PAIR),
        [93] = MODE(800000, "CR8", FULL, 8, COPPER_CABLE),
        [94] = MODE(800000, "KR8", FULL, 8, BACKPLANE),
        [95] = MODE(800000, "DR8", FULL, 8, FIBER),
        [96] = MODE(800000, "DR8_2", FULL, 8, FIBER),
        [97] = MODE(800000, "SR8", FULL, 8, FIBER),
        [98] = MODE(800000, "VR8", FULL, 8, FIBER),
        [99] = MODE(10, "T1S", FULL, 1, SINGLE_PAIR),
        [100] = MODE(10, "T1S", HALF, 1, SINGLE_PAIR),
        [101] = MODE(10, "T1S_P2MP", HALF, 1, SINGLE_PAIR),
        [102] = MODE(10, "T1BRR", FULL, 1, SINGLE_PAIR),
        [103] = MODE(200000, "CR", FULL, 1, COPPER_CABLE),
        [104] = MODE(200000, "KR", FULL, 1, BACKPLANE),
        [105] = MODE(200000, "DR", FULL, 1, FIBER),
        [106] = MODE(200000, "DR_2", FULL, 1, FIBER),
        [107] = MODE(200000, "SR", FULL, 1, FIBER),
        [108] = MODE(200000, "VR", FULL, 1, FIBER),
        [109] = MODE(400000, "CR2", FULL, 2, COPPER_CABLE),
        [110] = MODE(400000, "KR2", FULL, 2, BACKPLANE),
        [111] = MODE(400000, "DR2", FULL, 2, FIBER),
        [112] = MODE(400000, "DR2_2", FULL, 2, FIBER),
        [113] = MODE(400000, "SR2", FULL, 2, FIBER),
        [114] = MODE(400000, "VR2", FULL, 2, FIBER),
        [115] = MODE(800000, "CR4", FULL, 4, COPPER_CABLE),
        [116] = MODE(800000, "KR4", FULL, 4, BACKPLANE),
        [117] = MODE(800000, "DR4", FULL, 4, FIBER),
        [118] = MODE(800000, "DR4_2", FULL, 4, FIBER),
        [119] = MODE(800000, "SR4", FULL, 4, FIBER),
        [120] = MODE(800000, "VR4", FULL, 4, FIBER),
        [121] = MODE(1600000, "CR8", FULL, 8, COPPER_CABLE),
        [122] = MODE(1600000, "KR8", FULL, 8, BACKPLANE),
        [123] = MODE(1600000, "DR8", FULL, 8, FIBER),
        [124] = MODE(1600000, "DR8_2", FULL, 8, FIBER),
};

const LinkModeInfo *link_mode_info(unsigned bit) {
        return bit < ELEMENTSOF(link_modes) && link_modes[bit].name ? &link_modes[bit] : NULL;
}

size_t link_mode_table_size(void) {
        return ELEMENTSOF(link_modes);
}

const char *link_medium_to_string(LinkMedium m) {
        switch (m) {
        case LINK_MEDIUM_NONE:
                return "none";
        case LINK_MEDIUM_BASE_T:
                return "twisted pair";
        case LINK_MEDIUM_SINGLE_PAIR:
                return "single pair";
        case LINK_MEDIUM_COPPER_CABLE:
                return "direct-attach copper";
        case LINK_MEDIUM_BACKPLANE:
                return "backplane";
        case LINK_MEDIUM_FIBER:
                return "fiber";
        case _LINK_MEDIUM_MAX:
                break;
        }
        return "unknown";
}

bool link_mode_set_is_empty(const LinkModeSet *s) {
        for (size_t i = 0; i < LINK_MODE_WORDS; i++)
                if (s->words[i] != 0)
                        return false;
        return true;
}

static uint32_t bit_speed(unsigned bit) {
        const LinkModeInfo *m = link_mode_info(bit);
        return m ? m->speed_mbps : 0;
}

bool link_mode_set_has_speeds(const LinkModeSet *s) {
        for (unsigned bit = 0; bit < ELEMENTSOF(link_modes); bit++)
                if (link_mode_set_test(s, bit) && bit_speed(bit) > 0)
                        return true;
        return false;
}

bool link_mode_set_has_speed(const LinkModeSet *s, uint32_t speed_mbps) {
        for (unsigned bit = 0; bit < ELEMENTSOF(link_modes); bit++)
                if (link_mode_set_test(s, bit) && speed_mbps > 0 && bit_speed(bit) == speed_mbps)
                        return true;
        return false;
}

size_t link_mode_set_speeds(const LinkModeSet *s, uint32_t *speeds, size_t max) {
        size_t n = 0;

        for (unsigned bit = 0; bit < ELEMENTSOF(link_modes); bit++) {
                uint32_t v = bit_speed(bit);
                size_t i;

                if (v == 0 || !link_mode_set_test(s, bit))
                        continue;
                for (i = 0; i < n && speeds[i] < v; i++)
                        ;
                if (i < n && speeds[i] == v)
                        continue;
                if (n == max)
                        break; /* the table has fewer distinct speeds than any caller's room */
                memmove(speeds + i + 1, speeds + i, (n - i) * sizeof(*speeds));
                speeds[i] = v;
                n++;
        }
        return n;
}

uint32_t link_mode_sets_best_common_speed(const LinkModeSet *a, const LinkModeSet *b) {
        uint32_t best = 0;

        /* Two modes meet when they run at the same speed and duplex: 25000baseCR at one end and
         * 25000baseSR at the other are one cable's two ends (a DAC seen as SR by a switch's optics
         * database, or a breakout); the media are the cable's business, the rate is ours. */
        for (unsigned i = 0; i < ELEMENTSOF(link_modes); i++) {
                const LinkModeInfo *x = &link_modes[i];

                if (x->speed_mbps <= best || !link_mode_set_test(a, i))
                        continue;
                for (unsigned j = 0; j < ELEMENTSOF(link_modes); j++) {
                        const LinkModeInfo *y = &link_modes[j];
                        if (y->speed_mbps == x->speed_mbps && y->full_duplex == x->full_duplex &&
                            link_mode_set_test(b, j)) {
                                best = x->speed_mbps;
                                break;
                        }
                }
        }
        return best;
}
