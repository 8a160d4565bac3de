/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-fabric.h — the fabric's series: this node's identity, its neighbours and every edge */
#pragma once

#include <stdio.h>

typedef struct Neighbors Neighbors;
typedef struct Node Node;

/* Each series labelled node_id and neighbor_id (nothing without a NodeId or without neighbours). */
void metrics_render_fabric(const Node *node, Neighbors *neighbors, FILE *f);
