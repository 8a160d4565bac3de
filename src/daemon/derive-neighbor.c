/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which nodes are at the other end of our links. Facts come from two sources, neither trusted more
 * than it deserves: a path's responder says who it is (recorded on the path; proved when we share a
 * pre-shared key with it), and the kernel says which host router is at the far end of each
 * Thunderbolt XDomain peer (its unique_id is the far host's UUID, which the far node's identity
 * lists). One pass over the paths and peers makes every neighbour; see derive_neighbors().
 */
#include <stdarg.h>

#include "derive-neighbor.h"
#include "link.h"
#include "neighbor.h"
#include "node.h"
#include "peer.h"
#include "shared/string-util.h"
#include "tbt.h"

/* One path's word about who it reached. */
typedef struct Claim {
        Peer *path;
        const NodeIdentity *id;
        char node_id[NODE_ID_STRING_MAX];
        bool live;
        bool trusted; /* counts for its NodeId (see group_trust()) */
} Claim;

/* One of our XDomain peers, with the far host's UUID. */
typedef struct TbtPeer {
        TbtObject *object;
        uint8_t uuid[16];
} TbtPeer;

typedef struct Pass {
        DeriveNeighbors *d;
        Claim *claims;
        size_t n_claims;
        TbtPeer *tbt;
        size_t n_tbt;
} Pass;

/* Everything a neighbour publishes, computed before any of it is set. */
typedef struct Values {
        const Claim *newest; /* the newest trusted claim, NULL when only Thunderbolt names it */
        bool authenticated;
        char **links, **tbt_peers, **paths, **problems;
        const Peer *ring, *coordinator;
        double aggregate_up, aggregate_down;
        unsigned aggregate_links;
        NeighborEdge *edges;
        size_t n_edges;
        NeighborThunderbolt *tbt;
        size_t n_tbt;
} Values;

static void values_done(Values *v) {
        strv_free(v->links);
        strv_free(v->tbt_peers);
        strv_free(v->paths);
        strv_free(v->problems);
        neighbor_edges_free(v->edges, v->n_edges);
        neighbor_thunderbolt_free(v->tbt, v->n_tbt);
        *v = (Values) {};
}

static Link *path_link(DeriveNeighbors *d, const Peer *p) {
        return p->derived.source_ifindex > 0 ? link_get(d->links, p->derived.source_ifindex) : NULL;
}

/* A path vouches for its node now: measured, fresh, its last probe did not fail, and the link it was
 * measured over is still there and up (a path that never named its link is taken at its word). */
static bool path_is_live(DeriveNeighbors *d, const Peer *p) {
        Link *l = path_link(d, p);

        if (p->m.measured_at == 0 || p->derived.stale || p->state == PEER_PROBE_FAILED)
                return false;
        if (!l)
                return !p->m.source_interface && !p->m.source_address;
        return link_is_up(l);
}

/* Newest first within a NodeId, so a group's first trusted claim is its newest word. */
static int compare_claims(const void *a, const void *b) {
        const Claim *x = a, *y = b;
        int c = strcmp(x->node_id, y->node_id);

        if (c != 0)
                return c;
        if (x->path->m.measured_at != y->path->m.measured_at)
                return x->path->m.measured_at > y->path->m.measured_at ? -1 : 1;
        return strcmp(x->path->key, y->path->key);
}

static int collect(Pass *s) {
        DeriveNeighbors *d = s->d;
        TbtObject *o;
        Peer *p;

        s->claims = new0(Claim, MAX(table_size(&d->peers->paths), (size_t) 1));
        s->tbt = new0(TbtPeer, MAX(table_size(&d->thunderbolt->objects), (size_t) 1));
        if (!s->claims || !s->tbt)
                return -ENOMEM;
        TABLE_FOREACH(p, &d->peers->paths) {
                if (!p->remote)
                        continue;
                Claim *c = &s->claims[s->n_claims++];
                *c = (Claim) { .path = p, .id = p->remote, .live = path_is_live(d, p) };
                node_id_to_string(p->remote->node_id, c->node_id);
        }
        if (s->n_claims > 1)
                qsort(s->claims, s->n_claims, sizeof(Claim), compare_claims);
        TABLE_FOREACH(o, &d->thunderbolt->objects)
                if (o->published && o->type == TBT_NODE_PEER && o->device &&
                    node_uuid_from_string(o->device->unique_id, s->tbt[s->n_tbt].uuid) >= 0)
                        s->tbt[s->n_tbt++].object = o;
        return 0;
}

