/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl peers / probe: measured paths to peer nodes. */
#include <math.h>

#include "linkprobectl.h"
#include "shared/peer-address.h"
#include "shared/time-util.h"

#define PROBE_TIMEOUT_DEFAULT_USEC (60 * USEC_PER_SEC)

static bool measured(json_object *p) {
        return ctl_timestamp_usec(p, "MeasuredAt") > 0;
}

static char *format_gbps(json_object *p, const char *key, json_object *v) {
        double d = v ? json_object_get_double(v) : NAN;
        return measured(p) && isfinite(d) ? ctl_strdupf("%.2f Gb/s", d) : NULL;
}

/* Only when there was some: an undisturbed measurement needs no line. */
static char *format_cross_traffic(json_object *p, const char *key, json_object *v) {
        double d = v ? json_object_get_double(v) : NAN;
        return measured(p) && isfinite(d) && d > 0 ? ctl_strdupf("%.2f Gb/s during the measurement", d) : NULL;
}

static char *format_usec(json_object *p, const char *key, json_object *v) {
        return measured(p) ? ctl_format_duration_usec(p, key, v) : NULL;
}

static char *format_via(json_object *p, const char *key, json_object *v) {
        const char *device = json_string_or(p, "SourceDevice", ""), *name = json_string_or(p, "SourceInterfaceName", "");
        return !isempty(device) ? strdup(device) : !isempty(name) ? strdup(name) : NULL;
}

static char *format_measured(json_object *p, const char *key, json_object *v) {
        _cleanup_(freep) char *age = ctl_format_age(p, "MeasuredAt", v);
        return ctl_strdupf("%s%s", age ?: "never", age && json_bool_or(p, "Stale", false) ? " (stale)" : "");
}

/* The address (a cut one names nothing), the figures and how fresh they are stay; what the path
 * runs over gives way first. */
static const CtlColumn peer_columns[] = {
        { "ADDRESS", "Address", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "TRANSPORT", "Transport", NULL, NULL, { .optional = 5 } },
        { "VIA", "SourceInterfaceName", format_via, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 3 } },
        { "TYPE", "ConnectionType", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 4 } },
        { ">UPLOAD", "UploadGbps", format_gbps, NULL },
        { ">DOWNLOAD", "DownloadGbps", format_gbps, NULL },
        { ">RTT", "RttUsec", format_usec, NULL },
        { ">JITTER", "JitterUsec", format_usec, NULL, { .optional = 2 } },
        { "MEASURED", "MeasuredAt", format_measured, ctl_colour_stale,
          { .min_width = TEXT_WIDTH_WHOLE, .optional = 1 } },
        { "STATE", "ProbeState", NULL, ctl_colour_state, { .min_width = TEXT_WIDTH_WHOLE } },
        { "LAST ERROR", "LastError", NULL, NULL, { .weight = 200, .min_width = 10 } },
};

/* Measured by ProbePeer() alone ("probed" and no other origin): nothing measures it again. */
static bool one_off(json_object *p) {
        json_object *origins = ctl_member(p, "Origins");

        if (!origins || !json_object_is_type(origins, json_type_array) || json_object_array_length(origins) != 1)
                return false;
        return streq(strempty(json_object_get_string(json_object_array_get_idx(origins, 0))), "probed");
}

/* Under the table: which stale results stay so, because nothing measures them again, and how to have
 * them measured (StaleReason says the same per path). */
static void peer_notes(json_object *rows, FILE *f) {
        const char *sep = "";

        if (!arg_legend)
                return;
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *p = json_object_array_get_idx(rows, i);
                if (!one_off(p) || !json_bool_or(p, "Stale", false))
                        continue;
                _cleanup_(freep) char *address = escape_for_terminal(json_string_or(p, "Address", "?"));
                fprintf(f, "%s%s", *sep ? sep : "\nOne-off results (linkprobectl probe), not kept fresh: ",
                        strna(address));
                sep = ", ";
        }
        if (*sep)
                fputs(".\n[Peers] Address= (linkprobed.conf) or AddPeer() keeps a path measured.\n", f);
}

static const CtlTableView peer_table = {
        .columns = peer_columns,
        .n_columns = ELEMENTSOF(peer_columns),
        .noun = "peer path",
        .nouns = "peer paths",
        .empty = "No peer paths.",
        .notes = peer_notes,
};

int verb_peers(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *peers = NULL;
        int r;

        r = ctl_get_children(bus, "Peer", &peers);
        if (r != 0)
                return r;
        return ctl_output_table(peers, &peer_table);
}

static char *format_via_from(json_object *p, const char *key, json_object *v) {
        _cleanup_(freep) char *via = format_via(p, key, v);
        const char *from = json_string_or(p, "SourceAddress", "");
        return ctl_strdupf("%s%s%s", strna(via), isempty(from) ? "" : " from ", from);
}

