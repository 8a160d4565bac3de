/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <net/if_arp.h>

#include "classify.h"
#include "shared/string-table.h"

static const char *const address_class_table[_ADDRESS_CLASS_MAX] = {
        [ADDRESS_CLASS_LOOPBACK] = "loopback", [ADDRESS_CLASS_LINK_LOCAL] = "link-local",
        [ADDRESS_CLASS_PRIVATE] = "private",   [ADDRESS_CLASS_CGNAT] = "cgnat",
        [ADDRESS_CLASS_ULA] = "ula",           [ADDRESS_CLASS_GLOBAL] = "global",
};

static const char *const link_kind_table[_LINK_KIND_MAX] = {
        [LINK_KIND_ETHERNET] = "ethernet", [LINK_KIND_WIFI] = "wifi",       [LINK_KIND_THUNDERBOLT] = "thunderbolt",
        [LINK_KIND_INFINIBAND] = "infiniband", [LINK_KIND_LOOPBACK] = "loopback", [LINK_KIND_BRIDGE] = "bridge",
        [LINK_KIND_BOND] = "bond",         [LINK_KIND_VLAN] = "vlan",       [LINK_KIND_VETH] = "veth",
        [LINK_KIND_TUN] = "tun",           [LINK_KIND_MACVLAN] = "macvlan", [LINK_KIND_IFB] = "ifb",
        [LINK_KIND_OTHER] = "other",
};

static const char *const connection_type_table[_CONNECTION_TYPE_MAX] = {
        [CONNECTION_ETHERNET] = "Ethernet",         [CONNECTION_WIFI] = "Wi-Fi",
        [CONNECTION_THUNDERBOLT] = "Thunderbolt",   [CONNECTION_THUNDERBOLT_3] = "Thunderbolt 3",
        [CONNECTION_THUNDERBOLT_4] = "Thunderbolt 4", [CONNECTION_THUNDERBOLT_5] = "Thunderbolt 5",
        [CONNECTION_INFINIBAND] = "InfiniBand",     [CONNECTION_ROCE] = "RoCE",
        [CONNECTION_VPN] = "VPN",                   [CONNECTION_VIRTUAL] = "Virtual",
        [CONNECTION_LOOPBACK] = "Loopback",         [CONNECTION_UNKNOWN] = "Unknown",
};

static const char *const rank_purpose_table[_RANK_PURPOSE_MAX] = {
        [RANK_PURPOSE_RING] = "ring",
        [RANK_PURPOSE_COORDINATOR] = "coordinator",
};

DEFINE_STRING_TABLE_LOOKUP(address_class, AddressClass, address_class_table)
DEFINE_STRING_TABLE_LOOKUP(link_kind, LinkKind, link_kind_table)
DEFINE_STRING_TABLE_LOOKUP(connection_type, ConnectionType, connection_type_table)
DEFINE_STRING_TABLE_LOOKUP(rank_purpose, RankPurpose, rank_purpose_table)

static bool in_prefix(const uint8_t *a, const uint8_t *prefix, unsigned bits) {
        unsigned bytes = bits / 8, rest = bits % 8;

        if (memcmp(a, prefix, bytes) != 0)
                return false;
        if (rest == 0)
                return true;
        uint8_t mask = (uint8_t) (0xFF << (8 - rest));
        return (a[bytes] & mask) == (prefix[bytes] & mask);
}

