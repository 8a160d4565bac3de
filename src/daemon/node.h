/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node.h — the machine itself: the root object's Node interface */
#pragma once

#include <systemd/sd-event.h>

#include "bus-object.h"
#include "shared/node-identity.h"
#include "sysfs/cpu-topology.h"

/* linkprobe's application ID: NodeId is the machine ID hashed with it (sd_id128_get_machine_app_specific()),
 * so the raw machine ID never leaves the node, and other programs' IDs cannot be correlated with ours. */
#define LINKPROBE_APP_ID \
        SD_ID128_MAKE(6b, 87, f7, 32, 8b, 39, 42, 45, bf, 65, fd, b5, 85, b9, 93, 1e)

typedef struct Node {
        BusObject bus; /* the Node interface of the root object */
        char *hostname;
        char *machine_id;
        char *boot_id;
        char *kernel_release;
        char *architecture;
        char *cpu_model;
        uint32_t cpu_count;
        /* The CPU packages and NUMA nodes as sysfs says (Packages, NumaNodes); empty when it says
         * nothing we can read. Read at start and on Refresh(): CPUs brought on- or offline move them. */
        SysfsCpuTopology topology;
        bool topology_failed;
        int sysfs_fd; /* borrowed from the manager */
        int hostname_fd;
        sd_event_source *hostname_source;

        /* Who this node is to others: NodeId ("" without a machine ID), and its boot (app-specific, so
         * a neighbour tells a cloned image from a reboot without learning the raw boot ID). */
        char *node_id;
        uint8_t node_id_bytes[NODE_ID_SIZE];
        uint8_t boot_id_bytes[NODE_ID_SIZE];
        uint64_t booted_at; /* CLOCK_REALTIME µs */

        /* Derived (derive-neighbor.c writes these): what identifies this node on the wire, and the
         * identity its responder hands out (identity_generation counts its changes). */
        struct {
                char **thunderbolt_host_uuids;
                char **rdma_node_guids;
                char **hardware_addresses;
                NodeIdentity identity;
                bool has_identity;
                unsigned identity_generation;
        } derived;
} Node;

/* Tells the Node interface apart from others in the publisher's queue. */
extern const BusObjectType node_bus_type;

/* Reads the identity and the CPU topology below sysfs_fd (borrowed), and starts watching the hostname
 * (the kernel wakes pollers on change). */
int node_start(Node *n, BusPublisher *p, sd_event *event, int sysfs_fd);
void node_done(Node *n);
/* Re-reads what may change (hostname, the CPU packages and NUMA nodes). */
void node_refresh(Node *n);

/* The CPU model from /proc/cpuinfo text ("model name", or what ARM and others call it). */
char *cpuinfo_model(const char *text);
