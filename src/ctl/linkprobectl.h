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

/* Exit codes: 0 success, 1 failure (daemon not running, no such object, a refused call), 2 bad usage,
 * found before any bus call. */
#define CTL_EXIT_FAILURE 1
#define CTL_EXIT_USAGE 2

#define ANSI_RED "\033[0;31m"
#define ANSI_GREEN "\033[0;32m"
#define ANSI_YELLOW "\033[0;33m"
#define ANSI_NORMAL "\033[0m"

typedef enum JsonMode {
        JSON_OFF,
        JSON_AUTO,   /* plain --json: pretty on a terminal, one line otherwise */
        JSON_PRETTY,
        JSON_SHORT,
} JsonMode;

typedef enum ColourMode {
        COLOUR_AUTO,
        COLOUR_ALWAYS,
        COLOUR_NEVER,
} ColourMode;

extern JsonMode arg_json;
extern ColourMode arg_colour;
extern bool arg_legend;
extern bool arg_full;     /* -l: no ellipsizing, nothing shortened */
extern bool arg_all;      /* -a: what is hidden by default too */
extern bool arg_no_pager;
extern char *arg_probe_transport; /* probe --transport= */
extern uint64_t arg_timeout_usec; /* --timeout=, 0 = the verb's default */
extern const char *arg_what;      /* --what= */
extern const char *arg_who;       /* --who= */
extern const char *arg_why;       /* --why= */

/* ---- the terminal (linkprobectl-terminal.c) ---- */
bool ctl_stdout_is_tty(void);
/* The width tables must fit: $COLUMNS, else the terminal's; 0 (no limit) with --full or for a pipe. */
size_t ctl_table_width(void);
/* Whether to colour: --color=, then $NO_COLOR, TERM=dumb and whether stdout is a terminal. */
bool ctl_colour(void);
/* Starts the pager when stdout is a terminal and --no-pager was not given: 1 if started. */
int ctl_pager_open(void);
/* Waits for the pager to show everything and quit. */
void ctl_pager_close(void);

/* ---- the bus (linkprobectl-util.c) ---- */
/* Prints one sentence for a failed call (the daemon not running is said plainly) and returns the
 * exit code. */
int ctl_log_bus_error(int r, const sd_bus_error *error, const char *what);
static inline int log_oom_ctl(void) {
        fprintf(stderr, "Out of memory.\n");
        return CTL_EXIT_FAILURE;
}

/* The whole picture: GetManagedObjects, or an exit code (>0) after printing why not. */
int ctl_get_objects(sd_bus *bus, json_object **ret);
/* ctl_children() of one kind straight from the daemon: 0, or an exit code after printing why not. */
int ctl_get_children(sd_bus *bus, const char *kind, json_object **ret);
/* One interface of the root object (e.g. "Node") as {property: value}: 0, or an exit code after
 * printing why not. An optional interface the daemon does not have gives NULL. */
int ctl_get_root_interface(sd_bus *bus, const char *name, bool optional, json_object **ret);
/* The children of kind (e.g. "Link") as an array of property objects in path order, each with
 * "Path" added and in the CLI's JSON schema (ctl_normalize_properties). */
json_object *ctl_children(json_object *objects, const char *kind);

/* ---- the JSON schema (linkprobectl-schema.c) ---- */
/* Turns the properties of one interface (kind: "Link", "Summary", ...) as read from D-Bus into the
 * documented JSON: structs as objects with named members, "/" as null, timestamps as ISO 8601 plus
 * "…Usec", measured figures rounded to what they can tell. */
void ctl_normalize_properties(const char *kind, json_object *props);
/* The version of that schema, in `snapshot` (linkprobectl(1) says what changes it). */
#define CTL_JSON_SCHEMA 1

/* ---- values for people (linkprobectl-format.c) ---- */
char *ctl_strdupf(const char *format, ...) _printf_(1, 2);
int64_t ctl_int(json_object *v);
uint64_t ctl_timestamp_usec(json_object *row, const char *key);
/* Picks a format from the member's name ("SpeedMbps": a speed; "MeasuredAt": a local time; ...). */
char *ctl_format_value(json_object *row, const char *key, json_object *v);
/* What a member is called for people: the name without its unit ("SpeedMbps" -> "Speed"). */
char *ctl_property_label(const char *key);
char *ctl_format_string(json_object *row, const char *key, json_object *v);
char *ctl_format_int(json_object *row, const char *key, json_object *v);
char *ctl_format_yes_no(json_object *row, const char *key, json_object *v);
char *ctl_format_speed_mbps(json_object *row, const char *key, json_object *v);
char *ctl_format_gbps(json_object *row, const char *key, json_object *v);
char *ctl_format_bytes(json_object *row, const char *key, json_object *v);
char *ctl_format_duration_usec(json_object *row, const char *key, json_object *v);
/* key names a timestamp ("MeasuredAt"); "-" for never. */
char *ctl_format_age(json_object *row, const char *key, json_object *v);
char *ctl_format_local_time(json_object *row, const char *key, json_object *v);
char *ctl_format_addresses(json_object *row, const char *key, json_object *v);
char *ctl_format_object(json_object *row, const char *key, json_object *v);
/* "link 3" for .../link/_33: the kind and the decoded label. */
char *ctl_object_label(const char *path);
/* Set by monitor to name objects it has seen ("link eth0"); NULL: ctl_object_label(). */
typedef const char *(*CtlObjectNamer)(const char *path);
extern CtlObjectNamer ctl_object_namer;
const char *ctl_colour_state(json_object *row, const char *key, json_object *v);
const char *ctl_colour_stale(json_object *row, const char *key, json_object *v);

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
/* fabric --prometheus= reads Prometheus, not the daemon: no bus connection. */
bool fabric_needs_no_bus(void);

/* Checks of the arguments that need no daemon, run before connecting: 0, or CTL_EXIT_USAGE after
 * saying why. */
int check_probe_args(int argc, char **argv);
int check_inhibit_args(int argc, char **argv);
int check_show_args(int argc, char **argv);
int check_metrics_args(int argc, char **argv);
int check_fabric_args(int argc, char **argv);
