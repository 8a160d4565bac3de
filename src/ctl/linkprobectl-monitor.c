/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl monitor: every change as it is published, for people or as JSON lines. It may start
 * before the daemon, and follows it through restarts: whenever the daemon appears, everything it
 * publishes is reported as added. */
#include <signal.h>
#include <systemd/sd-event.h>

#include "linkprobectl.h"
#include "shared/time-util.h"

typedef struct Monitor {
        sd_bus *bus;
        json_object *known;  /* object path -> {interface: true}: what was reported as added */
        json_object *labels; /* object path -> "link eth0", for people */
        json_object *names;  /* object path -> Name, for JSON */
} Monitor;

static Monitor *current; /* for ctl_object_namer, which takes no userdata */

static const char *short_interface(const char *interface) {
        return startswith(interface, BUS_INTERFACE_PREFIX) ? interface + strlen(BUS_INTERFACE_PREFIX) : interface;
}

/* "link eth0", "thunderbolt 0-301", "rdma mlx5_0/1", "gpu 0", "peer 192.0.2.7 (tcp)". */
static char *label_from_properties(const char *path, const char *interface, json_object *props) {
        const char *kind = short_interface(interface);

        if (streq(kind, "Link") && json_string_or(props, "Name", NULL))
                return ctl_strdupf("link %s", json_string_or(props, "Name", NULL));
        if (streq(kind, "Thunderbolt") && json_string_or(props, "SysfsName", NULL))
                return ctl_strdupf("thunderbolt %s", json_string_or(props, "SysfsName", NULL));
        if (streq(kind, "RdmaPort") && json_string_or(props, "Device", NULL))
                return ctl_strdupf("rdma %s/%" PRId64, json_string_or(props, "Device", NULL), json_int_or(props, "Port", 0));
        if (streq(kind, "Peer") && json_string_or(props, "Address", NULL))
                return ctl_strdupf("peer %s (%s)", json_string_or(props, "Address", NULL),
                                   json_string_or(props, "Transport", "?"));
        if (streq(kind, "Neighbor") && json_string_or(props, "Hostname", NULL))
                return ctl_strdupf("neighbor %s", json_string_or(props, "Hostname", NULL));
        return NULL;
}

static void remember(Monitor *mon, const char *path, const char *interface, json_object *props) {
        _cleanup_(freep) char *label = label_from_properties(path, interface, props);
        const char *name = json_string_or(props, "Name", NULL);

        if (label)
                json_object_object_add(mon->labels, path, json_object_new_string(label));
        if (name)
                json_object_object_add(mon->names, path, json_object_new_string(name));
}

static const char *object_namer(const char *path) {
        return current ? json_string_or(current->labels, path, NULL) : NULL;
}

/* Properties that hold sentences, one per element (Gpu and Peer Warnings; Neighbor, Thunderbolt and Pci
 * Problems): run together on the event's line, four GPU warnings made one unreadable line. Each goes on
 * a line of its own below the event instead, as what it is. */
static const struct {
        const char *key;
        const char *one; /* "warning: FP32 throughput varied by ..." */
} sentence_lists[] = {
        { "Warnings", "warning" },
        { "Problems", "problem" },
};

/* The word for one of key's sentences, when value holds any; else NULL (and an empty list stays on the
 * event's line, as "Warnings=-": that they are gone is news too). */
static const char *sentence_list(const char *key, json_object *value) {
        if (!value || !json_object_is_type(value, json_type_array) || json_object_array_length(value) == 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(sentence_lists); i++)
                if (streq(key, sentence_lists[i].key))
                        return sentence_lists[i].one;
        return NULL;
}

/* "Mtu=1400; Speed=10 Gb/s; Measured=Sat 2026-11-21 13:05:09 CET": every value formatted by its name,
 * a timestamp's "…Usec" twin left out, lists of sentences left to print_sentences(). */
static char *format_properties(json_object *props, json_object *invalidated) {
        char *s = NULL;
        size_t len = 0;
        const char *sep = "";
        FILE *f = open_memstream(&s, &len);

        if (!f)
                return NULL;
        json_object_object_foreach(props, key, value) {
                size_t n = strlen(key);
                if (n > 4 && streq(key + n - 4, "Usec")) {
                        _cleanup_(freep) char *base = strndup(key, n - 4);
                        if (base && json_object_object_get_ex(props, base, NULL))
                                continue;
                }
                if (sentence_list(key, value))
                        continue;
                _cleanup_(freep) char *label = ctl_property_label(key), *text = ctl_format_value(props, key, value);
                fprintf(f, "%s%s=%s", sep, label ?: key, text ?: "-");
                sep = "; ";
        }
        for (size_t i = 0; invalidated && i < json_object_array_length(invalidated); i++) {
                fprintf(f, "%s%s invalidated", sep, json_object_get_string(json_object_array_get_idx(invalidated, i)));
                sep = "; ";
        }
        fclose(f);
        return s;
}

