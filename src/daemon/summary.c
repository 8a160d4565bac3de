/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "link.h"
#include "pci.h"
#include "peer.h"
#include "rdma-names.h"
#include "rdma.h"
#include "shared/bus-names.h"
#include "shared/string-util.h"
#include "summary.h"
#include "tbt.h"

static void fastest_done(SummaryFastestLink *f) {
        free(f->path);
        free(f->name);
        *f = (SummaryFastestLink) {};
}

static void tbt_peers_free(SummaryTbtPeer *p, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(p[i].path);
                free(p[i].name);
                free(p[i].net_interface);
        }
        free(p);
}

static void degraded_free(SummaryDegraded *d, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(d[i].path);
                free(d[i].name);
                free(d[i].reason);
        }
        free(d);
}

static void best_paths_free(SummaryPeerPath *b, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(b[i].peer_address);
                free(b[i].path);
        }
        free(b);
}

/* What the summary holds, without the bus object: one computed summary is swapped for the next. */
static void summary_values_done(Summary *s) {
        fastest_done(&s->fastest);
        tbt_peers_free(s->tbt_peers, s->n_tbt_peers);
        degraded_free(s->degraded, s->n_degraded);
        best_paths_free(s->best_paths, s->n_best_paths);
        s->tbt_peers = NULL;
        s->degraded = NULL;
        s->best_paths = NULL;
        s->n_tbt_peers = s->n_degraded = s->n_best_paths = 0;
        s->rdma_ports_active = 0;
        s->fastest_stale = false;
}

static const BusObjectType summary_bus_type = { .interface = SUMMARY_INTERFACE };

int summary_init(Summary *s, BusPublisher *p) {
        *s = (Summary) { .fastest_stale = true };
        return bus_object_init_root(&s->bus, p, &summary_bus_type);
}

void summary_done(Summary *s) {
        summary_values_done(s);
        summary_neighbors_done(s);
        bus_object_done(&s->bus);
}

/* Candidates are links that are up and are a connection a person would name (not loopback, virtual
 * or a VPN). */
static bool fastest_candidate(const Link *l) {
        return link_is_up(l) && connection_type_is_physical(l->derived.connection_type);
}

/* A total order, so the answer does not depend on the order links are looked at: the faster link;
 * on a tie the ring order (Thunderbolt first), then the lower index. */
static bool fastest_beats(const Link *a, const Link *b) {
        if (a->derived.speed_mbps != b->derived.speed_mbps)
                return a->derived.speed_mbps > b->derived.speed_mbps;
        int ra = rank_type_order(RANK_PURPOSE_RING, a->derived.connection_type);
        int rb = rank_type_order(RANK_PURPOSE_RING, b->derived.connection_type);
        if (ra != rb)
                return ra < rb;
        return a->ifindex < b->ifindex;
}

static int compute_fastest(Links *links, SummaryFastestLink *ret) {
        const Link *best = NULL;
        Link *l;

        TABLE_FOREACH(l, &links->table)
                if (fastest_candidate(l) && (!best || fastest_beats(l, best)))
                        best = l;
        *ret = (SummaryFastestLink) {};
        if (!best)
                return 0;
        ret->ifindex = best->ifindex;
        ret->path = strdup(best->bus.path);
        ret->name = strdup(best->name_utf8);
        ret->connection_type = connection_type_to_string(best->derived.connection_type);
        ret->speed_mbps = best->derived.speed_mbps;
        return ret->path && ret->name ? 0 : -ENOMEM;
}

/* One row of DegradedLinks: copies of the object's path, its name and why. */
static int summary_add_degraded(Summary *s, const char *path, const char *name, const char *reason) {
        SummaryDegraded *grown = reallocarray(s->degraded, s->n_degraded + 1, sizeof(SummaryDegraded));
        if (!grown)
                return -ENOMEM;
        s->degraded = grown;
        SummaryDegraded *d = &s->degraded[s->n_degraded++];
        *d = (SummaryDegraded) { .path = strdup(path), .name = strdup(name), .reason = strdup(reason) };
        return d->path && d->name && d->reason ? 0 : -ENOMEM;
}

