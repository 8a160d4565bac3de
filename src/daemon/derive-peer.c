/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the measured paths are made of: which paths exist for the addresses somebody wants measured
 * (a TCP path to each, an RDMA path from each active local port, a path per link for an unscoped
 * IPv6 link-local address), which interface each one leaves through, and whether its result is
 * stale. The reconciler decides when each path is measured; it is told here when that may change.
 */
#include <linux/if_addr.h>

#include "derive-peer.h"
#include "link.h"
#include "peer.h"
#include "rdma.h"
#include "reconcile.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

/* Bounds the RDMA paths one address expands into (each is one probe per TTL). */
#define RDMA_LOCAL_PORTS_MAX 32

/* The links an unscoped IPv6 link-local address may be reached through: up, not loopback, with a
 * usable link-local address of their own, and a name that can be written as a zone. */
static bool link_can_reach_link_local(const Link *l) {
        PeerAddress probe_name;
        char spec[IF_NAMESIZE + 16];

        if (!link_is_up(l) || l->kind == LINK_KIND_LOOPBACK || !l->name)
                return false;
        snprintf(spec, sizeof(spec), "fe80::1%%%s", l->name);
        if (peer_address_parse(spec, 0, &probe_name, NULL) < 0)
                return false;
        for (size_t i = 0; i < l->addrs.n_addresses; i++) {
                const LinkAddress *a = &l->addrs.addresses[i];
                if (a->family == AF_INET6 && a->address[0] == 0xfe && (a->address[1] & 0xc0) == 0x80 &&
                    !(a->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED)))
                        return true;
        }
        return false;
}

static uint32_t fnv1a(uint32_t h, const void *data, size_t size) {
        for (size_t i = 0; i < size; i++)
                h = (h ^ ((const uint8_t *) data)[i]) * 16777619u;
        return h;
}

/* A hash of what paths and discovered peers depend on: which links are up, their kinds, whether they
 * can carry link-local traffic, and which RDMA ports are active. The paths are expanded again, and
 * the reconciler runs, only when it moved. */
static uint32_t peer_dependencies_signature(DerivePeers *d) {
        uint32_t h = 2166136261u;
        RdmaPort *p;
        Link *l;

        TABLE_FOREACH(l, &d->links->table) {
                uint32_t v[3] = { (uint32_t) l->ifindex, (uint32_t) l->kind,
                                  (uint32_t) link_is_up(l) | (uint32_t) link_can_reach_link_local(l) << 1 };
                h = fnv1a(h, v, sizeof(v));
        }
        TABLE_FOREACH(p, &d->rdma->ports)
                if (rdma_port_is_active(p))
                        h = fnv1a(h, p->key, strlen(p->key) + 1);
        return h;
}

static void want_path(DerivePeers *d, const PeerTarget *t, PeerTransport transport, const char *device, unsigned port,
                      const PeerAddress *sink, bool *changed) {
        Peer *p;
        int r;

        r = peer_ensure(d->peers, transport, device, port, sink, t->address, &p);
        if (r < 0) {
                log_warning_errno(r, "Cannot add a path to %s: %m", t->address);
                return;
        }
        *changed |= r > 0;
        p->seen = true;
        p->wanted |= t->origins & PEER_ORIGINS_WANTED;
}

static void expand_target(DerivePeers *d, const PeerTarget *t, bool *changed) {
        const PeerAddress *a = &t->parsed;
        size_t n_rdma = 0;
        RdmaPort *port;

        if (!(t->origins & PEER_ORIGINS_WANTED))
                return;

        if (peer_address_is_link_local(a) && !a->scope[0]) {
                /* Every link that can reach it is a path of its own. */
                Link *l;

                TABLE_FOREACH(l, &d->links->table) {
                        PeerAddress scoped = *a;

                        if (!link_can_reach_link_local(l))
                                continue;
                        snprintf(scoped.scope, sizeof(scoped.scope), "%s", l->name);
                        want_path(d, t, PEER_TRANSPORT_TCP, NULL, 0, &scoped, changed);
                }
                return;
        }

        want_path(d, t, PEER_TRANSPORT_TCP, NULL, 0, a, changed);
        TABLE_FOREACH(port, &d->rdma->ports)
                if (rdma_port_is_active(port) && n_rdma++ < RDMA_LOCAL_PORTS_MAX)
                        want_path(d, t, PEER_TRANSPORT_RDMA, port->device, port->number, a, changed);
}

