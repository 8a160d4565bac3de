/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ethtool's netlink replies as Documentation/networking/ethtool-netlink.rst lays them out, and the
 * kernel's link modes as a table. Every message is attributes only (no family header); a link-mode set
 * is a bitset nest in one of two forms:
 *   compact:  SIZE (u32 bits), VALUE (u32 words, host order, word 0 = bits 0..31), MASK unless NOMASK;
 *   verbose:  BITS, a nest of BIT nests, each with INDEX (u32), NAME and, when the bit is set in a
 *             value/mask set, the VALUE flag; in a NOMASK set every listed bit is set.
 * LINKMODES carries OURS (value: advertised, mask: supported) and PEER (NOMASK: what the partner
 * advertised, absent when it advertised nothing); LINKSTATE the link and, for a link that is down, the
 * extended state and substate the driver gives.
 */
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>

#include "ethtool-linkmodes.h"

/* ---- the table: bit -> speed, lanes, duplex, medium ---- */

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

/* ---- bitsets ---- */

static int bitset_find_name(const char *name) {
        for (unsigned bit = 0; bit < ELEMENTSOF(link_modes); bit++)
                if (link_modes[bit].name && streq(link_modes[bit].name, name))
                        return (int) bit;
        return -ENOENT;
}

static int bitset_parse_verbose(struct nlattr *bits, bool nomask, LinkModeSet *value, LinkModeSet *mask) {
        static struct nla_policy policy[ETHTOOL_A_BITSET_BIT_MAX + 1] = {
                [ETHTOOL_A_BITSET_BIT_INDEX] = { .type = NLA_U32 },
                [ETHTOOL_A_BITSET_BIT_NAME] = { .type = NLA_STRING },
                [ETHTOOL_A_BITSET_BIT_VALUE] = { .type = NLA_FLAG },
        };
        struct nlattr *bit;
        int rem;

        nla_for_each_nested(bit, bits, rem) {
                struct nlattr *tb[ETHTOOL_A_BITSET_BIT_MAX + 1];
                int index;

                if (nla_type(bit) != ETHTOOL_A_BITSET_BITS_BIT)
                        return -EBADMSG; /* the nest holds BIT nests and nothing else */
                if (nla_parse_nested(tb, ETHTOOL_A_BITSET_BIT_MAX, bit, policy) < 0)
                        return -EBADMSG;
                /* Replies name every bit by index and by name; requests may use either. */
                if (tb[ETHTOOL_A_BITSET_BIT_INDEX]) {
                        uint32_t i = nla_get_u32(tb[ETHTOOL_A_BITSET_BIT_INDEX]);
                        if (i >= LINK_MODE_BITS)
                                continue; /* a bit from a far newer kernel: nothing we could say of it */
                        index = (int) i;
                } else if (tb[ETHTOOL_A_BITSET_BIT_NAME]) {
                        index = bitset_find_name(nla_get_string(tb[ETHTOOL_A_BITSET_BIT_NAME]));
                        if (index < 0)
                                continue;
                } else
                        return -EBADMSG;

                if (nomask)
                        link_mode_set_add(value, (unsigned) index);
                else {
                        link_mode_set_add(mask, (unsigned) index);
                        if (tb[ETHTOOL_A_BITSET_BIT_VALUE])
                                link_mode_set_add(value, (unsigned) index);
                }
        }
        return 0;
}

/* A compact bitmap of size bits: at least that many bits' words must be there. */
static int bitset_copy_words(const struct nlattr *a, uint32_t size, LinkModeSet *ret) {
        size_t words = (size + 31) / 32, keep = MIN(words, (size_t) LINK_MODE_WORDS);

        if (!a || (size_t) nla_len(a) < words * sizeof(uint32_t))
                return -EBADMSG;
        memcpy(ret->words, nla_data(a), keep * sizeof(uint32_t));
        /* Bits past size are not part of the set, whatever the word holds. */
        if (size < LINK_MODE_BITS && size % 32 != 0)
                ret->words[size / 32] &= (UINT32_C(1) << (size % 32)) - 1;
        return 0;
}

