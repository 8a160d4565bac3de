/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt-topology.h — the Thunderbolt tree, link rates, path bottlenecks and link classes (pure logic) */
#pragma once

#include "counter.h"
#include "sysfs/thunderbolt.h"

/* What the Type property says. Routers without USB4_TYPE are a hub when something hangs below them. */
typedef enum TbtNodeType {
        TBT_NODE_DOMAIN,
        TBT_NODE_HOST,
        TBT_NODE_HUB,
        TBT_NODE_DEVICE,
        TBT_NODE_PEER,
        TBT_NODE_SERVICE,
        TBT_NODE_RETIMER,
        _TBT_NODE_TYPE_MAX,
        _TBT_NODE_TYPE_INVALID = -EINVAL,
} TbtNodeType;

/*
 * LinkClass: what a person calls the link, from the negotiated per-lane rate, the lane counts and both
 * ends' generations. Per-lane 40 is Thunderbolt 5 (USB4 v2): 2x2 symmetric (80/80), 3+1 asymmetric
 * (120/40; the direction with three lanes is named, rx and tx as the device's rx_/tx_ attributes
 * report them), or one lane. Per-lane 20 on two lanes is Thunderbolt 3 when either end is generation
 * 3 (or the USB4 port says "tbt"), Thunderbolt 4 (= USB4 40G) when both are USB4, and "Thunderbolt
 * 3/4" when the far end is a peer whose generation nothing tells. Lower USB4 rates are "USB4 20G"
 * (20x1, 10x2) and "USB4 10G" (10x1); generation 1 and 2 links are Thunderbolt 1 and 2. Anything else
 * with known rates is "Other"; unknown rates or lanes give "Unknown".
 */
typedef enum TbtLinkClass {
        TBT_LINK_CLASS_UNKNOWN,
        TBT_LINK_CLASS_TB5,
        TBT_LINK_CLASS_TB5_ASYMMETRIC_RX, /* rx 3 lanes (120), tx 1 lane (40) */
        TBT_LINK_CLASS_TB5_ASYMMETRIC_TX, /* tx 3 lanes (120), rx 1 lane (40) */
        TBT_LINK_CLASS_TB5_SINGLE_LANE,
        TBT_LINK_CLASS_TB4,
        TBT_LINK_CLASS_TB3,
        TBT_LINK_CLASS_TB3_OR_TB4,
        TBT_LINK_CLASS_TB3_SINGLE_LANE,
        TBT_LINK_CLASS_TB3_OR_TB4_SINGLE_LANE,
        TBT_LINK_CLASS_USB4_20G,
        TBT_LINK_CLASS_USB4_10G,
        TBT_LINK_CLASS_TB2,
        TBT_LINK_CLASS_TB1,
        TBT_LINK_CLASS_TB1_OR_TB2, /* a Thunderbolt 3 port at 10 per lane: the far end is generation 1 or 2 */
        TBT_LINK_CLASS_OTHER,
        _TBT_LINK_CLASS_MAX,
        _TBT_LINK_CLASS_INVALID = -EINVAL,
} TbtLinkClass;

/* Problems found while building the tree; a node can have several. */
typedef enum TbtProblem {
        TBT_PROBLEM_LOOP = 1 << 0,           /* the parent chain runs in a circle */
        TBT_PROBLEM_TOO_DEEP = 1 << 1,       /* deeper than TBT_TOPOLOGY_DEPTH_MAX */
        TBT_PROBLEM_ORPHAN = 1 << 2,         /* the parent is not among the devices (or is no router) */
        TBT_PROBLEM_ROUTE_MISMATCH = 1 << 3, /* the route string disagrees with the parent chain */
} TbtProblem;

/* No real chain comes near this (USB4 allows six hops below the host, and a route holds eight); it
 * only bounds the work on a corrupt or hostile tree. */
#define TBT_TOPOLOGY_DEPTH_MAX 64

/* The facts about one link that decide its rates and class. "near" is the parent router, "far" the
 * device or peer whose upstream link this is. */
typedef struct TbtLinkFacts {
        TbtLinkDirection rx, tx;                      /* the far end's rx_/tx_ attributes */
        unsigned near_generation, far_generation;     /* 0 unknown (always so for a peer) */
        unsigned near_usb4_version, far_usb4_version; /* 0 not USB4 or unknown; 2 also when any link
                                                       * of that router runs 40 Gb/s per lane */
        TbtPortLink port_link;                        /* the near end's usb4_portN/link, if any */
} TbtLinkFacts;

typedef struct TbtLinkInfo {
        unsigned rx_gbps, tx_gbps; /* lanes x per-lane rate; 0 unknown */
        TbtLinkClass link_class;
        bool degraded;
        char *degraded_reason; /* owned; NULL unless degraded */
} TbtLinkInfo;

typedef struct TbtNode {
        char *sysname;       /* owned copy of the device's name */
        ssize_t parent;      /* index of the parent node, -1 for a root or an orphan */
        TbtNodeType type;
        int depth;           /* hops below the host router (host 0, domain 0); -1 unknown */
        bool has_route;
        uint64_t route;      /* routers and peers; derived from the name */
        unsigned usb4_version; /* routers: USB4_VERSION's major, 2 also when any of the router's
                                * links runs 40 Gb/s per lane; 0 not USB4 or unknown */
        bool has_link;       /* every router but the host, and every peer */
        TbtLinkInfo link;
        unsigned path_rx_gbps, path_tx_gbps; /* bottleneck over every hop from the host; 0 unknown */
        char *net_interface; /* peers: the interface of their thunderbolt-net service */
        unsigned problems;   /* TbtProblem flags */
} TbtNode;

