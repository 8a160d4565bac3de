/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for ethtool's netlink replies and both ends' judgement: messages built as
 * Documentation/networking/ethtool-netlink.rst specifies them (compact and verbose bitsets), for real NICs'
 * link-mode sets (1G copper, 10G SFP+, 25G, 100G, 400G and past the Debian 12 kernel's table), malformed
 * ones, the kernel's link-mode table itself, and the Degraded / LinkDownReason verdicts. */
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "unit-test.h"

#include "daemon/link-capability.h"
#include "shared/ethtool-linkmodes.h"

/* ---- building messages as the kernel does ---- */

enum { COMPACT, VERBOSE };
#define NBITS 125 /* Linux 6.18's __ETHTOOL_LINK_MODE_MASK_NBITS */
#define END (-1)

static struct nl_msg *message_new(uint8_t cmd, const char *name, int ifindex) {
        struct nl_msg *msg = nlmsg_alloc();
        struct genlmsghdr g = { .cmd = cmd, .version = ETHTOOL_GENL_VERSION };
        struct nlattr *h;

        assert_non_null(msg);
        assert_non_null(nlmsg_put(msg, 0, 1, 0x1b, 0, 0));
        assert_int_equal(nlmsg_append(msg, &g, sizeof(g), NLMSG_ALIGNTO), 0);
        h = nla_nest_start(msg, 1 | NLA_F_NESTED);
        if (ifindex > 0)
                nla_put_u32(msg, ETHTOOL_A_HEADER_DEV_INDEX, (uint32_t) ifindex);
        if (name)
                nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, name);
        nla_nest_end(msg, h);
        return msg;
}

static void set_of(LinkModeSet *s, const int *bits) {
        *s = (LinkModeSet) {};
        for (size_t i = 0; bits && bits[i] != END; i++)
                link_mode_set_add(s, (unsigned) bits[i]);
}

/* A bitset attribute: value and mask (mask NULL: a NOMASK list), in either form. */
static void put_bitset(struct nl_msg *msg, int type, int form, const int *value, const int *mask, unsigned nbits) {
        struct nlattr *set = nla_nest_start(msg, type | NLA_F_NESTED);
        LinkModeSet v, m;

        set_of(&v, value);
        set_of(&m, mask);
        if (!mask)
                nla_put_flag(msg, ETHTOOL_A_BITSET_NOMASK);
        nla_put_u32(msg, ETHTOOL_A_BITSET_SIZE, nbits);
        if (form == COMPACT) {
                size_t words = (nbits + 31) / 32;
                nla_put(msg, ETHTOOL_A_BITSET_VALUE, (int) (words * 4), v.words);
                if (mask)
                        nla_put(msg, ETHTOOL_A_BITSET_MASK, (int) (words * 4), m.words);
        } else {
                struct nlattr *bits = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS | NLA_F_NESTED);
                const LinkModeSet *listed = mask ? &m : &v;
                for (unsigned b = 0; b < nbits; b++) {
                        if (!link_mode_set_test(listed, b))
                                continue;
                        struct nlattr *bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
                        nla_put_u32(msg, ETHTOOL_A_BITSET_BIT_INDEX, b);
                        if (link_mode_info(b))
                                nla_put_string(msg, ETHTOOL_A_BITSET_BIT_NAME, link_mode_info(b)->name);
                        if (mask && link_mode_set_test(&v, b))
                                nla_put_flag(msg, ETHTOOL_A_BITSET_BIT_VALUE);
                        nla_nest_end(msg, bit);
                }
                nla_nest_end(msg, bits);
        }
        nla_nest_end(msg, set);
}

typedef struct Nic {
        const int *supported, *advertised, *partner;
        uint32_t speed; /* (uint32_t) -1: SPEED_UNKNOWN */
        uint32_t lanes;
        uint8_t autoneg;
} Nic;

static struct nl_msg *linkmodes_reply(const char *name, const Nic *n, int form, unsigned nbits) {
        struct nl_msg *msg = message_new(ETHTOOL_MSG_LINKMODES_GET_REPLY, name, 7);

