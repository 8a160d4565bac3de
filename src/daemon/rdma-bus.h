/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-bus.h — the org.linkprobe.LinkProbe1.RdmaPort interface on rdma/<device>_<port> objects */
#pragma once

typedef struct BusRegistry BusRegistry;
typedef struct Rdma Rdma;

/* Registers the fallback vtable and the node enumerator for every port object. */
int rdma_bus_register(BusRegistry *registry, Rdma *rdma);
