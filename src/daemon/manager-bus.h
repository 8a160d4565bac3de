/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-bus.h — the daemon on the bus: the root object and every kind of child */
#pragma once

#include <systemd/sd-bus.h>

typedef struct Manager Manager;

/* Registers the root object (ObjectManager; the Manager, Node, Memory and Summary interfaces) and the
 * vtables of every kind of child. After manager_connect(), before manager_start(). */
int manager_bus_register(Manager *m);
/* The same objects on one more connection (a client of the private socket), once registered. */
int manager_bus_attach(Manager *m, sd_bus *bus);
/* Serves root's direct connections on the private socket: --private-socket='s path, else the one
 * systemd passed (linkprobed-private.socket), else none. After manager_start(). */
int manager_bus_start_private(Manager *m);