        nla_put_u8(msg, ETHTOOL_A_LINKMODES_AUTONEG, n->autoneg);
        put_bitset(msg, ETHTOOL_A_LINKMODES_OURS, form, n->advertised, n->supported, nbits);
        if (n->partner)
                put_bitset(msg, ETHTOOL_A_LINKMODES_PEER, form, n->partner, NULL, nbits);
        nla_put_u32(msg, ETHTOOL_A_LINKMODES_SPEED, n->speed);
        nla_put_u8(msg, ETHTOOL_A_LINKMODES_DUPLEX, n->speed == UINT32_MAX ? DUPLEX_UNKNOWN : DUPLEX_FULL);
        if (n->lanes)
                nla_put_u32(msg, ETHTOOL_A_LINKMODES_LANES, n->lanes);
        return msg;
}

static int parse(struct nl_msg *msg, EthtoolMessage *m) {
        struct nlmsghdr *h = nlmsg_hdr(msg);
        int r = ethtool_message_parse(h, h->nlmsg_len, m);
        nlmsg_free(msg);
        return r;
}

static void assert_speeds(const LinkModeSet *s, const uint32_t *want, size_t n) {
        uint32_t got[LINK_SPEEDS_MAX];
        size_t k = link_mode_set_speeds(s, got, ELEMENTSOF(got));

        assert_int_equal(k, n);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(got[i], want[i]);
}

/* ---- real NICs ---- */

/* Intel I350 (igb), copper: `ethtool` lists 10/100 half and full, 1000baseT/Full; a gigabit switch. */
static const int i350[] = { 0, 1, 2, 3, 5, 6 /* Autoneg */, 7 /* TP */, END };
static const int gigabit_switch[] = { 0, 1, 2, 3, 5, 6, 13 /* Pause */, END };
static const int fast_ethernet_switch[] = { 0, 1, 2, 3, 6, END };

static void test_1g_copper(void **state) {
        EthtoolMessage m;

        for (int form = COMPACT; form <= VERBOSE; form++) {
                Nic n = { i350, i350, gigabit_switch, 1000, 0, AUTONEG_ENABLE };
                assert_int_equal(parse(linkmodes_reply("eno1", &n, form, NBITS), &m), 0);
                assert_int_equal(m.kind, ETHTOOL_MESSAGE_LINKMODES);
                assert_int_equal(m.ifindex, 7);
                assert_string_equal(m.name, "eno1");
                assert_true(m.modes.have_ours && m.modes.have_peer);
                assert_int_equal(m.modes.speed_mbps, 1000);
                assert_int_equal(m.modes.lanes, 0); /* igb says none */
                assert_int_equal(m.modes.duplex, 1);
                assert_int_equal(m.modes.autoneg, 1);
                assert_speeds(&m.modes.supported, (uint32_t[]) { 10, 100, 1000 }, 3);
                assert_true(link_mode_set_test(&m.modes.advertised, 7));
                assert_int_equal(link_mode_sets_best_common_speed(&m.modes.supported, &m.modes.partner), 1000);
        }
        Nic slow = { i350, i350, fast_ethernet_switch, 100, 0, AUTONEG_ENABLE };
        assert_int_equal(parse(linkmodes_reply("eno1", &slow, COMPACT, NBITS), &m), 0);
        assert_int_equal(link_mode_sets_best_common_speed(&m.modes.supported, &m.modes.partner), 100);
}

/* Intel X710 (i40e) with a 10GBASE-SR optic: no autonegotiation, so no partner advertisement. */
static const int x710_sr[] = { 41 /* 1000baseX */, 43 /* 10000baseSR */, 10 /* FIBRE */, END };

static void test_10g_sfp_without_partner(void **state) {
        Nic n = { x710_sr, x710_sr, NULL, 10000, 1, AUTONEG_DISABLE };
        EthtoolMessage m;

        assert_int_equal(parse(linkmodes_reply("enp1s0f0", &n, COMPACT, NBITS), &m), 0);
        assert_true(m.modes.have_ours);
        assert_false(m.modes.have_peer);
        assert_int_equal(m.modes.autoneg, 0);
        assert_int_equal(m.modes.lanes, 1);
        assert_speeds(&m.modes.supported, (uint32_t[]) { 1000, 10000 }, 2);
}

