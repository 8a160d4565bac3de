/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-format.h — values as a person reads them, and the JSON members they come from */
#pragma once

#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/macros.h"

/* How one value reads for a person: row is the object the value belongs to, key the member's name,
 * value the member (NULL when absent or null). Returns a new string, or NULL for "-" (nothing known).
 * A detail field's text may hold several lines. */
typedef char *(*CtlFormat)(json_object *row, const char *key, json_object *value);
/* The colour of that value on a terminal (an ANSI_* sequence), or NULL. */
typedef const char *(*CtlColour)(json_object *row, const char *key, json_object *value);

/* The member key of o; "A.B" is member B of member A. NULL when absent or null. */
json_object *ctl_member(json_object *o, const char *key);

char *ctl_strdupf(const char *format, ...) _printf_(1, 2);
char *ctl_strdupvf(const char *format, va_list ap) _printf_(1, 0);
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
char *ctl_format_address(json_object *row, const char *key, json_object *a);
/* The array's elements by format, apart by separator, the first shown of them and " +N" for the rest. */
typedef char *(*CtlElementFormatter)(json_object *row, const char *key, json_object *element);
char *ctl_format_joined(json_object *row, const char *key, json_object *v, const char *separator, size_t shown,
                        CtlElementFormatter format);
char *ctl_format_object(json_object *row, const char *key, json_object *v);
/* "link 3" for .../link/_33: the kind and the decoded label. */
char *ctl_object_label(const char *path);
/* Set by monitor to name objects it has seen ("link eth0"); NULL: ctl_object_label(). */
typedef const char *(*CtlObjectNamer)(const char *path);
extern CtlObjectNamer ctl_object_namer;
const char *ctl_colour_state(json_object *row, const char *key, json_object *v);
const char *ctl_colour_stale(json_object *row, const char *key, json_object *v);
