/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* neighbor-bus.h — the org.linkprobe.LinkProbe1.Neighbor interface on neighbor/<NodeId> objects */
#pragma once

typedef struct BusRegistry BusRegistry;
typedef struct Neighbors Neighbors;

/* Registers the fallback vtable and the node enumerator for every neighbour. */
int neighbor_bus_register(BusRegistry *registry, Neighbors *neighbors);