/* Mellanox ConnectX-4 Lx: 1G KX, 10G KR, 25G CR/KR/SR; the switch port advertises 10G and 25G. */
static const int cx4_lx[] = { 17, 19, 31, 32, 33, 6, 10, 13, END };
static const int switch_25g[] = { 19, 31, 6, END };

static void test_25g_trained_at_10g(void **state) {
        Nic n = { cx4_lx, cx4_lx, switch_25g, 10000, 1, AUTONEG_ENABLE };
        EthtoolMessage m;

        assert_int_equal(parse(linkmodes_reply("enp65s0f0np0", &n, VERBOSE, NBITS), &m), 0);
        assert_speeds(&m.modes.supported, (uint32_t[]) { 1000, 10000, 25000 }, 3);
        assert_speeds(&m.modes.partner, (uint32_t[]) { 10000, 25000 }, 2);
        assert_int_equal(link_mode_sets_best_common_speed(&m.modes.supported, &m.modes.partner), 25000);
        assert_int_equal(m.modes.speed_mbps, 10000);
}

/* ConnectX-5 100G (QSFP28): up to 100GBASE-CR4 over four lanes; the partner a 100G switch port. */
static const int cx5[] = { 17, 19, 31, 32, 33, 23, 24, 25, 26, 34, 35, 40, 36, 37, 38, 39, 6, END };
static const int switch_100g[] = { 38, 24, 31, 6, END };

static void test_100g_four_lanes(void **state) {
        Nic n = { cx5, cx5, switch_100g, 100000, 4, AUTONEG_ENABLE };
        EthtoolMessage m;

        assert_int_equal(parse(linkmodes_reply("ens1f0np0", &n, COMPACT, NBITS), &m), 0);
        assert_int_equal(m.modes.lanes, 4);
        assert_speeds(&m.modes.supported, (uint32_t[]) { 1000, 10000, 25000, 40000, 50000, 100000 }, 6);
        assert_int_equal(link_mode_sets_best_common_speed(&m.modes.supported, &m.modes.partner), 100000);
        assert_int_equal(link_mode_info(38)->lanes, 4);
        assert_int_equal(link_mode_info(38)->medium, LINK_MEDIUM_COPPER_CABLE);
}

/* ConnectX-7 400G: modes past bit 64 (the third word), 100G-per-lane 400GBASE-CR4 (bit 89). At 200G over
 * two lanes against a partner that also does 400G. */
static const int cx7[] = { 73, 89, 84, 66, 78, 59, 38, 6, END };
static const int switch_400g[] = { 89, 84, 78, 6, END };

static void test_400g_past_the_second_word(void **state) {
        Nic n = { cx7, cx7, switch_400g, 200000, 2, AUTONEG_ENABLE };
        EthtoolMessage m;

        for (int form = COMPACT; form <= VERBOSE; form++) {
                assert_int_equal(parse(linkmodes_reply("ibp1s0", &n, form, NBITS), &m), 0);
                assert_speeds(&m.modes.supported, (uint32_t[]) { 100000, 200000, 400000 }, 3);
                assert_int_equal(link_mode_sets_best_common_speed(&m.modes.supported, &m.modes.partner), 400000);
                assert_int_equal(m.modes.lanes, 2);
        }
        assert_int_equal(link_mode_info(89)->lanes, 4);
        assert_int_equal(link_mode_info(73)->lanes, 8);
        /* The Debian 12 kernel's table ended at bit 92: a SIZE of 93 still carries bit 89. */
        assert_int_equal(parse(linkmodes_reply("ibp1s0", &n, COMPACT, 93), &m), 0);
        assert_true(link_mode_set_test(&m.modes.supported, 89));
}

