/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the Thunderbolt topology logic: link classes from tables of real negotiated values,
 * path bottlenecks, depths from parent chains and routes, and the guards against loops, absurd depths,
 * orphans and routes that disagree with the parent chain. Devices are built in memory: no I/O. */
#include "unit-test.h"

#include "daemon/tbt-topology.h"

/* ---- link classification ---------------------------------------------------------------------- */

#define DIR(l, s) { .lanes = (l), .lane_gbps = (s) }
#define NONE _TBT_PORT_LINK_INVALID

static void test_link_classes(void **state) {
        static const struct {
                TbtLinkFacts f;
                const char *class;
                unsigned rx, tx;
                bool degraded;
        } table[] = {
                /* Thunderbolt 5 / USB4 v2: 40 per lane */
                { { DIR(2, 40), DIR(2, 40), 4, 4, 2, 2, TBT_PORT_LINK_USB4 }, "Thunderbolt 5", 80, 80, false },
                { { DIR(3, 40), DIR(1, 40), 4, 4, 2, 2, TBT_PORT_LINK_USB4 },
                  "Thunderbolt 5 asymmetric (rx 120 Gb/s)", 120, 40, false },
                { { DIR(1, 40), DIR(3, 40), 4, 4, 2, 2, TBT_PORT_LINK_USB4 },
                  "Thunderbolt 5 asymmetric (tx 120 Gb/s)", 40, 120, false },
                { { DIR(1, 40), DIR(1, 40), 4, 4, 2, 2, NONE }, "Thunderbolt 5 single lane", 40, 40, true },
                /* A peer at 40 per lane: its generation is unknown, the rate alone says TB5 */
                { { DIR(2, 40), DIR(2, 40), 4, 0, 2, 0, TBT_PORT_LINK_USB4 }, "Thunderbolt 5", 80, 80, false },
                /* 20 x 2: Thunderbolt 4 only when both ends are USB4 */
                { { DIR(2, 20), DIR(2, 20), 4, 4, 1, 1, NONE }, "Thunderbolt 4", 40, 40, false },
                { { DIR(2, 20), DIR(2, 20), 4, 3, 1, 0, TBT_PORT_LINK_TBT }, "Thunderbolt 3", 40, 40, false },
                { { DIR(2, 20), DIR(2, 20), 3, 4, 0, 1, NONE }, "Thunderbolt 3", 40, 40, false },
                { { DIR(2, 20), DIR(2, 20), 3, 3, 0, 0, NONE }, "Thunderbolt 3", 40, 40, false },
                { { DIR(2, 20), DIR(2, 20), 4, 0, 1, 0, TBT_PORT_LINK_USB4 }, "Thunderbolt 4", 40, 40, false },
                { { DIR(2, 20), DIR(2, 20), 4, 0, 1, 0, TBT_PORT_LINK_TBT }, "Thunderbolt 3", 40, 40, false },
                { { DIR(2, 20), DIR(2, 20), 4, 0, 1, 0, NONE }, "Thunderbolt 3/4", 40, 40, false },
                { { DIR(2, 20), DIR(2, 20), 3, 0, 0, 0, NONE }, "Thunderbolt 3", 40, 40, false },
                /* USB4 v2 at both ends held back to 20 per lane (a 40G cable) */
                { { DIR(2, 20), DIR(2, 20), 4, 4, 2, 2, TBT_PORT_LINK_USB4 }, "Thunderbolt 4", 40, 40, true },
                { { DIR(2, 20), DIR(2, 20), 4, 4, 2, 1, TBT_PORT_LINK_USB4 }, "Thunderbolt 4", 40, 40, false },
                /* single lane */
                { { DIR(1, 20), DIR(1, 20), 4, 4, 1, 1, TBT_PORT_LINK_USB4 }, "USB4 20G", 20, 20, true },
                { { DIR(1, 20), DIR(1, 20), 3, 3, 0, 0, NONE }, "Thunderbolt 3 single lane", 20, 20, true },
                { { DIR(1, 20), DIR(1, 20), 4, 0, 1, 0, NONE }, "Thunderbolt 3/4 single lane", 20, 20, false },
                { { DIR(1, 20), DIR(1, 20), 4, 0, 1, 0, TBT_PORT_LINK_USB4 }, "USB4 20G", 20, 20, true },
                { { DIR(1, 20), DIR(1, 20), 4, 4, 2, 2, NONE }, "USB4 20G", 20, 20, true },
                /* USB4 Gen 2 lanes */
                { { DIR(2, 10), DIR(2, 10), 4, 4, 1, 1, NONE }, "USB4 20G", 20, 20, false },
                { { DIR(1, 10), DIR(1, 10), 4, 4, 1, 1, NONE }, "USB4 10G", 10, 10, true },
                /* Thunderbolt 1 and 2 never bond lanes: one lane is not degraded */
                { { DIR(1, 10), DIR(1, 10), 2, 2, 0, 0, NONE }, "Thunderbolt 2", 10, 10, false },
                { { DIR(1, 10), DIR(1, 10), 2, 1, 0, 0, NONE }, "Thunderbolt 1", 10, 10, false },
                { { DIR(1, 10), DIR(1, 10), 4, 2, 1, 0, NONE }, "Thunderbolt 2", 10, 10, false },
                /* A Thunderbolt 3 host at 10 per lane: a Thunderbolt 1/2 far end of unknown generation */
                { { DIR(1, 10), DIR(1, 10), 3, 0, 0, 0, NONE }, "Thunderbolt 1/2", 10, 10, false },
                { { DIR(1, 10), DIR(1, 10), 4, 0, 1, 0, TBT_PORT_LINK_TBT }, "Thunderbolt 1/2", 10, 10, false },
                /* unknown or impossible */
                { { DIR(2, 0), DIR(2, 0), 4, 4, 1, 1, NONE }, "Unknown", 0, 0, false },
                { { DIR(0, 20), DIR(2, 20), 4, 4, 1, 1, NONE }, "Unknown", 0, 40, false },
                { { DIR(0, 0), DIR(0, 0), 0, 0, 0, 0, NONE }, "Unknown", 0, 0, false },
                { { DIR(2, 20), DIR(2, 40), 4, 4, 1, 1, NONE }, "Other", 40, 80, false },
                { { DIR(2, 40), DIR(1, 40), 4, 4, 2, 2, NONE }, "Other", 80, 40, false },
                { { DIR(3, 20), DIR(1, 20), 4, 4, 1, 1, NONE }, "Other", 60, 20, false },
                { { DIR(2, 80), DIR(2, 80), 4, 4, 3, 3, NONE }, "Other", 160, 160, false },
                { { DIR(2, 10), DIR(2, 10), 3, 3, 0, 0, NONE }, "Other", 20, 20, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                TbtLinkInfo info = {};
                assert_int_equal(tbt_link_evaluate(&table[i].f, &info), 0);
                if (!streq(tbt_link_class_to_string(info.link_class), table[i].class) ||
                    info.rx_gbps != table[i].rx || info.tx_gbps != table[i].tx ||
                    info.degraded != table[i].degraded)
                        fail_msg("row %zu: got %s %u/%u degraded=%d (%s), expected %s %u/%u degraded=%d", i,
                                 tbt_link_class_to_string(info.link_class), info.rx_gbps, info.tx_gbps,
                                 info.degraded, strna(info.degraded_reason), table[i].class, table[i].rx,
                                 table[i].tx, table[i].degraded);
                assert_true(info.degraded == (info.degraded_reason != NULL));
                free(info.degraded_reason);
        }
}

static void test_degraded_reasons(void **state) {
        TbtLinkFacts f = { DIR(1, 20), DIR(1, 20), 4, 4, 2, 2, TBT_PORT_LINK_USB4 };
        TbtLinkInfo info = {};

        assert_int_equal(tbt_link_evaluate(&f, &info), 0);
        assert_true(info.degraded);
        assert_string_equal(info.degraded_reason,
                            "both ends are USB4 v2 (40 Gb/s per lane) but the link runs at 20 Gb/s per lane; "
                            "one lane although both ends support two");
        free(info.degraded_reason);
}

static void test_class_strings(void **state) {
        for (int c = 0; c < _TBT_LINK_CLASS_MAX; c++) {
                assert_non_null(tbt_link_class_to_string(c));
                assert_int_equal(tbt_link_class_from_string(tbt_link_class_to_string(c)), c);
        }
        assert_null(tbt_link_class_to_string(_TBT_LINK_CLASS_INVALID));
        assert_int_equal(tbt_link_class_from_string("Thunderbolt 6"), _TBT_LINK_CLASS_INVALID);
        assert_int_equal(tbt_link_class_generation(TBT_LINK_CLASS_TB5_ASYMMETRIC_TX), 5);
        assert_int_equal(tbt_link_class_generation(TBT_LINK_CLASS_USB4_20G), 4);
        assert_int_equal(tbt_link_class_generation(TBT_LINK_CLASS_TB3_SINGLE_LANE), 3);
        assert_int_equal(tbt_link_class_generation(TBT_LINK_CLASS_TB3_OR_TB4), 0);
        assert_int_equal(tbt_link_class_generation(TBT_LINK_CLASS_TB2), 0);
        assert_int_equal(tbt_link_class_generation(TBT_LINK_CLASS_TB1_OR_TB2), 0);
        for (int t = 0; t < _TBT_NODE_TYPE_MAX; t++)
                assert_non_null(tbt_node_type_to_string(t));
}

/* ---- trees ------------------------------------------------------------------------------------ */

typedef struct DeviceSet {
        TbtDevice *d[256];
        size_t n;
} DeviceSet;

static TbtDevice *add(DeviceSet *s, TbtKind kind, const char *name, const char *parent) {
        TbtDevice *d = calloc(1, sizeof(TbtDevice));
        unsigned domain;

        assert_non_null(d);
        assert_true(s->n < ELEMENTSOF(s->d));
        d->kind = kind;
        d->sysname = strdup(name);
        d->parent = parent ? strdup(parent) : NULL;
        d->domain_index = -1;
        d->router_type = _TBT_ROUTER_TYPE_INVALID;
        d->authorized = _TBT_AUTHORIZED_INVALID;
        d->security = _TBT_SECURITY_INVALID;
        if ((kind == TBT_KIND_ROUTER || kind == TBT_KIND_PEER) &&
            tbt_parse_router_name(name, &domain, &d->route) >= 0)
                d->has_route = true;
        s->d[s->n++] = d;
        return d;
}

static TbtDevice *add_router(DeviceSet *s, const char *name, const char *parent, unsigned generation,
                             unsigned usb4, unsigned rx_lanes, unsigned tx_lanes, unsigned speed) {
        TbtDevice *d = add(s, TBT_KIND_ROUTER, name, parent);
        d->generation = generation;
        d->usb4_version = usb4;
        d->rx = (TbtLinkDirection) DIR(rx_lanes, speed);
        d->tx = (TbtLinkDirection) DIR(tx_lanes, speed);
        return d;
}

static void add_port(TbtDevice *d, unsigned number, TbtPortLink link) {
        d->ports = reallocarray(d->ports, d->n_ports + 1, sizeof(TbtPort));
        assert_non_null(d->ports);
        d->ports[d->n_ports++] = (TbtPort) { number, link };
}

static void set_free(DeviceSet *s) {
        tbt_device_array_free(NULL, 0);
        for (size_t i = 0; i < s->n; i++)
                tbt_device_free(s->d[i]);
        s->n = 0;
}

static const TbtNode *node(const TbtTopology *t, const char *name) {
        ssize_t i = tbt_topology_find(t, name);
        if (i < 0)
                fail_msg("no node %s", name);
        return &t->nodes[i];
}

static void test_dock_and_peer(void **state) {
        DeviceSet s = {};
        TbtTopology *t = NULL;
        TbtDevice *host, *dock, *peer, *svc;

        add(&s, TBT_KIND_DOMAIN, "domain0", NULL);
        host = add_router(&s, "0-0", "domain0", 4, 1, 0, 0, 0);
        host->router_type = TBT_ROUTER_HOST;
        add_port(host, 1, TBT_PORT_LINK_USB4);
        dock = add_router(&s, "0-1", "0-0", 4, 1, 2, 2, 20);
        dock->router_type = TBT_ROUTER_HUB;
        add_port(dock, 3, TBT_PORT_LINK_USB4);
        peer = add(&s, TBT_KIND_PEER, "0-301", "0-1");
        peer->rx = peer->tx = (TbtLinkDirection) DIR(2, 20);
        svc = add(&s, TBT_KIND_SERVICE, "0-301.0", "0-301");
        svc->net_interface = strdup("thunderbolt0");

        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_null(t->problems);
        assert_int_equal(node(t, "domain0")->type, TBT_NODE_DOMAIN);
        assert_int_equal(node(t, "0-0")->type, TBT_NODE_HOST);
        assert_int_equal(node(t, "0-1")->type, TBT_NODE_HUB);
        assert_int_equal(node(t, "0-301")->type, TBT_NODE_PEER);
        assert_int_equal(node(t, "0-301.0")->type, TBT_NODE_SERVICE);
        assert_int_equal(node(t, "0-0")->depth, 0);
        assert_int_equal(node(t, "0-1")->depth, 1);
        assert_int_equal(node(t, "0-301")->depth, 2);
        assert_int_equal(node(t, "0-301.0")->depth, 2);
        assert_false(node(t, "0-0")->has_link);
        assert_false(node(t, "0-301.0")->has_link);
        assert_true(node(t, "0-301")->has_link);
        assert_string_equal(tbt_link_class_to_string(node(t, "0-1")->link.link_class), "Thunderbolt 4");
        assert_string_equal(tbt_link_class_to_string(node(t, "0-301")->link.link_class), "Thunderbolt 4");
        assert_int_equal(node(t, "0-301")->path_rx_gbps, 40);
        assert_string_equal(node(t, "0-301")->net_interface, "thunderbolt0");
        assert_int_equal(tbt_topology_path_generation(t, (size_t) tbt_topology_find(t, "0-301")), 4);
        assert_int_equal(tbt_topology_path_generation(t, (size_t) tbt_topology_find(t, "0-0")), 0);
        assert_int_equal(node(t, "0-301")->parent, tbt_topology_find(t, "0-1"));
        assert_int_equal(tbt_topology_find(t, "0-999"), -ENOENT);

        /* The same peer behind a port that runs Thunderbolt 3 mode is a Thunderbolt 3 link. */
        dock->ports[0].link = TBT_PORT_LINK_TBT;
        t = tbt_topology_free(t);
        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_string_equal(tbt_link_class_to_string(node(t, "0-301")->link.link_class), "Thunderbolt 3");
        assert_int_equal(tbt_topology_path_generation(t, (size_t) tbt_topology_find(t, "0-301")), 3);

        tbt_topology_free(t);
        set_free(&s);
}

/* Bottleneck per direction: an asymmetric dock (120 down, 40 up) in front of an 80/80 SSD leaves
 * 80 down and 40 up; a TB4 device behind it gets 40/40. */
static void test_path_bottleneck(void **state) {
        DeviceSet s = {};
        TbtTopology *t = NULL;

        add(&s, TBT_KIND_DOMAIN, "domain0", NULL);
        add_router(&s, "0-0", "domain0", 4, 2, 0, 0, 0)->router_type = TBT_ROUTER_HOST;
        add_router(&s, "0-1", "0-0", 4, 2, 3, 1, 40)->router_type = TBT_ROUTER_HUB;
        add_router(&s, "0-301", "0-1", 4, 2, 2, 2, 40)->router_type = TBT_ROUTER_DEVICE;
        add_router(&s, "0-501", "0-1", 4, 1, 2, 2, 20)->router_type = TBT_ROUTER_DEVICE;
        add_router(&s, "0-3", "0-0", 4, 2, 1, 3, 40)->router_type = TBT_ROUTER_DEVICE;

        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_int_equal(node(t, "0-1")->link.rx_gbps, 120);
        assert_int_equal(node(t, "0-1")->link.tx_gbps, 40);
        assert_int_equal(node(t, "0-1")->path_rx_gbps, 120);
        assert_int_equal(node(t, "0-1")->path_tx_gbps, 40);
        assert_int_equal(node(t, "0-301")->path_rx_gbps, 80);
        assert_int_equal(node(t, "0-301")->path_tx_gbps, 40);
        assert_int_equal(node(t, "0-501")->path_rx_gbps, 40);
        assert_int_equal(node(t, "0-501")->path_tx_gbps, 40);
        assert_int_equal(node(t, "0-3")->path_rx_gbps, 40);
        assert_int_equal(node(t, "0-3")->path_tx_gbps, 120);
        assert_string_equal(tbt_link_class_to_string(node(t, "0-1")->link.link_class),
                            "Thunderbolt 5 asymmetric (rx 120 Gb/s)");
        assert_string_equal(tbt_link_class_to_string(node(t, "0-3")->link.link_class),
                            "Thunderbolt 5 asymmetric (tx 120 Gb/s)");
        assert_int_equal(tbt_topology_path_generation(t, (size_t) tbt_topology_find(t, "0-301")), 5);
        assert_int_equal(tbt_topology_path_generation(t, (size_t) tbt_topology_find(t, "0-501")), 4);

        /* One hop of unknown rate makes the path unknown below it, not faster. */
        s.d[2]->rx.lane_gbps = 0;
        t = tbt_topology_free(t);
        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_int_equal(node(t, "0-301")->path_rx_gbps, 0);
        assert_int_equal(node(t, "0-301")->path_tx_gbps, 40);
        assert_int_equal(tbt_topology_path_generation(t, (size_t) tbt_topology_find(t, "0-301")), 0);

        tbt_topology_free(t);
        set_free(&s);
}

/* Kernels before USB4 v2 support leave USB4_VERSION out of a v2 router's uevent: a link at 40 per
 * lane shows both its ends are v2, so a link between two such routers held at 20 is degraded. */
static void test_usb4v2_from_rates(void **state) {
        DeviceSet s = {};
        TbtTopology *t = NULL;

        add(&s, TBT_KIND_DOMAIN, "domain0", NULL);
        add_router(&s, "0-0", "domain0", 4, 0, 0, 0, 0)->router_type = TBT_ROUTER_HOST;
        add_router(&s, "0-1", "0-0", 4, 0, 2, 2, 40);   /* host and 0-1 are v2 */
        add_router(&s, "0-3", "0-0", 4, 0, 2, 2, 20);   /* v2 by its own child below */
        add_router(&s, "0-103", "0-3", 4, 0, 3, 1, 40);
        add_router(&s, "0-5", "0-0", 4, 0, 2, 2, 20);   /* nothing says v2: a TB4 device */

        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_false(node(t, "0-1")->link.degraded);
        assert_true(node(t, "0-3")->link.degraded);
        assert_string_equal(tbt_link_class_to_string(node(t, "0-3")->link.link_class), "Thunderbolt 4");
        assert_false(node(t, "0-5")->link.degraded);
        /* What the Usb4Version property publishes: the uevent's, or 2 from the rates. */
        assert_int_equal(node(t, "0-0")->usb4_version, 2);
        assert_int_equal(node(t, "0-1")->usb4_version, 2);
        assert_int_equal(node(t, "0-3")->usb4_version, 2);
        assert_int_equal(node(t, "0-103")->usb4_version, 2);
        assert_int_equal(node(t, "0-5")->usb4_version, 0);
        assert_int_equal(node(t, "domain0")->usb4_version, 0);
        s.d[5]->usb4_version = 1;
        t = tbt_topology_free(t);
        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_int_equal(node(t, "0-5")->usb4_version, 1);
        assert_int_equal(node(t, "0-103")->path_rx_gbps, 40);
        assert_int_equal(node(t, "0-103")->path_tx_gbps, 40);
        tbt_topology_free(t);
        set_free(&s);
}

/* Thunderbolt 3 routers carry no USB4_TYPE: the host is route 0, a router with something below it
 * is a hub, the last one a device. */
static void test_tb3_types(void **state) {
        DeviceSet s = {};
        TbtTopology *t = NULL;

        add(&s, TBT_KIND_DOMAIN, "domain0", NULL);
        add_router(&s, "0-0", "domain0", 3, 0, 0, 0, 0);
        add_router(&s, "0-1", "0-0", 3, 0, 2, 2, 20);
        add_router(&s, "0-301", "0-1", 3, 0, 2, 2, 20);

        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_int_equal(node(t, "0-0")->type, TBT_NODE_HOST);
        assert_int_equal(node(t, "0-1")->type, TBT_NODE_HUB);
        assert_int_equal(node(t, "0-301")->type, TBT_NODE_DEVICE);
        assert_string_equal(tbt_link_class_to_string(node(t, "0-301")->link.link_class), "Thunderbolt 3");
        tbt_topology_free(t);
        set_free(&s);
}

typedef struct WalkLog {
        char order[4096];
        unsigned max_level;
        size_t visits;
} WalkLog;

static int log_walk(const TbtTopology *t, size_t index, unsigned level, void *userdata) {
        WalkLog *w = userdata;
        size_t len = strlen(w->order);
        snprintf(w->order + len, sizeof(w->order) - len, "%s%s@%u", len ? " " : "", t->nodes[index].sysname,
                 level);
        w->max_level = MAX(w->max_level, level);
        w->visits++;
        return 0;
}

static int stop_walk(const TbtTopology *t, size_t index, unsigned level, void *userdata) {
        return ++*(int *) userdata == 2 ? -ECANCELED : 0;
}

static void test_walk_order(void **state) {
        DeviceSet s = {};
        TbtTopology *t = NULL;
        WalkLog w = {};
        int calls = 0;

        /* Input order is not tree order; the walk still goes parents first. */
        add_router(&s, "0-301", "0-1", 4, 1, 2, 2, 20);
        add(&s, TBT_KIND_DOMAIN, "domain0", NULL);
        add_router(&s, "0-1", "0-0", 4, 1, 2, 2, 20);
        add_router(&s, "0-0", "domain0", 4, 1, 0, 0, 0);
        add_router(&s, "0-3", "0-0", 4, 1, 2, 2, 20);
        add(&s, TBT_KIND_RETIMER, "0-0:1.1", "0-0");

        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_int_equal(tbt_topology_walk(t, log_walk, &w), 0);
        assert_string_equal(w.order, "domain0@0 0-0@1 0-1@2 0-301@3 0-3@2 0-0:1.1@2");
        assert_int_equal(node(t, "0-0:1.1")->type, TBT_NODE_RETIMER);
        assert_int_equal(node(t, "0-0:1.1")->depth, 0);
        assert_int_equal(tbt_topology_walk(t, stop_walk, &calls), -ECANCELED);
        assert_int_equal(calls, 2);
        tbt_topology_free(t);
        set_free(&s);
}

/* Names that carry no route (as a corrupt tree might have) still get depths from the chain, to any
 * depth up to the guard; past it the nodes are flagged and the walk stops descending. */
static void test_deep_chains(void **state) {
        DeviceSet s = {};
        TbtTopology *t = NULL;
        WalkLog w = {};
        char name[32], parent[32];

        add(&s, TBT_KIND_DOMAIN, "domain0", NULL);
        add_router(&s, "0-0", "domain0", 4, 1, 0, 0, 0)->router_type = TBT_ROUTER_HOST;
        strcpy(parent, "0-0");
        for (unsigned i = 1; i <= 40; i++) {
                snprintf(name, sizeof(name), "r%u", i);
                add_router(&s, name, parent, 4, 1, 2, 2, 20);
                strcpy(parent, name);
        }
        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_null(t->problems);
        assert_int_equal(node(t, "r40")->depth, 40);
        assert_int_equal(node(t, "r40")->path_rx_gbps, 40);
        assert_int_equal(tbt_topology_walk(t, log_walk, &w), 0);
        assert_int_equal(w.visits, 42);
        assert_int_equal(w.max_level, 41);
        t = tbt_topology_free(t);

        for (unsigned i = 41; i <= 200; i++) {
                snprintf(name, sizeof(name), "r%u", i);
                add_router(&s, name, parent, 4, 1, 2, 2, 20);
                strcpy(parent, name);
        }
        memset(&w, 0, sizeof(w));
        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_non_null(t->problems);
        assert_true(node(t, "r200")->problems & TBT_PROBLEM_TOO_DEEP);
        assert_int_equal(node(t, "r200")->depth, -1);
        assert_int_equal(node(t, "r200")->path_rx_gbps, 0);
        assert_false(node(t, "r60")->problems & TBT_PROBLEM_TOO_DEEP);
        assert_int_equal(tbt_topology_walk(t, log_walk, &w), 0);
        assert_int_equal(w.max_level, TBT_TOPOLOGY_DEPTH_MAX);
        tbt_topology_free(t);
        set_free(&s);
}

static void test_loops(void **state) {
        DeviceSet s = {};
        TbtTopology *t = NULL;
        WalkLog w = {};

        add(&s, TBT_KIND_DOMAIN, "domain0", NULL);
        add_router(&s, "0-0", "domain0", 4, 1, 0, 0, 0);
        add_router(&s, "0-1", "0-3", 4, 1, 2, 2, 20);   /* 0-1 -> 0-3 -> 0-1 */
        add_router(&s, "0-3", "0-1", 4, 1, 2, 2, 20);
        add_router(&s, "0-301", "0-3", 4, 1, 2, 2, 20); /* hangs off the loop */
        add_router(&s, "0-5", "0-5", 4, 1, 2, 2, 20);   /* its own parent */

        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_non_null(t->problems);
        assert_true(node(t, "0-1")->problems & TBT_PROBLEM_LOOP);
        assert_true(node(t, "0-3")->problems & TBT_PROBLEM_LOOP);
        assert_true(node(t, "0-5")->problems & TBT_PROBLEM_LOOP);
        assert_false(node(t, "0-0")->problems);
        assert_int_equal(node(t, "0-1")->depth, 1); /* from the route */
        assert_int_equal(node(t, "0-1")->path_rx_gbps, 0);
        assert_int_equal(tbt_topology_path_generation(t, (size_t) tbt_topology_find(t, "0-301")), 0);
        assert_int_equal(tbt_topology_walk(t, log_walk, &w), 0);
        assert_string_equal(w.order, "domain0@0 0-0@1");
        tbt_topology_free(t);
        set_free(&s);
}

static void test_orphans_and_routes(void **state) {
        DeviceSet s = {};
        TbtTopology *t = NULL;

        add(&s, TBT_KIND_DOMAIN, "domain0", NULL);
        add_router(&s, "0-0", "domain0", 4, 1, 0, 0, 0)->router_type = TBT_ROUTER_HOST;
        /* parent vanished (unplugged mid-enumeration): depth from the route */
        add_router(&s, "0-30701", "0-701", 4, 1, 2, 2, 20);
        add(&s, TBT_KIND_PEER, "0-50301", NULL);
        /* the chain says depth 1, the route 2 */
        add_router(&s, "0-301", "0-0", 4, 1, 2, 2, 20);
        /* depth agrees but the route does not continue the parent's */
        add_router(&s, "0-1", "0-0", 4, 1, 2, 2, 20);
        add_router(&s, "0-501", "0-1", 4, 1, 2, 2, 20);
        add_router(&s, "0-503", "0-1", 4, 1, 2, 2, 20);

        assert_int_equal(tbt_topology_build(s.d, s.n, &t), 0);
        assert_true(node(t, "0-30701")->problems & TBT_PROBLEM_ORPHAN);
        assert_int_equal(node(t, "0-30701")->depth, 3);
        assert_int_equal(node(t, "0-30701")->parent, -1);
        assert_int_equal(node(t, "0-30701")->path_rx_gbps, 0);
        assert_string_equal(tbt_link_class_to_string(node(t, "0-30701")->link.link_class), "Thunderbolt 3/4");
        assert_true(node(t, "0-50301")->problems & TBT_PROBLEM_ORPHAN);
        assert_true(node(t, "0-301")->problems & TBT_PROBLEM_ROUTE_MISMATCH);
        assert_int_equal(node(t, "0-301")->depth, 1);
        assert_false(node(t, "0-501")->problems);
        assert_true(node(t, "0-503")->problems & TBT_PROBLEM_ROUTE_MISMATCH);
        assert_int_equal(strv_length(t->problems), 4);
        tbt_topology_free(t);
        set_free(&s);
}

static void test_empty(void **state) {
        TbtTopology *t = NULL;
        int visits = 0;

        assert_int_equal(tbt_topology_build(NULL, 0, &t), 0);
        assert_int_equal(t->n_nodes, 0);
        assert_int_equal(tbt_topology_walk(t, stop_walk, &visits), 0);
        assert_int_equal(visits, 0);
        assert_int_equal(tbt_topology_find(t, "0-0"), -ENOENT);
        assert_int_equal(tbt_topology_path_generation(t, 0), 0);
        assert_null(tbt_topology_free(t));
        assert_null(tbt_topology_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_link_classes),   cmocka_unit_test(test_degraded_reasons),
                cmocka_unit_test(test_class_strings),  cmocka_unit_test(test_dock_and_peer),
                cmocka_unit_test(test_path_bottleneck), cmocka_unit_test(test_usb4v2_from_rates),
                cmocka_unit_test(test_tb3_types),
                cmocka_unit_test(test_walk_order),     cmocka_unit_test(test_deep_chains),
                cmocka_unit_test(test_loops),          cmocka_unit_test(test_orphans_and_routes),
                cmocka_unit_test(test_empty),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
