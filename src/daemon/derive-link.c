/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a network link is once the other kinds are known: the Thunderbolt peer a thunderbolt-net
 * interface reaches and the rate of that path, the RDMA port an interface carries, and from those
 * its SpeedMbps and ConnectionType; the other way round a peer's NetInterface and a port's. Either
 * side may appear, change or vanish first: everything is recomputed from both tables whenever
 * either moved, which costs a pass over the links only then, never per link event.
 */
#include "derive-link.h"
#include "link-ethtool-ask.h"
#include "link.h"
#include "rdma.h"
#include "shared/string-util.h"
#include "summary.h"
#include "tbt.h"

/* Beyond this many hops a chain of upper devices is a loop or absurd; stop inheriting. */
#define LINK_LOWER_DEPTH_MAX 8

/* ---- Thunderbolt ---- */

/* The peer whose XDomain service backs l (class/net/<if>/device is the service). */
static TbtObject *thunderbolt_peer_of(Thunderbolt *tbt, const Link *l) {
        TbtObject *o;

        if (!l->on_thunderbolt || !l->device_path)
                return NULL;
        TABLE_FOREACH(o, &tbt->services) {
                TbtObject *peer;

                if (!streq_ptr(o->device->syspath, l->device_path))
                        continue;
                peer = tbt_object_get(tbt, o->device->parent);
                return peer && peer->published && peer->device->kind == TBT_KIND_PEER ? peer : NULL;
        }
        return NULL;
}

/* A hash of every hop from the peer up to its domain: lanes and per-lane rate each way, the class and
 * whether it is degraded. Any retraining on the way moves it, including one that leaves the
 * bottleneck where it was. Bounded by the tree's own depth limit, so a corrupt parent chain ends. */
static uint64_t thunderbolt_hops_hash(Thunderbolt *tbt, const TbtObject *peer) {
        uint64_t h = UINT64_C(1469598103934665603);

        for (unsigned depth = 0; peer && depth < TBT_TOPOLOGY_DEPTH_MAX; depth++) {
                const TbtDevice *d = peer->device;
                uint32_t v[6] = { d->rx.lanes, d->rx.lane_gbps, d->tx.lanes, d->tx.lane_gbps,
                                  (uint32_t) peer->link_class, peer->degraded };

                for (size_t i = 0; i < sizeof(v); i++)
                        h = (h ^ ((const uint8_t *) v)[i]) * UINT64_C(1099511628211);
                peer = tbt_object_get(tbt, d->parent);
        }
        return h;
}

static void link_set_thunderbolt_peer(Thunderbolt *tbt, Link *l, const TbtObject *peer) {
        /* One number for a link that may be asymmetric: the slower direction of the path. */
        uint32_t speed = peer ? (uint32_t) MIN(peer->path_rx_gbps, peer->path_tx_gbps) * 1000 : 0;

        if (bus_object_set_string(&l->bus, &l->derived.thunderbolt_peer_path, peer ? peer->bus.path : NULL,
                                  "ThunderboltPeer") < 0)
                log_oom();
        l->derived.thunderbolt_generation = peer ? peer->path_generation : 0;
        l->derived.thunderbolt_speed_mbps = speed;
        l->derived.thunderbolt_hops = peer ? thunderbolt_hops_hash(tbt, peer) : 0;
}

/* Several interfaces on one peer (one per service): the lowest index is its NetInterface. */
static void thunderbolt_peer_set_net_interface(TbtObject *peer, const Link *l) {
        if (bus_object_set_string(&peer->bus, &peer->derived.net_interface_path, l ? l->bus.path : NULL,
                                  "NetInterface") < 0)
                log_oom();
        peer->derived.net_ifindex = l ? l->ifindex : 0;
}

