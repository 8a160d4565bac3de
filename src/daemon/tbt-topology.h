/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt-topology.h — the Thunderbolt tree and its path bottlenecks (pure logic; one link: tbt-link.h) */
#pragma once

#include "sysfs/thunderbolt.h"
#include "tbt-link.h"

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

const char *tbt_node_type_to_string(TbtNodeType t) _const_;