/* The paths the targets want, and the ad-hoc ones ProbePeer() measured: nothing else stays. */
static bool expand(DerivePeers *d) {
        Peers *peers = d->peers;
        bool changed = false;
        PeerTarget *t;
        Peer *p;

        TABLE_FOREACH(p, &peers->paths) {
                p->seen = false;
                p->wanted = 0;
        }
        TABLE_FOREACH(t, &peers->targets)
                expand_target(d, t, &changed);
        TABLE_FOREACH_SAFE(p, &peers->paths) {
                if (!p->wanted && !p->adhoc) {
                        peer_remove(p);
                        changed = true;
                        continue;
                }
                /* A one-off result now wanted (AddPeer() of what ProbePeer() measured): one made stale
                 * by a change under it is measured again once the path is quiet, as any wanted path's
                 * would have been, not only when its TTL runs out. Origins still says what was. */
                bool now_wanted = p->wanted && !(p->origins & PEER_ORIGINS_WANTED);
                peer_update_origins(p);
                if (now_wanted && p->derived.disturbed)
                        reconcile_path_disturbed(d->reconciler, p);
        }
        return changed;
}

static bool link_has_address(const Link *l, const PeerAddress *a) {
        size_t len = a->family == AF_INET ? 4 : 16;

        for (size_t i = 0; i < l->addrs.n_addresses; i++)
                if (l->addrs.addresses[i].family == a->family && memcmp(l->addrs.addresses[i].address, a->bytes, len) == 0)
                        return true;
        return false;
}

/* The link a path leaves through: the sink's zone; else the link that owns the local address the
 * probe reported (or that address's own zone); else, for a result restored from a file, the link of
 * the name it was measured on. */
static Link *peer_source_link(DerivePeers *d, const Peer *p) {
        PeerAddress a;
        Link *l;

        if (p->sink.scope[0])
                return link_find(d->links, p->sink.scope);
        if (p->m.source_address && peer_address_parse_host(p->m.source_address, &a) >= 0) {
                if (a.scope[0])
                        return link_find(d->links, a.scope);
                TABLE_FOREACH(l, &d->links->table)
                        if (link_has_address(l, &a))
                                return l;
        }
        return p->m.source_interface ? link_find(d->links, p->m.source_interface) : NULL;
}

/* What the path runs over now (see PathCapacity): the source link's carrier, speed, MTU, whether it
 * still holds the address measured from, and the Thunderbolt hops under it. */
static PathCapacity path_capacity(DerivePeers *d, const Peer *p) {
        Link *l = p->derived.source_ifindex > 0 ? link_get(d->links, p->derived.source_ifindex) : NULL;
        PeerAddress a;

        if (!l)
                return (PathCapacity) {};
        return (PathCapacity) {
                .known = true,
                .ifindex = l->ifindex,
                .carrier = link_has_carrier(l),
                .speed_mbps = l->derived.speed_mbps,
                .mtu = l->mtu,
                .has_source_address = p->m.source_address && peer_address_parse_host(p->m.source_address, &a) >= 0 &&
                                      link_has_address(l, &a),
                .thunderbolt_hops = l->derived.thunderbolt_hops,
        };
}

static bool path_capacity_equal(const PathCapacity *a, const PathCapacity *b) {
        return a->known == b->known && a->ifindex == b->ifindex && a->carrier == b->carrier &&
               a->speed_mbps == b->speed_mbps && a->mtu == b->mtu && a->has_source_address == b->has_source_address &&
               a->thunderbolt_hops == b->thunderbolt_hops;
}

/* What moved between was and now, in words (for StaleReason). */
static char *describe_change(DerivePeers *d, const PathCapacity *was, const PathCapacity *now) {
        Link *l = now->known ? link_get(d->links, now->ifindex) : NULL;
        const char *name = l ? l->name_utf8 : "?";
        char *s = NULL;
        int r;

        if (!now->known)
                r = asprintf(&s, "the link it ran over is gone");
        else if (!was->known || was->ifindex != now->ifindex)
                r = asprintf(&s, "it now leaves through %s", name);
        else if (was->carrier != now->carrier)
                r = asprintf(&s, now->carrier ? "carrier came back on %s" : "carrier lost on %s", name);
        else if (was->speed_mbps != now->speed_mbps)
                r = asprintf(&s, "%s's speed changed from %" PRIu32 " to %" PRIu32 " Mb/s", name, was->speed_mbps,
                             now->speed_mbps);
        else if (was->mtu != now->mtu)
                r = asprintf(&s, "%s's MTU changed from %" PRIu32 " to %" PRIu32, name, was->mtu, now->mtu);
        else if (was->has_source_address != now->has_source_address)
                r = asprintf(&s, now->has_source_address ? "the source address came back to %s"
                                                         : "the source address left %s", name);
        else
                r = asprintf(&s, "the Thunderbolt path under %s retrained", name);
        return r < 0 ? NULL : s;
}

