/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-neighbor.h — who this node is on the wire, and which nodes are at the other end of its links */
#pragma once

#include "shared/macros.h"

typedef struct Links Links;
typedef struct Neighbors Neighbors;
typedef struct Node Node;
typedef struct Peers Peers;
typedef struct Rdma Rdma;
typedef struct Thunderbolt Thunderbolt;

/* What the neighbours are made of. */
typedef struct DeriveNeighbors {
        Neighbors *neighbors;
        Node *node;
        Peers *peers;
        Links *links;
        Thunderbolt *thunderbolt;
        Rdma *rdma;
        bool authenticate; /* we hold a pre-shared key: identities are expected to prove themselves */
        bool node_derived; /* derive_node_identity() ran at least once */
} DeriveNeighbors;

/* Node.derived: the Thunderbolt host router UUIDs, RDMA node GUIDs and hardware addresses that
 * identify this node, and the identity its responder hands out. Runs when links, Thunderbolt or RDMA
 * devices, or the hostname moved. */
void derive_node_identity(DeriveNeighbors *d);

/**
 * derive_neighbors() - which neighbours exist, and everything they publish
 * @d: the context
 *
 * Every path whose responder said who it is makes a claim for that NodeId. Claims proved with our key
 * outrank the rest: when a NodeId has any, an unproved claim to it is a Problem and never merged.
 * A neighbour exists while one of its paths is live (measured, fresh, its last probe not failed, its
 * link up) or one of our Thunderbolt XDomain peers has its host router's UUID as unique_id. For each
 * it derives Hostname, Links, ThunderboltPeers, Paths, the best path for ring and coordinator
 * traffic, the aggregate over links, the edges metrics publish, and Problems (one NodeId answered by
 * two boots that are not a reboot of one node; this node's own NodeId; a bridge joining Thunderbolt
 * links), and each path's Neighbor. Neighbours come and go by mark and sweep.
 */
void derive_neighbors(DeriveNeighbors *d);
