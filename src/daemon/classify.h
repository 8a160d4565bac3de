/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* classify.h — pure classifiers: address classes, link kinds, connection types, address ranking */
#pragma once

#include <netinet/in.h>

#include "shared/macros.h"

typedef enum AddressClass {
        ADDRESS_CLASS_LOOPBACK,
        ADDRESS_CLASS_LINK_LOCAL,
        ADDRESS_CLASS_PRIVATE, /* RFC 1918 */
        ADDRESS_CLASS_CGNAT,   /* 100.64.0.0/10, RFC 6598; Tailscale hands these out */
        ADDRESS_CLASS_ULA,     /* fc00::/7, RFC 4193 */
        ADDRESS_CLASS_GLOBAL,
        _ADDRESS_CLASS_MAX,
        _ADDRESS_CLASS_INVALID = -EINVAL,
} AddressClass;

typedef enum LinkKind {
        LINK_KIND_ETHERNET,
        LINK_KIND_WIFI,
        LINK_KIND_THUNDERBOLT,
        LINK_KIND_INFINIBAND,
        LINK_KIND_LOOPBACK,
        LINK_KIND_BRIDGE,
        LINK_KIND_BOND,
        LINK_KIND_VLAN,
        LINK_KIND_VETH,
        LINK_KIND_TUN,
        LINK_KIND_MACVLAN,
        LINK_KIND_IFB, /* intermediate functional block: traffic shaping of ingress (tc) */
        LINK_KIND_OTHER,
        _LINK_KIND_MAX,
        _LINK_KIND_INVALID = -EINVAL,
} LinkKind;

typedef enum ConnectionType {
        CONNECTION_ETHERNET,
        CONNECTION_WIFI,
        CONNECTION_THUNDERBOLT, /* generation not (yet) known */
        CONNECTION_THUNDERBOLT_3,
        CONNECTION_THUNDERBOLT_4,
        CONNECTION_THUNDERBOLT_5,
        CONNECTION_INFINIBAND,
        CONNECTION_ROCE,
        CONNECTION_VPN,
        CONNECTION_VIRTUAL,
        CONNECTION_LOOPBACK,
        CONNECTION_UNKNOWN,
        _CONNECTION_TYPE_MAX,
        _CONNECTION_TYPE_INVALID = -EINVAL,
} ConnectionType;

typedef enum RankPurpose {
        RANK_PURPOSE_RING,        /* peer-to-peer ring traffic: Thunderbolt first */
        RANK_PURPOSE_COORDINATOR, /* reachability from the rest of the cluster: Ethernet first */
        _RANK_PURPOSE_MAX,
        _RANK_PURPOSE_INVALID = -EINVAL,
} RankPurpose;

/* The facts about a network interface that decide its kind, gathered from netlink and sysfs. */
typedef struct LinkFacts {
        unsigned arphrd;       /* ARPHRD_* from ifi_type */
        const char *info_kind; /* IFLA_INFO_KIND, NULL for drivers without rtnl_link_ops */
        const char *devtype;   /* DEVTYPE= of the net device's uevent */
        const char *driver;    /* driver bound to the parent device */
        bool wireless;         /* a phy80211 link or a wireless directory exists */
        bool has_device;       /* a bus device backs the interface (class/net/X/device exists) */
        bool on_thunderbolt;   /* that device sits on the Thunderbolt bus (thunderbolt-net) */
} LinkFacts;

AddressClass address_class(int family, const void *address);
LinkKind link_kind_from_facts(const LinkFacts *facts);

/* The connection type of a link judged by itself. Upper devices (bridge, bond, vlan, macvlan)
 * return CONNECTION_VIRTUAL here; the link table lets them inherit from their lower devices. */
ConnectionType connection_type_from_facts(LinkKind kind, const LinkFacts *facts);
/* Thunderbolt generation (3, 4, 5; 0 = unknown) to connection type. */
ConnectionType connection_type_for_thunderbolt(unsigned generation);
/* Which of two lower devices' types an upper device should report ("the bond is Ethernet"). */
bool connection_type_is_physical(ConnectionType t);

/* Sort key for RankAddresses(): lower is better. Negative for addresses never offered (loopback). */
int rank_type_order(RankPurpose purpose, ConnectionType type);
int rank_class_order(AddressClass c);

const char *address_class_to_string(AddressClass c) _const_;
AddressClass address_class_from_string(const char *s) _pure_;
const char *link_kind_to_string(LinkKind k) _const_;
LinkKind link_kind_from_string(const char *s) _pure_;
const char *connection_type_to_string(ConnectionType t) _const_;
ConnectionType connection_type_from_string(const char *s) _pure_;
const char *rank_purpose_to_string(RankPurpose p) _const_;
RankPurpose rank_purpose_from_string(const char *s) _pure_;
