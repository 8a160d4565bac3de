/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <unistd.h>

#include "linkprobectl.h"
#include "shared/time-util.h"

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

int ctl_get_children(sd_bus *bus, const char *kind, json_object **ret) {
        _cleanup_(json_object_putp) json_object *objects = NULL;
        int r;

        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        *ret = ctl_children(objects, kind);
        return *ret ? 0 : CTL_EXIT_FAILURE;
}

int ctl_get_root_interface(sd_bus *bus, const char *name, bool optional, json_object **ret) {
        char interface[128];
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        snprintf(interface, sizeof(interface), IFACE_PREFIX "%s", name);
        r = bus_get_all_json(bus, BUS_NAME, BUS_PATH, interface, ret, &error);
        if (r >= 0)
                return 0;
        if (optional && sd_bus_error_has_names(&error, SD_BUS_ERROR_UNKNOWN_INTERFACE, SD_BUS_ERROR_INVALID_ARGS)) {
                sd_bus_error_free(&error);
                *ret = NULL;
                return 0;
        }
        r = ctl_log_bus_error(r, &error, "Failed to read the daemon's state");
        sd_bus_error_free(&error);
        return r;
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
        if (puts(json_object_to_json_string_ext(o, flags)) == EOF || fflush(stdout) == EOF)
                return CTL_EXIT_FAILURE;
        return 0;
}

void ctl_print_table(TextTable *t, const char *what) {
        text_table_print(t, stdout, arg_legend);
        if (arg_legend)
                printf("\n%zu %s listed.\n", text_table_rows(t), what);
}

void ctl_print_field(const char *key, const char *value) {
        _cleanup_(freep) char *escaped = escape_for_terminal(value ?: "-");
        printf("%18s%s %s\n", key, isempty(key) ? " " : ":", strna(escaped));
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

const char *format_age(char buf[static 32], uint64_t realtime_usec, const char *never) {
        uint64_t now = now_usec(CLOCK_REALTIME), age;

        if (realtime_usec == 0)
                return never;
        age = now > realtime_usec ? (now - realtime_usec) / USEC_PER_SEC : 0;
        if (age < 120)
                snprintf(buf, 32, "%" PRIu64 "s ago", age);
        else if (age < 2 * 3600)
                snprintf(buf, 32, "%" PRIu64 "min ago", age / 60);
        else if (age < 2 * 86400)
                snprintf(buf, 32, "%" PRIu64 "h ago", age / 3600);
        else
                snprintf(buf, 32, "%" PRIu64 "d ago", age / 86400);
        return buf;
}
