/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-draw.h — pictures: the node (topo --svg) and the cluster (fabric --svg), laid out and
 * rendered by Graphviz from a DOT text we write */
#pragma once

#include <json-c/json.h>
#include <stdio.h>
#include <systemd/sd-bus.h>

/* At most this many boxes in one picture; the rest is counted in a note ("… and 812 more links"), so a
 * node with thousands of virtual links still draws in seconds and stays readable. */
#define DRAW_NODES_MAX 600

/* The usage checks of --svg, --png and --output= for verb (made before the bus is asked): 0, or an exit
 * code after saying why. */
int draw_check_args(const char *verb, int argc, char **argv);

/* Lays out the DOT text and writes it as --svg or --png asks, to --output= or stdout: 0, or an exit code
 * after saying why. */
int draw_render_dot(const char *dot);

/* s as the contents of a DOT quoted string that Graphviz shows as it is: control characters and invalid
 * UTF-8 as "\xNN", quotes and backslashes escaped, '&' as an entity (Graphviz reads entities in
 * labels). NULL only when out of memory; NULL in gives "". */
char *draw_escape(const char *s);
