/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-fabric.h — the cluster's graph as `fabric` shows it, from one daemon or from Prometheus */
#pragma once

#include <json-c/json.h>

#include "shared/macros.h"

/* The tolerance within which the two ends of an edge agree about a rate (--tolerance=, percent). */
#define FABRIC_TOLERANCE_DEFAULT 25.0
/* Bounds on what an answer may make us hold. */
#define FABRIC_NODES_MAX 4096
#define FABRIC_EDGES_MAX 65536

extern const char *arg_prometheus; /* fabric --prometheus=URL */
extern bool arg_dot;               /* fabric --dot */
extern double arg_tolerance;       /* fabric --tolerance=, percent */

/*
 * The model, one JSON document whatever the source (linkprobectl(1), FABRIC):
 *   {"Source": "daemon"|"prometheus", "Nodes": [{"NodeId", "Hostname", "Self"}],
 *    "Edges": [{"From", "To", "FromHostname", "ToHostname", "Transport", "FromInterface", "ToInterface",
 *               "UploadGbps", "DownloadGbps", "RttUsec", "Measured", "Stale", "Degraded", "SeenFrom",
 *               "Disagreement"}],
 *    "Problems": ["..."]}
 * Upload is From -> To, download To -> From. A Thunderbolt edge's rates are negotiated, not measured
 * ("Measured": false).
 */
json_object *fabric_model_new(const char *source);
/* Adds a node once (a later call may fill in a hostname an earlier one lacked). */
int fabric_add_node(json_object *model, const char *node_id, const char *hostname, bool self);
const char *fabric_hostname(json_object *model, const char *node_id);
/* A new edge object, added to the model's Edges; NULL when out of memory or past the bound. */
json_object *fabric_add_edge(json_object *model, const char *from, const char *to, const char *transport);
int fabric_add_problem(json_object *model, const char *format, ...) _printf_(2, 3);

/* The model of the whole cluster from a Prometheus server's HTTP API: 0, or an exit code after saying why. */
int fabric_from_prometheus(const char *url, uint64_t timeout_usec, json_object **ret);

/* Graphviz: one node per NodeId, one edge per edge, degraded in red, stale dashed. */
int fabric_print_dot(json_object *model, FILE *f);
/* A string as a DOT quoted string's contents: quotes and backslashes escaped, control characters '?'. */
char *fabric_dot_escape(const char *s);
