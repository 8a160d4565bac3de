/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl peers / probe: measured paths to peer nodes. */
#include <math.h>

#include "linkprobectl.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

#define PEER_PATH_PREFIX BUS_PATH "/peer/"

char *arg_probe_transport = NULL;

static char *format_gbps(char buf[static 32], json_object *p, const char *key) {
        double v = json_double_or(p, key, 0);
        if (json_int_or(p, "MeasuredAt", 0) == 0 || !isfinite(v))
                snprintf(buf, 32, "-");
        else
                snprintf(buf, 32, "%.2f Gb/s", v);
        return buf;
}

static char *format_usec(char buf[static 32], json_object *p, const char *key) {
        double v = json_double_or(p, key, 0);
        if (json_int_or(p, "MeasuredAt", 0) == 0 || !isfinite(v))
                snprintf(buf, 32, "-");
        else if (v >= 10000)
                snprintf(buf, 32, "%.1f ms", v / 1000);
        else
                snprintf(buf, 32, "%.0f us", v);
        return buf;
}

static const char *peer_via(json_object *p) {
        const char *device = json_string_or(p, "SourceDevice", "");
        const char *name = json_string_or(p, "SourceInterfaceName", "");
        return !isempty(device) ? device : !isempty(name) ? name : NULL;
}

int verb_peers(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *peers = NULL;
        _cleanup_(text_table_freep) TextTable *t = NULL;
        int r;

        r = ctl_get_children(bus, "Peer", &peers);
        if (r != 0)
                return r;
        if (arg_json)
                return ctl_print_json(peers);

        t = text_table_new("ADDRESS", "TRANSPORT", "VIA", "TYPE", ">UPLOAD", ">DOWNLOAD", ">RTT", ">JITTER", "MEASURED",
                           "STATE", NULL);
        if (!t)
                return CTL_EXIT_FAILURE;
        for (size_t i = 0; i < json_object_array_length(peers); i++) {
                json_object *p = json_object_array_get_idx(peers, i);
                char up[32], down[32], rtt[32], jitter[32], age[32], measured[48];

                snprintf(measured, sizeof(measured), "%s%s",
                         format_age(age, (uint64_t) json_int_or(p, "MeasuredAt", 0), "never"),
                         json_bool_or(p, "Stale", false) && json_int_or(p, "MeasuredAt", 0) > 0 ? " (stale)" : "");
                r = text_table_add_row(t, json_string_or(p, "Address", NULL), json_string_or(p, "Transport", NULL),
                                       peer_via(p), json_string_or(p, "ConnectionType", NULL),
                                       format_gbps(up, p, "UploadGbps"), format_gbps(down, p, "DownloadGbps"),
                                       format_usec(rtt, p, "RttUsec"), format_usec(jitter, p, "JitterUsec"), measured,
                                       json_string_or(p, "ProbeState", NULL));
                if (r < 0)
                        return CTL_EXIT_FAILURE;
        }
        ctl_print_table(t, "peer paths");
        return 0;
}

static void show_peer(json_object *p) {
        char a[32], b[32], buf[160];
        const char *error = json_string_or(p, "LastError", "");

        ctl_print_field("Address", json_string_or(p, "Address", NULL));
        ctl_print_field("Transport", json_string_or(p, "Transport", NULL));
        snprintf(buf, sizeof(buf), "%s%s%s", strna(peer_via(p)),
                 isempty(json_string_or(p, "SourceAddress", "")) ? "" : " from ",
                 json_string_or(p, "SourceAddress", ""));
        ctl_print_field("Via", buf);
        ctl_print_field("Connection type", json_string_or(p, "ConnectionType", NULL));
        ctl_print_field("Upload", format_gbps(a, p, "UploadGbps"));
        ctl_print_field("Download", format_gbps(a, p, "DownloadGbps"));
        snprintf(buf, sizeof(buf), "%s (jitter %s)", format_usec(a, p, "RttUsec"), format_usec(b, p, "JitterUsec"));
        ctl_print_field("RTT", buf);
        snprintf(buf, sizeof(buf), "%s%s", format_age(a, (uint64_t) json_int_or(p, "MeasuredAt", 0), "never"),
                 json_bool_or(p, "Stale", false) ? ", stale" : "");
        ctl_print_field("Measured", buf);
        ctl_print_field("State", json_string_or(p, "ProbeState", NULL));
        if (!isempty(error)) {
                snprintf(buf, sizeof(buf), "%s: %s", error, json_string_or(p, "LastErrorMessage", ""));
                ctl_print_field("Last error", buf);
        }
        ctl_print_field("Object", json_string_or(p, "Path", NULL));
}

