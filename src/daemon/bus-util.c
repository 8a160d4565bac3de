/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"
#include "shared/macros.h"
#include "shared/string-util.h"

int bus_property_get_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        char **s = userdata;
        return sd_bus_message_append_basic(reply, 's', strempty(*s));
}

int bus_message_append_valid_string(sd_bus_message *m, const char *s) {
        size_t n = strlen(strempty(s));
        char *p;
        int r;

        r = sd_bus_message_append_string_space(m, n, &p);
        if (r < 0)
                return r;
        memcpy(p, strempty(s), n);
        return 0;
}

int bus_property_get_valid_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        char **s = userdata;
        return bus_message_append_valid_string(reply, *s);
}

int bus_message_append_escaped(sd_bus_message *m, const char *s) {
        _cleanup_(freep) char *escaped = NULL;

        if (!s)
                return sd_bus_message_append_basic(m, 's', "");
        escaped = utf8_escape_invalid(s);
        if (!escaped)
                return -ENOMEM;
        return sd_bus_message_append_basic(m, 's', escaped);
}

int bus_property_get_escaped(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        char **s = userdata;
        return bus_message_append_escaped(reply, *s);
}

int bus_property_get_object_path(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        char **p = userdata;
        return sd_bus_message_append_basic(reply, 'o', *p ?: "/");
}

int bus_property_get_bool(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        int b = *(bool *) userdata;
        return sd_bus_message_append_basic(reply, 'b', &b);
}

int bus_property_get_strv(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        char ***l = userdata;
        return sd_bus_message_append_strv(reply, *l);
}