static void relink_thunderbolt(Links *links, Thunderbolt *tbt) {
        TbtObject *o;
        Link *l;

        TABLE_FOREACH(o, &tbt->objects)
                if (o->device->kind == TBT_KIND_PEER)
                        o->derived.net_ifindex = 0;
        TABLE_FOREACH(l, &links->table) {
                TbtObject *peer = thunderbolt_peer_of(tbt, l);

                link_set_thunderbolt_peer(tbt, l, peer);
                if (peer && (peer->derived.net_ifindex == 0 || l->ifindex < peer->derived.net_ifindex))
                        peer->derived.net_ifindex = l->ifindex;
        }
        TABLE_FOREACH(o, &tbt->objects)
                if (o->device->kind == TBT_KIND_PEER)
                        thunderbolt_peer_set_net_interface(o, link_get(links, o->derived.net_ifindex));
}

/* A service whose net/ directory names a link that does not (yet) lead back to it: that link's sysfs
 * facts were read before sysfs was complete. Read them again; cross-linking follows. */
static void recheck_thunderbolt_net_interfaces(Links *links, Thunderbolt *tbt) {
        TbtObject *o;

        TABLE_FOREACH(o, &tbt->services) {
                Link *l;

                if (!o->device->net_interface)
                        continue;
                l = link_find(links, o->device->net_interface);
                if (l && (!l->on_thunderbolt || !streq_ptr(l->device_path, o->device->syspath)))
                        link_request_sysfs(l);
        }
}

/* ---- RDMA ---- */

/* Whether the port's i-th interface is the link: the same name, and the index sysfs gave that name
 * when the port was read (another namespace can have an interface of the same name). */
static bool rdma_netdev_is(const RdmaPort *p, size_t i, const Link *l) {
        return l->name && streq(p->netdevs[i], l->name) && p->netdev_ifindexes[i] == l->ifindex;
}

/* The port a link carries: one that names it first (its own interface) wins over one that merely
 * lists it (a bond over two ports, a VLAN). */
static RdmaPort *rdma_port_of(Rdma *rdma, const Link *l) {
        RdmaPort *p, *found = NULL;

        TABLE_FOREACH(p, &rdma->ports)
                for (size_t i = 0; p->netdevs && p->netdevs[i]; i++) {
                        if (!rdma_netdev_is(p, i, l))
                                continue;
                        if (i == 0)
                                return p;
                        if (!found)
                                found = p;
                        break;
                }
        return found;
}

static void link_set_rdma_port(Link *l, const RdmaPort *p) {
        if (bus_object_set_string(&l->bus, &l->derived.rdma_port_path, p ? p->bus.path : NULL, "RdmaPort") < 0)
                log_oom();
        l->derived.rdma_roce = p && p->transport == RDMA_TRANSPORT_ROCE;
}

/* The kernel announces no port state change for RoCE ports; their state follows the Ethernet link,
 * which netlink tells us about. A port is read again when its link's carrier or speed moved. */
static void rdma_port_follow(RdmaPort *p, const Link *l) {
        bool carrier = link_has_carrier(l);

        if (p->derived.netdev_seen && p->derived.netdev_carrier == carrier &&
            p->derived.netdev_speed_mbps == l->derived.speed_mbps)
                return;
        p->derived.netdev_seen = true;
        p->derived.netdev_carrier = carrier;
        p->derived.netdev_speed_mbps = l->derived.speed_mbps;
        rdma_port_request_reread(p);
}

static void rdma_port_set_net_interface(Links *links, RdmaPort *p) {
        Link *found = NULL, *l;

        for (size_t i = 0; !found && p->netdevs && p->netdevs[i]; i++) {
                l = link_find(links, p->netdevs[i]);
                if (l && rdma_netdev_is(p, i, l))
                        found = l;
        }
        if ((found ? found->ifindex : 0) != p->derived.net_ifindex) {
                p->derived.net_ifindex = found ? found->ifindex : 0;
                p->derived.netdev_seen = false;
        }
        if (bus_object_set_string(&p->bus, &p->derived.net_interface_path, found ? found->bus.path : NULL,
                                  "NetInterface") < 0)
                log_oom();
        if (found)
                rdma_port_follow(p, found);
}

