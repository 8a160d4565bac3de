/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-json.h — small json-c helpers for the GPU probe's document */
#pragma once

#include <json-c/json.h>
#include <math.h>

#include "shared/macros.h"
#include "shared/string-util.h"

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/* A JSON string, or null for NULL. Driver strings are not always UTF-8; the daemon publishes them on
 * D-Bus, which requires it, so invalid bytes are escaped here. */
static inline json_object *json_string_or_null(const char *s) {
        if (!s)
                return NULL; /* json-c serialises a NULL member as null */
        if (utf8_is_valid(s))
                return json_object_new_string(s);
        _cleanup_(freep) char *escaped = utf8_escape_invalid(s);
        return escaped ? json_object_new_string(escaped) : NULL;
}

/* {"name": ..., "message": ...}, the shape of probe-util's error member. */
static inline json_object *json_error_new(const char *name, const char *message) {
        json_object *o = json_object_new_object();
        if (o) {
                json_object_object_add(o, "name", json_string_or_null(name));
                json_object_object_add(o, "message", json_string_or_null(message));
        }
        return o;
}

/* A number rounded to a fixed count of decimals, so the document does not carry 17 digits of
 * noise; null for NaN and infinities, which JSON cannot express. */
static inline json_object *json_double_rounded(double v, int decimals) {
        char buf[64];

        if (!isfinite(v))
                return NULL;
        snprintf(buf, sizeof(buf), "%.*f", decimals, v);
        return json_object_new_double_s(strtod(buf, NULL), buf);
}