typedef struct TbtTopology {
        TbtNode *nodes; /* nodes[i] describes devices[i] of tbt_topology_build() */
        size_t n_nodes;
        size_t *children;       /* child indices of node i: children[child_start[i]..+n_children[i]) */
        size_t *child_start;
        size_t *n_children;
        char **problems;        /* human-readable descriptions, for the caller to log */
} TbtTopology;

/**
 * tbt_link_evaluate() - rates, class and degradation of one link
 * @facts: what is known about the link
 * @ret: filled in; ret->degraded_reason is owned by the caller
 *
 * Returns 0 or -ENOMEM.
 */
int tbt_link_evaluate(const TbtLinkFacts *facts, TbtLinkInfo *ret);

/**
 * tbt_topology_build() - the tree of a set of devices
 * @devices: the devices, e.g. from tbt_enumerate(); borrowed only during the call
 * @n: their number
 * @ret: the topology, index-aligned with @devices; free with tbt_topology_free()
 *
 * Parents come from each device's parent (the sysfs parent chain); the route in the name cross-checks
 * them and gives the depth of orphans. Loops, absurd depths and mismatches are flagged on the node and
 * described in ret->problems; they never make the call fail or hang.
 *
 * Returns 0 or -ENOMEM.
 */
int tbt_topology_build(TbtDevice *const *devices, size_t n, TbtTopology **ret);
TbtTopology *tbt_topology_free(TbtTopology *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(TbtTopology *, tbt_topology_free);

/* The index of the node with that sysname, or -ENOENT. */
ssize_t tbt_topology_find(const TbtTopology *t, const char *sysname);

typedef int (*TbtWalkFunc)(const TbtTopology *t, size_t index, unsigned level, void *userdata);

/**
 * tbt_topology_walk() - visit the tree depth-first, parents before children
 * @t: the topology
 * @func: called per node with its level below its root; a negative return stops the walk
 * @userdata: passed on
 *
 * Starts at every root (a domain, or an orphan) in index order. Nodes in a loop are not reachable
 * from a root and are not visited; nothing is visited below TBT_TOPOLOGY_DEPTH_MAX levels.
 *
 * Returns 0, or the first negative value @func returned.
 */
int tbt_topology_walk(const TbtTopology *t, TbtWalkFunc func, void *userdata);

/**
 * tbt_topology_path_generation() - the Thunderbolt generation of the path to a node
 * @t: the topology
 * @index: a peer (or router) node
 *
 * The lowest generation over every hop from the host: 5 for a Thunderbolt 5 link, 4 for Thunderbolt 4
 * and other USB4 rates, 3 for Thunderbolt 3. Returns 0 when any hop is unknown or older than
 * Thunderbolt 3, or the node has no link. Gives the network Link's ConnectionType "Thunderbolt N".
 */
unsigned tbt_topology_path_generation(const TbtTopology *t, size_t index);

/* The generation a link class stands for (as above), 0 if none. */
unsigned tbt_link_class_generation(TbtLinkClass c) _const_;

const char *tbt_node_type_to_string(TbtNodeType t) _const_;
const char *tbt_link_class_to_string(TbtLinkClass c) _const_;
TbtLinkClass tbt_link_class_from_string(const char *s) _pure_;

/* ---- a link over time (tbt-link.c) ---- */

/*
 * A Thunderbolt link changes when its rate or lanes move (the driver sends a change
 * uevent then) or when a router or peer of the same UniqueId comes back after it was unplugged (a
 * cable that does not hold). Routers that left are remembered, the most recent TBT_DEPARTED_MAX of
 * them, so that a replugged dock keeps counting where it was.
 */

typedef struct TbtLinkChanges {
        uint32_t count;  /* LinkChanges */
        Window window;   /* for the judgement of flapping */
} TbtLinkChanges;

typedef struct TbtDeparted {
        char *unique_id;
        TbtLinkChanges changes;
} TbtDeparted;

#define TBT_DEPARTED_MAX 32

typedef struct TbtDepartures {
        TbtDeparted list[TBT_DEPARTED_MAX]; /* most recent first */
        size_t n;
} TbtDepartures;

/* One change at now (CLOCK_MONOTONIC usec). */
void tbt_link_changes_add(TbtLinkChanges *c, uint64_t now);
/* Whether a link that went from (rx, tx) to (new_rx, new_tx) Gb/s changed: both known, and different. */
bool tbt_rate_changed(unsigned rx, unsigned tx, unsigned new_rx, unsigned new_tx) _const_;

/* Remembers a router that left (an older entry of the same UniqueId is replaced); -ENOMEM. */
int tbt_departures_remember(TbtDepartures *d, const char *unique_id, const TbtLinkChanges *c);
/* Whether unique_id left before; if so its changes are handed back and forgotten here. */
bool tbt_departures_take(TbtDepartures *d, const char *unique_id, TbtLinkChanges *ret);
void tbt_departures_done(TbtDepartures *d);