/* 800G and 1.6T modes (bits 115, 121) and a bit from a kernel newer than our table. */
static void test_800g_and_beyond(void **state) {
        static const int future[] = { 115, 121, 200, END };
        Nic n = { future, future, future, 800000, 4, AUTONEG_ENABLE };
        EthtoolMessage m;

        assert_int_equal(parse(linkmodes_reply("eth9", &n, COMPACT, 256), &m), 0);
        assert_speeds(&m.modes.supported, (uint32_t[]) { 800000, 1600000 }, 2);
        assert_true(link_mode_set_test(&m.modes.supported, 200)); /* kept, with no speed */
        assert_null(link_mode_info(200));
        assert_int_equal(link_mode_info(121)->speed_mbps, 1600000);
        assert_int_equal(link_mode_info(121)->lanes, 8);
}

static void test_speed_unknown(void **state) {
        Nic n = { cx4_lx, cx4_lx, NULL, UINT32_MAX, 0, AUTONEG_ENABLE };
        EthtoolMessage m;

        assert_int_equal(parse(linkmodes_reply("enp0", &n, COMPACT, NBITS), &m), 0);
        assert_int_equal(m.modes.speed_mbps, 0);
        assert_int_equal(m.modes.duplex, -1);
}

/* veth: supported and advertised are empty (an OURS set with nothing in it), speed 10000. */
static void test_veth(void **state) {
        Nic n = { NULL, NULL, NULL, 10000, 0, AUTONEG_DISABLE };
        EthtoolMessage m;

        assert_int_equal(parse(linkmodes_reply("veth0", &n, COMPACT, NBITS), &m), 0);
        assert_true(m.modes.have_ours);
        assert_true(link_mode_set_is_empty(&m.modes.supported));
        assert_false(link_mode_set_has_speeds(&m.modes.supported));
}

/* ---- LINKSTATE ---- */

static struct nl_msg *linkstate_reply(int link, int ext_state, int ext_substate) {
        struct nl_msg *msg = message_new(ETHTOOL_MSG_LINKSTATE_GET_REPLY, "eno1", 3);
        nla_put_u8(msg, ETHTOOL_A_LINKSTATE_LINK, (uint8_t) link);
        if (ext_state >= 0)
                nla_put_u8(msg, ETHTOOL_A_LINKSTATE_EXT_STATE, (uint8_t) ext_state);
        if (ext_substate > 0)
                nla_put_u8(msg, ETHTOOL_A_LINKSTATE_EXT_SUBSTATE, (uint8_t) ext_substate);
        return msg;
}

static void test_linkstate(void **state) {
        EthtoolMessage m;
        char buf[128];

        assert_int_equal(parse(linkstate_reply(1, -1, 0), &m), 0);
        assert_int_equal(m.kind, ETHTOOL_MESSAGE_LINKSTATE);
        assert_int_equal(m.state.link, 1);
        assert_int_equal(m.state.ext_state, -1);
        assert_string_equal(ethtool_link_ext_state_format(m.state.ext_state, m.state.ext_substate, buf, sizeof(buf)), "");

        assert_int_equal(parse(linkstate_reply(0, ETHTOOL_LINK_EXT_STATE_CABLE_ISSUE,
                                               ETHTOOL_LINK_EXT_SUBSTATE_CI_UNSUPPORTED_CABLE), &m), 0);
        assert_int_equal(m.state.link, 0);
        assert_string_equal(ethtool_link_ext_state_format(m.state.ext_state, m.state.ext_substate, buf, sizeof(buf)),
                            "cable issue: unsupported cable");
        assert_string_equal(ethtool_link_ext_state_format(ETHTOOL_LINK_EXT_STATE_AUTONEG,
                                                          ETHTOOL_LINK_EXT_SUBSTATE_AN_NO_PARTNER_DETECTED, buf, sizeof(buf)),
                            "autonegotiation: no partner detected");
        assert_string_equal(ethtool_link_ext_state_format(ETHTOOL_LINK_EXT_STATE_NO_CABLE, 0, buf, sizeof(buf)), "no cable");
        assert_string_equal(ethtool_link_ext_state_format(ETHTOOL_LINK_EXT_STATE_CABLE_ISSUE, 9, buf, sizeof(buf)),
                            "cable issue (substate 9)");
        assert_string_equal(ethtool_link_ext_state_format(42, 1, buf, sizeof(buf)), "extended state 42");
        assert_string_equal(ethtool_link_ext_state_format(ETHTOOL_LINK_EXT_STATE_NO_CABLE, 3, buf, sizeof(buf)),
                            "no cable (substate 3)");
}