static void relink_rdma(Links *links, Rdma *rdma) {
        RdmaPort *p;
        Link *l;

        TABLE_FOREACH(l, &links->table)
                if (table_size(&rdma->ports) > 0 || l->derived.rdma_port_path)
                        link_set_rdma_port(l, rdma_port_of(rdma, l));
        TABLE_FOREACH(p, &rdma->ports)
                rdma_port_set_net_interface(links, p);
}

/* ---- what a link is ---- */

/* SpeedMbps: what the driver reports (through ethtool's netlink family for a link with link modes and a
 * carrier, the speed its link modes are judged against; else through sysfs: the same ksettings, asked on
 * the same events), else the negotiated rate of the Thunderbolt path a thunderbolt-net interface runs over
 * (it reports no speed of its own). */
static uint32_t link_effective_speed(const Link *l) {
        if (l->ethtool.modes && l->ethtool.speed_mbps > 0 && link_has_carrier(l))
                return l->ethtool.speed_mbps;
        return l->driver_speed_mbps > 0 ? l->driver_speed_mbps : l->derived.thunderbolt_speed_mbps;
}

static bool link_inherits_connection_type(const Link *l) {
        return IN_SET(l->kind, LINK_KIND_BRIDGE, LINK_KIND_BOND, LINK_KIND_VLAN, LINK_KIND_MACVLAN);
}

/*
 * ConnectionType: what a person calls the link. A Thunderbolt link by its path's generation; an
 * Ethernet link (or a veth: Soft-RoCE over one is RoCE as much as a ConnectX port is) that carries a
 * RoCE port is RoCE; anything else by its own facts. A bond of Ethernet ports, a VLAN on Ethernet and
 * the bridge holding the host's address are what a person calls "Ethernet": uppers take the type of
 * their physical lowers (ports via master, stacked devices via parent), the fastest kind a person
 * would name first.
 */
static ConnectionType link_connection_type(Links *links, const Link *l, unsigned depth) {
        ConnectionType best = CONNECTION_VIRTUAL;
        int best_rank = INT32_MAX;
        Link *lower;

        if (!link_inherits_connection_type(l)) {
                LinkFacts facts = link_facts(l);

                if (l->kind == LINK_KIND_THUNDERBOLT)
                        return connection_type_for_thunderbolt(l->derived.thunderbolt_generation);
                if (IN_SET(l->kind, LINK_KIND_ETHERNET, LINK_KIND_VETH) && l->derived.rdma_roce)
                        return CONNECTION_ROCE;
                return connection_type_from_facts(l->kind, &facts);
        }
        if (depth >= LINK_LOWER_DEPTH_MAX)
                return CONNECTION_VIRTUAL;

        TABLE_FOREACH(lower, &links->table) {
                if (lower == l)
                        continue;
                if (lower->master_ifindex != l->ifindex && l->parent_ifindex != lower->ifindex)
                        continue;
                ConnectionType t = link_connection_type(links, lower, depth + 1);
                if (!connection_type_is_physical(t))
                        continue;
                int rank = rank_type_order(RANK_PURPOSE_RING, t);
                if (rank < best_rank) {
                        best = t;
                        best_rank = rank;
                }
        }
        return best;
}

/* ---- both ends' link modes ---- */

/* Both ends of an Ethernet link: the speeds this end supports (ethtool's supported link modes), the speeds
 * the other end advertised (lp_advertised, heard by autonegotiation; else the switch port's IEEE 802.3 MAC/PHY TLV,
 * which derive-switch.c recorded with the link), the best speed both share, and whether the link trained below
 * it, "10000 Mb/s while both ends support 25000 Mb/s": judged once (link-capability.c), from the speed
 * derived just before; Health takes the verdict as an input (derive-health.c) and only qualifies it. */

