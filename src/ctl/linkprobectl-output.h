/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-output.h — the one printing path: a verb builds one JSON model, a view says how a person
 * reads it, and ctl_output_*() prints either the model as JSON or the view of it as text */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

#include "linkprobectl-format.h"
#include "shared/format-table.h"
#include "shared/macros.h"

/* A table column. The first four members are all most columns need; `fit` says how the column gives
 * way when the table is wider than the terminal ($COLUMNS, else the terminal's width; never with
 * -l/--full or on a pipe), and may be left out (zero: the defaults of shared/format-table.h):
 *
 *   { "NAME", "Name", NULL, NULL, { .weight = 300, .min_width = 16 } }
 *           shrinks three times as fast as a column of the default weight (100), never below 16;
 *   { "STATE", "ProbeState", NULL, ctl_colour_state, { .min_width = TEXT_WIDTH_WHOLE } }
 *           never cut ("fail…" would say nothing);
 *   { ">JITTER", "JitterUsec", format_usec, NULL, { .optional = 2 } }
 *           left out, before the columns ranked 1, when the columns' minimum widths do not fit.
 *
 * Columns are essential unless ranked optional; right-aligned columns (numbers) are never cut. Give
 * the first column (which holds a tree's indentation) and whatever identifies a row no `optional`,
 * and a column whose text is long and of least use when cut the highest weight. */
typedef struct CtlColumn {
        const char *header; /* '>' first: right-aligned */
        const char *key;    /* member of the row; "A.B" reaches into member A */
        CtlFormat format;   /* NULL: ctl_format_value() */
        CtlColour colour;
        TextColumnFit fit;
} CtlColumn;

typedef struct CtlTableView {
        const CtlColumn *columns;
        size_t n_columns;
        const char *noun, *nouns; /* "link", "links": "1 link listed." under the table */
        const char *empty;        /* the sentence for no rows: "No links." */
        const char *children;     /* a tree: this member holds each row's children, shown indented */
        bool matrix;              /* read across and down: keeps its rows past the width, never records */
        /* Replaces "N nouns listed." (no final full stop: it is added). */
        char *(*footer)(json_object *rows);
        /* Lines printed right after the table, legend or not (one device's error, ...). */
        void (*notes)(json_object *rows, FILE *f);
} CtlTableView;

typedef struct CtlField {
        const char *label;  /* "Connection type" */
        const char *key;
        CtlFormat format;   /* NULL: ctl_format_value() */
        CtlColour colour;
        bool optional;      /* left out when there is nothing to say, rather than "-" */
} CtlField;

typedef struct CtlDetailView {
        const CtlField *fields;
        size_t n_fields;
        CtlFormat title;   /* a line before the fields ("3: eth0"), or NULL */
        const char *empty; /* the sentence for an empty array: "No links." */
} CtlDetailView;

/* rows (an array) as the view's table, or as JSON with --json. 0, or an exit code. */
int ctl_output_table(json_object *rows, const CtlTableView *view);
/* One object, or an array of them (each as its own block), as `key: value` lines or as JSON. */
int ctl_output_details(json_object *doc, const CtlDetailView *view);
/* The document as JSON, in the --json= form asked for. 0, or an exit code. */
int ctl_output_json(json_object *doc);
/* One line for a stream of events (monitor): short unless --json=pretty. */
int ctl_output_json_line(json_object *doc);

