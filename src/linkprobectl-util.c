/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <unistd.h>

#include "linkprobectl.h"

/* D-Bus structs arrive as arrays; JSON readers deserve names. One row per struct-typed property. */
static const struct {
        const char *kind;
        const char *property;
        const char *const *members;
} struct_members[] = {
        { "Link", "Addresses", (const char *const[]) { "Address", "PrefixLength", "Scope", "Class", NULL } },
        { "RdmaPort", "Gids", (const char *const[]) { "Index", "Gid", "Type", "NetDevice", NULL } },
};

void ctl_normalize_properties(const char *kind, json_object *props) {
        for (size_t i = 0; i < ELEMENTSOF(struct_members); i++) {
                json_object *array;

                if (!streq(struct_members[i].kind, kind) ||
                    !json_object_object_get_ex(props, struct_members[i].property, &array) ||
                    !json_object_is_type(array, json_type_array))
                        continue;

                size_t n = json_object_array_length(array);
                for (size_t k = 0; k < n; k++) {
                        json_object *tuple = json_object_array_get_idx(array, k);
                        json_object *named;

                        if (!json_object_is_type(tuple, json_type_array))
                                continue;
                        named = json_object_new_object();
                        if (!named)
                                continue;
                        for (size_t m = 0; struct_members[i].members[m]; m++) {
                                json_object *v = json_object_array_get_idx(tuple, m);
                                if (v)
                                        json_object_object_add(named, struct_members[i].members[m], json_object_get(v));
                        }
                        json_object_array_put_idx(array, k, named);
                }
        }
}

int ctl_get_objects(sd_bus *bus, json_object **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = bus_get_managed_objects_json(bus, BUS_NAME, BUS_PATH, ret, &error);
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Failed to read the objects");
                sd_bus_error_free(&error);
                return r;
        }
        return 0;
}

static int compare_by_index(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b;
        int64_t ix = json_int_or(x, "Index", INT64_MAX), iy = json_int_or(y, "Index", INT64_MAX);
        if (ix != iy)
                return ix < iy ? -1 : 1;
        return strcmp(json_string_or(x, "Path", ""), json_string_or(y, "Path", ""));
}

json_object *ctl_children(json_object *objects, const char *kind) {
        char interface[128];
        json_object *list = json_object_new_array();

        if (!list)
                return NULL;
        snprintf(interface, sizeof(interface), IFACE_PREFIX "%s", kind);

        json_object_object_foreach(objects, path, interfaces) {
                json_object *props;
                if (!json_object_object_get_ex(interfaces, interface, &props))
                        continue;
                json_object *copy = NULL;
                if (json_object_deep_copy(props, &copy, NULL) < 0 || !copy)
                        continue;
                json_object_object_add(copy, "Path", json_object_new_string(path));
                ctl_normalize_properties(kind, copy);
                json_object_array_add(list, copy);
        }
        /* Index where the kind has one (links), else the object path: stable, predictable order. */
        json_object_array_sort(list, compare_by_index);
        return list;
}

int ctl_print_json(json_object *o) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
        flags |= isatty(STDOUT_FILENO) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN;
        if (puts(json_object_to_json_string_ext(o, flags)) == EOF)
                return -EIO;
        return fflush(stdout) == EOF ? -errno : 0;
}

char *format_speed_mbps(char buf[static 32], uint64_t mbps) {
        if (mbps == 0)
                snprintf(buf, 32, "-");
        else if (mbps >= 1000 && mbps % 1000 == 0)
                snprintf(buf, 32, "%" PRIu64 " Gb/s", mbps / 1000);
        else if (mbps >= 1000)
                snprintf(buf, 32, "%.1f Gb/s", (double) mbps / 1000);
        else
                snprintf(buf, 32, "%" PRIu64 " Mb/s", mbps);
        return buf;
}

char *format_bytes(char buf[static 32], uint64_t bytes) {
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double v = (double) bytes;
        size_t u = 0;

        while (v >= 1024 && u + 1 < ELEMENTSOF(units)) {
                v /= 1024;
                u++;
        }
        if (u == 0)
                snprintf(buf, 32, "%" PRIu64 " B", bytes);
        else
                snprintf(buf, 32, "%.1f %s", v, units[u]);
        return buf;
}
