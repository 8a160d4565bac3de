/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl monitor: every change as it is published, for humans or as JSON lines. */
#include <signal.h>
#include <systemd/sd-event.h>

#include "linkprobectl.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

typedef struct Monitor {
        json_object *names; /* object path -> Name, to say "veth0" rather than "link/_35" */
} Monitor;

static const char *short_path(const char *path) {
        size_t n = strlen(BUS_PATH);
        if (strneq(path, BUS_PATH, n))
                return path[n] == '/' ? path + n + 1 : path[n] == '\0' ? "/" : path;
        return path;
}

static const char *short_interface(const char *interface) {
        return startswith(interface, IFACE_PREFIX) ? interface + strlen(IFACE_PREFIX) : interface;
}

static void remember_name(Monitor *mon, const char *path, json_object *props) {
        const char *name = json_string_or(props, "Name", NULL);
        if (name)
                json_object_object_add(mon->names, path, json_object_new_string(name));
}

static void emit(Monitor *mon, const char *event, const char *path, const char *interface, json_object *props,
                 json_object *invalidated) {
        uint64_t now = now_usec(CLOCK_REALTIME);
        char iso[ISO8601_MAX];
        const char *name = path ? json_string_or(mon->names, path, NULL) : NULL;

        if (arg_json) {
                _cleanup_(json_object_putp) json_object *o = json_object_new_object();
                json_object_object_add(o, "time", json_object_new_string(format_iso8601(iso, now)));
                json_object_object_add(o, "event", json_object_new_string(event));
                if (path)
                        json_object_object_add(o, "path", json_object_new_string(path));
                if (name)
                        json_object_object_add(o, "name", json_object_new_string(name));
                if (interface)
                        json_object_object_add(o, "interface", json_object_new_string(interface));
                if (props)
                        json_object_object_add(o, "properties", json_object_get(props));
                if (invalidated && json_object_array_length(invalidated) > 0)
                        json_object_object_add(o, "invalidated", json_object_get(invalidated));
                puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                fflush(stdout);
                return;
        }

        time_t sec = (time_t) (now / USEC_PER_SEC);
        struct tm tm;
        char clock[16];
        localtime_r(&sec, &tm);
        strftime(clock, sizeof(clock), "%H:%M:%S", &tm);

        _cleanup_(freep) char *details = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&details, &len);
        if (!f)
                return;
        if (props) {
                json_object_object_foreach(props, key, value) {
                        const char *text = json_object_is_type(value, json_type_string) ? json_object_get_string(value)
                                           : json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN);
                        fprintf(f, " %s=%s", key, text);
                }
        }
        fclose(f);

        _cleanup_(freep) char *what = NULL;
        if (path && asprintf(&what, "%s%s%s", short_path(path), name ? " " : "", strempty(name)) < 0)
                what = NULL;
        _cleanup_(freep) char *line = NULL;
        if (asprintf(&line, "%s.%06u %-8s %s%s%s%s", clock, (unsigned) (now % USEC_PER_SEC), event, strempty(what),
                     interface ? " [" : "", interface ? short_interface(interface) : "", interface ? "]" : "") < 0)
                return;
        _cleanup_(freep) char *escaped_line = escape_for_terminal(line);
        _cleanup_(freep) char *escaped_details = escape_for_terminal(strempty(details));
        printf("%s%s\n", strempty(escaped_line), event[0] == 'a' ? "" : strempty(escaped_details));
        fflush(stdout);
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        _cleanup_(json_object_putp) json_object *changed = NULL, *invalidated = NULL;
        Monitor *mon = userdata;
        const char *interface, *path = sd_bus_message_get_path(m);

        if (sd_bus_message_read(m, "s", &interface) < 0 || bus_message_read_json(m, &changed) < 0 ||
            bus_message_read_json(m, &invalidated) < 0)
                return 0;
        if (!startswith(interface, IFACE_PREFIX))
                return 0;
        ctl_normalize_properties(short_interface(interface), changed);
        emit(mon, "changed", path, interface, changed, invalidated);
        remember_name(mon, path, changed);
        return 0;
}

