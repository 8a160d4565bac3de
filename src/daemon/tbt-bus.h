/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt-bus.h — the org.linkprobe.LinkProbe1.Thunderbolt interface on thunderbolt/<sysname> objects */
#pragma once

typedef struct BusRegistry BusRegistry;
typedef struct Thunderbolt Thunderbolt;

/* Registers the fallback vtable and the node enumerator for every Thunderbolt object. */
int tbt_bus_register(BusRegistry *registry, Thunderbolt *tbt);
