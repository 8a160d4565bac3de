/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-bus.h — the root object: ObjectManager and the Manager, Node and Memory interfaces */
#pragma once

typedef struct Manager Manager;

#define MANAGER_INTERFACE "org.linkprobe.LinkProbe1.Manager"
#define NODE_INTERFACE "org.linkprobe.LinkProbe1.Node"
#define MEMORY_INTERFACE "org.linkprobe.LinkProbe1.Memory"

int manager_bus_register(Manager *m);