static int compute_tbt(Links *links, Thunderbolt *tbt, Summary *s) {
        TbtObject *o;

        TABLE_FOREACH(o, &tbt->objects) {
                if (!o->published)
                        continue;
                if (o->type == TBT_NODE_PEER) {
                        SummaryTbtPeer *grown = reallocarray(s->tbt_peers, s->n_tbt_peers + 1, sizeof(SummaryTbtPeer));
                        if (!grown)
                                return -ENOMEM;
                        s->tbt_peers = grown;
                        Link *l = o->derived.net_ifindex > 0 ? link_get(links, o->derived.net_ifindex) : NULL;
                        SummaryTbtPeer *p = &s->tbt_peers[s->n_tbt_peers++];
                        *p = (SummaryTbtPeer) {
                                .path = strdup(o->bus.path),
                                .name = utf8_escape_invalid(o->device ? strempty(o->device->device_name) : ""),
                                .path_rx_gbps = o->path_rx_gbps,
                                .path_tx_gbps = o->path_tx_gbps,
                                .link_class = o->has_link ? tbt_link_class_to_string(o->link_class) : "",
                                .net_interface = strdup(l ? l->name_utf8 : ""),
                        };
                        if (!p->path || !p->name || !p->net_interface)
                                return -ENOMEM;
                }
                if (o->degraded) {
                        int r = summary_add_degraded(s, o->bus.path, o->sysname_utf8, strempty(o->degraded_reason));
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int compute_rdma(Rdma *rdma, Summary *s) {
        RdmaPort *p;

        TABLE_FOREACH(p, &rdma->ports) {
                bool active = IN_SET(p->status.state, RDMA_PORT_STATE_ACTIVE, RDMA_PORT_STATE_ACTIVE_DEFER);
                s->rdma_ports_active += active;

                /* Trained but not usable: on InfiniBand, typically no subnet manager has configured it. */
                if (active || p->status.phys_state != RDMA_PHYS_STATE_LINK_UP)
                        continue;
                _cleanup_(freep) char *reason = NULL;
                if (asprintf(&reason, "physical link up but port %s%s", rdma_port_state_to_bus(p->status.state),
                             p->status.link_layer == RDMA_LINK_LAYER_INFINIBAND ? " (no subnet manager?)" : "") < 0)
                        return -ENOMEM;
                int r = summary_add_degraded(s, p->bus.path, p->key, reason);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Network links trained below what both ends' link modes share (their Degraded, derive-health.c). */
static int compute_links(Links *links, Summary *s) {
        Link *l;

        TABLE_FOREACH(l, &links->table) {
                if (!l->derived.health_state.degraded)
                        continue;
                int r = summary_add_degraded(s, l->bus.path, l->name_utf8, strempty(l->derived.health_state.degraded_reason));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* One entry per degraded PCIe link, on the function below it (its port shows the same link). */
static int compute_pci(Pci *pci, Summary *s) {
        PciObject *o;

        TABLE_FOREACH(o, &pci->functions) {
                if (!o->published || !o->derived.health_state.degraded ||
                    !IN_SET(o->derived.type, PCI_PORT_ENDPOINT, PCI_PORT_UPSTREAM))
                        continue;
                int r = summary_add_degraded(s, o->bus.path, o->address, strempty(o->derived.health_state.degraded_reason));
                if (r < 0)
                        return r;
        }
        return 0;
}

static int compute_best_paths(Peers *peers, Summary *s) {
        _cleanup_(freep) Peer **best = NULL;
        size_t n = 0;
        int r;

        r = peer_best_paths(peers, &best, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        s->best_paths = new0(SummaryPeerPath, n);
        if (!s->best_paths)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                s->best_paths[i] = (SummaryPeerPath) {
                        .peer_address = strdup(best[i]->peer_address),
                        .path = strdup(best[i]->bus.path),
                        .upload_gbps = best[i]->m.upload_gbps,
                        .download_gbps = best[i]->m.download_gbps,
                        .rtt_usec = best[i]->m.rtt_usec,
                        .stale = best[i]->derived.stale,
                };
                s->n_best_paths++;
                if (!s->best_paths[i].peer_address || !s->best_paths[i].path)
                        return -ENOMEM;
        }
        return 0;
}

static bool fastest_equal(const SummaryFastestLink *a, const SummaryFastestLink *b) {
        return streq_ptr(a->path, b->path) && streq_ptr(a->name, b->name) &&
               streq_ptr(a->connection_type, b->connection_type) && a->speed_mbps == b->speed_mbps;
}

static bool tbt_peers_equal(const Summary *a, const Summary *b) {
        if (a->n_tbt_peers != b->n_tbt_peers)
                return false;
        for (size_t i = 0; i < a->n_tbt_peers; i++) {
                const SummaryTbtPeer *x = &a->tbt_peers[i], *y = &b->tbt_peers[i];
                if (!streq(x->path, y->path) || !streq(x->name, y->name) || x->path_rx_gbps != y->path_rx_gbps ||
                    x->path_tx_gbps != y->path_tx_gbps || !streq(x->link_class, y->link_class) ||
                    !streq(x->net_interface, y->net_interface))
                        return false;
        }
        return true;
}

static bool degraded_equal(const Summary *a, const Summary *b) {
        if (a->n_degraded != b->n_degraded)
                return false;
        for (size_t i = 0; i < a->n_degraded; i++)
                if (!streq(a->degraded[i].path, b->degraded[i].path) || !streq(a->degraded[i].name, b->degraded[i].name) ||
                    !streq(a->degraded[i].reason, b->degraded[i].reason))
                        return false;
        return true;
}

static bool best_paths_equal(const Summary *a, const Summary *b) {
        if (a->n_best_paths != b->n_best_paths)
                return false;
        for (size_t i = 0; i < a->n_best_paths; i++) {
                const SummaryPeerPath *x = &a->best_paths[i], *y = &b->best_paths[i];
                if (!streq(x->peer_address, y->peer_address) || !streq(x->path, y->path) ||
                    x->upload_gbps != y->upload_gbps || x->download_gbps != y->download_gbps ||
                    x->rtt_usec != y->rtt_usec || x->stale != y->stale)
                        return false;
        }
        return true;
}

void summary_link_changed(Summary *s, Links *links, const Link *l) {
        if (s->fastest_stale)
                return;
        if (l->ifindex == s->fastest.ifindex)
                s->fastest_stale = true; /* it may have slowed, gone down or been renamed */
        else if (fastest_candidate(l)) {
                const Link *best = s->fastest.ifindex > 0 ? link_get(links, s->fastest.ifindex) : NULL;
                if (!best || fastest_beats(l, best))
                        s->fastest_stale = true;
        }
}

void summary_links_changed(Summary *s) {
        s->fastest_stale = true;
}

void summary_update(Summary *s, Links *links, Thunderbolt *tbt, Rdma *rdma, Peers *peers) {
        Summary n = {};
        bool fastest_changed = false;
        int r = 0;

        if (s->fastest_stale) {
                r = compute_fastest(links, &n.fastest);
                fastest_changed = r >= 0 && !fastest_equal(&s->fastest, &n.fastest);
        } else {
                n.fastest = s->fastest;
                s->fastest = (SummaryFastestLink) {};
        }
        if (r >= 0)
                r = compute_links(links, &n);
        if (r >= 0)
                r = compute_tbt(links, tbt, &n);
        if (r >= 0)
                r = compute_rdma(rdma, &n);
        if (r >= 0 && s->pci)
                r = compute_pci(s->pci, &n);
        if (r >= 0)
                r = compute_best_paths(peers, &n);
        if (r < 0) {
                /* Keep what clients last saw rather than publish a partial summary; a FastestLink
                 * moved over from it goes back. */
                log_oom();
                if (!s->fastest_stale) {
                        s->fastest = n.fastest;
                        n.fastest = (SummaryFastestLink) {};
                }
                summary_values_done(&n);
                return;
        }

        if (fastest_changed)
                bus_object_changed(&s->bus, "FastestLink");
        if (!tbt_peers_equal(s, &n))
                bus_object_changed(&s->bus, "ThunderboltPeers");
        if (s->rdma_ports_active != n.rdma_ports_active)
                bus_object_changed(&s->bus, "RdmaPortsActive");
        if (!degraded_equal(s, &n))
                bus_object_changed(&s->bus, "DegradedLinks");
        if (!best_paths_equal(s, &n))
                bus_object_changed(&s->bus, "BestPeerPaths");

        /* The new values replace the old; the bus object stays. */
        summary_values_done(s);
        s->fastest = n.fastest;
        s->tbt_peers = n.tbt_peers;
        s->n_tbt_peers = n.n_tbt_peers;
        s->rdma_ports_active = n.rdma_ports_active;
        s->degraded = n.degraded;
        s->n_degraded = n.n_degraded;
        s->best_paths = n.best_paths;
        s->n_best_paths = n.n_best_paths;
        s->fastest_stale = false;
}