/* Each sentence of props' lists on a line of its own, indented under the event. */
static void print_sentences(json_object *props) {
        json_object_object_foreach(props, key, value) {
                const char *one = sentence_list(key, value);
                for (size_t i = 0; one && i < json_object_array_length(value); i++) {
                        json_object *sentence = json_object_array_get_idx(value, i);
                        _cleanup_(freep) char *text = ctl_format_value(value, key, sentence),
                                              *escaped = escape_for_terminal(strna(text));
                        printf("    %s: %s\n", one, strna(escaped));
                }
        }
}

/* What a person wants to know first about an object that appeared. */
static json_object *added_summary(const char *interface, json_object *props) {
        static const struct {
                const char *kind;
                const char *const keys[3];
        } first[] = {
                { "Link", { "Kind", "OperState", "SpeedMbps" } },
                { "Thunderbolt", { "Type", "Name", "LinkClass" } },
                { "RdmaPort", { "State", "RateGbps", NULL } },
                { "Gpu", { "Name", "ProbeState", NULL } },
                { "Peer", { "ProbeState", "LastError", NULL } },
                { "Neighbor", { "Hostname", "Authenticated", NULL } },
        };
        json_object *summary = json_object_new_object();

        for (size_t i = 0; summary && interface && i < ELEMENTSOF(first); i++) {
                if (!streq(short_interface(interface), first[i].kind))
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(first[i].keys) && first[i].keys[k]; k++) {
                        json_object *v = ctl_member(props, first[i].keys[k]);
                        _cleanup_(freep) char *text = ctl_format_value(props, first[i].keys[k], v);
                        if (text)
                                json_object_object_add(summary, first[i].keys[k], json_object_get(v));
                }
        }
        return summary;
}

static void emit_json(Monitor *mon, const char *event, const char *path, const char *interface, json_object *props,
                      json_object *invalidated, uint64_t now) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        const char *name = path ? json_string_or(mon->names, path, NULL) : NULL;
        char iso[ISO8601_MAX];

        if (!o)
                return;
        json_object_object_add(o, "Time", json_object_new_string(format_iso8601(iso, now)));
        json_object_object_add(o, "TimeUsec", json_object_new_uint64(now));
        json_object_object_add(o, "Event", json_object_new_string(event));
        if (path)
                json_object_object_add(o, "Path", json_object_new_string(path));
        if (name)
                json_object_object_add(o, "Name", json_object_new_string(name));
        if (interface)
                json_object_object_add(o, "Interface", json_object_new_string(interface));
        if (props)
                json_object_object_add(o, "Properties", json_object_get(props));
        if (invalidated && json_object_array_length(invalidated) > 0)
                json_object_object_add(o, "Invalidated", json_object_get(invalidated));
        (void) ctl_output_json_line(o);
}

static void emit(Monitor *mon, const char *event, const char *path, const char *interface, json_object *props,
                 json_object *invalidated) {
        uint64_t now = now_usec(CLOCK_REALTIME);
        time_t sec = (time_t) (now / USEC_PER_SEC);
        struct tm tm;
        char clock[16];

        if (arg_json != JSON_OFF) {
                emit_json(mon, event, path, interface, props, invalidated, now);
                return;
        }

        localtime_r(&sec, &tm);
        strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
        _cleanup_(freep) char *what = NULL, *details = NULL, *line = NULL, *escaped = NULL;
        if (path) {
                const char *label = json_string_or(mon->labels, path, NULL);
                what = label ? strdup(label) : ctl_object_label(path);
                /* The root object has several interfaces; children have one, which the label says. */
                if (what && streq(path, BUS_PATH) && interface) {
                        char *with = ctl_strdupf("%s %s", what, short_interface(interface));
                        free_and_replace(what, with);
                }
        }
        if (streq(event, "health"))
                details = ctl_strdupf("%s%s%s", json_string_or(props, "Health", "?"),
                                      json_string_or(props, "Why", NULL) ? ": " : "", json_string_or(props, "Why", ""));
        else if (streq(event, "changed"))
                details = format_properties(props, invalidated);
        else if (streq(event, "added") && props) {
                _cleanup_(json_object_putp) json_object *summary = added_summary(interface, props);
                details = summary ? format_properties(summary, NULL) : NULL;
        }
        if (asprintf(&line, "%s.%03u %-14s %s%s%s", clock, (unsigned) (now % USEC_PER_SEC / 1000), event, strempty(what),
                     isempty(details) ? "" : ": ", strempty(details)) < 0)
                return;
        escaped = escape_for_terminal(line);
        printf("%s\n", strna(escaped));
        if (streq(event, "changed"))
                print_sentences(props);
        fflush(stdout);
}

