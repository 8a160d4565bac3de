/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fabric-model.h — the cluster's graph as `fabric` holds it, whatever it was read from */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "shared/macros.h"

/* Bounds on what an answer may make us hold. */
#define FABRIC_NODES_MAX 65536
#define FABRIC_SWITCHES_MAX 65536
#define FABRIC_ATTACHMENTS_MAX 262144
#define FABRIC_EDGES_MAX 65536
#define FABRIC_INTERFACES_MAX 65536

/*
 * The model, one JSON document whatever the source (linkprobectl(1), FABRIC):
 *   {"Source": "daemon"|"prometheus"|"snapshots", "Nodes": [{"NodeId", "Hostname", "Self"}],
 *    "Edges": [{"From", "To", "FromHostname", "ToHostname", "Transport", "FromInterface", "ToInterface",
 *               "Address", "UploadGbps", "DownloadGbps", "RttUsec", "Measured", "MeasuredAt",
 *               "MeasuredAtUsec", "Stale", "Degraded", "SeenFrom", "Disagreement"}],
 *    "Interfaces": [{"NodeId", "Name", "Addresses": [{"Address", "PrefixLength", "Class"}], "SpeedGbps",
 *                    "RdmaDevices": ["mlx5_0"], "RdmaGbps"}],
 *    "Switches": [{"Key", "Name", "Description", "Sources": ["lldp", "infiniband", "sweep"]}],
 *    "Attachments": [{"NodeId", "Interface", "Switch", "SwitchPort", "Transport": "ethernet"|"infiniband",
 *                     "RateGbps", "BestGbps", "Degraded"}],
 *    "SwitchLinks": [{"From", "FromPort", "To", "ToPort", "Width", "Speed", "RateGbps", "BestWidth", "BestSpeed",
 *                     "BestGbps", "Degraded", "DegradedReason"}],
 *    "Problems": ["..."]}
 * Upload is From -> To, download To -> From. A Thunderbolt edge's rates are negotiated, not measured
 * ("Measured": false). A node may carry "Clashing": true when two nodes answered with its NodeId.
 */
json_object *fabric_model_new(const char *source);
/* Adds a node once (a later call may fill in a hostname an earlier one lacked). */
int fabric_add_node(json_object *model, const char *node_id, const char *hostname, bool self);
json_object *fabric_node(json_object *model, const char *node_id);
const char *fabric_hostname(json_object *model, const char *node_id);
/* A new edge object, added to the model's Edges; NULL when out of memory or past the bound. */
json_object *fabric_add_edge(json_object *model, const char *from, const char *to, const char *transport);
/* A node's interface by name, created empty the first time; NULL when out of memory or past the bound. */
json_object *fabric_add_interface(json_object *model, const char *node_id, const char *name);
json_object *fabric_interface(json_object *model, const char *node_id, const char *name);
int fabric_interface_add_address(json_object *iface, const char *address, int64_t prefix_length, const char *class);
int fabric_interface_add_rdma(json_object *iface, const char *device, double gbps);

/* A switch's key, the same whoever saw it: "guid:" and its NodeGuid as 16 lower-case hex digits (from
 * "0x0002c903000a1b2c" or "0002:c903:000a:1b2c"), else "chassis:" and its LLDP chassis ID, else "name:"
 * and its name. -EINVAL when none is given or the GUID is not one. */
int fabric_switch_key(const char *guid, const char *chassis_id, const char *name, char *buf, size_t size);
/* Adds a switch once by key (a later call fills in a name or description and adds a source). */
json_object *fabric_add_switch(json_object *model, const char *key, const char *name, const char *description,
                               const char *source);
json_object *fabric_switch(json_object *model, const char *key);
/* What the switch is called: its name, else its key. */
const char *fabric_switch_name(json_object *model, const char *key);
/* A node's interface in a switch's port (once per node, interface and switch). rate, best: Gb/s, 0
 * unknown. */
int fabric_add_attachment(json_object *model, const char *node_id, const char *interface, const char *transport,
                          const char *switch_key, const char *port, double rate, double best, bool degraded);
/* The sweep's judgement of a switch-to-switch cable (Switch.LinkJudgements, linkprobe_switch_link_degraded):
 * the best both ends support (iblinkinfo's "Could be") and whether it trained below that. */
typedef struct FabricLinkJudgement {
        const char *best_width, *best_speed; /* NULL unknown (Prometheus carries only the rate) */
        double best;                         /* Gb/s, 0 not judged (the far end was not swept) */
        bool degraded;
        const char *reason;                  /* "1X while both ends support 4X", NULL or "" none */
} FabricLinkJudgement;

/* A cable between two switches' ports, once whichever end names it (rate: Gb/s, 0 unknown; judgement
 * NULL when none). Named again from its other end, what that end judged fills in what is missing, and
 * either end's word that it is degraded makes it so. */
int fabric_add_switch_link(json_object *model, const char *from, const char *from_port, const char *to,
                           const char *to_port, const char *width, const char *speed, double rate,
                           const FabricLinkJudgement *judgement);

int fabric_add_problem(json_object *model, const char *format, ...) _printf_(2, 3);
/* A string as a DOT quoted string's contents: quotes and backslashes escaped, control characters '?',
 * '&' as an entity (Graphviz reads entities in labels). */
char *fabric_dot_escape(const char *s);