static bool speeds_equal(const uint32_t *a, size_t n, const uint32_t *b, size_t m) {
        return n == m && (n == 0 || memcmp(a, b, n * sizeof(*a)) == 0);
}

void derive_link_capability(Link *l) {
        LinkCapability *old = &l->derived.capability, c;
        LinkCapabilityFacts f = {
                .asked = link_asks_ethtool(l),
                .answered = l->ethtool.answered,
                .modes_error = l->ethtool.modes_error,
                .state_error = l->ethtool.state_error,
                .modes = l->ethtool.modes,
                .state = &l->ethtool.state,
                .carrier = link_has_carrier(l),
                .active_speed_mbps = l->derived.speed_mbps,
                .lldp_partner_speeds = l->derived.lldp_partner_speeds_mbps,
                .n_lldp_partner_speeds = l->derived.n_lldp_partner_speeds,
        };

        if (link_capability_judge(&f, &c) < 0) {
                log_oom();
                return;
        }
        if (!speeds_equal(old->supported_speeds, old->n_supported, c.supported_speeds, c.n_supported))
                bus_object_changed(&l->bus, "SupportedSpeedsMbps");
        if (!speeds_equal(old->partner_speeds, old->n_partner, c.partner_speeds, c.n_partner))
                bus_object_changed(&l->bus, "PartnerSpeedsMbps");
        if (old->best_common_mbps != c.best_common_mbps)
                bus_object_changed(&l->bus, "BestCommonSpeedMbps");
        /* Degraded and DegradedReason are the health judge's to publish (derive-health.c), from this fact:
         * the link is judged again in this pass, or the next one when it was not marked yet. The note (why
         * nothing was judged) is what DegradedReason says of a link that is not Degraded. */
        if (old->trained_low != c.trained_low || !streq_ptr(old->trained_low_reason, c.trained_low_reason) ||
            old->note != c.note)
                bus_object_queue(&l->bus);
        if (!streq(strempty(old->link_down_reason), strempty(c.link_down_reason)))
                bus_object_changed(&l->bus, "LinkDownReason");
        link_capability_done(old);
        *old = c;
}

void derive_links_relink(Links *links, Thunderbolt *tbt, Rdma *rdma, Summary *summary, bool thunderbolt_changed) {
        Link *l;

        relink_thunderbolt(links, tbt);
        if (thunderbolt_changed)
                recheck_thunderbolt_net_interfaces(links, tbt);
        /* Before the RDMA ports: a port follows its link's derived speed. */
        TABLE_FOREACH(l, &links->table) {
                bus_object_set(&l->bus, l->derived.speed_mbps, link_effective_speed(l), "SpeedMbps");
                derive_link_capability(l);
        }
        relink_rdma(links, rdma);
        /* Last: a type depends on the lowers' cross-links above. */
        TABLE_FOREACH(l, &links->table)
                bus_object_set(&l->bus, l->derived.connection_type, link_connection_type(links, l, 0),
                               "ConnectionType");
        summary_links_changed(summary);
}

void derive_link_changed(Links *links, Rdma *rdma, Summary *summary, Link *l) {
        RdmaPort *p;

        bus_object_set(&l->bus, l->derived.speed_mbps, link_effective_speed(l), "SpeedMbps");
        /* After the speed it compares with the best both ends support. */
        derive_link_capability(l);

        /* The common case, a machine without RDMA, costs nothing per link event. */
        TABLE_FOREACH(p, &rdma->ports) {
                if (p->derived.net_ifindex == l->ifindex) {
                        rdma_port_follow(p, l);
                        continue;
                }
                /* It names the link, but sysfs had no index for that name when the port was read (the
                 * interface came later): read the port again to see whether it is this link. */
                for (size_t i = 0; p->netdevs && p->netdevs[i]; i++)
                        if (l->name && streq(p->netdevs[i], l->name) && p->netdev_ifindexes[i] == 0)
                                rdma_port_request_reread(p);
        }

        summary_link_changed(summary, links, l);
}
