/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node-bus.h — the Node and Memory interfaces of the root object */
#pragma once

#include <systemd/sd-bus.h>

typedef struct Memory Memory;
typedef struct Node Node;

int node_bus_register(sd_bus *bus, Node *n, Memory *mem);
