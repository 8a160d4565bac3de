/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-fabric.h — the cluster's graph as `fabric` shows it, from one daemon or from Prometheus */
#pragma once

#include <json-c/json.h>

#include "shared/macros.h"

/* Graphviz: one node per NodeId, one edge per edge, degraded in red, stale dashed. */
int fabric_print_dot(json_object *model, FILE *f);
/* A string as a DOT quoted string's contents: quotes and backslashes escaped, control characters '?'. */
char *fabric_dot_escape(const char *s);
/* The model from each node's `linkprobectl snapshot` (files): 0, or an exit code after saying why. */
int fabric_from_snapshots(char **files, size_t n, json_object **ret);
/* fabric ring and fabric coordinator over the model: 0, or an exit code after saying why. */
int fabric_ring(json_object *model);
int fabric_coordinator(json_object *model);
