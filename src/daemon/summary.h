/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* summary.h — the Summary interface: what an applet shows, derived once here so no client needs the graph */
#pragma once

#include "bus-object.h"

typedef struct Link Link;
typedef struct Links Links;
typedef struct Peers Peers;
typedef struct Pci Pci;
typedef struct Rdma Rdma;
typedef struct Thunderbolt Thunderbolt;

typedef struct SummaryFastestLink {
        int ifindex; /* 0: none */
        char *path;  /* NULL: none */
        char *name;
        const char *connection_type;
        uint32_t speed_mbps;
} SummaryFastestLink;

typedef struct SummaryTbtPeer {
        char *path;
        char *name;
        double path_rx_gbps, path_tx_gbps;
        const char *link_class;
        char *net_interface; /* the thunderbolt-net interface's name, "" when none */
} SummaryTbtPeer;

typedef struct SummaryDegraded {
        char *path;
        char *name;
        char *reason;
} SummaryDegraded;

typedef struct SummaryPeerPath {
        char *peer_address;
        char *path;
        double upload_gbps, download_gbps, rtt_usec;
        bool stale;
} SummaryPeerPath;

/* The best path to a neighbour (its RingPath). */
typedef struct SummaryNeighborPath {
        char *node_id;
        char *hostname;
        char *neighbor;
        char *path; /* "/" when no path is live (only Thunderbolt names it) */
        double upload_gbps, download_gbps, rtt_usec;
} SummaryNeighborPath;

typedef struct Summary {
        BusObject bus; /* the Summary interface of the root object */
        SummaryFastestLink fastest;
        SummaryTbtPeer *tbt_peers;
        size_t n_tbt_peers;
        uint32_t rdma_ports_active;
        SummaryDegraded *degraded;
        size_t n_degraded;
        SummaryPeerPath *best_paths;
        size_t n_best_paths;
        /* Neighbors and BestNeighborPaths (summary-neighbor.c), kept apart from the values above. */
        uint32_t n_neighbors;
        SummaryNeighborPath *neighbor_paths;
        size_t n_neighbor_paths;
        /* FastestLink needs a pass over every link; it is made only when a link that could change
         * the answer changed (see summary_link_changed()). */
        bool fastest_stale;
        /* PCIe links trained below what both ends support join DegradedLinks (NULL: none). */
        Pci *pci;
} Summary;

int summary_init(Summary *s, BusPublisher *p);
void summary_done(Summary *s);

/* Recomputes the summary from the published objects and marks what changed; the last step of every
 * derivation pass. A pass over the small tables (Thunderbolt, RDMA, peers); the links are passed over
 * only when FastestLink may have moved. */
void summary_update(Summary *s, Links *links, Thunderbolt *tbt, Rdma *rdma, Peers *peers);
/* A link's state, speed, type or name changed: FastestLink moves only if it is that link, or that
 * link now beats it. A flap of one link among thousands costs no pass over all of them. */
void summary_link_changed(Summary *s, Links *links, const Link *l);
/* Links came, went, or changed in ways one link's update does not tell (types, Thunderbolt rates). */
void summary_links_changed(Summary *s);

typedef struct Neighbors Neighbors;
/* Neighbors and BestNeighborPaths from the neighbours, after the derivation pass made them. */
void summary_update_neighbors(Summary *s, Neighbors *neighbors);
void summary_neighbors_done(Summary *s);