static void normalize(const char *interface, json_object *props) {
        ctl_normalize_properties(short_interface(interface), props);
}

static void object_added(Monitor *mon, const char *path, const char *interface, json_object *props) {
        json_object *interfaces = NULL;

        if (!json_object_object_get_ex(mon->known, path, &interfaces)) {
                interfaces = json_object_new_object();
                json_object_object_add(mon->known, path, interfaces);
        }
        /* Announced twice (the daemon's own signal and our enumeration when it appeared): once. */
        if (!interfaces || json_object_object_get_ex(interfaces, interface, NULL))
                return;
        json_object_object_add(interfaces, interface, json_object_new_boolean(true));
        remember(mon, path, interface, props);
        emit(mon, "added", path, interface, props, NULL);
}

/* A transition of Health gets a line of its own, with its reason: what `monitor` is watched for. The
 * two properties are then left out of the "changed" line. */
static void emit_health(Monitor *mon, const char *path, const char *interface, json_object *changed) {
        _cleanup_(json_object_putp) json_object *health = NULL;
        json_object *v;

        if (!json_object_object_get_ex(changed, "Health", &v))
                return;
        health = json_object_new_object();
        if (!health)
                return;
        json_object_object_add(health, "Health", json_object_get(v));
        if (json_object_object_get_ex(changed, "HealthReason", &v) && !isempty(json_object_get_string(v)))
                json_object_object_add(health, "Why", json_object_get(v));
        emit(mon, "health", path, interface, health, NULL);
        json_object_object_del(changed, "Health");
        json_object_object_del(changed, "HealthReason");
}

/* What the watch moves every interval (rates, error and traffic counters): for people only with
 * --all, or a busy machine's lines would bury every event. */
static void drop_sampled(json_object *changed) {
        static const char *const sampled[] = {
                "RxGbps",       "TxGbps",     "RxErrors",       "TxErrors",  "RxCrcErrors",
                "RxDropped",    "SymbolErrors", "LinkErrorRecoveries", "LinkDowned", "RcvErrors",
                "XmitDiscards", "AerCorrectable", "AerNonFatal", "AerFatal",
        };
        for (size_t i = 0; i < ELEMENTSOF(sampled); i++)
                json_object_object_del(changed, sampled[i]);
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        _cleanup_(json_object_putp) json_object *changed = NULL, *invalidated = NULL;
        Monitor *mon = userdata;
        const char *interface, *path = sd_bus_message_get_path(m);

        if (sd_bus_message_read(m, "s", &interface) < 0 || bus_message_read_json(m, &changed) < 0 ||
            bus_message_read_json(m, &invalidated) < 0)
                return 0;
        if (!startswith(interface, BUS_INTERFACE_PREFIX) || !changed)
                return 0;
        normalize(interface, changed);
        remember(mon, path, interface, changed);
        if (arg_json != JSON_OFF) {
                emit(mon, "changed", path, interface, changed, invalidated);
                return 0;
        }
        emit_health(mon, path, interface, changed);
        if (!arg_all)
                drop_sampled(changed);
        if (json_object_object_length(changed) > 0 || (invalidated && json_object_array_length(invalidated) > 0))
                emit(mon, "changed", path, interface, changed, invalidated);
        return 0;
}

static int on_interfaces_added(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        _cleanup_(json_object_putp) json_object *interfaces = NULL;
        const char *path;

        if (sd_bus_message_read(m, "o", &path) < 0 || bus_message_read_json(m, &interfaces) < 0)
                return 0;
        json_object_object_foreach(interfaces, interface, props) {
                if (!startswith(interface, BUS_INTERFACE_PREFIX))
                        continue;
                normalize(interface, props);
                object_added(userdata, path, interface, props);
        }
        return 0;
}

static int on_interfaces_removed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        _cleanup_(json_object_putp) json_object *interfaces = NULL;
        Monitor *mon = userdata;
        json_object *known = NULL;
        const char *path;

        if (sd_bus_message_read(m, "o", &path) < 0 || bus_message_read_json(m, &interfaces) < 0)
                return 0;
        (void) json_object_object_get_ex(mon->known, path, &known);
        for (size_t i = 0; i < json_object_array_length(interfaces); i++) {
                const char *interface = json_object_get_string(json_object_array_get_idx(interfaces, i));
                if (!interface || !startswith(interface, BUS_INTERFACE_PREFIX))
                        continue;
                emit(mon, "removed", path, interface, NULL, NULL);
                if (known)
                        json_object_object_del(known, interface);
        }
        json_object_object_del(mon->known, path);
        json_object_object_del(mon->labels, path);
        json_object_object_del(mon->names, path);
        return 0;
}

