/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fetching: the daemon's objects as JSON in the CLI's schema, and one sentence for a failed call. */
#include "linkprobectl.h"

int ctl_log_bus_error(int r, const sd_bus_error *error, const char *what) {
        if (sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
                fprintf(stderr, "linkprobed is not running (nobody owns %s on this bus).\n", BUS_NAME);
                return CTL_EXIT_FAILURE;
        }
        /* A refusal says why in its message; the error's name is for programs. */
        if (sd_bus_error_is_set(error))
                fprintf(stderr, "%s: %s\n", what, error->message ?: error->name);
        else
                fprintf(stderr, "%s: %s\n", what, strerror(abs(r)));
        return CTL_EXIT_FAILURE;
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

        snprintf(interface, sizeof(interface), BUS_INTERFACE_PREFIX "%s", name);
        r = bus_get_all_json(bus, BUS_NAME, BUS_PATH, interface, ret, &error);
        if (r >= 0) {
                ctl_normalize_properties(name, *ret);
                return 0;
        }
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
        snprintf(interface, sizeof(interface), BUS_INTERFACE_PREFIX "%s", kind);

        json_object_object_foreach(objects, path, interfaces) {
                json_object *props;
                if (!json_object_object_get_ex(interfaces, interface, &props))
                        continue;
                /* Shared, not copied (a deep copy of 2001 links was a quarter of `list`'s time). */
                json_object_object_add(props, "Path", json_object_new_string(path));
                ctl_normalize_properties(kind, props);
                json_object_array_add(list, json_object_get(props));
        }
        /* Index where the kind has one (links), else the object path: stable, predictable order. */
        json_object_array_sort(list, compare_by_index);
        return list;
}