int ethtool_bitset_parse(const struct nlattr *nest, LinkModeSet *ret_value, LinkModeSet *ret_mask, bool *ret_nomask) {
        static struct nla_policy policy[ETHTOOL_A_BITSET_MAX + 1] = {
                [ETHTOOL_A_BITSET_NOMASK] = { .type = NLA_FLAG },
                [ETHTOOL_A_BITSET_SIZE] = { .type = NLA_U32 },
                [ETHTOOL_A_BITSET_BITS] = { .type = NLA_NESTED },
                [ETHTOOL_A_BITSET_VALUE] = { .type = NLA_UNSPEC },
                [ETHTOOL_A_BITSET_MASK] = { .type = NLA_UNSPEC },
        };
        struct nlattr *tb[ETHTOOL_A_BITSET_MAX + 1];
        LinkModeSet value = {}, mask = {};
        bool nomask;
        int r;

        if (nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, (struct nlattr *) nest, policy) < 0)
                return -EBADMSG;
        nomask = tb[ETHTOOL_A_BITSET_NOMASK] != NULL;

        if (tb[ETHTOOL_A_BITSET_BITS])
                r = bitset_parse_verbose(tb[ETHTOOL_A_BITSET_BITS], nomask, &value, &mask);
        else if (!tb[ETHTOOL_A_BITSET_SIZE])
                r = -EBADMSG; /* SIZE is optional in the verbose form only */
        else {
                uint32_t size = nla_get_u32(tb[ETHTOOL_A_BITSET_SIZE]);
                r = bitset_copy_words(tb[ETHTOOL_A_BITSET_VALUE], size, &value);
                if (r >= 0 && !nomask)
                        r = bitset_copy_words(tb[ETHTOOL_A_BITSET_MASK], size, &mask);
        }
        if (r < 0)
                return r;

        if (ret_value)
                *ret_value = value;
        if (ret_mask)
                *ret_mask = mask;
        if (ret_nomask)
                *ret_nomask = nomask;
        return 0;
}

/* ---- messages ---- */

void ethtool_link_modes_init(EthtoolLinkModes *m) {
        *m = (EthtoolLinkModes) { .duplex = -1, .autoneg = -1 };
}

void ethtool_link_state_init(EthtoolLinkState *s) {
        *s = (EthtoolLinkState) { .link = -1, .ext_state = -1 };
}

/* Every message kind has its header at attribute 1 (ETHTOOL_A_*_HEADER). */
#define ETHTOOL_A_ANY_HEADER 1

static int parse_header(const struct nlattr *a, EthtoolMessage *m) {
        static struct nla_policy policy[ETHTOOL_A_HEADER_MAX + 1] = {
                [ETHTOOL_A_HEADER_DEV_INDEX] = { .type = NLA_U32 },
                [ETHTOOL_A_HEADER_DEV_NAME] = { .type = NLA_STRING },
                [ETHTOOL_A_HEADER_FLAGS] = { .type = NLA_U32 },
        };
        struct nlattr *tb[ETHTOOL_A_HEADER_MAX + 1];

        if (!a)
                return 0; /* the kernel always sends one; a test's message may leave it out */
        if (nla_parse_nested(tb, ETHTOOL_A_HEADER_MAX, (struct nlattr *) a, policy) < 0)
                return -EBADMSG;
        if (tb[ETHTOOL_A_HEADER_DEV_INDEX]) {
                uint32_t i = nla_get_u32(tb[ETHTOOL_A_HEADER_DEV_INDEX]);
                if (i > INT32_MAX)
                        return -EBADMSG;
                m->ifindex = (int) i;
        }
        if (tb[ETHTOOL_A_HEADER_DEV_NAME]) {
                const char *name = nla_get_string(tb[ETHTOOL_A_HEADER_DEV_NAME]);
                if (strlen(name) >= sizeof(m->name))
                        return -EBADMSG; /* longer than any interface name */
                snprintf(m->name, sizeof(m->name), "%s", name);
        }
        return 0;
}