static char *format_rtt(json_object *p, const char *key, json_object *v) {
        _cleanup_(freep) char *rtt = format_usec(p, key, v), *jitter = format_usec(p, "JitterUsec", ctl_member(p, "JitterUsec"));
        return ctl_strdupf("%s (jitter %s)", rtt ?: "-", jitter ?: "-");
}

static char *format_measured_detail(json_object *p, const char *key, json_object *v) {
        _cleanup_(freep) char *age = ctl_format_age(p, "MeasuredAt", v), *when = ctl_format_local_time(p, "MeasuredAt", v);
        if (!age)
                return strdup("never");
        return ctl_strdupf("%s (%s)%s", when, age, json_bool_or(p, "Stale", false) ? ", stale" : "");
}

/* "4 up, 2 down": the parallel TCP streams of the measurement; nothing for RDMA and before one. */
static char *format_streams(json_object *p, const char *key, json_object *v) {
        int64_t up = json_int_or(v, "Upload", 0), down = json_int_or(v, "Download", 0);
        return up > 0 || down > 0 ? ctl_strdupf("%" PRId64 " up, %" PRId64 " down", up, down) : NULL;
}

static char *format_warnings(json_object *p, const char *key, json_object *v) {
        _cleanup_(freep) char *joined = NULL;
        size_t len = 0;
        FILE *f;

        if (!v || !json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0)
                return NULL;
        f = open_memstream(&joined, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(v); i++)
                fprintf(f, "%s%s", i > 0 ? "; " : "", json_object_get_string(json_object_array_get_idx(v, i)));
        if (fclose(f) != 0)
                return NULL;
        return TAKE_PTR(joined);
}

static char *format_error(json_object *p, const char *key, json_object *v) {
        const char *name = json_string_or(p, "LastError", "");
        return isempty(name) ? NULL : ctl_strdupf("%s: %s", name, json_string_or(p, "LastErrorMessage", ""));
}

static const CtlField peer_fields[] = {
        { "Address", "Address", NULL, NULL, false },
        { "Transport", "Transport", NULL, NULL, false },
        { "Via", "SourceInterfaceName", format_via_from, NULL, false },
        { "Connection type", "ConnectionType", NULL, NULL, false },
        { "Upload", "UploadGbps", format_gbps, NULL, false },
        { "Download", "DownloadGbps", format_gbps, NULL, false },
        { "RTT", "RttUsec", format_rtt, NULL, false },
        { "Streams", "Streams", format_streams, NULL, true },
        { "Measured", "MeasuredAt", format_measured_detail, ctl_colour_stale, false },
        { "State", "ProbeState", NULL, ctl_colour_state, false },
        { "Stale because", "StaleReason", ctl_format_string, NULL, true },
        { "Cross traffic", "CrossTrafficGbps", format_cross_traffic, NULL, true },
        { "Warnings", "Warnings", format_warnings, NULL, true },
        { "Last error", "LastError", format_error, NULL, true },
        { "Object", "Path", ctl_format_string, NULL, false },
};

static const CtlDetailView peer_details = {
        .fields = peer_fields,
        .n_fields = ELEMENTSOF(peer_fields),
};

int check_probe_args(int argc, char **argv) {
        const char *why = NULL;
        PeerAddress a;

        if (streq(argv[1], "gpu"))
                return 0;
        /* The daemon parses with the same rules; asking it only to hear "invalid" would be a wasted call. */
        if (peer_address_parse(argv[1], 0, &a, &why) < 0) {
                _cleanup_(freep) char *escaped = escape_for_terminal(argv[1]);
                fprintf(stderr, "Invalid peer address \"%s\": %s.\n", strna(escaped), strna(why));
                return CTL_EXIT_USAGE;
        }
        return 0;
}

typedef struct ProbeWait {
        char *path;
        bool changed;    /* the Peer object said something since we last looked */
        bool daemon_gone;
} ProbeWait;

static void probe_wait_done(ProbeWait *w) {
        w->path = mfree(w->path);
}

static int on_peer_signal(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        ProbeWait *w = userdata;
        const char *path = sd_bus_message_get_path(m), *added = NULL;

        /* InterfacesAdded names the object in its body, PropertiesChanged in its path. */
        if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded") &&
            sd_bus_message_read(m, "o", &added) >= 0)
                path = added;
        if (!w->path || (path && streq(path, w->path)))
                w->changed = true;
        return 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        const char *name, *old_owner, *new_owner;
        ProbeWait *w = userdata;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) >= 0 && isempty(new_owner))
                w->daemon_gone = true;
        return 0;
}

