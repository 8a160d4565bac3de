/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-bus.h — the root object: ObjectManager and the Manager, Node and Memory interfaces */
#pragma once

typedef struct Manager Manager;

#define MANAGER_INTERFACE "org.linkprobe.LinkProbe1.Manager"
#define NODE_INTERFACE "org.linkprobe.LinkProbe1.Node"
#define MEMORY_INTERFACE "org.linkprobe.LinkProbe1.Memory"

int manager_bus_register(Manager *m);

typedef struct BusObject BusObject;
typedef struct BusObjectType BusObjectType;
/* Sets up the change tracking of one of the root object's interfaces (it exists as long as we do). */
int manager_root_object_init(Manager *m, BusObject *o, const BusObjectType *type);
