/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-bus.h — the org.linkprobe.LinkProbe1.Link interface on link/<ifindex> objects */
#pragma once

typedef struct BusRegistry BusRegistry;
typedef struct Links Links;

/* Registers the fallback vtable and the node enumerator for every link object. */
int link_bus_register(BusRegistry *registry, Links *links);
