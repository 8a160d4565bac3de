/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Thunderbolt tree: parents from the sysfs parent chain, cross-checked against the route in each
 * name; per-link rates and classes (tbt-link.c) and the bottleneck over every hop from the host. Pure
 * logic: no I/O, no D-Bus; every guard reports instead of failing or hanging. */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>

#include "shared/string-table.h"
#include "shared/string-util.h"
#include "tbt-topology.h"

static const char *const node_type_table[_TBT_NODE_TYPE_MAX] = {
        [TBT_NODE_DOMAIN] = "domain", [TBT_NODE_HOST] = "host",       [TBT_NODE_HUB] = "hub",
        [TBT_NODE_DEVICE] = "device", [TBT_NODE_PEER] = "peer",       [TBT_NODE_SERVICE] = "service",
        [TBT_NODE_RETIMER] = "retimer",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(tbt_node_type, TbtNodeType, node_type_table)

typedef struct Builder {
        TbtDevice *const *devices;
        TbtTopology *t;
        TbtNode **by_name; /* nodes sorted by sysname, for lookups */
        size_t n_problems;
} Builder;

TbtTopology *tbt_topology_free(TbtTopology *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_nodes; i++) {
                free(t->nodes[i].sysname);
                free(t->nodes[i].link.degraded_reason);
                free(t->nodes[i].net_interface);
        }
        free(t->nodes);
        free(t->children);
        free(t->child_start);
        free(t->n_children);
        strv_free(t->problems);
        free(t);
        return NULL;
}

