/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl.h — what the CLI's verbs share: options, the bus, the model and its printer */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "linkprobectl-output.h"
#include "shared/bus-json.h"
#include "shared/bus-names.h"
#include "shared/format-table.h"
#include "shared/json-util.h"
#include "shared/macros.h"
#include "shared/string-util.h"

#include "linkprobectl-format.h"
#include "linkprobectl-options.h"
#include "linkprobectl-terminal.h"

/* ---- the bus (linkprobectl-util.c) ---- */
/* Prints one sentence for a failed call (the daemon not running is said plainly) and returns the
 * exit code. */
int ctl_log_bus_error(int r, const sd_bus_error *error, const char *what);

/* The whole picture: GetManagedObjects, or an exit code (>0) after printing why not. */
int ctl_get_objects(sd_bus *bus, json_object **ret);
/* ctl_children() of one kind straight from the daemon: 0, or an exit code after printing why not. */
int ctl_get_children(sd_bus *bus, const char *kind, json_object **ret);
/* One interface of the root object (e.g. "Node") as {property: value}: 0, or an exit code after
 * printing why not. An optional interface the daemon does not have gives NULL. */
int ctl_get_root_interface(sd_bus *bus, const char *name, bool optional, json_object **ret);
/* The children of kind (e.g. "Link") as an array of property objects in path order, each with
 * "Path" added and in the CLI's JSON schema (ctl_normalize_properties). The array shares the
 * property objects with objects, rewritten there in place: once per kind and tree. */
json_object *ctl_children(json_object *objects, const char *kind);

/* ---- the JSON schema (linkprobectl-schema.c) ---- */
/* Turns the properties of one interface (kind: "Link", "Summary", ...) as read from D-Bus into the
 * documented JSON: structs as objects with named members, "/" as null, timestamps as ISO 8601 plus
 * "…Usec", measured figures rounded to what they can tell. */
void ctl_normalize_properties(const char *kind, json_object *props);
/* The version of that schema, in `snapshot` (linkprobectl(1) says what changes it). */
#define CTL_JSON_SCHEMA 1

/* ---- verbs ---- */
int verb_status(sd_bus *bus, int argc, char **argv);
int verb_list(sd_bus *bus, int argc, char **argv);
int verb_show(sd_bus *bus, int argc, char **argv);
int verb_monitor(sd_bus *bus, int argc, char **argv);
int verb_peers(sd_bus *bus, int argc, char **argv);
int verb_metrics(sd_bus *bus, int argc, char **argv);
int verb_snapshot(sd_bus *bus, int argc, char **argv);
int verb_rdma(sd_bus *bus, int argc, char **argv);
int verb_thunderbolt(sd_bus *bus, int argc, char **argv);
int verb_gpu(sd_bus *bus, int argc, char **argv);
int verb_topo(sd_bus *bus, int argc, char **argv);
int verb_probe_peer(sd_bus *bus, int argc, char **argv);
int verb_probe_gpu(sd_bus *bus, int argc, char **argv);
int verb_inhibit(sd_bus *bus, int argc, char **argv);
int verb_inhibitors(sd_bus *bus, int argc, char **argv);
int verb_fabric(sd_bus *bus, int argc, char **argv);
int verb_health(sd_bus *bus, int argc, char **argv);
int verb_switches(sd_bus *bus, int argc, char **argv);

/* ---- switches (linkprobectl-switch.c) ---- */
/* The links and switches the formatters below look in (NULL, NULL: none). */
void ctl_switch_context(json_object *links, json_object *switches);
/* A link's switch port: "leaf-3 Eth1/7"; with details "leaf-3 port Eth1/7 (descr), management ADDR". */
char *ctl_format_switch_port(json_object *link, const char *key, json_object *v);
char *ctl_format_switch_port_details(json_object *link, const char *key, json_object *v);
bool ctl_links_have_switch(json_object *links);
/* fabric --prometheus= reads Prometheus, not the daemon: no bus connection. */
bool fabric_needs_no_bus(void);

/* Checks of the arguments that need no daemon, run before connecting: 0, or CTL_EXIT_USAGE after
 * saying why. */
int check_probe_args(int argc, char **argv);
int check_inhibit_args(int argc, char **argv);
int check_show_args(int argc, char **argv);
int check_metrics_args(int argc, char **argv);
int check_fabric_args(int argc, char **argv);
