/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-names.h — the words the daemon publishes for RDMA port vocabulary (D-Bus, metrics, summary) */
#pragma once

#include "sysfs/infiniband-parse.h"

/* The D-Bus spellings of the port vocabulary (see org.linkprobe.LinkProbe1(5)). Never NULL: values
 * outside an enum are "unknown". */
const char *rdma_port_state_to_bus(RdmaPortState s) _const_;
const char *rdma_phys_state_to_bus(RdmaPhysState s) _const_;
const char *rdma_link_layer_to_bus(RdmaLinkLayer l) _const_;
const char *rdma_node_type_to_bus(RdmaNodeType t) _const_;
/* What a person calls it: "InfiniBand", "RoCE", "iWARP", "usNIC", else "Unknown" (like a Link's
 * ConnectionType). */
const char *rdma_transport_to_bus(RdmaTransport t) _const_;
/* The kernel's words: "4X", "HDR". */
const char *rdma_width_to_bus(RdmaWidth w) _const_;
const char *rdma_speed_to_bus(RdmaSpeed s) _const_;
/* The kernel's "IB/RoCE v1" is "ib" on an InfiniBand port and "roce-v1" on a RoCE port; "RoCE v2" is
 * "roce-v2"; anything else "unknown" (iWARP GIDs have no type of their own). */
const char *rdma_gid_type_to_bus(RdmaGidType t, RdmaTransport transport) _const_;