/* ---- what is not a reply we read, and what is broken ---- */

static void test_malformed(void **state) {
        struct nl_msg *msg;
        EthtoolMessage m;

        /* A compact VALUE shorter than SIZE says. */
        msg = message_new(ETHTOOL_MSG_LINKMODES_GET_REPLY, "x", 1);
        struct nlattr *set = nla_nest_start(msg, ETHTOOL_A_LINKMODES_OURS | NLA_F_NESTED);
        nla_put_u32(msg, ETHTOOL_A_BITSET_SIZE, 125);
        nla_put(msg, ETHTOOL_A_BITSET_VALUE, 8, (uint32_t[]) { 1, 2 });
        nla_put(msg, ETHTOOL_A_BITSET_MASK, 16, (uint32_t[]) { 1, 2, 3, 4 });
        nla_nest_end(msg, set);
        assert_int_equal(parse(msg, &m), -EBADMSG);

        /* A value/mask set without its MASK. */
        msg = message_new(ETHTOOL_MSG_LINKMODES_GET_REPLY, "x", 1);
        set = nla_nest_start(msg, ETHTOOL_A_LINKMODES_OURS | NLA_F_NESTED);
        nla_put_u32(msg, ETHTOOL_A_BITSET_SIZE, 32);
        nla_put(msg, ETHTOOL_A_BITSET_VALUE, 4, (uint32_t[]) { 1 });
        nla_nest_end(msg, set);
        assert_int_equal(parse(msg, &m), -EBADMSG);

        /* Neither SIZE nor BITS. */
        msg = message_new(ETHTOOL_MSG_LINKMODES_GET_REPLY, "x", 1);
        set = nla_nest_start(msg, ETHTOOL_A_LINKMODES_PEER | NLA_F_NESTED);
        nla_put_flag(msg, ETHTOOL_A_BITSET_NOMASK);
        nla_nest_end(msg, set);
        assert_int_equal(parse(msg, &m), -EBADMSG);

        /* A verbose bit with neither index nor name; then one named for a mode we do not know (skipped). */
        msg = message_new(ETHTOOL_MSG_LINKMODES_GET_REPLY, "x", 1);
        set = nla_nest_start(msg, ETHTOOL_A_LINKMODES_PEER | NLA_F_NESTED);
        nla_put_flag(msg, ETHTOOL_A_BITSET_NOMASK);
        struct nlattr *bits = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS | NLA_F_NESTED);
        struct nlattr *bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
        nla_put_flag(msg, ETHTOOL_A_BITSET_BIT_VALUE);
        nla_nest_end(msg, bit);
        nla_nest_end(msg, bits);
        nla_nest_end(msg, set);
        assert_int_equal(parse(msg, &m), -EBADMSG);

        msg = message_new(ETHTOOL_MSG_LINKMODES_GET_REPLY, "x", 1);
        set = nla_nest_start(msg, ETHTOOL_A_LINKMODES_PEER | NLA_F_NESTED);
        nla_put_flag(msg, ETHTOOL_A_BITSET_NOMASK);
        bits = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS | NLA_F_NESTED);
        bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
        nla_put_string(msg, ETHTOOL_A_BITSET_BIT_NAME, "9000000baseZZ/Full");
        nla_nest_end(msg, bit);
        bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
        nla_put_string(msg, ETHTOOL_A_BITSET_BIT_NAME, "25000baseCR/Full"); /* by name only, as a request may */
        nla_nest_end(msg, bit);
        nla_nest_end(msg, bits);
        nla_nest_end(msg, set);
        assert_int_equal(parse(msg, &m), 0);
        assert_speeds(&m.modes.partner, (uint32_t[]) { 25000 }, 1);

        /* A speed attribute too short for a u32; a device name longer than any interface's. */
        msg = message_new(ETHTOOL_MSG_LINKMODES_GET_REPLY, NULL, 1);
        nla_put_u8(msg, ETHTOOL_A_LINKMODES_SPEED, 1);
        assert_int_equal(parse(msg, &m), -EBADMSG);
        msg = message_new(ETHTOOL_MSG_LINKSTATE_GET_REPLY, "a-name-far-longer-than-ifnamsiz", 1);
        assert_int_equal(parse(msg, &m), -EBADMSG);

        /* The message says it is longer than what arrived. */
        msg = linkstate_reply(1, -1, 0);
        struct nlmsghdr *h = nlmsg_hdr(msg);
        assert_int_equal(ethtool_message_parse(h, h->nlmsg_len - 4, &m), -EBADMSG);
        assert_int_equal(ethtool_message_parse(h, 8, &m), -EBADMSG);
        nlmsg_free(msg);
}

