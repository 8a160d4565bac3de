/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* neighbor.h — other nodes, named from the wire (neighbor/<NodeId> objects) */
#pragma once

#include "bus-object.h"
#include "log-object.h"
#include "shared/node-identity.h"
#include "shared/table.h"

/* Bounds what a network full of liars can make us keep. */
#define NEIGHBORS_MAX 256
#define NEIGHBOR_PROBLEMS_MAX 16

/*
 * Every neighbour: a node another node's responder named (the IDENTITY frame a probe recorded on its
 * path), or whose Thunderbolt host router is the far end of one of our XDomain peers. Which
 * neighbours exist, and everything they publish, the derivation pass decides (derive-neighbor.c)
 * from the paths, links and Thunderbolt peers; this file keeps the objects.
 */
typedef struct Neighbors {
        Table table; /* Neighbor* by NodeId (32 hex digits) */
        BusPublisher *publisher;
} Neighbors;

/* One edge to the neighbour as metrics publish it: the best path per transport and local interface. */
typedef struct NeighborEdge {
        const char *transport; /* "tcp", "rdma" */
        char *interface;       /* the local link's name, "" unknown */
        char *path;            /* the Peer object */
        double upload_gbps, download_gbps, rtt_usec;
        uint64_t measured_at; /* CLOCK_REALTIME µs of the path's measurement */
        bool stale;
        bool degraded; /* a Thunderbolt hop under it negotiated less than both its ends can */
} NeighborEdge;

/* One of our Thunderbolt XDomain peers whose far host is the neighbour. */
typedef struct NeighborThunderbolt {
        char *sysname;   /* "0-301" */
        char *interface; /* its thunderbolt-net link, "" none */
        unsigned rx_gbps, tx_gbps; /* the slowest hop from our host to it, each way */
        bool degraded;
} NeighborThunderbolt;

typedef struct Neighbor {
        char *node_id; /* first: the table's key */
        Neighbors *owner;
        BusObject bus;
        bool seen; /* mark and sweep of a pass */

        /* Derived (derive-neighbor.c writes these). */
        struct {
                char *hostname;
                bool authenticated;            /* its identity was proved with our pre-shared key */
                char **thunderbolt_host_uuids; /* as it says */
                char **rdma_node_guids;
                char **links;                  /* object paths of our links that reach it */
                char **thunderbolt_peers;      /* our XDomain peers whose far host is it */
                char **paths;                  /* the measured paths its responder answered */
                char *ring_path;               /* the best path for ring traffic; NULL none */
                char *coordinator_path;        /* the best path to reach it as a coordinator; NULL none */
                double aggregate_upload_gbps;  /* the best path of each link that reaches it, added up */
                double aggregate_download_gbps;
                unsigned aggregate_links;      /* how many links that sum is over */
                double ring_upload_gbps, ring_download_gbps, ring_rtt_usec; /* of ring_path */
                char **problems;
                NeighborEdge *edges;
                size_t n_edges;
                NeighborThunderbolt *tbt;
                size_t n_tbt;
        } derived;
} Neighbor;

/* Tells neighbour objects apart from others in the publisher's queue. */
extern const BusObjectType neighbor_bus_type;

void neighbors_init(Neighbors *n, BusPublisher *p);
void neighbors_done(Neighbors *n);

Neighbor *neighbor_get(Neighbors *n, const char *node_id);
/* Creates neighbor/<node_id> (announced at the next flush) or returns the one there; 1 when created,
 * -E2BIG past NEIGHBORS_MAX. */
int neighbor_ensure(Neighbors *n, const char *node_id, Neighbor **ret);
void neighbor_edges_free(NeighborEdge *e, size_t n);
void neighbor_thunderbolt_free(NeighborThunderbolt *t, size_t n);

/* Unpublishes and frees. */
void neighbor_remove(Neighbor *nb);
/* neighbor/<node_id>. */
int neighbor_object_path(const char *node_id, char **ret);

#define log_neighbor_full_errno(nb, level, error, ...) \
        log_object_full_errno(level, error, "NEIGHBOR", (nb)->node_id, __VA_ARGS__)
#define log_neighbor_info(nb, ...) (void) log_neighbor_full_errno(nb, LOG_INFO, 0, __VA_ARGS__)
#define log_neighbor_warning(nb, ...) (void) log_neighbor_full_errno(nb, LOG_WARNING, 0, __VA_ARGS__)
