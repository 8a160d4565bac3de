/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-fabric-snapshots.h — the cluster's graph from each node's `linkprobectl snapshot` (fabric --snapshots) */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

/* The model from the files, one per node: 0, or an exit code after saying why (a file that is not a
 * snapshot, two with one NodeId). */
int fabric_from_snapshots(char **files, size_t n, json_object **ret);
