/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-fabric-local.h — one node's own view of its neighbours and links, into the fabric model */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "fabric/fabric-sides.h"

/*
 * fabric_add_local_view() - what one node publishes about its neighbours, as words and interfaces
 * @model: the fabric model (nodes, interfaces and problems are added to it)
 * @sides: where the words about its edges go (they borrow strings from @kinds: keep it until the merge)
 * @node: the node's Node interface (NodeId, Hostname), in the CLI's JSON schema
 * @kinds: {"Neighbor": [...], "Peer": [...], "Link": [...], "Thunderbolt": [...], "RdmaPort": [...],
 *         "Switch": [...]} (the switches become the model's Switches, Attachments and SwitchLinks), as
 *         ctl_children() or `linkprobectl snapshot` ("Objects") has them
 * @self: the node is the one this command runs on (its daemon, not a file)
 *
 * Return: 0, -EADDRNOTAVAIL when the node has no NodeId, -ENOMEM, -E2BIG past the model's bounds.
 */
int fabric_add_local_view(json_object *model, FabricSides *sides, json_object *node, json_object *kinds, bool self);