static int parse_linkmodes(struct nlattr **tb, EthtoolLinkModes *m) {
        int r;

        if (tb[ETHTOOL_A_LINKMODES_OURS]) {
                r = ethtool_bitset_parse(tb[ETHTOOL_A_LINKMODES_OURS], &m->advertised, &m->supported, NULL);
                if (r < 0)
                        return r;
                m->have_ours = true;
        }
        if (tb[ETHTOOL_A_LINKMODES_PEER]) {
                r = ethtool_bitset_parse(tb[ETHTOOL_A_LINKMODES_PEER], &m->partner, NULL, NULL);
                if (r < 0)
                        return r;
                m->have_peer = true;
        }
        if (tb[ETHTOOL_A_LINKMODES_SPEED]) {
                uint32_t v = nla_get_u32(tb[ETHTOOL_A_LINKMODES_SPEED]);
                /* SPEED_UNKNOWN is -1; anything past INT_MAX is no speed either. */
                m->speed_mbps = v <= INT32_MAX ? v : 0;
        }
        if (tb[ETHTOOL_A_LINKMODES_LANES])
                m->lanes = nla_get_u32(tb[ETHTOOL_A_LINKMODES_LANES]);
        if (tb[ETHTOOL_A_LINKMODES_DUPLEX]) {
                uint8_t d = nla_get_u8(tb[ETHTOOL_A_LINKMODES_DUPLEX]);
                m->duplex = d == DUPLEX_FULL ? 1 : d == DUPLEX_HALF ? 0 : -1;
        }
        if (tb[ETHTOOL_A_LINKMODES_AUTONEG]) {
                uint8_t a = nla_get_u8(tb[ETHTOOL_A_LINKMODES_AUTONEG]);
                m->autoneg = a == AUTONEG_ENABLE ? 1 : a == AUTONEG_DISABLE ? 0 : -1;
        }
        return 0;
}

static void parse_linkstate(struct nlattr **tb, EthtoolLinkState *s) {
        if (tb[ETHTOOL_A_LINKSTATE_LINK])
                s->link = nla_get_u8(tb[ETHTOOL_A_LINKSTATE_LINK]) ? 1 : 0;
        if (tb[ETHTOOL_A_LINKSTATE_EXT_STATE])
                s->ext_state = nla_get_u8(tb[ETHTOOL_A_LINKSTATE_EXT_STATE]);
        if (tb[ETHTOOL_A_LINKSTATE_EXT_SUBSTATE])
                s->ext_substate = nla_get_u8(tb[ETHTOOL_A_LINKSTATE_EXT_SUBSTATE]);
}

/* The largest of the attribute sets we read; every one is parsed into a table this big. */
#define MAX_ATTR 16
_Static_assert((int) ETHTOOL_A_LINKMODES_MAX <= MAX_ATTR && (int) ETHTOOL_A_LINKSTATE_MAX <= MAX_ATTR &&
                       (int) ETHTOOL_A_LINKINFO_MAX <= MAX_ATTR,
               "the attribute table is too small");

