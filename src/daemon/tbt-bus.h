/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt-bus.h — the org.linkprobe.LinkProbe1.Thunderbolt interface on thunderbolt/<sysname> objects */
#pragma once

#include <systemd/sd-bus.h>

#define TBT_INTERFACE "org.linkprobe.LinkProbe1.Thunderbolt"
#define TBT_PATH_PREFIX "/org/linkprobe/LinkProbe1/thunderbolt"

typedef struct Manager Manager;

/* thunderbolt/<sysname>, the sysname encoded with sd_bus_path_encode(). */
int tbt_object_path(const char *sysname, char **ret);
/* Registers the fallback vtable and the node enumerator for every Thunderbolt object. */
int tbt_bus_register(Manager *m);
