/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-bus.h — the org.linkprobe.LinkProbe1.Link interface on link/<ifindex> objects */
#pragma once

#include <systemd/sd-bus.h>

#define LINK_INTERFACE "org.linkprobe.LinkProbe1.Link"
#define LINK_PATH_PREFIX "/org/linkprobe/LinkProbe1/link"

typedef struct Manager Manager;

int link_object_path(int ifindex, char **ret);
/* Registers the fallback vtable and the node enumerator for every link object. */
int link_bus_register(Manager *m);