typedef struct ProbeWait {
        char *path;
        const char *state; /* a final ProbeState once seen */
        char state_buf[32];
} ProbeWait;

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        _cleanup_(json_object_putp) json_object *changed = NULL;
        ProbeWait *w = userdata;
        const char *interface, *state;

        const char *path = sd_bus_message_get_path(m);
        if (!w->path || !path || !streq(path, w->path))
                return 0;
        if (sd_bus_message_read(m, "s", &interface) < 0 || !streq(interface, IFACE_PREFIX "Peer") ||
            bus_message_read_json(m, &changed) < 0)
                return 0;
        state = json_string_or(changed, "ProbeState", NULL);
        if (state && (streq(state, "ok") || streq(state, "failed") || streq(state, "unsupported"))) {
                snprintf(w->state_buf, sizeof(w->state_buf), "%s", state);
                w->state = w->state_buf;
        }
        return 0;
}

static int call_probe_peer(sd_bus *bus, const char *address, char **ret_path) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *path;
        int r;

        r = sd_bus_message_new_method_call(bus, &call, BUS_NAME, BUS_PATH, IFACE_PREFIX "Manager", "ProbePeer");
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

int verb_probe_peer(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_(json_object_putp) json_object *props = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        ProbeWait w = {};
        uint64_t timeout = arg_timeout_usec ?: 60 * USEC_PER_SEC;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        int r;

        /* Listen before asking, so a quick result cannot slip past. */
        r = sd_bus_match_signal(bus, &slot, BUS_NAME, NULL, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                on_properties_changed, &w);
        if (r < 0) {
                fprintf(stderr, "Cannot watch for the result: %s\n", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        r = call_probe_peer(bus, argv[1], &w.path);
        if (r != 0)
                return r;

        while (!w.state) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline) {
                        fprintf(stderr, "No result for %s within %" PRIu64 " s (%s).\n", argv[1],
                                timeout / USEC_PER_SEC, w.path);
                        free(w.path);
                        return CTL_EXIT_FAILURE;
                }
                r = sd_bus_process(bus, NULL);
                if (r < 0) {
                        fprintf(stderr, "Lost the bus: %s\n", strerror(-r));
                        free(w.path);
                        return CTL_EXIT_FAILURE;
                }
                if (r == 0)
                        (void) sd_bus_wait(bus, deadline - now);
        }

        r = bus_get_all_json(bus, BUS_NAME, w.path, IFACE_PREFIX "Peer", &props, &error);
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Cannot read the result");
                sd_bus_error_free(&error);
                free(w.path);
                return r;
        }
        json_object_object_add(props, "Path", json_object_new_string(w.path));
        free(w.path);

        if (arg_json)
                r = ctl_print_json(props);
        else
                show_peer(props);
        if (!streq(w.state, "ok")) {
                _cleanup_(freep) char *message = escape_for_terminal(json_string_or(props, "LastErrorMessage", ""));
                fprintf(stderr, "%s %s: %s: %s\n", streq(w.state, "unsupported") ? "Cannot measure" : "Probe failed for",
                        argv[1], json_string_or(props, "LastError", "error"), strempty(message));
                return CTL_EXIT_FAILURE;
        }
        return r;
}