static void test_errors_and_others(void **state) {
        struct {
                struct nlmsghdr h;
                struct nlmsgerr e;
        } err = {
                .h = { .nlmsg_len = sizeof(err), .nlmsg_type = NLMSG_ERROR },
                .e = { .error = -EOPNOTSUPP },
        };
        EthtoolMessage m;

        /* What the kernel answers for a device without the operation (a loopback). */
        assert_int_equal(ethtool_message_parse(&err.h, sizeof(err), &m), -EOPNOTSUPP);
        err.e.error = 0;
        assert_int_equal(ethtool_message_parse(&err.h, sizeof(err), &m), -EPROTO);

        /* The monitor group carries other notifications: recognised as such, not read. */
        assert_int_equal(parse(message_new(ETHTOOL_MSG_FEATURES_NTF, "eno1", 3), &m), 0);
        assert_int_equal(m.kind, ETHTOOL_MESSAGE_OTHER);
        assert_int_equal(parse(message_new(ETHTOOL_MSG_LINKINFO_NTF, "eno1", 3), &m), 0);
        assert_int_equal(m.kind, ETHTOOL_MESSAGE_LINKINFO);
        assert_int_equal(m.ifindex, 3);
        Nic n = { cx4_lx, cx4_lx, NULL, 25000, 1, AUTONEG_ENABLE };
        struct nl_msg *msg = linkmodes_reply("enp0", &n, COMPACT, NBITS);
        ((struct genlmsghdr *) nlmsg_data(nlmsg_hdr(msg)))->cmd = ETHTOOL_MSG_LINKMODES_NTF;
        assert_int_equal(parse(msg, &m), 0);
        assert_int_equal(m.kind, ETHTOOL_MESSAGE_LINKMODES);
}

/* ---- the table ---- */

