/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>

#include "json-util.h"
#include "macros.h"
#include "string-util.h"

static json_object *member(json_object *o, const char *key, json_type type) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
                return NULL;
        return v;
}

const char *json_string_or(json_object *o, const char *key, const char *fallback) {
        json_object *v = member(o, key, json_type_string);
        return v ? json_object_get_string(v) : fallback;
}

int64_t json_int_or(json_object *o, const char *key, int64_t fallback) {
        json_object *v = member(o, key, json_type_int);
        return v ? json_object_get_int64(v) : fallback;
}

bool json_bool_or(json_object *o, const char *key, bool fallback) {
        json_object *v = member(o, key, json_type_boolean);
        return v ? json_object_get_boolean(v) : fallback;
}

double json_double_or(json_object *o, const char *key, double fallback) {
        json_object *v = member(o, key, json_type_double) ?: member(o, key, json_type_int);
        return v ? json_object_get_double(v) : fallback;
}

size_t json_array_len(json_object *o) {
        return json_object_is_type(o, json_type_array) ? json_object_array_length(o) : 0;
}

double json_figure(json_object *o, const char *key) {
        double d = json_double_or(o, key, 0);
        return isfinite(d) && d >= 0 && d < 1e12 ? d : 0;
}

json_object *json_string_or_null(const char *s) {
        if (!s)
                return NULL; /* json-c serialises a NULL member as null */
        if (utf8_is_valid(s))
                return json_object_new_string(s);
        _cleanup_(freep) char *escaped = utf8_escape_invalid(s);
        return escaped ? json_object_new_string(escaped) : NULL;
}