static int on_interfaces_added(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        _cleanup_(json_object_putp) json_object *interfaces = NULL;
        Monitor *mon = userdata;
        const char *path;

        if (sd_bus_message_read(m, "o", &path) < 0 || bus_message_read_json(m, &interfaces) < 0)
                return 0;
        json_object_object_foreach(interfaces, interface, props) {
                if (!startswith(interface, IFACE_PREFIX))
                        continue;
                remember_name(mon, path, props);
                ctl_normalize_properties(short_interface(interface), props);
                emit(mon, "added", path, interface, props, NULL);
        }
        return 0;
}

static int on_interfaces_removed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        _cleanup_(json_object_putp) json_object *interfaces = NULL;
        Monitor *mon = userdata;
        const char *path;

        if (sd_bus_message_read(m, "o", &path) < 0 || bus_message_read_json(m, &interfaces) < 0)
                return 0;
        for (size_t i = 0; i < json_object_array_length(interfaces); i++) {
                const char *interface = json_object_get_string(json_object_array_get_idx(interfaces, i));
                if (interface && startswith(interface, IFACE_PREFIX))
                        emit(mon, "removed", path, interface, NULL, NULL);
        }
        json_object_object_del(mon->names, path);
        return 0;
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || !streq(name, BUS_NAME))
                return 0;
        emit(userdata, isempty(new_owner) ? "daemon-stopped" : "daemon-started", NULL, NULL, NULL, NULL);
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

int verb_monitor(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(json_object_putp) json_object *objects = NULL;
        Monitor mon = {};
        sigset_t mask;
        int r;

        mon.names = json_object_new_object();
        if (!mon.names)
                return CTL_EXIT_FAILURE;

        /* Subscribe before reading the current names, so no change falls between them. */
        r = sd_bus_add_match(bus, NULL,
                             "type='signal',sender='" BUS_NAME "',interface='org.freedesktop.DBus.Properties',"
                             "member='PropertiesChanged',path_namespace='" BUS_PATH "'",
                             on_properties_changed, &mon);
        if (r >= 0)
                r = sd_bus_add_match(bus, NULL,
                                     "type='signal',sender='" BUS_NAME "',interface='org.freedesktop.DBus.ObjectManager',"
                                     "member='InterfacesAdded',path='" BUS_PATH "'",
                                     on_interfaces_added, &mon);
        if (r >= 0)
                r = sd_bus_add_match(bus, NULL,
                                     "type='signal',sender='" BUS_NAME "',interface='org.freedesktop.DBus.ObjectManager',"
                                     "member='InterfacesRemoved',path='" BUS_PATH "'",
                                     on_interfaces_removed, &mon);
        if (r >= 0)
                r = sd_bus_add_match(bus, NULL,
                                     "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
                                     "arg0='" BUS_NAME "'",
                                     on_name_owner_changed, &mon);
        if (r < 0) {
                fprintf(stderr, "Failed to subscribe to changes: %s\n", strerror(-r));
                json_object_put(mon.names);
                return CTL_EXIT_FAILURE;
        }

        r = ctl_get_objects(bus, &objects);
        if (r != 0) {
                json_object_put(mon.names);
                return r;
        }
        json_object_object_foreach(objects, path, interfaces) {
                json_object_object_foreach(interfaces, interface, props) {
                        (void) interface;
                        remember_name(&mon, path, props);
                }
        }

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, on_exit_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, on_exit_signal, NULL);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0) {
                fprintf(stderr, "Failed to set up the event loop: %s\n", strerror(-r));
                json_object_put(mon.names);
                return CTL_EXIT_FAILURE;
        }
        if (!arg_json)
                fprintf(stderr, "Monitoring %s; press Ctrl-C to stop.\n", BUS_NAME);

        r = sd_event_loop(event);
        json_object_put(mon.names);
        return r == 0 ? 0 : CTL_EXIT_FAILURE;
}
