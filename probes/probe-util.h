/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-util.h — what every probe program shares: the JSON envelope, exit codes and the deadline */
#pragma once

#include <stdarg.h>

#include <json-c/json.h>

#include "shared/macros.h"

/*
 * Every probe prints exactly one JSON document on stdout and exits:
 *   0  {"probe": NAME, "version": 1, "status": "ok", ...results}
 *   0  {"probe": NAME, "version": 1, "status": "unsupported", "reason": "..."}  (no such hardware)
 *   1  {"probe": NAME, "version": 1, "status": "error", "error": {"name": "...", "message": "..."}}
 *   2  the same error document for bad command-line arguments (error name "usage")
 * Error names are stable identifiers (e.g. "deadline", "CL_OUT_OF_RESOURCES", "ECONNREFUSED").
 * Diagnostics for humans go to stderr. The daemon reads stdout with a size limit and a deadline.
 */
#define PROBE_JSON_VERSION 1
#define PROBE_EXIT_OK 0
#define PROBE_EXIT_ERROR 1
#define PROBE_EXIT_USAGE 2

/* A new result object with the envelope filled in and status "ok". */
json_object *probe_result_new(const char *probe);
/* Appends a formatted warning (for people) to a document's "warnings" array. */
void probe_warn(json_object *warnings, const char *format, ...) _printf_(2, 3);
void probe_warnv(json_object *warnings, const char *format, va_list ap) _printf_(2, 0);
/* Writes one JSON value as every probe does (plain, '/' unescaped), nothing after it: 0 or -errno. */
int probe_write_json(FILE *f, json_object *value);
/* Prints the document on stdout followed by a newline, flushes, and returns 0 or -errno. */
int probe_print(json_object *result);
/* Prints an error document and exits with exit_code. */
_noreturn_ void probe_exit_error(const char *probe, int exit_code, const char *error_name, const char *format, ...)
        _printf_(4, 5);
/* Prints {"status": "unsupported", "reason": ...} and exits 0. */
_noreturn_ void probe_exit_unsupported(const char *probe, const char *format, ...) _printf_(2, 3);

/* After usec of CLOCK_MONOTONIC, prints the "deadline" error document for probe and exits 1,
 * whatever the probe is doing (an OpenCL driver may hang in a call). 0 disables. */
int probe_arm_deadline(const char *probe, uint64_t usec);
/* Microseconds left before the armed deadline (UINT64_MAX when none is armed). */
uint64_t probe_deadline_left_usec(void);
