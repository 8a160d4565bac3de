/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fabric-cables.h — the fabric model as the ring sees it: a chosen set of nodes, numbered,
 * and the cables between them with what each carries each way, by transport */
#pragma once

#include <json-c/json.h>

#include "ring-search.h"
#include "shared/macros.h"

typedef enum CableTransport {
        CABLE_TCP,  /* sockets over IP: MLX's ring backend, a JACCL coordinator */
        CABLE_RDMA, /* verbs: JACCL */
        _CABLE_TRANSPORT_MAX,
} CableTransport;

const char *cable_transport_to_string(CableTransport t);

/* What a cable carries over one transport, each way ([0] u -> v, [1] v -> u). */
typedef struct CableRate {
        bool edge;             /* the fabric has an edge of this transport over the cable */
        double measured[2];    /* Gb/s, 0 none */
        double nominal[2];     /* what the link negotiated, 0 unknown */
        bool stale;
        uint64_t measured_at;  /* µs, 0 unknown */
} CableRate;

/* One cable between nodes u < v: a local interface at each end (one of them may be unknown when only
 * the other end spoke). */
typedef struct Cable {
        uint32_t u, v;
        const char *if_u, *if_v;
        json_object *iface_u, *iface_v; /* the model's Interfaces entries, NULL unknown */
        CableRate rate[_CABLE_TRANSPORT_MAX];
} Cable;

typedef struct CableSet {
        json_object *model;
        size_t n;
        json_object **nodes; /* the model's node objects, numbered by (hostname, NodeId) */
        Cable *cables;
        size_t n_cables;
} CableSet;

/*
 * cable_set_build() - the nodes the ring is over, and the cables between them
 * @model: the fabric model
 * @names: comma-separated hostnames or NodeIds (--nodes=), NULL for every node (but those whose NodeId
 *         two nodes answer with, which are left out with a warning)
 *
 * Return: 0, or an exit code after saying why (an unknown or ambiguous name, a clashing NodeId named).
 */
int cable_set_build(json_object *model, const char *names, CableSet *ret);
void cable_set_done(CableSet *s);

const char *cable_set_hostname(const CableSet *s, uint32_t node);
const char *cable_set_node_id(const CableSet *s, uint32_t node);

/* What the cable carries from node `from` over transport t, and whether that is a measurement
 * (*ret_measured) rather than the link's nominal rate. 0 when nothing is known that way. */
double cable_gbps(const Cable *c, CableTransport t, uint32_t from, bool *ret_measured);
/* The interface, its model entry, at node `at`'s end of the cable. */
const char *cable_interface(const Cable *c, uint32_t at);
json_object *cable_iface(const Cable *c, uint32_t at);
/* The first RDMA device at node `at`'s end, NULL none. */
const char *cable_rdma_device(const Cable *c, uint32_t at);

/* Two lanes per cable over transport t, for the ring search; lane i is cable lane_cable[i]. Returns
 * the number of lanes, or -ENOMEM. */
ssize_t cable_set_lanes(const CableSet *s, CableTransport t, RingLane **ret_lanes, uint32_t **ret_lane_cable);
