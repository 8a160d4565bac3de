/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-options.h — the command line's settings every part of linkprobectl reads, and its exit codes */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

/* topo and fabric --svg, --png: a picture instead of a table (linkprobectl-draw.c). */
typedef enum DrawFormat {
        DRAW_NONE,
        DRAW_SVG,
        DRAW_PNG,
} DrawFormat;

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
extern const char *arg_prometheus; /* fabric --prometheus=URL */
extern const char *arg_prometheus_ca_file;       /* --prometheus-ca-file= */
extern const char *arg_prometheus_user;          /* --prometheus-user= */
extern const char *arg_prometheus_password_file; /* --prometheus-password-file= */
extern const char *arg_prometheus_token_file;    /* --prometheus-token-file= */
extern bool arg_dot;               /* fabric --dot */
extern double arg_tolerance;       /* fabric --tolerance=, percent */
extern bool arg_snapshots;         /* fabric --snapshots: the arguments are snapshot files */
extern const char *arg_nodes;      /* fabric ring/coordinator --nodes=, comma-separated */
extern const char *arg_hostfile;   /* fabric ring --hostfile= ("mlx") */
extern const char *arg_backend;    /* fabric ring --backend= (ring, jaccl, jaccl-ring) */
extern const char *arg_topology_format; /* fabric topology --format= (slurm, slurm-block, k8s-labels, json) */
extern const char *arg_slurm;      /* fabric verify --slurm=FILE */
extern DrawFormat arg_draw;        /* topo, fabric --svg, --png */
extern const char *arg_output;     /* --output=FILE: where the picture goes (default stdout) */

/* The tolerance within which the two ends of an edge agree about a rate (--tolerance=, percent). */
#define FABRIC_TOLERANCE_DEFAULT 25.0

static inline int log_oom_ctl(void) {
        fprintf(stderr, "Out of memory.\n");
        return CTL_EXIT_FAILURE;
}