/* When anyone proved this NodeId with our key, only proofs count; else every word counts alike. */
static bool group_trust(Claim *g, size_t n) {
        bool any = false;

        for (size_t i = 0; i < n; i++)
                any |= g[i].path->remote_authenticated;
        for (size_t i = 0; i < n; i++)
                g[i].trusted = !any || g[i].path->remote_authenticated;
        return any;
}

static bool tbt_matches(const TbtPeer *t, const Claim *g, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (g[i].trusted && node_identity_has_thunderbolt(g[i].id, t->uuid))
                        return true;
        return false;
}

/* Whether claim a is from a boot that ended before claim b's began: a reboot, not a second node. */
static bool superseded(const Claim *a, const Claim *b) {
        return b->id->booted_at > 0 && a->path->m.measured_at < b->id->booted_at;
}

static int add_problem(Values *v, const char *format, ...) _printf_(2, 3);
static int add_problem(Values *v, const char *format, ...) {
        va_list ap;
        char *s;
        int r;

        if (strv_length(v->problems) >= NEIGHBOR_PROBLEMS_MAX)
                return 0;
        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (strv_contains(v->problems, s)) {
                free(s);
                return 0;
        }
        return strv_consume(&v->problems, s);
}

/* Two boots answering with one NodeId, neither a reboot of the other: two machines, one machine ID. */
static int problems_of_identity(DeriveNeighbors *d, const Claim *g, size_t n, bool proved, Values *v) {
        const Node *node = d->node;
        int r;

        for (size_t i = 0; i < n; i++) {
                const Claim *a = &g[i];

                if (!a->trusted) {
                        r = add_problem(v, "%s answered with this NodeId as \"%s\" without proving it with the "
                                           "pre-shared key: not merged",
                                        a->path->address, a->id->hostname);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (node->node_id && streq(a->node_id, node->node_id) &&
                    memcmp(a->id->boot_id, node->boot_id_bytes, NODE_ID_SIZE) != 0) {
                        r = add_problem(v, "%s answers with this node's own NodeId: a cloned machine ID? Give each "
                                           "node its own /etc/machine-id",
                                        a->path->address);
                        if (r < 0)
                                return r;
                }
                for (size_t j = i + 1; j < n; j++) {
                        const Claim *b = &g[j];
                        if (!b->trusted || !a->live || !b->live ||
                            memcmp(a->id->boot_id, b->id->boot_id, NODE_ID_SIZE) == 0 || superseded(a, b) ||
                            superseded(b, a))
                                continue;
                        r = add_problem(v, "Two nodes answer with this NodeId (\"%s\" at %s, \"%s\" at %s): a cloned "
                                           "machine ID? Give each node its own /etc/machine-id",
                                        a->id->hostname, a->path->address, b->id->hostname, b->path->address);
                        if (r < 0)
                                return r;
                }
        }
        /* We hold a key, and nobody proved this node with it: it is what it says, nothing more. */
        if (d->authenticate && !proved)
                return add_problem(v, "Its identity is not proved with the pre-shared key (its responder has "
                                      "none, or another)");
        return 0;
}

/* A bridge that joins two or more Thunderbolt links loops every broadcast around a ring of nodes
 * that do the same (what the "Thunderbolt Bridge" of a Mac does). */
static int problems_of_links(DeriveNeighbors *d, Values *v) {
        int r;

        STRV_FOREACH(path, v->links) {
                Link *l, *bridge = NULL, *port;
                _cleanup_(strv_freep) char **ports = NULL;

                TABLE_FOREACH(l, &d->links->table)
                        if (streq(l->bus.path, *path)) {
                                bridge = l->kind == LINK_KIND_BRIDGE ? l
                                         : l->master_ifindex > 0 ? link_get(d->links, l->master_ifindex) : NULL;
                                break;
                        }
                if (!bridge || bridge->kind != LINK_KIND_BRIDGE)
                        continue;
                TABLE_FOREACH(port, &d->links->table)
                        if (port->master_ifindex == bridge->ifindex && port->kind == LINK_KIND_THUNDERBOLT &&
                            strv_extend_unique(&ports, port->name_utf8) < 0)
                                return -ENOMEM;
                if (strv_length(ports) < 2)
                        continue;
                r = add_problem(v, "Reached through bridge %s, which joins the Thunderbolt links %s and %s: bridged "
                                   "Thunderbolt links in a ring loop broadcasts; route instead",
                                bridge->name_utf8, ports[0], ports[1]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static double bottleneck(const Peer *p) {
        return MIN(p->m.upload_gbps, p->m.download_gbps);
}

/* Negative when a is the better path for purpose: its link's type first (Thunderbolt for a ring,
 * Ethernet for a coordinator; RDMA first for a ring), then bandwidth for a ring and RTT for a
 * coordinator, then the other, then the key. */
static int compare_for(DeriveNeighbors *d, RankPurpose purpose, const Peer *a, const Peer *b) {
        Link *la = path_link(d, a), *lb = path_link(d, b);
        int ta = la ? rank_type_order(purpose, la->derived.connection_type) : 5;
        int tb = lb ? rank_type_order(purpose, lb->derived.connection_type) : 5;
        bool ring = purpose == RANK_PURPOSE_RING;

        if (ring && a->transport != b->transport)
                return a->transport == PEER_TRANSPORT_RDMA ? -1 : 1;
        if (ta != tb)
                return ta < tb ? -1 : 1;
        if (ring && bottleneck(a) != bottleneck(b))
                return bottleneck(a) > bottleneck(b) ? -1 : 1;
        if (a->m.rtt_usec != b->m.rtt_usec)
                return a->m.rtt_usec < b->m.rtt_usec ? -1 : 1;
        if (bottleneck(a) != bottleneck(b))
                return bottleneck(a) > bottleneck(b) ? -1 : 1;
        return strcmp(a->key, b->key);
}

/* Whether a Thunderbolt hop between our host and peer negotiated less than both its ends can. */
static bool tbt_path_degraded(Thunderbolt *tbt, TbtObject *peer) {
        size_t steps = 0, limit = table_size(&tbt->objects) + 1;

        for (TbtObject *o = peer; o && steps <= limit; steps++) {
                if (o->degraded)
                        return true;
                o = o->device ? tbt_object_get(tbt, o->device->parent) : NULL;
        }
        return false;
}

static bool link_path_degraded(Pass *s, const Link *l) {
        for (size_t i = 0; l && i < s->n_tbt; i++)
                if (s->tbt[i].object->derived.net_ifindex == l->ifindex)
                        return tbt_path_degraded(s->d->thunderbolt, s->tbt[i].object);
        return false;
}

/* The best path per (transport, local link), which is what the edge series and aggregate count. */
static int add_edge(Pass *s, Values *v, const Peer *p, bool live) {
        Link *l = path_link(s->d, p);
        const char *transport = peer_transport_to_string(p->transport), *interface = l ? l->name_utf8 : "";

        for (size_t i = 0; i < v->n_edges; i++) {
                NeighborEdge *e = &v->edges[i];
                if (!streq(e->transport, transport) || !streq(e->interface, interface))
                        continue;
                /* A live path beats a stale one; between equals, the faster. */
                if (live != !e->stale) {
                        if (!live)
                                return 0;
                } else if (bottleneck(p) <= MIN(e->upload_gbps, e->download_gbps))
                        return 0;
                if (free_and_strdup(&e->path, p->bus.path) < 0)
                        return -ENOMEM;
                e->upload_gbps = p->m.upload_gbps;
                e->download_gbps = p->m.download_gbps;
                e->rtt_usec = p->m.rtt_usec;
                e->measured_at = p->m.measured_at;
                e->stale = !live;
                return 0;
        }
        NeighborEdge *grown = reallocarray(v->edges, v->n_edges + 1, sizeof(NeighborEdge));
        if (!grown)
                return -ENOMEM;
        v->edges = grown;
        v->edges[v->n_edges] = (NeighborEdge) {
                .transport = transport,
                .interface = strdup(interface),
                .path = strdup(p->bus.path),
                .upload_gbps = p->m.upload_gbps,
                .download_gbps = p->m.download_gbps,
                .rtt_usec = p->m.rtt_usec,
                .measured_at = p->m.measured_at,
                .stale = !live,
                .degraded = link_path_degraded(s, l),
        };
        v->n_edges++;
        return v->edges[v->n_edges - 1].interface && v->edges[v->n_edges - 1].path ? 0 : -ENOMEM;
}

static int add_thunderbolt(Pass *s, Values *v, TbtObject *o) {
        Link *l = o->derived.net_ifindex > 0 ? link_get(s->d->links, o->derived.net_ifindex) : NULL;
        NeighborThunderbolt *grown;

        if (strv_extend_unique(&v->tbt_peers, o->bus.path) < 0 || (l && strv_extend_unique(&v->links, l->bus.path) < 0))
                return -ENOMEM;
        grown = reallocarray(v->tbt, v->n_tbt + 1, sizeof(NeighborThunderbolt));
        if (!grown)
                return -ENOMEM;
        v->tbt = grown;
        v->tbt[v->n_tbt++] = (NeighborThunderbolt) {
                .sysname = strdup(o->sysname_utf8),
                .interface = strdup(l ? l->name_utf8 : ""),
                .rx_gbps = o->path_rx_gbps,
                .tx_gbps = o->path_tx_gbps,
                .degraded = tbt_path_degraded(s->d->thunderbolt, o),
        };
        return v->tbt[v->n_tbt - 1].sysname && v->tbt[v->n_tbt - 1].interface ? 0 : -ENOMEM;
}

static int compute(Pass *s, Claim *g, size_t n, bool proved, Values *v) {
        DeriveNeighbors *d = s->d;
        int r;

        v->authenticated = proved;
        for (size_t i = 0; i < n; i++) {
                const Claim *c = &g[i];
                const Peer *p = c->path;
                Link *l = path_link(d, p);

                if (!c->trusted)
                        continue;
                if (!v->newest)
                        v->newest = c;
                if (strv_extend_unique(&v->paths, p->bus.path) < 0)
                        return -ENOMEM;
                r = add_edge(s, v, p, c->live);
                if (r < 0)
                        return r;
                if (!c->live)
                        continue;
                if (l && strv_extend_unique(&v->links, l->bus.path) < 0)
                        return -ENOMEM;
                if (!v->ring || compare_for(d, RANK_PURPOSE_RING, p, v->ring) < 0)
                        v->ring = p;
                if (!v->coordinator || compare_for(d, RANK_PURPOSE_COORDINATOR, p, v->coordinator) < 0)
                        v->coordinator = p;
        }
        for (size_t i = 0; i < s->n_tbt; i++)
                if (tbt_matches(&s->tbt[i], g, n)) {
                        r = add_thunderbolt(s, v, s->tbt[i].object);
                        if (r < 0)
                                return r;
                }
        /* Two cables, or a cable and a network: the best live path over each link, added up. */
        for (size_t i = 0; i < v->n_edges; i++)
                if (!v->edges[i].stale) {
                        v->aggregate_up += v->edges[i].upload_gbps;
                        v->aggregate_down += v->edges[i].download_gbps;
                        v->aggregate_links++;
                }
        r = problems_of_identity(d, g, n, proved, v);
        if (r >= 0)
                r = problems_of_links(d, v);
        return r;
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static void sorted(char **l) {
        if (strv_length(l) > 1)
                qsort(l, strv_length(l), sizeof(char *), compare_strings);
}

static bool edges_equal(const NeighborEdge *a, size_t na, const NeighborEdge *b, size_t nb) {
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (!streq(a[i].transport, b[i].transport) || !streq(a[i].interface, b[i].interface) ||
                    !streq(a[i].path, b[i].path) || a[i].upload_gbps != b[i].upload_gbps ||
                    a[i].download_gbps != b[i].download_gbps || a[i].rtt_usec != b[i].rtt_usec ||
                    a[i].measured_at != b[i].measured_at || a[i].stale != b[i].stale || a[i].degraded != b[i].degraded)
                        return false;
        return true;
}

static bool tbt_equal(const NeighborThunderbolt *a, size_t na, const NeighborThunderbolt *b, size_t nb) {
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (!streq(a[i].sysname, b[i].sysname) || !streq(a[i].interface, b[i].interface) ||
                    a[i].rx_gbps != b[i].rx_gbps || a[i].tx_gbps != b[i].tx_gbps || a[i].degraded != b[i].degraded)
                        return false;
        return true;
}

static int identity_strings(const NodeIdentity *id, char ***ret_tbt, char ***ret_rdma) {
        char text[NODE_UUID_STRING_MAX];

        for (size_t i = 0; id && i < id->n_thunderbolt; i++)
                if (strv_consume(ret_tbt, strdup(node_uuid_to_string(id->thunderbolt[i], text))) < 0)
                        return -ENOMEM;
        for (size_t i = 0; id && i < id->n_rdma; i++)
                if (strv_consume(ret_rdma, strdup(node_guid_to_string(id->rdma[i], text))) < 0)
                        return -ENOMEM;
        return 0;
}

/* Publishes v on nb, each property marked only when it moved. */
static void apply(Neighbor *nb, Values *v) {
        _cleanup_(strv_freep) char **tbt_uuids = NULL, **guids = NULL;
        const NodeIdentity *id = v->newest ? v->newest->id : NULL;
        BusObject *o = &nb->bus;

        if (identity_strings(id, &tbt_uuids, &guids) < 0) {
                log_oom();
                return;
        }
        sorted(v->links);
        sorted(v->tbt_peers);
        sorted(v->paths);
        /* Only Thunderbolt names it when its paths are gone: what it said last stays. */
        if (id) {
                (void) bus_object_set_string(o, &nb->derived.hostname, id->hostname, "Hostname");
                (void) bus_object_set_strv(o, &nb->derived.thunderbolt_host_uuids, &tbt_uuids, "ThunderboltHostUuids");
                (void) bus_object_set_strv(o, &nb->derived.rdma_node_guids, &guids, "RdmaNodeGuids");
                bus_object_set(o, nb->derived.authenticated, v->authenticated, "Authenticated");
        }
        (void) bus_object_set_strv(o, &nb->derived.links, &v->links, "Links");
        (void) bus_object_set_strv(o, &nb->derived.thunderbolt_peers, &v->tbt_peers, "ThunderboltPeers");
        (void) bus_object_set_strv(o, &nb->derived.paths, &v->paths, "Paths");
        (void) bus_object_set_strv(o, &nb->derived.problems, &v->problems, "Problems");
        (void) bus_object_set_string(o, &nb->derived.ring_path, v->ring ? v->ring->bus.path : NULL, "RingPath");
        (void) bus_object_set_string(o, &nb->derived.coordinator_path, v->coordinator ? v->coordinator->bus.path : NULL,
                                     "CoordinatorPath");
        bus_object_set(o, nb->derived.aggregate_upload_gbps, v->aggregate_up, "AggregateUploadGbps");
        bus_object_set(o, nb->derived.aggregate_download_gbps, v->aggregate_down, "AggregateDownloadGbps");
        bus_object_set(o, nb->derived.aggregate_links, v->aggregate_links, "AggregateLinks");
        nb->derived.ring_upload_gbps = v->ring ? v->ring->m.upload_gbps : 0;
        nb->derived.ring_download_gbps = v->ring ? v->ring->m.download_gbps : 0;
        nb->derived.ring_rtt_usec = v->ring ? v->ring->m.rtt_usec : 0;
        /* Edges and Thunderbolt hops are read by metrics and the Summary; a change queues the object. */
        if (!edges_equal(nb->derived.edges, nb->derived.n_edges, v->edges, v->n_edges)) {
                neighbor_edges_free(nb->derived.edges, nb->derived.n_edges);
                nb->derived.edges = TAKE_PTR(v->edges);
                nb->derived.n_edges = v->n_edges;
                v->n_edges = 0;
                bus_object_queue(o);
        }
        if (!tbt_equal(nb->derived.tbt, nb->derived.n_tbt, v->tbt, v->n_tbt)) {
                neighbor_thunderbolt_free(nb->derived.tbt, nb->derived.n_tbt);
                nb->derived.tbt = TAKE_PTR(v->tbt);
                nb->derived.n_tbt = v->n_tbt;
                v->n_tbt = 0;
                bus_object_queue(o);
        }
}

/* One NodeId's claims, g[0..n): publishes its neighbour if it exists now. */
static void derive_group(Pass *s, Claim *g, size_t n) {
        DeriveNeighbors *d = s->d;
        bool proved = group_trust(g, n), exists = false;
        Values v = {};
        Neighbor *nb;
        int r;

        for (size_t i = 0; i < n; i++)
                exists |= g[i].trusted && g[i].live;
        for (size_t i = 0; !exists && i < s->n_tbt; i++)
                exists = tbt_matches(&s->tbt[i], g, n);
        /* A path to ourselves (our own responder, this boot) is not a neighbour. */
        if (exists && d->node->node_id && streq(g[0].node_id, d->node->node_id)) {
                exists = false;
                for (size_t i = 0; i < n; i++)
                        exists |= memcmp(g[i].id->boot_id, d->node->boot_id_bytes, NODE_ID_SIZE) != 0;
        }
        if (!exists)
                return;

        r = neighbor_ensure(d->neighbors, g[0].node_id, &nb);
        if (r == -E2BIG)
                return (void) log_debug("More than %d neighbours, not naming %s.", NEIGHBORS_MAX, g[0].node_id);
        if (r < 0)
                return (void) log_oom();
        nb->seen = true;
        r = compute(s, g, n, proved, &v);
        if (r < 0) {
                values_done(&v);
                return (void) log_oom();
        }
        if (v.newest && !streq_ptr(nb->derived.hostname, v.newest->id->hostname))
                log_neighbor_info(nb, "Neighbour \"%s\" (%s).", v.newest->id->hostname,
                                  proved ? "authenticated" : "unauthenticated");
        STRV_FOREACH(p, v.problems)
                if (!strv_contains(nb->derived.problems, *p))
                        log_neighbor_warning(nb, "%s.", *p);
        apply(nb, &v);
        values_done(&v);
        for (size_t i = 0; i < n; i++)
                if (g[i].trusted)
                        (void) bus_object_set_string(&g[i].path->bus, &g[i].path->derived.neighbor_path, nb->bus.path,
                                                     "Neighbor");
}

void derive_neighbors(DeriveNeighbors *d) {
        Pass s = { .d = d };
        Neighbor *nb;
        Peer *p;

        if (collect(&s) < 0) {
                log_oom();
                goto finish;
        }
        TABLE_FOREACH(nb, &d->neighbors->table)
                nb->seen = false;
        /* A path that claims nothing reaches no neighbour; the claims are settled below. */
        TABLE_FOREACH(p, &d->peers->paths)
                if (!p->remote)
                        (void) bus_object_set_string(&p->bus, &p->derived.neighbor_path, NULL, "Neighbor");
        for (size_t i = 0, j; i < s.n_claims; i = j) {
                for (j = i + 1; j < s.n_claims && streq(s.claims[j].node_id, s.claims[i].node_id); j++)
                        ;
                derive_group(&s, s.claims + i, j - i);
                /* Untrusted claims, and claims of a NodeId that is not a neighbour now, reach nobody. */
                for (size_t k = i; k < j; k++) {
                        Neighbor *owner = neighbor_get(d->neighbors, s.claims[k].node_id);
                        if (!s.claims[k].trusted || !owner || !owner->seen)
                                (void) bus_object_set_string(&s.claims[k].path->bus, &s.claims[k].path->derived.neighbor_path,
                                                             NULL, "Neighbor");
                }
        }
        TABLE_FOREACH_SAFE(nb, &d->neighbors->table)
                if (!nb->seen) {
                        log_neighbor_info(nb, "Neighbour \"%s\" is gone.", strna(nb->derived.hostname));
                        neighbor_remove(nb);
                }
finish:
        free(s.claims);
        free(s.tbt);
}