/* Everything the daemon publishes now, reported as added unless it already was. */
static int enumerate(Monitor *mon) {
        _cleanup_(json_object_putp) json_object *objects = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = bus_get_managed_objects_json(mon->bus, BUS_NAME, BUS_PATH, &objects, &error);
        if (r < 0) {
                /* Gone again already: its NameOwnerChanged comes next. */
                sd_bus_error_free(&error);
                return 0;
        }
        json_object_object_foreach(objects, path, interfaces) {
                json_object_object_foreach(interfaces, interface, props) {
                        if (!startswith(interface, BUS_INTERFACE_PREFIX))
                                continue;
                        normalize(interface, props);
                        object_added(mon, path, interface, props);
                }
        }
        return 0;
}

static void forget_all(Monitor *mon) {
        json_object_put(mon->known);
        json_object_put(mon->labels);
        json_object_put(mon->names);
        mon->known = json_object_new_object();
        mon->labels = json_object_new_object();
        mon->names = json_object_new_object();
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        const char *name, *old_owner, *new_owner;
        Monitor *mon = userdata;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || !streq(name, BUS_NAME))
                return 0;
        if (!isempty(old_owner)) {
                emit(mon, "daemon-stopped", NULL, NULL, NULL, NULL);
                /* Its objects went with it; when it comes back, they are new. */
                forget_all(mon);
        }
        if (!isempty(new_owner)) {
                emit(mon, "daemon-started", NULL, NULL, NULL, NULL);
                return enumerate(mon);
        }
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int subscribe(Monitor *mon) {
        int r;

        r = sd_bus_add_match(mon->bus, NULL,
                             "type='signal',sender='" BUS_NAME "',interface='org.freedesktop.DBus.Properties',"
                             "member='PropertiesChanged',path_namespace='" BUS_PATH "'",
                             on_properties_changed, mon);
        if (r >= 0)
                r = sd_bus_add_match(mon->bus, NULL,
                                     "type='signal',sender='" BUS_NAME "',interface='org.freedesktop.DBus.ObjectManager',"
                                     "member='InterfacesAdded',path='" BUS_PATH "'",
                                     on_interfaces_added, mon);
        if (r >= 0)
                r = sd_bus_add_match(mon->bus, NULL,
                                     "type='signal',sender='" BUS_NAME "',interface='org.freedesktop.DBus.ObjectManager',"
                                     "member='InterfacesRemoved',path='" BUS_PATH "'",
                                     on_interfaces_removed, mon);
        if (r >= 0)
                r = sd_bus_add_match(mon->bus, NULL,
                                     "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
                                     "arg0='" BUS_NAME "'",
                                     on_name_owner_changed, mon);
        return r;
}

/* What is there now, without printing it (a monitor reports changes), or that nobody is there yet. */
static int learn_current(Monitor *mon) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *objects = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r, has_owner = 0;

        /* NameHasOwner, not a call to the daemon: watching must not start it by bus activation. */
        r = sd_bus_call_method(mon->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameHasOwner", &error, &reply, "s", BUS_NAME);
        if (r >= 0)
                r = sd_bus_message_read(reply, "b", &has_owner);
        sd_bus_error_free(&error);
        if (r < 0 || !has_owner) {
                fprintf(stderr, "linkprobed is not running; waiting for it to start.\n");
                return 0;
        }
        r = bus_get_managed_objects_json(mon->bus, BUS_NAME, BUS_PATH, &objects, &error);
        sd_bus_error_free(&error);
        if (r < 0)
                return 0;
        json_object_object_foreach(objects, path, interfaces) {
                json_object *known = json_object_new_object();
                json_object_object_add(mon->known, path, known);
                json_object_object_foreach(interfaces, interface, props) {
                        if (!startswith(interface, BUS_INTERFACE_PREFIX))
                                continue;
                        json_object_object_add(known, interface, json_object_new_boolean(true));
                        normalize(interface, props);
                        remember(mon, path, interface, props);
                }
        }
        return 0;
}

int verb_monitor(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        Monitor mon = { .bus = bus };
        sigset_t mask;
        int r;

        forget_all(&mon);
        if (!mon.known || !mon.labels || !mon.names)
                return log_oom_ctl();
        current = &mon;
        ctl_object_namer = object_namer;

        /* Subscribe before reading the current state, so no change falls between them. */
        r = subscribe(&mon);
        if (r >= 0)
                r = learn_current(&mon);
        if (r < 0) {
                fprintf(stderr, "Failed to subscribe to changes: %s\n", strerror(-r));
                goto finish;
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
                goto finish;
        }
        if (arg_json == JSON_OFF)
                fprintf(stderr, "Monitoring %s; press Ctrl-C to stop.\n", BUS_NAME);

        r = sd_event_loop(event);
finish:
        current = NULL;
        ctl_object_namer = NULL;
        json_object_put(mon.known);
        json_object_put(mon.labels);
        json_object_put(mon.names);
        return r == 0 ? 0 : CTL_EXIT_FAILURE;
}
