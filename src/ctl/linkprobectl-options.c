/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command line's settings, with their defaults; linkprobectl-main.c sets them from argv. */
#include "linkprobectl-options.h"

JsonMode arg_json = JSON_OFF;
ColourMode arg_colour = COLOUR_AUTO;
bool arg_legend = true;
bool arg_full = false;
bool arg_all = false;
bool arg_no_pager = false;
char *arg_probe_transport = NULL;
uint64_t arg_timeout_usec = 0;
const char *arg_what = "gpu";
const char *arg_who = NULL;
const char *arg_why = NULL;
const char *arg_prometheus = NULL;
const char *arg_prometheus_ca_file = NULL;
const char *arg_prometheus_user = NULL;
const char *arg_prometheus_password_file = NULL;
const char *arg_prometheus_token_file = NULL;
bool arg_dot = false;
double arg_tolerance = FABRIC_TOLERANCE_DEFAULT;
bool arg_snapshots = false;
const char *arg_nodes = NULL;
const char *arg_hostfile = NULL;
const char *arg_backend = NULL;
const char *arg_topology_format = NULL;
const char *arg_slurm = NULL;
DrawFormat arg_draw = DRAW_NONE;
const char *arg_output = NULL;