int ethtool_message_parse_attrs(uint8_t cmd, const void *attrs, size_t len, EthtoolMessage *ret) {
        static struct nla_policy linkmodes_policy[MAX_ATTR + 1] = {
                [ETHTOOL_A_LINKMODES_HEADER] = { .type = NLA_NESTED },
                [ETHTOOL_A_LINKMODES_AUTONEG] = { .type = NLA_U8 },
                [ETHTOOL_A_LINKMODES_OURS] = { .type = NLA_NESTED },
                [ETHTOOL_A_LINKMODES_PEER] = { .type = NLA_NESTED },
                [ETHTOOL_A_LINKMODES_SPEED] = { .type = NLA_U32 },
                [ETHTOOL_A_LINKMODES_DUPLEX] = { .type = NLA_U8 },
                [ETHTOOL_A_LINKMODES_LANES] = { .type = NLA_U32 },
        };
        static struct nla_policy linkstate_policy[MAX_ATTR + 1] = {
                [ETHTOOL_A_LINKSTATE_HEADER] = { .type = NLA_NESTED },
                [ETHTOOL_A_LINKSTATE_LINK] = { .type = NLA_U8 },
                [ETHTOOL_A_LINKSTATE_SQI] = { .type = NLA_U32 },
                [ETHTOOL_A_LINKSTATE_SQI_MAX] = { .type = NLA_U32 },
                [ETHTOOL_A_LINKSTATE_EXT_STATE] = { .type = NLA_U8 },
                [ETHTOOL_A_LINKSTATE_EXT_SUBSTATE] = { .type = NLA_U8 },
        };
        static struct nla_policy header_only_policy[MAX_ATTR + 1] = {
                [ETHTOOL_A_ANY_HEADER] = { .type = NLA_NESTED },
        };
        struct nlattr *tb[MAX_ATTR + 1];
        EthtoolMessage m = { .cmd = cmd };
        struct nla_policy *policy;
        int r;

        ethtool_link_modes_init(&m.modes);
        ethtool_link_state_init(&m.state);
        switch (cmd) {
        case ETHTOOL_MSG_LINKMODES_GET_REPLY:
        case ETHTOOL_MSG_LINKMODES_NTF:
                m.kind = ETHTOOL_MESSAGE_LINKMODES;
                policy = linkmodes_policy;
                break;
        case ETHTOOL_MSG_LINKSTATE_GET_REPLY:
                m.kind = ETHTOOL_MESSAGE_LINKSTATE;
                policy = linkstate_policy;
                break;
        case ETHTOOL_MSG_LINKINFO_GET_REPLY:
        case ETHTOOL_MSG_LINKINFO_NTF:
                m.kind = ETHTOOL_MESSAGE_LINKINFO;
                policy = header_only_policy;
                break;
        default: /* the kernel's numbering, not ours: the family has many more */
                m.kind = ETHTOOL_MESSAGE_OTHER;
                *ret = m;
                return 0;
        }
        if (len > INT32_MAX || nla_parse(tb, MAX_ATTR, (struct nlattr *) attrs, (int) len, policy) < 0)
                return -EBADMSG;
        r = parse_header(tb[ETHTOOL_A_ANY_HEADER], &m);
        if (r < 0)
                return r;
        if (m.kind == ETHTOOL_MESSAGE_LINKMODES) {
                r = parse_linkmodes(tb, &m.modes);
                if (r < 0)
                        return r;
        } else if (m.kind == ETHTOOL_MESSAGE_LINKSTATE)
                parse_linkstate(tb, &m.state);
        *ret = m;
        return 0;
}

int ethtool_message_parse(const struct nlmsghdr *nlh, size_t len, EthtoolMessage *ret) {
        const struct genlmsghdr *g;

        if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > len)
                return -EBADMSG;
        if (nlh->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(nlh);
                if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                        return -EBADMSG;
                return e->error < 0 && e->error > -4096 ? e->error : -EPROTO;
        }
        if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
                return -EBADMSG;
        g = NLMSG_DATA(nlh);
        size_t off = NLMSG_LENGTH(GENL_HDRLEN);
        return ethtool_message_parse_attrs(g->cmd, (const uint8_t *) nlh + off, nlh->nlmsg_len - off, ret);
}

/* ---- the extended state, as a person reads it ---- */

