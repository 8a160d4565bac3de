/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ethtool's netlink replies as Documentation/networking/ethtool-netlink.rst lays them out (the
 * kernel's link modes are link-mode-table.c's). Every message is attributes only (no family header); a link-mode set
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
#include "link-mode-table.h"

/* ---- bitsets ---- */

static int bitset_find_name(const char *name) {
        for (unsigned bit = 0; bit < link_mode_table_size(); bit++)
                if (link_mode_info(bit) && streq(link_mode_info(bit)->name, name))
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
