/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl metrics / snapshot: everything at once, for Prometheus and for schedulers. */
#include "linkprobectl.h"
#include "shared/time-util.h"

int check_metrics_args(int argc, char **argv) {
        if (arg_json != JSON_OFF) {
                fprintf(stderr, "metrics prints the Prometheus text format; --json does not apply (see snapshot).\n");
                return CTL_EXIT_USAGE;
        }
        return 0;
}

int verb_metrics(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *text;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, MANAGER_INTERFACE, "GetMetrics", &error, &reply, NULL);
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Failed to get the metrics");
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_read(reply, "s", &text);
        if (r < 0)
                return CTL_EXIT_FAILURE;
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : CTL_EXIT_FAILURE;
}

/* The root object's interfaces are not part of GetManagedObjects (the ObjectManager lists what is
 * below it), so they are read one by one; interfaces the daemon does not have are left out. */
static int add_root_interface(sd_bus *bus, json_object *doc, const char *name) {
        json_object *props;
        int r;

        r = ctl_get_root_interface(bus, name, true, &props);
        if (r == 0 && props)
                json_object_object_add(doc, name, props);
        return r;
}

int verb_snapshot(sd_bus *bus, int argc, char **argv) {
        static const char *const root_interfaces[] = { "Manager", "Node", "Memory", "Summary" };
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object(), *objects = NULL;
        uint64_t now = now_usec(CLOCK_REALTIME);
        char iso[ISO8601_MAX];
        int r;

        if (!doc)
                return log_oom_ctl();
        /* Readers check this before anything else: it changes whenever a member changes meaning. */
        json_object_object_add(doc, "Schema", json_object_new_int(CTL_JSON_SCHEMA));
        json_object_object_add(doc, "Time", json_object_new_string(format_iso8601(iso, now)));
        json_object_object_add(doc, "TimeUsec", json_object_new_uint64(now));
        for (size_t i = 0; i < ELEMENTSOF(root_interfaces); i++) {
                r = add_root_interface(bus, doc, root_interfaces[i]);
                if (r != 0)
                        return r;
        }

        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;

        /* Every child kind the daemon publishes, as a list per interface, named as in D-Bus. */
        json_object *kinds = json_object_new_object();
        json_object_object_add(doc, "Objects", kinds);
        json_object_object_foreach(objects, path, interfaces) {
                (void) path;
                json_object_object_foreach(interfaces, interface, props) {
                        (void) props;
                        if (!startswith(interface, BUS_INTERFACE_PREFIX))
                                continue;
                        const char *kind = interface + strlen(BUS_INTERFACE_PREFIX);
                        if (json_object_object_get_ex(kinds, kind, NULL))
                                continue;
                        json_object *list = ctl_children(objects, kind);
                        if (list)
                                json_object_object_add(kinds, kind, list);
                }
        }
        /* Always JSON, whatever --json says: that is what snapshot is for. */
        if (arg_json == JSON_OFF)
                arg_json = JSON_AUTO;
        return ctl_output_json(doc);
}