static AddressClass address_class_ipv4(const uint8_t a[4]) {
        static const struct {
                uint8_t prefix[4];
                unsigned bits;
                AddressClass class;
        } table[] = {
                { { 127, 0, 0, 0 }, 8, ADDRESS_CLASS_LOOPBACK },
                { { 169, 254, 0, 0 }, 16, ADDRESS_CLASS_LINK_LOCAL },
                { { 10, 0, 0, 0 }, 8, ADDRESS_CLASS_PRIVATE },
                { { 172, 16, 0, 0 }, 12, ADDRESS_CLASS_PRIVATE },
                { { 192, 168, 0, 0 }, 16, ADDRESS_CLASS_PRIVATE },
                { { 100, 64, 0, 0 }, 10, ADDRESS_CLASS_CGNAT },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (in_prefix(a, table[i].prefix, table[i].bits))
                        return table[i].class;
        return ADDRESS_CLASS_GLOBAL;
}

AddressClass address_class(int family, const void *address) {
        static const uint8_t loopback6[16] = { [15] = 1 };
        static const uint8_t link_local6[16] = { 0xfe, 0x80 };
        static const uint8_t ula6[16] = { 0xfc };
        static const uint8_t v4mapped6[16] = { [10] = 0xff, [11] = 0xff };
        const uint8_t *a = address;

        if (!address)
                return _ADDRESS_CLASS_INVALID;
        if (family == AF_INET)
                return address_class_ipv4(a);
        if (family != AF_INET6)
                return _ADDRESS_CLASS_INVALID;

        if (memcmp(a, loopback6, 16) == 0)
                return ADDRESS_CLASS_LOOPBACK;
        if (in_prefix(a, link_local6, 10))
                return ADDRESS_CLASS_LINK_LOCAL;
        if (in_prefix(a, ula6, 7))
                return ADDRESS_CLASS_ULA;
        /* An IPv4-mapped address is the IPv4 address it carries. */
        if (in_prefix(a, v4mapped6, 96))
                return address_class_ipv4(a + 12);
        return ADDRESS_CLASS_GLOBAL;
}

LinkKind link_kind_from_facts(const LinkFacts *f) {
        static const struct {
                const char *info_kind;
                LinkKind kind;
        } kinds[] = {
                { "bridge", LINK_KIND_BRIDGE }, { "bond", LINK_KIND_BOND },       { "team", LINK_KIND_BOND },
                { "vlan", LINK_KIND_VLAN },     { "veth", LINK_KIND_VETH },       { "tun", LINK_KIND_TUN },
                { "macvlan", LINK_KIND_MACVLAN }, { "macvtap", LINK_KIND_MACVLAN },
        };

        /* The hardware type is the kernel's own statement and wins over anything a driver names. */
        if (f->arphrd == ARPHRD_LOOPBACK)
                return LINK_KIND_LOOPBACK;
        if (f->arphrd == ARPHRD_INFINIBAND)
                return LINK_KIND_INFINIBAND;

        if (f->info_kind)
                for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                        if (streq(f->info_kind, kinds[i].info_kind))
                                return kinds[i].kind;

        if (f->on_thunderbolt || (f->driver && streq(f->driver, "thunderbolt-net")))
                return LINK_KIND_THUNDERBOLT;
        if (f->wireless || (f->devtype && streq(f->devtype, "wlan")))
                return LINK_KIND_WIFI;
        /* After the bus checks: what sits on the Thunderbolt bus is thunderbolt-net whatever kind its
         * driver registered (the integration tests stand an ifb in for it). */
        if (f->info_kind && streq(f->info_kind, "ifb"))
                return LINK_KIND_IFB;
        /* Ethernet-framed interfaces with a bus device and no more specific DEVTYPE (wwan, bluetooth,
         * gadget, ...) are network cards; everything else ethernet-framed is virtual. */
        if (f->arphrd == ARPHRD_ETHER && f->has_device && !f->info_kind && isempty(f->devtype))
                return LINK_KIND_ETHERNET;
        return LINK_KIND_OTHER;
}

static bool info_kind_is_tunnel(const char *info_kind) {
        static const char *const tunnels[] = {
                "wireguard", "ipip", "gre", "gretap", "ip6gre", "ip6gretap", "sit", "ip6tnl",
                "vti", "vti6", "xfrm", "erspan", "ip6erspan",
        };

        if (!info_kind)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(tunnels); i++)
                if (streq(info_kind, tunnels[i]))
                        return true;
        return false;
}

ConnectionType connection_type_for_thunderbolt(unsigned generation) {
        switch (generation) {
        case 3:
                return CONNECTION_THUNDERBOLT_3;
        case 4:
                return CONNECTION_THUNDERBOLT_4;
        case 5:
                return CONNECTION_THUNDERBOLT_5;
        }
        return CONNECTION_THUNDERBOLT;
}

