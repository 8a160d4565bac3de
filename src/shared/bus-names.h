/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-names.h — the daemon's D-Bus name, object paths and interfaces, for the daemon and its clients */
#pragma once

#define BUS_NAME "org.linkprobe.LinkProbe1"
#define BUS_PATH "/org/linkprobe/LinkProbe1"
#define BUS_INTERFACE_PREFIX "org.linkprobe.LinkProbe1."
/* The private socket: D-Bus peer to peer with linkprobed, for root (linkprobed-private.socket). */
#define BUS_PRIVATE_SOCKET "/run/linkprobe/private"

/* The root object's interfaces. */
#define MANAGER_INTERFACE BUS_INTERFACE_PREFIX "Manager"
#define NODE_INTERFACE BUS_INTERFACE_PREFIX "Node"
#define MEMORY_INTERFACE BUS_INTERFACE_PREFIX "Memory"
#define SUMMARY_INTERFACE BUS_INTERFACE_PREFIX "Summary"

/* The children: PREFIX/<label>, the label encoded with sd_bus_path_encode(). */
#define LINK_INTERFACE BUS_INTERFACE_PREFIX "Link"
#define LINK_PATH_PREFIX BUS_PATH "/link"
#define TBT_INTERFACE BUS_INTERFACE_PREFIX "Thunderbolt"
#define TBT_PATH_PREFIX BUS_PATH "/thunderbolt"
#define RDMA_PORT_INTERFACE BUS_INTERFACE_PREFIX "RdmaPort"
#define RDMA_PATH_PREFIX BUS_PATH "/rdma"
#define GPU_INTERFACE BUS_INTERFACE_PREFIX "Gpu"
#define GPU_PATH_PREFIX BUS_PATH "/gpu"
#define PEER_INTERFACE BUS_INTERFACE_PREFIX "Peer"
#define PEER_PATH_PREFIX BUS_PATH "/peer"
#define PCI_INTERFACE BUS_INTERFACE_PREFIX "Pci"
#define PCI_PATH_PREFIX BUS_PATH "/pci"
#define NEIGHBOR_INTERFACE BUS_INTERFACE_PREFIX "Neighbor"
#define NEIGHBOR_PATH_PREFIX BUS_PATH "/neighbor"
#define SWITCH_INTERFACE BUS_INTERFACE_PREFIX "Switch"
#define SWITCH_PATH_PREFIX BUS_PATH "/switch"
