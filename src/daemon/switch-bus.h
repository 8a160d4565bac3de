/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* switch-bus.h — the org.linkprobe.LinkProbe1.Switch interface on switch/<key> objects */
#pragma once

typedef struct BusRegistry BusRegistry;
typedef struct Switches Switches;

/* Registers the fallback vtable and the node enumerator for every switch. */
int switch_bus_register(BusRegistry *registry, Switches *switches);
