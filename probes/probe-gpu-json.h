/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-json.h — small json-c helpers for the GPU probe's document */
#pragma once

#include <json-c/json.h>
#include <math.h>

#include "shared/json-util.h"
#include "shared/macros.h"

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
