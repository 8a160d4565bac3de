/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-fabric-topology.h — fabric topology (topology.conf, node labels, JSON) and fabric verify */
#pragma once

#include <json-c/json.h>

/* Prints the tree in arg_topology_format: 0, or an exit code after saying why. */
int fabric_topology(json_object *model);
/* Compares a topology.conf with the fabric, one line per difference: 0 they agree, 1 they differ, 2 the
 * file cannot be read or does not parse. */
int fabric_verify(json_object *model, const char *file);
