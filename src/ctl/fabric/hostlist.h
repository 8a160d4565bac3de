/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hostlist.h — Slurm's hostlist expressions ("node[01-20,33],gpu7"), both ways, and the names Slurm
 * takes (pure C: no JSON, no I/O) */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Bounds on what one expression may expand into: a topology.conf names each node once. */
#define HOSTLIST_NAMES_MAX 1000000
#define HOSTLIST_NAME_MAX 255

/* A name Slurm reads as one node or switch name in topology.conf and slurm.conf: letters, digits, '-',
 * '_' and '.', starting with a letter or digit, at most HOSTLIST_NAME_MAX bytes. Anything else (a comma,
 * a bracket, '=', '#', a space) would be read as syntax. */
bool slurm_name_valid(const char *name);

typedef struct HostList {
        char **names;
        size_t n, allocated;
} HostList;

void hostlist_done(HostList *l);
int hostlist_add(HostList *l, const char *name);

/*
 * hostlist_expand() - the names an expression stands for, in its order, appended to l
 * @expr: names and bracketed ranges, comma-separated: "tux[0-3,12,18-20]", "s[01-10]x", "a,b"; a range
 *        keeps the width of its lower end ("[01-10]" is 01..10); several brackets in one name multiply
 * @ret_error: on failure, why (a static string)
 *
 * Return: 0, -EINVAL (a bracket not closed, a range backwards, an empty name...), -E2BIG past
 * HOSTLIST_NAMES_MAX, -ENOMEM.
 */
int hostlist_expand(const char *expr, HostList *l, const char **ret_error);

/* The names as one expression Slurm reads back into the same set: names that differ only in a trailing
 * number are merged into bracketed ranges ("node01".."node20" -> "node[01-20]"), by prefix, then by
 * number; a name given twice is written once. NULL when out of memory. */
char *hostlist_compress(char *const *names, size_t n);