ConnectionType connection_type_from_facts(LinkKind kind, const LinkFacts *f) {
        switch (kind) {
        case LINK_KIND_LOOPBACK:
                return CONNECTION_LOOPBACK;
        case LINK_KIND_ETHERNET:
                return CONNECTION_ETHERNET;
        case LINK_KIND_WIFI:
                return CONNECTION_WIFI;
        case LINK_KIND_THUNDERBOLT:
                return CONNECTION_THUNDERBOLT;
        case LINK_KIND_INFINIBAND:
                return CONNECTION_INFINIBAND;
        case LINK_KIND_TUN:
                /* A layer-3 tun carries a VPN's traffic (OpenVPN, Tailscale); a tap feeds a VM. */
                return f->arphrd == ARPHRD_NONE ? CONNECTION_VPN : CONNECTION_VIRTUAL;
        case LINK_KIND_BRIDGE:
        case LINK_KIND_BOND:
        case LINK_KIND_VLAN:
        case LINK_KIND_VETH:
        case LINK_KIND_MACVLAN:
        case LINK_KIND_IFB:
                return CONNECTION_VIRTUAL;
        case LINK_KIND_OTHER:
                if (info_kind_is_tunnel(f->info_kind) || f->arphrd == ARPHRD_PPP || f->arphrd == ARPHRD_NONE)
                        return CONNECTION_VPN;
                if (f->info_kind || (!f->has_device && f->arphrd == ARPHRD_ETHER))
                        return CONNECTION_VIRTUAL;
                return CONNECTION_UNKNOWN;
        case _LINK_KIND_MAX:
        case _LINK_KIND_INVALID:
                break;
        }
        return CONNECTION_UNKNOWN;
}

bool connection_type_is_physical(ConnectionType t) {
        switch (t) {
        case CONNECTION_ETHERNET:
        case CONNECTION_WIFI:
        case CONNECTION_THUNDERBOLT:
        case CONNECTION_THUNDERBOLT_3:
        case CONNECTION_THUNDERBOLT_4:
        case CONNECTION_THUNDERBOLT_5:
        case CONNECTION_INFINIBAND:
        case CONNECTION_ROCE:
                return true;
        case CONNECTION_VPN:
        case CONNECTION_VIRTUAL:
        case CONNECTION_LOOPBACK:
        case CONNECTION_UNKNOWN:
        case _CONNECTION_TYPE_MAX:
        case _CONNECTION_TYPE_INVALID:
                break;
        }
        return false;
}

int rank_type_order(RankPurpose purpose, ConnectionType type) {
        bool ring = purpose == RANK_PURPOSE_RING;

        switch (type) {
        case CONNECTION_THUNDERBOLT:
        case CONNECTION_THUNDERBOLT_3:
        case CONNECTION_THUNDERBOLT_4:
        case CONNECTION_THUNDERBOLT_5:
                return ring ? 0 : 1;
        case CONNECTION_ETHERNET:
        case CONNECTION_ROCE:
                return ring ? 1 : 0;
        case CONNECTION_INFINIBAND:
                return 2;
        case CONNECTION_WIFI:
                return 3;
        case CONNECTION_VIRTUAL:
                return 4;
        case CONNECTION_UNKNOWN:
                return 5;
        case CONNECTION_VPN:
                return 6;
        case CONNECTION_LOOPBACK:
        case _CONNECTION_TYPE_MAX:
        case _CONNECTION_TYPE_INVALID:
                break;
        }
        return -1;
}

int rank_class_order(AddressClass c) {
        switch (c) {
        case ADDRESS_CLASS_PRIVATE:
                return 0;
        case ADDRESS_CLASS_LINK_LOCAL:
                return 1;
        case ADDRESS_CLASS_ULA:
                return 2;
        case ADDRESS_CLASS_GLOBAL:
                return 3;
        case ADDRESS_CLASS_CGNAT:
                return 4;
        case ADDRESS_CLASS_LOOPBACK:
        case _ADDRESS_CLASS_MAX:
        case _ADDRESS_CLASS_INVALID:
                break;
        }
        return -1;
}
