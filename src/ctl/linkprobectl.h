/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl.h — what the CLI's verbs share: options, the bus, fetching and printing */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "shared/bus-json.h"
#include "shared/format-table.h"
#include "shared/json-util.h"
#include "shared/macros.h"
#include "shared/string-util.h"

#define BUS_NAME "org.linkprobe.LinkProbe1"
#define BUS_PATH "/org/linkprobe/LinkProbe1"
#define IFACE_PREFIX "org.linkprobe.LinkProbe1."

/* Exit codes: 0 success, 1 failure (daemon not running, no such object), 2 bad usage. */
#define CTL_EXIT_FAILURE 1
#define CTL_EXIT_USAGE 2

extern bool arg_json;
extern bool arg_legend;
extern char *arg_probe_transport;       /* probe --transport= */
extern uint64_t arg_timeout_usec; /* --timeout=, 0 = the verb's default */
extern const char *arg_what;      /* --what= */
extern const char *arg_who;       /* --who= */
extern const char *arg_why;       /* --why= */

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
 * "Path" added and structs named (see ctl_normalize_properties). */
json_object *ctl_children(json_object *objects, const char *kind);
/* Turns a(suss) Addresses and similar struct arrays into arrays of objects with named members. */
void ctl_normalize_properties(const char *kind, json_object *props);

/* Prints a JSON document on stdout (pretty when stdout is a terminal); 0 or CTL_EXIT_FAILURE. */
int ctl_print_json(json_object *o);
/* Prints a table and, with the legend, "N <what> listed." under it. */
void ctl_print_table(TextTable *t, const char *what);
/* "         Key: value" for `show`-style detail, escaped for the terminal, "-" for NULL; an empty key
 * continues the previous field's list. */
void ctl_print_field(const char *key, const char *value);

char *format_speed_mbps(char buf[static 32], uint64_t mbps);
char *format_bytes(char buf[static 32], uint64_t bytes);
/* "42s ago", "3min ago", "5h ago", "2d ago": how old a CLOCK_REALTIME time is; never for 0. */
const char *format_age(char buf[static 32], uint64_t realtime_usec, const char *never);

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
int verb_probe_peer(sd_bus *bus, int argc, char **argv);
int verb_probe_gpu(sd_bus *bus, int argc, char **argv);
int verb_inhibit(sd_bus *bus, int argc, char **argv);
int verb_inhibitors(sd_bus *bus, int argc, char **argv);
