/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-util.h — reading members of json-c objects with fallbacks, and writing strings that may be NULL */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/* Member key of o if it is of the type asked for, else fallback (o may be NULL or not an object). */
const char *json_string_or(json_object *o, const char *key, const char *fallback);
int64_t json_int_or(json_object *o, const char *key, int64_t fallback);
bool json_bool_or(json_object *o, const char *key, bool fallback);
/* An integer member counts as a number too. */
double json_double_or(json_object *o, const char *key, double fallback);

/* The length of an array; 0 for anything else, NULL included (json-c asserts on those). */
size_t json_array_len(json_object *o);

/* A figure another program or a file on disk claims: finite, not negative and below 1e12, else 0. */
double json_figure(json_object *o, const char *key);

/* A JSON string, or null (NULL) for NULL. Invalid UTF-8 is escaped: what we write may end up on
 * D-Bus, which requires valid UTF-8. */
json_object *json_string_or_null(const char *s);
