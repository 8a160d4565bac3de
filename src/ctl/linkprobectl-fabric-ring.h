/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-fabric-ring.h — a ring over the fabric's cables, as the verbs and the host file see it */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

#include "fabric/fabric-cables.h"

/* fabric ring and fabric coordinator over the model: 0, or an exit code after saying why. */
int fabric_ring(json_object *model);
int fabric_coordinator(json_object *model);

/* The ring chosen: its nodes in rank order and the cables each hop stripes over. */
typedef struct RingPlan {
        const CableSet *set;
        CableTransport transport;
        unsigned width;
        size_t n;
        uint32_t *order;      /* n set nodes, rank 0 first */
        uint32_t *hop_cables; /* n x width cable indices: hop i is order[i] -> order[i + 1 mod n] */
} RingPlan;

/*
 * ring_hostfile_mlx() - MLX's launcher host file for the ring, in rank order
 * @backend: "ring", "jaccl" or "jaccl-ring"; NULL picks as mlx.distributed_config does: JACCL when the
 *           ring runs over RDMA (the mesh backend when every pair of nodes has an RDMA cable), else ring
 *
 * Return: 0 with the file written to f, or an exit code after saying why it cannot be written (a hop
 * without an address MLX can use, a pair without RDMA for JACCL).
 */
int ring_hostfile_mlx(const RingPlan *plan, const char *backend, FILE *f);

/* An interface's addresses, the most useful first: IPv4 (private, shared, global), then IPv6 (ULA,
 * global), then link-local; never loopback. A new array of strings. */
json_object *ring_addresses(json_object *iface);