static void peer_update_source(DerivePeers *d, Peer *p) {
        Link *l = peer_source_link(d, p);

        bus_object_set(&p->bus, p->derived.source_ifindex, l ? l->ifindex : 0, "SourceInterface");
        if (!p->source_pending)
                return;
        /* What the interface was when measured stays with the result, whatever it becomes later. */
        p->source_pending = false;
        if (bus_object_set_string(&p->bus, &p->m.source_interface, l ? l->name_utf8 : NULL, "SourceInterfaceName") < 0 ||
            bus_object_set_string(&p->bus, &p->m.connection_type,
                                  l ? connection_type_to_string(l->derived.connection_type) : NULL, "ConnectionType") < 0)
                log_oom();

        /* A new result: what it was measured over is the baseline from now on. A result of a probe that
         * ran while the path moved under it proves nothing about either state: it stays stale. */
        p->derived.measured_over = p->derived.seen_over = path_capacity(d, p);
        if (!p->probe_disturbed)
                p->derived.disturbed = mfree(p->derived.disturbed);
        p->probe_disturbed = false;
}

/* Holds what the path runs over against what it was measured over. The first change makes the result
 * stale until it is measured again; every change asks the reconciler for that, after the path settles. */
static void peer_check_capacity(DerivePeers *d, Peer *p) {
        PathCapacity now = path_capacity(d, p);

        if (p->m.measured_at == 0)
                return;
        if (!p->derived.measured_over.known && !p->derived.disturbed) {
                /* Restored from a file, or measured before its link was known: the present is the
                 * baseline. */
                p->derived.measured_over = p->derived.seen_over = now;
                return;
        }
        if (path_capacity_equal(&now, &p->derived.seen_over))
                return;
        if (!p->derived.disturbed) {
                p->derived.disturbed = describe_change(d, &p->derived.measured_over, &now);
                if (!p->derived.disturbed)
                        log_oom();
                else
                        log_peer_info(p, "Stale: %s.", p->derived.disturbed);
        }
        if (p->run)
                p->probe_disturbed = true;
        p->derived.seen_over = now;
        bus_object_queue(&p->bus);
        reconcile_path_disturbed(d->reconciler, p);
}

bool peer_is_stale(const Peer *p, uint64_t now) {
        return p->m.measured_at == 0 || now >= peer_expires_at(p) || p->derived.disturbed;
}

/* Why Stale is true, the most telling reason first; NULL when fresh. */
static char *stale_cause(const Peer *p, uint64_t now) {
        char *s = NULL;

        if (p->derived.disturbed)
                return strdup(p->derived.disturbed);
        if (p->m.measured_at == 0)
                return strdup("never measured");
        if (now >= peer_expires_at(p) &&
            asprintf(&s, "measured longer ago than its TTL of %" PRIu64 " s", peer_ttl_usec(p) / USEC_PER_SEC) < 0)
                return NULL;
        return s;
}

/* StaleReason: the cause, and for a path that ProbePeer() measured once and nobody wants, that it
 * stays so: "carrier lost on eth0" would otherwise read as if it were still true long after the
 * carrier came back. */
static char *stale_reason(const Peer *p, uint64_t now) {
        _cleanup_(freep) char *cause = stale_cause(p, now);
        char *s = NULL;

        if (!cause || !p->adhoc || p->wanted)
                return TAKE_PTR(cause);
        if (asprintf(&s,
                     "%s; a one-off result (ProbePeer) that is not kept fresh: "
                     "AddPeer() or [Peers] Address= keeps a path measured",
                     cause) < 0)
                return NULL;
        return s;
}

void derive_peers(DerivePeers *d, bool links_changed, bool link_facts_moved) {
        Peers *peers = d->peers;
        bool relevant, dependencies_moved = false, expanded = false, targets_changed = peers->targets_changed;
        Peer *p;

        peers->targets_changed = false;
        relevant = table_size(&peers->targets) > 0 || (d->reconciler && reconcile_discovers(d->reconciler));
        if (relevant) {
                uint32_t signature = peer_dependencies_signature(d);
                dependencies_moved = signature != d->dependencies;
                d->dependencies = signature;
        }
        if (targets_changed || dependencies_moved)
                expanded = expand(d);
        /* Discovery and the schedule follow the links; new and removed paths need a pass too. */
        if (targets_changed || dependencies_moved || expanded)
                reconcile_schedule(d->reconciler);

        /* What a path runs over can only have moved with a link or the Thunderbolt tree. */
        if (!links_changed && !link_facts_moved && !dependencies_moved)
                return;
        TABLE_FOREACH(p, &peers->paths) {
                if (links_changed || dependencies_moved)
                        peer_update_source(d, p);
                peer_check_capacity(d, p);
        }
}

void derive_peer_changed(DerivePeers *d, Peer *p) {
        uint64_t now = now_usec(CLOCK_REALTIME);
        _cleanup_(freep) char *reason = NULL;

        peer_update_source(d, p);
        bus_object_set(&p->bus, p->derived.stale, peer_is_stale(p, now), "Stale");
        reason = stale_reason(p, now);
        if (bus_object_set_string(&p->bus, &p->derived.stale_reason, reason, "StaleReason") < 0)
                log_oom();
}