static int call_probe_peer(sd_bus *bus, const char *address, char **ret_path) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *path;
        int r;

        r = sd_bus_message_new_method_call(bus, &call, BUS_NAME, BUS_PATH, MANAGER_INTERFACE, "ProbePeer");
        if (r >= 0)
                r = sd_bus_message_append(call, "s", address);
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "{sv}");
        if (r >= 0 && arg_probe_transport)
                r = sd_bus_message_append(call, "{sv}", "Transport", "s", arg_probe_transport);
        if (r >= 0)
                r = sd_bus_message_close_container(call);
        if (r < 0) {
                fprintf(stderr, "Cannot build the call: %s\n", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        r = sd_bus_call(bus, call, 0, &error, &reply);
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Cannot probe");
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0 || !(*ret_path = strdup(path))) {
                fprintf(stderr, "Unexpected reply from linkprobed.\n");
                return CTL_EXIT_FAILURE;
        }
        return 0;
}

/* The Peer's properties once an attempt that began after asked_at is over (1), or 0 while none is;
 * an exit code (>0 as -code) when they cannot be read. Judging by LastAttemptAt rather than by which
 * signals arrived makes a failure that is over before the call returns (a probe that cannot even be
 * spawned), or that repeats the last one word for word, count at once. */
static int read_outcome(sd_bus *bus, const char *path, uint64_t asked_at, json_object **ret) {
        _cleanup_(json_object_putp) json_object *props = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *state;
        int r;

        r = bus_get_all_json(bus, BUS_NAME, path, PEER_INTERFACE, &props, &error);
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Cannot read the result");
                sd_bus_error_free(&error);
                return -r;
        }
        ctl_normalize_properties("Peer", props);
        state = json_string_or(props, "ProbeState", "");
        if (!(streq(state, "ok") || streq(state, "failed") || streq(state, "unsupported")) ||
            ctl_timestamp_usec(props, "LastAttemptAt") < asked_at)
                return 0;
        json_object_object_add(props, "Path", json_object_new_string(path));
        *ret = TAKE_PTR(props);
        return 1;
}

static int wait_for_outcome(sd_bus *bus, ProbeWait *w, const char *address, uint64_t asked_at, json_object **ret) {
        uint64_t timeout = arg_timeout_usec ?: PROBE_TIMEOUT_DEFAULT_USEC;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        int r;

        for (w->changed = true;;) {
                if (w->changed) {
                        w->changed = false;
                        r = read_outcome(bus, w->path, asked_at, ret);
                        if (r != 0)
                                return r < 0 ? -r : 0;
                }
                if (w->daemon_gone) {
                        fprintf(stderr, "linkprobed stopped before the probe of %s was over.\n", address);
                        return CTL_EXIT_FAILURE;
                }
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline) {
                        fprintf(stderr, "No result for %s within %" PRIu64 " s (see --timeout=).\n", address,
                                timeout / USEC_PER_SEC);
                        return CTL_EXIT_FAILURE;
                }
                r = sd_bus_process(bus, NULL);
                if (r < 0) {
                        fprintf(stderr, "Lost the bus: %s\n", strerror(-r));
                        return CTL_EXIT_FAILURE;
                }
                if (r == 0)
                        (void) sd_bus_wait(bus, deadline - now);
        }
}

int verb_probe_peer(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *changed = NULL, *added = NULL, *owner = NULL;
        _cleanup_(json_object_putp) json_object *props = NULL;
        _cleanup_(probe_wait_done) ProbeWait w = {};
        uint64_t asked_at;
        int r;

        /* Listen before asking, so a quick result cannot slip past. */
        r = sd_bus_match_signal(bus, &changed, BUS_NAME, NULL, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                on_peer_signal, &w);
        if (r >= 0)
                r = sd_bus_match_signal(bus, &added, BUS_NAME, BUS_PATH, "org.freedesktop.DBus.ObjectManager",
                                        "InterfacesAdded", on_peer_signal, &w);
        if (r >= 0)
                r = sd_bus_add_match(bus, &owner,
                                     "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
                                     "arg0='" BUS_NAME "'",
                                     on_owner_changed, &w);
        if (r < 0) {
                fprintf(stderr, "Cannot watch for the result: %s\n", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        asked_at = now_usec(CLOCK_REALTIME);
        r = call_probe_peer(bus, argv[1], &w.path);
        if (r != 0)
                return r;
        r = wait_for_outcome(bus, &w, argv[1], asked_at, &props);
        if (r != 0)
                return r;

        r = ctl_output_details(props, &peer_details);
        const char *state = json_string_or(props, "ProbeState", "");
        if (!streq(state, "ok")) {
                _cleanup_(freep) char *message = escape_for_terminal(json_string_or(props, "LastErrorMessage", ""));
                const char *error = json_string_or(props, "LastError", "error");
                /* Refused: the far node is there but nothing accepts probes, which is the responder's
                 * job, off by default. */
                fprintf(stderr, "%s %s: %s: %s%s\n",
                        streq(state, "unsupported") ? "Cannot measure" : "Probe failed for", argv[1], error,
                        strempty(message),
                        streq(error, "ECONNREFUSED") ? " (nothing there accepts probes: the far node needs "
                                                       "linkprobed's responder, [Responder] Listen= in its "
                                                       "linkprobed.conf)"
                                                     : "");
                return CTL_EXIT_FAILURE;
        }
        return r;
}
