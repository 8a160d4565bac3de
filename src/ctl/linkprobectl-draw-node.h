/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-draw-node.h — the node's picture as DOT text, from what linkprobectl-topo.c read off the bus;
 * nothing here talks to the daemon */
#pragma once

#include <json-c/json.h>

/* The DOT text of this node's picture, from GetManagedObjects (objects, in the CLI's schema), the root
 * object's Node and Memory interfaces and GetAffinity()'s pairs (any may be NULL: the pairs give the
 * NVLink and XGMI lines between GPUs, the Node's Packages the package and NUMA node frames). NULL when
 * out of memory. */
char *draw_node_dot(json_object *objects, json_object *node, json_object *memory, json_object *pairs);
