/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-fabric.h — the cluster's graph as `fabric` shows it, from one daemon, the nodes' snapshots or Prometheus */
#pragma once

#include <json-c/json.h>

#include "shared/macros.h"

/* Graphviz: one node per NodeId, one edge per edge, degraded in red, stale dashed. */
int fabric_print_dot(json_object *model, FILE *f);
