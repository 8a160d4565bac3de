/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fabric-subnets.h — which local InfiniBand ports linkprobe-probe-fabric walks from: one per subnet */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most subnets one sweep walks (a node on more is rare; each walk sends thousands of SMPs). */
#define FABRIC_SUBNETS_MAX 8

typedef struct FabricLocalPort {
        char ca[64];
        unsigned port;
        uint64_t port_guid; /* host byte order */
} FabricLocalPort;

/* A port a walk can start from: its link is up (PortInfo:PortState Init, Armed or Active: directed-route
 * SMPs need no SM, which is how an SM finds the subnet) and InfiniBand ("InfiniBand" in sysfs, "IB" as
 * ibsim's umad2sim says it; an empty link layer is one too: older kernels do not say). */
bool fabric_port_walkable(unsigned state, const char *link_layer);

/*
 * fabric_next_subnet_port() - the next local port to walk from
 * @ports: the walkable local ports, in libibumad's order
 * @n: how many
 * @from: the first index to consider
 * @covered: whether a subnet already walked holds this port GUID (the walk found the port)
 * @userdata: passed to covered
 *
 * Subnet prefixes do not tell subnets apart (most sites leave every subnet at the default
 * fe80::/64, and each subnet's SM may sit at LID 1), but a walk does: every port it reaches is in its
 * subnet. So a port the walks so far found is on a subnet already walked; the first that none found
 * starts the next walk.
 *
 * Return: the index, or -1 when every port from @from on is covered.
 */
ssize_t fabric_next_subnet_port(const FabricLocalPort *ports, size_t n, size_t from,
                                bool (*covered)(uint64_t port_guid, void *userdata), void *userdata);
