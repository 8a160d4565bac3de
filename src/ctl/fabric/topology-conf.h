/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* topology-conf.h — Slurm's topology.conf for topology/tree (SwitchName= Switches= Nodes= LinkSpeed=) and
 * topology/block (BlockName= Nodes=), read and written (pure C: no JSON, no I/O but the FILE written to) */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "hostlist.h"

/* Bounds on a file we read: far past any cluster's, short of what would eat the machine. */
#define TOPOLOGY_CONF_SIZE_MAX (64U * 1024U * 1024U)
#define TOPOLOGY_CONF_SWITCHES_MAX 100000

typedef struct TopoSwitch {
        char *name;
        HostList switches; /* Switches=, expanded */
        HostList nodes;    /* Nodes=, expanded */
        char *link_speed;  /* LinkSpeed= as written, NULL none */
        unsigned line;     /* where its SwitchName= is */
} TopoSwitch;

typedef struct TopoConf {
        TopoSwitch *switches;
        size_t n, allocated;
} TopoConf;

void topology_conf_done(TopoConf *c);
/* A new switch at the end, named (a copy); NULL when out of memory or past the bound. */
TopoSwitch *topology_conf_add(TopoConf *c, const char *name);
TopoSwitch *topology_conf_find(const TopoConf *c, const char *name);

/*
 * topology_conf_parse() - a topology/tree topology.conf
 * @text: the file's contents, NUL-terminated
 * @ret: the switches in the file's order
 * @ret_line: on failure, the line (1-based) that does not parse
 * @ret_error: on failure, why (malloc()ed; free it)
 *
 * As Slurm reads it: parameter names in any case, "#" to the end of the line a comment, a line ending
 * in "\" continued on the next, one switch per line (SwitchName= first), hostlist expressions in
 * Switches= and Nodes=. Unknown parameters, a switch named twice, a name Slurm would not take, a
 * switch with both Switches= and Nodes= or with neither (slurmctld refuses both) are errors.
 *
 * Return: 0, -EINVAL (with *ret_line and *ret_error), -ENOMEM.
 */
int topology_conf_parse(const char *text, TopoConf *ret, unsigned *ret_line, char **ret_error);

/* One line per switch: "SwitchName=leaf1 Nodes=node[01-20] LinkSpeed=200", children compressed. 0, or
 * -EIO / -ENOMEM. */
int topology_conf_write_tree(FILE *f, const TopoConf *c);
/* topology/block: "BlockName=leaf1 Nodes=node[01-20]" for every switch with nodes. */
int topology_conf_write_block(FILE *f, const TopoConf *c);
