/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fabric-tree.h — the switch tree schedulers place by, from the fabric model: each node's leaf, the
 * tiers above it, the speed of each tier's links */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct TreeSwitch {
        const char *key;      /* the model's Switches Key */
        char *name;           /* as the schedulers will know it */
        int tier;             /* 0 a leaf, 1 a spine, 2 a core ...; -1 outside the tree */
        uint32_t *nodes;      /* a leaf's nodes (indices into FabricTree.nodes), by hostname */
        size_t n_nodes;
        uint32_t *children;   /* the switches one tier below it it has a cable to, by name */
        size_t n_children;
        uint32_t *parents;    /* the switches one tier above it, by name */
        size_t n_parents;
        uint32_t *neighbours; /* every switch it has a cable to, once (building only) */
        size_t n_neighbours;
        double link_gbps;     /* LinkSpeed: the best its cables down could run at (fabric_tree_capable_gbps()) */
} TreeSwitch;

typedef struct TreeNode {
        const char *node_id, *hostname;
        json_object *attachment; /* the model's Attachments entry it is placed by, NULL none */
        int32_t leaf;            /* its switch, -1 none known */
} TreeNode;

typedef struct FabricTree {
        json_object *model;
        TreeNode *nodes;     /* by hostname */
        size_t n_nodes;
        TreeSwitch *switches;
        size_t n_switches;
        uint32_t *order;     /* the switches in the tree: by tier, then by name */
        size_t n_order;
        size_t unattached;   /* nodes with no switch known */
        unsigned tiers;
} FabricTree;

/*
 * fabric_tree_build() - the tree
 * @model: the fabric model, with its Switches, Attachments and SwitchLinks
 * @ret_error: on -EINVAL, why (malloc()ed)
 *
 * A node is placed under the switch of its fastest cable into one (its rate, else the best both ends
 * could do; InfiniBand before Ethernet when they tie or a rate is not known): its data network, not its
 * management port. The
 * switches its nodes are placed under are the leaves (tier 0); a switch with a cable to a tier-t switch
 * and none below is at tier t + 1. A switch is named by its Name, or "sw-" and its key where it has none.
 *
 * Return: 0; -EINVAL when a name is not one Slurm takes, or two switches share one; -ENOMEM.
 */
int fabric_tree_build(json_object *model, FabricTree *ret, char **ret_error);
void fabric_tree_done(FabricTree *t);

/* The tier's word: "leaf", "spine", "core", then "tier3" ... */
const char *fabric_tree_tier_name(unsigned tier, char buf[static 16]);
/* The rate a node's attachment is judged by: what it runs at, else what both ends could do. */
double fabric_tree_attachment_gbps(json_object *attachment);
/* What a cable (an Attachments or a SwitchLinks entry) could do, LinkSpeed's figure at every tier: the
 * best both ends support, else what it runs at; 0 unknown. A degraded cable does not lower it. */
double fabric_tree_capable_gbps(json_object *cable);