static const TbtNode *node_by_name(const Builder *b, const char *name) {
        size_t lo = 0, hi = b->t->n_nodes;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(b->by_name[mid]->sysname, name);
                if (c == 0)
                        return b->by_name[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

ssize_t tbt_topology_find(const TbtTopology *t, const char *sysname) {
        for (size_t i = 0; t && sysname && i < t->n_nodes; i++)
                if (streq(t->nodes[i].sysname, sysname))
                        return (ssize_t) i;
        return -ENOENT;
}

static _printf_(3, 4) int add_problem(Builder *b, size_t index, const char *format, ...) {
        char **grown, *message, *line;
        va_list ap;
        int k;

        va_start(ap, format);
        k = vasprintf(&message, format, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        k = asprintf(&line, "%s: %s", b->t->nodes[index].sysname, message);
        free(message);
        if (k < 0)
                return -ENOMEM;

        grown = reallocarray(b->t->problems, b->n_problems + 2, sizeof(char *));
        if (!grown) {
                free(line);
                return -ENOMEM;
        }
        b->t->problems = grown;
        grown[b->n_problems++] = line;
        grown[b->n_problems] = NULL;
        return 0;
}

static int compare_by_name(const void *a, const void *b) {
        return strcmp((*(TbtNode *const *) a)->sysname, (*(TbtNode *const *) b)->sysname);
}

static int index_by_name(Builder *b) {
        b->by_name = calloc(b->t->n_nodes + 1, sizeof(TbtNode *));
        if (!b->by_name)
                return -ENOMEM;
        for (size_t i = 0; i < b->t->n_nodes; i++)
                b->by_name[i] = &b->t->nodes[i];
        qsort(b->by_name, b->t->n_nodes, sizeof(TbtNode *), compare_by_name);
        return 0;
}

static bool is_link_owner(const TbtDevice *d) {
        return d->kind == TBT_KIND_PEER || (d->kind == TBT_KIND_ROUTER && d->router_type != TBT_ROUTER_HOST &&
                                            !(d->has_route && d->route == 0));
}

/* Parents by name; a missing parent makes an orphan. */
static int link_parents(Builder *b) {
        TbtTopology *t = b->t;
        int r;

        for (size_t i = 0; i < t->n_nodes; i++) {
                const TbtDevice *d = b->devices[i];
                const TbtNode *p;

                t->nodes[i].parent = -1;
                if (!d->parent) {
                        if (d->kind != TBT_KIND_DOMAIN) {
                                t->nodes[i].problems |= TBT_PROBLEM_ORPHAN;
                                r = add_problem(b, i, "no parent on the thunderbolt bus");
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                p = node_by_name(b, d->parent);
                if (!p) {
                        t->nodes[i].problems |= TBT_PROBLEM_ORPHAN;
                        r = add_problem(b, i, "parent %s is not among the devices", d->parent);
                        if (r < 0)
                                return r;
                        continue;
                }
                t->nodes[i].parent = p - t->nodes;
        }
        return 0;
}

/* Follows every node's parent chain once. A chain longer than the number of nodes must revisit one:
 * a loop. A finite chain longer than the guard is absurd. Loop members are cut from their parent so
 * nothing later (paths, the walk) can circle. */
static int find_loops(Builder *b) {
        TbtTopology *t = b->t;
        int r;

        for (size_t i = 0; i < t->n_nodes; i++) {
                ssize_t cur = (ssize_t) i;
                size_t steps = 0;

                while (t->nodes[cur].parent >= 0 && steps <= t->n_nodes) {
                        cur = t->nodes[cur].parent;
                        steps++;
                }
                if (steps > t->n_nodes) {
                        t->nodes[i].problems |= TBT_PROBLEM_LOOP;
                        r = add_problem(b, i, "parent chain loops");
                        if (r < 0)
                                return r;
                        continue;
                }
                if (steps > TBT_TOPOLOGY_DEPTH_MAX) {
                        t->nodes[i].problems |= TBT_PROBLEM_TOO_DEEP;
                        r = add_problem(b, i, "%zu levels deep, more than the %u allowed", steps,
                                        TBT_TOPOLOGY_DEPTH_MAX);
                        if (r < 0)
                                return r;
                }
        }
        for (size_t i = 0; i < t->n_nodes; i++)
                if (t->nodes[i].problems & TBT_PROBLEM_LOOP)
                        t->nodes[i].parent = -1;
        return 0;
}

/* Hops below the host: the number of routers and peers above a router or peer. Services and retimers
 * take their owner's depth, domains are 0. */
static void compute_depths(Builder *b) {
        TbtTopology *t = b->t;

        for (size_t i = 0; i < t->n_nodes; i++) {
                const TbtDevice *d = b->devices[i];
                TbtNode *node = &t->nodes[i];
                unsigned hops = 0, steps = 0;
                ssize_t cur;

                if (node->problems & (TBT_PROBLEM_LOOP | TBT_PROBLEM_TOO_DEEP)) {
                        node->depth = -1;
                        continue;
                }
                if (d->kind == TBT_KIND_DOMAIN) {
                        node->depth = 0;
                        continue;
                }
                /* Start from the router or peer that owns this node. */
                cur = (d->kind == TBT_KIND_ROUTER || d->kind == TBT_KIND_PEER) ? (ssize_t) i : node->parent;
                if (cur < 0) {
                        node->depth = -1;
                        continue;
                }
                for (ssize_t p = t->nodes[cur].parent; p >= 0 && steps <= TBT_TOPOLOGY_DEPTH_MAX;
                     p = t->nodes[p].parent, steps++) {
                        TbtKind k = b->devices[p]->kind;
                        if (k == TBT_KIND_ROUTER || k == TBT_KIND_PEER)
                                hops++;
                }
                node->depth = (int) hops;
        }
}

/* The route in the name encodes the same path as the parent chain: its length is the depth and,
 * without its last hop, it is the parent router's route. Orphans get their depth from it. */
static int check_routes(Builder *b) {
        TbtTopology *t = b->t;
        int r;

        for (size_t i = 0; i < t->n_nodes; i++) {
                const TbtDevice *d = b->devices[i];
                TbtNode *node = &t->nodes[i];
                int route_depth;

                if (!d->has_route || (d->kind != TBT_KIND_ROUTER && d->kind != TBT_KIND_PEER))
                        continue;
                node->has_route = true;
                node->route = d->route;
                route_depth = tbt_route_depth(d->route);
                if (route_depth < 0)
                        continue;

                if (node->problems & (TBT_PROBLEM_ORPHAN | TBT_PROBLEM_LOOP | TBT_PROBLEM_TOO_DEEP)) {
                        node->depth = route_depth;
                        continue;
                }
                if (node->depth != route_depth) {
                        node->problems |= TBT_PROBLEM_ROUTE_MISMATCH;
                        r = add_problem(b, i, "route %" PRIx64 " says depth %d, the parent chain %d", d->route,
                                        route_depth, node->depth);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (route_depth > 0 && node->parent >= 0) {
                        const TbtDevice *p = b->devices[node->parent];
                        uint64_t expected = d->route & ~(UINT64_C(0xff) << (8 * (route_depth - 1)));

                        if (p->kind == TBT_KIND_ROUTER && p->has_route && p->route != expected) {
                                node->problems |= TBT_PROBLEM_ROUTE_MISMATCH;
                                r = add_problem(b, i, "route %" PRIx64 " does not continue parent route %" PRIx64,
                                                d->route, p->route);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

static int build_children(TbtTopology *t) {
        t->child_start = calloc(t->n_nodes + 1, sizeof(size_t));
        t->n_children = calloc(t->n_nodes + 1, sizeof(size_t));
        t->children = calloc(t->n_nodes + 1, sizeof(size_t));
        if (!t->child_start || !t->n_children || !t->children)
                return -ENOMEM;

        for (size_t i = 0; i < t->n_nodes; i++)
                if (t->nodes[i].parent >= 0)
                        t->n_children[t->nodes[i].parent]++;
        for (size_t i = 0, start = 0; i < t->n_nodes; i++) {
                t->child_start[i] = start;
                start += t->n_children[i];
        }
        /* Fill in index order, so children keep the (natural name) order of the input. */
        for (size_t i = 0; i < t->n_nodes; i++)
                t->n_children[i] = 0;
        for (size_t i = 0; i < t->n_nodes; i++) {
                ssize_t p = t->nodes[i].parent;
                if (p < 0)
                        continue;
                t->children[t->child_start[p] + t->n_children[p]++] = i;
        }
        return 0;
}

static TbtNodeType node_type(const Builder *b, size_t i) {
        const TbtDevice *d = b->devices[i];
        const TbtTopology *t = b->t;

        switch (d->kind) {
        case TBT_KIND_DOMAIN:
                return TBT_NODE_DOMAIN;
        case TBT_KIND_PEER:
                return TBT_NODE_PEER;
        case TBT_KIND_SERVICE:
                return TBT_NODE_SERVICE;
        case TBT_KIND_RETIMER:
                return TBT_NODE_RETIMER;
        case TBT_KIND_ROUTER:
                switch (d->router_type) {
                case TBT_ROUTER_HOST:
                        return TBT_NODE_HOST;
                case TBT_ROUTER_HUB:
                        return TBT_NODE_HUB;
                case TBT_ROUTER_DEVICE:
                        return TBT_NODE_DEVICE;
                case _TBT_ROUTER_TYPE_MAX:
                case _TBT_ROUTER_TYPE_INVALID:
                        break;
                }
                if (d->has_route && d->route == 0)
                        return TBT_NODE_HOST;
                /* Thunderbolt 3 and older say nothing; something hanging below makes a hub. */
                for (size_t c = 0; c < t->n_children[i]; c++) {
                        TbtKind k = b->devices[t->children[t->child_start[i] + c]]->kind;
                        if (k == TBT_KIND_ROUTER || k == TBT_KIND_PEER)
                                return TBT_NODE_HUB;
                }
                return TBT_NODE_DEVICE;
        case _TBT_KIND_MAX:
        case _TBT_KIND_INVALID:
                break;
        }
        return _TBT_NODE_TYPE_INVALID;
}

static TbtPortLink parent_port_link(const TbtDevice *parent, const TbtDevice *d) {
        int depth;
        unsigned port;

        if (!d->has_route)
                return _TBT_PORT_LINK_INVALID;
        depth = tbt_route_depth(d->route);
        if (depth <= 0)
                return _TBT_PORT_LINK_INVALID;
        port = tbt_route_port(d->route, (unsigned) depth);
        for (size_t i = 0; i < parent->n_ports; i++)
                if (parent->ports[i].number == port)
                        return parent->ports[i].link;
        return _TBT_PORT_LINK_INVALID;
}

static const TbtDevice *parent_router(const Builder *b, size_t i) {
        ssize_t p = b->t->nodes[i].parent;
        return p >= 0 && b->devices[p]->kind == TBT_KIND_ROUTER ? b->devices[p] : NULL;
}

/* USB4 v2 is known from USB4_VERSION=2.0 or from any link of the router at 40 Gb/s per lane: kernels
 * before USB4 v2 support put no USB4_VERSION in a v2 router's uevent at all. */
static int usb4_versions(const Builder *b, unsigned **ret) {
        const TbtTopology *t = b->t;
        unsigned *v = calloc(t->n_nodes + 1, sizeof(unsigned));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_nodes; i++)
                v[i] = MAX(v[i], b->devices[i]->usb4_version);
        for (size_t i = 0; i < t->n_nodes; i++) {
                const TbtDevice *d = b->devices[i];

                if (!is_link_owner(d) || (d->rx.lane_gbps != 40 && d->tx.lane_gbps != 40))
                        continue;
                if (d->kind == TBT_KIND_ROUTER)
                        v[i] = MAX(v[i], 2u);
                if (parent_router(b, i))
                        v[t->nodes[i].parent] = MAX(v[t->nodes[i].parent], 2u);
        }
        *ret = v;
        return 0;
}

static int evaluate_links(Builder *b) {
        _cleanup_(freep) unsigned *usb4 = NULL;
        TbtTopology *t = b->t;
        int r;

        r = usb4_versions(b, &usb4);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n_nodes; i++)
                if (b->devices[i]->kind == TBT_KIND_ROUTER)
                        t->nodes[i].usb4_version = usb4[i];

        for (size_t i = 0; i < t->n_nodes; i++) {
                const TbtDevice *d = b->devices[i], *parent = parent_router(b, i);
                TbtNode *node = &t->nodes[i];
                bool router = d->kind == TBT_KIND_ROUTER;
                TbtLinkFacts facts;

                if (!is_link_owner(d) || node->type == TBT_NODE_HOST)
                        continue;
                facts = (TbtLinkFacts) {
                        .rx = d->rx,
                        .tx = d->tx,
                        .near_generation = parent ? parent->generation : 0,
                        .far_generation = router ? d->generation : 0,
                        .near_usb4_version = parent ? usb4[node->parent] : 0,
                        .far_usb4_version = router ? usb4[i] : 0,
                        .port_link = parent ? parent_port_link(parent, d) : _TBT_PORT_LINK_INVALID,
                };
                r = tbt_link_evaluate(&facts, &node->link);
                if (r < 0)
                        return r;
                node->has_link = true;
        }
        return 0;
}

/* The nearest ancestor that owns a link, or -1 when the path reaches the host (or breaks). */
static ssize_t upstream_link(const TbtTopology *t, size_t i) {
        unsigned steps = 0;

        for (ssize_t p = t->nodes[i].parent; p >= 0 && steps <= TBT_TOPOLOGY_DEPTH_MAX;
             p = t->nodes[p].parent, steps++)
                if (t->nodes[p].has_link)
                        return p;
        return -1;
}

static unsigned bottleneck(unsigned a, unsigned b) {
        return a == 0 || b == 0 ? 0 : MIN(a, b);
}

/* Walking up from each link is O(depth) per node and needs no ordering; depth is bounded above. An
 * orphan's path is unknown: hops above it are missing. */
static void compute_paths(TbtTopology *t) {
        for (size_t i = 0; i < t->n_nodes; i++) {
                TbtNode *node = &t->nodes[i];
                unsigned rx, tx, steps = 0;
                ssize_t cur = (ssize_t) i;

                if (!node->has_link || (node->problems & (TBT_PROBLEM_ORPHAN | TBT_PROBLEM_LOOP |
                                                          TBT_PROBLEM_TOO_DEEP)))
                        continue;
                rx = node->link.rx_gbps;
                tx = node->link.tx_gbps;
                while ((cur = upstream_link(t, (size_t) cur)) >= 0 && steps++ <= TBT_TOPOLOGY_DEPTH_MAX) {
                        if (t->nodes[cur].problems & TBT_PROBLEM_ORPHAN)
                                rx = tx = 0;
                        rx = bottleneck(rx, t->nodes[cur].link.rx_gbps);
                        tx = bottleneck(tx, t->nodes[cur].link.tx_gbps);
                }
                node->path_rx_gbps = rx;
                node->path_tx_gbps = tx;
        }
}

static int attach_net_interfaces(Builder *b) {
        TbtTopology *t = b->t;

        for (size_t i = 0; i < t->n_nodes; i++) {
                const TbtDevice *d = b->devices[i];
                TbtNode *peer;

                if (d->kind != TBT_KIND_SERVICE || !d->net_interface || t->nodes[i].parent < 0)
                        continue;
                peer = &t->nodes[t->nodes[i].parent];
                if (peer->type != TBT_NODE_PEER || peer->net_interface)
                        continue;
                peer->net_interface = strdup(d->net_interface);
                if (!peer->net_interface)
                        return -ENOMEM;
        }
        return 0;
}

int tbt_topology_build(TbtDevice *const *devices, size_t n, TbtTopology **ret) {
        _cleanup_(tbt_topology_freep) TbtTopology *t = NULL;
        _cleanup_(freep) TbtNode **by_name = NULL;
        Builder b = { .devices = devices };
        int r;

        t = calloc(1, sizeof(TbtTopology));
        if (!t)
                return -ENOMEM;
        t->nodes = calloc(n + 1, sizeof(TbtNode));
        if (!t->nodes)
                return -ENOMEM;
        t->n_nodes = n;
        b.t = t;
        for (size_t i = 0; i < n; i++) {
                t->nodes[i].sysname = strdup(devices[i]->sysname);
                if (!t->nodes[i].sysname)
                        return -ENOMEM;
                t->nodes[i].type = _TBT_NODE_TYPE_INVALID;
                t->nodes[i].link.link_class = _TBT_LINK_CLASS_INVALID;
        }

        r = index_by_name(&b);
        by_name = b.by_name;
        if (r < 0)
                return r;
        r = link_parents(&b);
        if (r < 0)
                return r;
        r = find_loops(&b);
        if (r < 0)
                return r;
        compute_depths(&b);
        r = check_routes(&b);
        if (r < 0)
                return r;
        r = build_children(t);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                t->nodes[i].type = node_type(&b, i);
        r = evaluate_links(&b);
        if (r < 0)
                return r;
        compute_paths(t);
        r = attach_net_interfaces(&b);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(t);
        return 0;
}

static int walk_node(const TbtTopology *t, size_t i, unsigned level, TbtWalkFunc func, void *userdata) {
        int r;

        r = func(t, i, level, userdata);
        if (r < 0)
                return r;
        if (level >= TBT_TOPOLOGY_DEPTH_MAX)
                return 0;
        for (size_t c = 0; c < t->n_children[i]; c++) {
                r = walk_node(t, t->children[t->child_start[i] + c], level + 1, func, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

int tbt_topology_walk(const TbtTopology *t, TbtWalkFunc func, void *userdata) {
        for (size_t i = 0; t && i < t->n_nodes; i++) {
                int r;

                if (t->nodes[i].parent >= 0 || (t->nodes[i].problems & TBT_PROBLEM_LOOP))
                        continue;
                r = walk_node(t, i, 0, func, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

unsigned tbt_topology_path_generation(const TbtTopology *t, size_t index) {
        unsigned generation = UINT_MAX, steps = 0;
        ssize_t cur = (ssize_t) index;

        if (!t || index >= t->n_nodes || !t->nodes[index].has_link ||
            (t->nodes[index].problems & (TBT_PROBLEM_ORPHAN | TBT_PROBLEM_LOOP | TBT_PROBLEM_TOO_DEEP)))
                return 0;
        do {
                unsigned g = tbt_link_class_generation(t->nodes[cur].link.link_class);
                if (g == 0 || (t->nodes[cur].problems & TBT_PROBLEM_ORPHAN))
                        return 0;
                generation = MIN(generation, g);
        } while ((cur = upstream_link(t, (size_t) cur)) >= 0 && steps++ <= TBT_TOPOLOGY_DEPTH_MAX);
        return generation;
}