static const char *const ext_states[] = {
        [ETHTOOL_LINK_EXT_STATE_AUTONEG] = "autonegotiation",
        [ETHTOOL_LINK_EXT_STATE_LINK_TRAINING_FAILURE] = "link training failure",
        [ETHTOOL_LINK_EXT_STATE_LINK_LOGICAL_MISMATCH] = "link logical mismatch",
        [ETHTOOL_LINK_EXT_STATE_BAD_SIGNAL_INTEGRITY] = "bad signal integrity",
        [ETHTOOL_LINK_EXT_STATE_NO_CABLE] = "no cable",
        [ETHTOOL_LINK_EXT_STATE_CABLE_ISSUE] = "cable issue",
        [ETHTOOL_LINK_EXT_STATE_EEPROM_ISSUE] = "module EEPROM issue",
        [ETHTOOL_LINK_EXT_STATE_CALIBRATION_FAILURE] = "calibration failure",
        [ETHTOOL_LINK_EXT_STATE_POWER_BUDGET_EXCEEDED] = "power budget exceeded",
        [ETHTOOL_LINK_EXT_STATE_OVERHEAT] = "overheat",
        [ETHTOOL_LINK_EXT_STATE_MODULE] = "module",
};

static const char *const substates_autoneg[] = {
        [1] = "no partner detected",
        [2] = "acknowledgement not received",
        [3] = "next page exchange failed",
        [4] = "no partner detected during force mode",
        [5] = "FEC mismatch during override",
        [6] = "no highest common denominator",
};
static const char *const substates_link_training[] = {
        [1] = "KR frame lock not acquired",
        [2] = "KR link inhibit timeout",
        [3] = "KR link partner did not set receiver ready",
        [4] = "remote fault",
};
static const char *const substates_logical_mismatch[] = {
        [1] = "PCS did not acquire block lock",
        [2] = "PCS did not acquire AM lock",
        [3] = "PCS did not get align status",
        [4] = "FC FEC is not locked",
        [5] = "RS FEC is not locked",
};
static const char *const substates_signal[] = {
        [1] = "large number of physical errors",
        [2] = "unsupported rate",
        [3] = "SerDes reference clock lost",
        [4] = "SerDes ALOS",
};
static const char *const substates_cable[] = {
        [1] = "unsupported cable",
        [2] = "cable test failure",
};
static const char *const substates_module[] = {
        [1] = "CMIS module is not in ready state",
};

#define SUBSTATES(a) { (a), ELEMENTSOF(a) }
static const struct {
        const char *const *names;
        size_t n;
} substates[] = {
        [ETHTOOL_LINK_EXT_STATE_AUTONEG] = SUBSTATES(substates_autoneg),
        [ETHTOOL_LINK_EXT_STATE_LINK_TRAINING_FAILURE] = SUBSTATES(substates_link_training),
        [ETHTOOL_LINK_EXT_STATE_LINK_LOGICAL_MISMATCH] = SUBSTATES(substates_logical_mismatch),
        [ETHTOOL_LINK_EXT_STATE_BAD_SIGNAL_INTEGRITY] = SUBSTATES(substates_signal),
        [ETHTOOL_LINK_EXT_STATE_CABLE_ISSUE] = SUBSTATES(substates_cable),
        [ETHTOOL_LINK_EXT_STATE_MODULE] = SUBSTATES(substates_module),
};

const char *ethtool_link_ext_state_format(int ext_state, int ext_substate, char *buf, size_t size) {
        const char *state = NULL, *sub = NULL;

        if (ext_state < 0) {
                snprintf(buf, size, "%s", "");
                return buf;
        }
        if ((size_t) ext_state < ELEMENTSOF(ext_states))
                state = ext_states[ext_state];
        if ((size_t) ext_state < ELEMENTSOF(substates) && ext_substate > 0 &&
            (size_t) ext_substate < substates[ext_state].n)
                sub = substates[ext_state].names[ext_substate];

        /* A newer kernel's state or substate is said by its number rather than dropped. */
        if (!state)
                snprintf(buf, size, "extended state %d", ext_state);
        else if (sub)
                snprintf(buf, size, "%s: %s", state, sub);
        else if (ext_substate > 0)
                snprintf(buf, size, "%s (substate %d)", state, ext_substate);
        else
                snprintf(buf, size, "%s", state);
        return buf;
}