static void test_table(void **state) {
        unsigned speeds = 0;

        assert_int_equal(link_mode_table_size(), NBITS);
        for (unsigned bit = 0; bit < link_mode_table_size(); bit++) {
                const LinkModeInfo *m = link_mode_info(bit);
                char type[32];
                unsigned long speed;
                char *end;

                assert_non_null(m);
                if (m->speed_mbps == 0) {
                        assert_int_equal(m->medium, LINK_MEDIUM_NONE);
                        continue;
                }
                speeds++;
                /* "25000baseCR/Full": the speed in the name is the speed in the table... */
                speed = strtoul(m->name, &end, 10);
                assert_int_equal(speed, m->speed_mbps);
                assert_true(strneq(end, "base", 4));
                assert_true(sscanf(end + 4, "%31[^/]", type) == 1);
                /* ...and the digit after the type's letters is its lane count ("DR_2" is one lane, "DR8_2" eight). */
                size_t letters = strspn(type, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                unsigned lanes = type[letters] >= '1' && type[letters] <= '9' && !strneq(type, "T1", 2)
                                         ? (unsigned) (type[letters] - '0')
                                         : 1;
                if (lanes != m->lanes)
                        fail_msg("%s: %u lanes in the table, %u in the name", m->name, m->lanes, lanes);
                assert_true(strstr(m->name, m->full_duplex ? "/Full" : "/Half") != NULL);
                assert_int_not_equal(m->medium, LINK_MEDIUM_NONE);
        }
        assert_int_equal(speeds, NBITS - 14); /* 14 bits are ports, pause, autonegotiation and FEC */
        assert_string_equal(link_mode_info(ETHTOOL_LINK_MODE_10000baseT_Full_BIT)->name, "10000baseT/Full");
        assert_string_equal(link_mode_info(ETHTOOL_LINK_MODE_100000baseLR4_ER4_Full_BIT)->name, "100000baseLR4_ER4/Full");
        assert_string_equal(link_medium_to_string(link_mode_info(44)->medium), "fiber");
}

/* ---- the judgement ---- */

static LinkCapabilityFacts facts(const EthtoolLinkModes *modes, const EthtoolLinkState *state, uint32_t speed) {
        return (LinkCapabilityFacts) {
                .asked = true, .answered = true, .modes = modes, .state = state, .carrier = true,
                .active_speed_mbps = speed,
        };
}

#define JUDGE(f, want_degraded, want_reason)                                                           \
        do {                                                                                           \
                LinkCapability _c;                                                                     \
                assert_int_equal(link_capability_judge(&(f), &_c), 0);                                 \
                const char *_r = link_capability_reason(&_c);                                           \
                if (_c.trained_low != (want_degraded) || strcmp(_r, (want_reason)) != 0)                \
                        fail_msg("got %d \"%s\", wanted \"%s\"", _c.trained_low, _r, (want_reason));        \
                link_capability_done(&_c);                                                             \
        } while (0)

static void test_judge(void **state) {
        EthtoolLinkModes modes;
        EthtoolLinkState st;
        LinkCapabilityFacts f;
        LinkCapability c;

        ethtool_link_modes_init(&modes);
        ethtool_link_state_init(&st);
        modes.have_ours = modes.have_peer = true;
        set_of(&modes.supported, cx4_lx);
        set_of(&modes.advertised, cx4_lx);
        set_of(&modes.partner, switch_25g);

        f = facts(&modes, &st, 10000);
        JUDGE(f, true, "10000 Mb/s while both ends support 25000 Mb/s");
        assert_int_equal(link_capability_judge(&f, &c), 0);
        assert_int_equal(c.best_common_mbps, 25000);
        assert_int_equal(c.n_supported, 3);
        assert_int_equal(c.n_partner, 2);
        assert_int_equal(c.partner_speeds[1], 25000);
        assert_null(c.link_down_reason); /* up: none */
        link_capability_done(&c);

        f.active_speed_mbps = 25000;
        JUDGE(f, false, "");
        /* This end holds itself back: the fix is ours to make, and the reason says so. */
        set_of(&modes.advertised, (const int[]) { 19, END });
        f.active_speed_mbps = 10000;
        JUDGE(f, true, "10000 Mb/s while both ends support 25000 Mb/s (this end does not advertise it)");
        set_of(&modes.advertised, cx4_lx);

        /* Nothing judged, and each "unknown" says why. */
        f.active_speed_mbps = 0;
        JUDGE(f, false, "unknown: the driver reports no speed");
        f = facts(&modes, &st, 10000);
        f.asked = false;
        JUDGE(f, false, "unknown: not an Ethernet link");
        f = facts(&modes, &st, 10000);
        f.answered = false;
        JUDGE(f, false, "unknown: link modes not asked yet");
        f = facts(&modes, &st, 10000);
        f.modes_error = -EOPNOTSUPP;
        JUDGE(f, false, "unknown: the driver reports no link modes");
        modes.have_peer = false;
        modes.autoneg = 0;
        f = facts(&modes, &st, 10000);
        JUDGE(f, false, "unknown: the link partner advertises no link modes (autonegotiation is off)");
        set_of(&modes.partner, (const int[]) { 43, END }); /* 10G SR only, no common speed with ... */
        modes.have_peer = true;
        set_of(&modes.supported, i350);                   /* ... a 1G copper port */
        JUDGE(f, false, "unknown: no speed that both ends support");

        /* The LLDP fallback: ethtool heard nothing, the switch port's 802.3 TLV said 10G and 25G. */
        set_of(&modes.supported, cx4_lx);
        modes.have_peer = false;
        static const uint32_t lldp_10g_25g[] = { 10000, 25000 };
        f = facts(&modes, &st, 10000);
        f.lldp_partner_speeds = lldp_10g_25g;
        f.n_lldp_partner_speeds = ELEMENTSOF(lldp_10g_25g);
        JUDGE(f, true, "10000 Mb/s while both ends support 25000 Mb/s (the switch port's, from LLDP)");
        assert_int_equal(link_capability_judge(&f, &c), 0);
        assert_int_equal(c.n_partner, 2);
        assert_int_equal(c.partner_speeds[1], 25000);
        assert_int_equal(c.best_common_mbps, 25000);
        link_capability_done(&c);
        /* The switch port runs at 10G (its operational MAU) and advertises nothing faster: at its best. */
        f.n_lldp_partner_speeds = 1;
        JUDGE(f, false, "");
        /* A speed this end has no mode for (a 1G copper port facing a 10G/25G switch port): nothing shared. */
        set_of(&modes.supported, i350);
        f = facts(&modes, &st, 1000);
        f.lldp_partner_speeds = lldp_10g_25g;
        f.n_lldp_partner_speeds = ELEMENTSOF(lldp_10g_25g);
        JUDGE(f, false, "unknown: no speed that both ends support");
        /* What autonegotiation heard wins over LLDP. */
        set_of(&modes.supported, cx4_lx);
        set_of(&modes.partner, (const int[]) { 43, END });
        modes.have_peer = true;
        f = facts(&modes, &st, 10000);
        f.lldp_partner_speeds = lldp_10g_25g;
        f.n_lldp_partner_speeds = ELEMENTSOF(lldp_10g_25g);
        JUDGE(f, false, "");
        modes.have_peer = false;

        /* veth: no link modes at all. */
        EthtoolLinkModes veth;
        ethtool_link_modes_init(&veth);
        veth.have_ours = true;
        veth.speed_mbps = 10000;
        f = facts(&veth, &st, 10000);
        JUDGE(f, false, "unknown: the driver reports no link modes");
        assert_int_equal(link_capability_judge(&f, &c), 0);
        assert_int_equal(c.best_common_mbps, 0);
        assert_int_equal(c.n_supported, 0);
        link_capability_done(&c);
}

static void test_judge_link_down(void **state) {
        EthtoolLinkModes modes;
        EthtoolLinkState st = { .link = 0, .ext_state = ETHTOOL_LINK_EXT_STATE_AUTONEG,
                                .ext_substate = ETHTOOL_LINK_EXT_SUBSTATE_AN_NO_PARTNER_DETECTED };
        LinkCapability c;

        ethtool_link_modes_init(&modes);
        modes.have_ours = true;
        set_of(&modes.supported, cx4_lx);
        LinkCapabilityFacts f = facts(&modes, &st, 0);
        f.carrier = false;
        JUDGE(f, false, "unknown: the link is down");
        assert_int_equal(link_capability_judge(&f, &c), 0);
        assert_string_equal(c.link_down_reason, "autonegotiation: no partner detected");
        link_capability_done(&c);

        /* Up again: no reason, whatever the last LINKSTATE said. */
        f.carrier = true;
        assert_int_equal(link_capability_judge(&f, &c), 0);
        assert_null(c.link_down_reason);
        link_capability_done(&c);
        /* Down, the state not answered: no reason rather than a guess. */
        f.carrier = false;
        f.state_error = -EOPNOTSUPP;
        assert_int_equal(link_capability_judge(&f, &c), 0);
        assert_null(c.link_down_reason);
        link_capability_done(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_1g_copper),
                cmocka_unit_test(test_10g_sfp_without_partner),
                cmocka_unit_test(test_25g_trained_at_10g),
                cmocka_unit_test(test_100g_four_lanes),
                cmocka_unit_test(test_400g_past_the_second_word),
                cmocka_unit_test(test_800g_and_beyond),
                cmocka_unit_test(test_speed_unknown),
                cmocka_unit_test(test_veth),
                cmocka_unit_test(test_linkstate),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_errors_and_others),
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_judge),
                cmocka_unit_test(test_judge_link_down),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
