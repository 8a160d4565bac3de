/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-bus.h — the daemon on the bus: the root object and every kind of child */
#pragma once

typedef struct Manager Manager;

/* Registers the root object (ObjectManager; the Manager, Node, Memory and Summary interfaces) and the
 * vtables of every kind of child. After manager_connect(), before manager_start(). */
int manager_bus_register(Manager *m);
