/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobe-applet — the desktop's view of linkprobed: a StatusNotifierItem whose icon and tooltip say
 * the fastest link and the worst Health, a menu of every link, Thunderbolt device, RDMA port and
 * compute device, a details window with the node's picture, and notifications for what a person
 * plugs in and what goes bad. It reads the system bus (no privilege) and serves the session bus. */
#include <getopt.h>
#include <sys/auxv.h>
#include <glib-unix.h>
#include <gtk/gtk.h>

#include "applet-config.h"
#include "applet-glib.h"
#include "applet-menu.h"
#include "applet-model.h"
#include "applet-notify.h"
#include "applet-sni.h"
#include "applet-view.h"
#include "applet-window.h"
#include "build-paths.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/macros.h"

#define REFRESH_DEBOUNCE_MS 150

typedef struct App {
        GMainLoop *loop;
        sd_bus *session;
        GSource *session_source;
        Model *model;
        Sni *sni;
        Menu *menu;
        Notifier *notifier;
        DetailsWindow *window;
        bool said_no_window;
        guint refresh;
        int exit_status;
} App;

static json_object *prop(App *a, const char *path, const char *interface, const char *name) {
        return model_property(a->model, path, interface, name);
}

static const char *prop_str(App *a, const char *path, const char *interface, const char *name) {
        json_object *v = prop(a, path, interface, name);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

static gboolean on_refresh(gpointer userdata) {
        App *a = userdata;
        g_autoptr(View) view = view_build(model_objects(a->model));
        bool running = model_running(a->model);
        g_autofree char *body = NULL, *more = NULL;

        a->refresh = 0;
        /* Objects the watch judges at consecutive samples are one notification. */
        json_object *watch = prop(a, BUS_PATH, MANAGER_INTERFACE, "WatchIntervalUSec");
        notifier_set_watch_interval(a->notifier, running && watch ? (uint64_t) json_object_get_int64(watch) : 0);
        if (view->bad > 1)
                more = g_strdup_printf(" (%u objects not ok)", view->bad);
        if (running)
                body = g_strdup_printf("Fastest link: %s\nHealth: %s%s", view->fastest ?: "none",
                                       view->worst_text ?: "nothing to judge", strempty(more));
        else
                body = g_strdup(model_status(a->model));
        sni_update(a->sni, view_icon_name(view, running), "linkprobe", body);
        menu_update(a->menu, view, running, model_status(a->model));
        if (a->window)
                details_window_objects_changed(a->window, running ? NULL : model_status(a->model));
        return G_SOURCE_REMOVE;
}

static void on_model_changed(Model *m, void *userdata) {
        App *a = userdata;

        if (!a->refresh)
                a->refresh = g_timeout_add(REFRESH_DEBOUNCE_MS, on_refresh, a);
}

static void on_thunderbolt_added(Model *m, const char *path, void *userdata) {
        App *a = userdata;
        const char *kind = view_thunderbolt_kind(prop_str(a, path, TBT_INTERFACE, "Type"));
        const char *name = prop_str(a, path, TBT_INTERFACE, "Name");
        const char *class = prop_str(a, path, TBT_INTERFACE, "LinkClass");
        json_object *depth = prop(a, path, TBT_INTERFACE, "Depth"), *rx, *tx, *degraded;
        g_autofree char *title = NULL, *rate = NULL, *line = NULL;
        g_autoptr(GString) body = g_string_new(NULL);

        if (!kind)
                return;
        if (!*name)
                name = prop_str(a, path, TBT_INTERFACE, "SysfsName");
        rx = prop(a, path, TBT_INTERFACE, "PathRxGbps");
        tx = prop(a, path, TBT_INTERFACE, "PathTxGbps");
        /* The rate a person gets: the path's bottleneck, the lesser direction. */
        rate = format_gbps(MIN(rx ? json_object_get_double(rx) : 0, tx ? json_object_get_double(tx) : 0));
        title = g_strdup_printf("Thunderbolt %s connected: %s", kind, name);
        g_string_append_printf(body, "%s, %s", *class ? class : "Thunderbolt", rate);
        degraded = prop(a, path, TBT_INTERFACE, "Degraded");
        bool is_degraded = degraded && json_object_get_boolean(degraded);
        if (is_degraded)
                g_string_append_printf(body, "\ndegraded: %s", prop_str(a, path, TBT_INTERFACE, "DegradedReason"));
        if (streq(prop_str(a, path, TBT_INTERFACE, "Authorized"), "no"))
                g_string_append(body, "\nnot authorized (boltctl authorize)");
        line = g_strdup_printf("%s (%s): %s, %s", name, kind, *class ? class : "Thunderbolt", rate);
        notifier_thunderbolt(a->notifier, path, depth ? json_object_get_int(depth) : 0, is_degraded, title, body->str,
                             line);
}

static void on_health_changed(Model *m, const char *path, const char *interface, const char *old_health,
                              const char *new_health, void *userdata) {
        App *a = userdata;
        HealthRank old_rank = health_rank(old_health), new_rank = health_rank(new_health);
        const char *reason = prop_str(a, path, interface, "HealthReason");
        g_autofree char *what = NULL, *text = NULL;

        /* ok ↔ unknown is nothing to tell; bad → worse is (flapping → errors). */
        if (!health_is_bad(old_rank) && !health_is_bad(new_rank))
                return;
        if (streq(interface, LINK_INTERFACE))
                what = g_strdup_printf("link %s", prop_str(a, path, interface, "Name"));
        else if (streq(interface, TBT_INTERFACE))
                what = g_strdup_printf("Thunderbolt %s", *prop_str(a, path, interface, "Name")
                                                                 ? prop_str(a, path, interface, "Name")
                                                                 : prop_str(a, path, interface, "SysfsName"));
        else if (streq(interface, RDMA_PORT_INTERFACE)) {
                json_object *port = prop(a, path, interface, "Port");
                what = g_strdup_printf("RDMA port %s/%d", prop_str(a, path, interface, "Device"),
                                       port ? json_object_get_int(port) : 0);
        } else if (streq(interface, PCI_INTERFACE))
                what = g_strdup_printf("PCI %s", prop_str(a, path, interface, "Address"));
        else
                what = g_strdup(path);
        text = *reason && health_is_bad(new_rank) ? g_strdup_printf("%s: %s", new_health, reason) : g_strdup(new_health);
        notifier_health(a->notifier, path, what, health_is_bad(new_rank), text);
}

static void show_details(App *a, const char *path) {
        g_autofree char *header = NULL;

        if (!a->window) {
                if (!a->said_no_window)
                        log_notice("No display: the details window cannot be shown.");
                a->said_no_window = true;
                return;
        }
        if (path)
                header = view_describe(model_objects(a->model), path);
        else {
                g_autoptr(View) view = view_build(model_objects(a->model));
                const char *host = prop_str(a, BUS_PATH, NODE_INTERFACE, "Hostname");
                header = g_strdup_printf("Node %s — fastest link: %s — health: %s", *host ? host : "(unknown)",
                                         view->fastest ?: "none", view->worst_text ?: "nothing to judge");
        }
        log_info("Details window shown: %s", path ?: "the node");
        details_window_present(a->window, header, model_running(a->model) ? NULL : model_status(a->model));
}

static void on_menu_activated(MenuAction action, const char *path, void *userdata) {
        App *a = userdata;

        switch (action) {
        case MENU_ACTION_DETAILS:
                show_details(a, path);
                break;
        case MENU_ACTION_QUIT:
                g_main_loop_quit(a->loop);
                break;
        case MENU_ACTION_NONE:
                break;
        }
}

static void on_icon_activated(void *userdata) {
        show_details(userdata, NULL);
}

static void on_session_lost(sd_bus *bus, void *userdata) {
        App *a = userdata;

        log_notice("The session bus went away: the desktop session ended.");
        g_clear_pointer(&a->session_source, g_source_unref);
        g_main_loop_quit(a->loop);
}

static gboolean on_signal(gpointer userdata) {
        App *a = userdata;

        g_main_loop_quit(a->loop);
        return G_SOURCE_CONTINUE;
}

static void help(void) {
        printf("Usage: linkprobe-applet [OPTIONS]\n\n"
               "A tray icon, a menu and notifications for what linkprobed knows.\n\n"
               "Options:\n"
               "  -h --help            Show this help\n"
               "     --version         Show the version\n"
               "     --config=FILE     Read FILE instead of $XDG_CONFIG_HOME/linkprobe/applet.conf\n"
               "     --linkprobectl=PATH  The linkprobectl that draws the details window's picture\n"
               "                       (default %s/linkprobectl)\n"
               "     --icon-dir=DIR    Where linkprobe-*.svg are (default %s)\n"
               "     --bus-address=ADDR  Read linkprobed on the bus at ADDR (linkprobed --bus-address=)\n"
               "                       instead of the system bus\n"
               "     --log-level=LEVEL debug, info, notice (default), warning, err\n",
               BINDIR, DATADIR "/icons/hicolor/scalable/status");
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_CONFIG, ARG_CTL, ARG_ICON_DIR, ARG_LOG_LEVEL, ARG_BUS_ADDRESS };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "linkprobectl", required_argument, NULL, ARG_CTL },
                { "icon-dir", required_argument, NULL, ARG_ICON_DIR },
                { "log-level", required_argument, NULL, ARG_LOG_LEVEL },
                { "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
                {},
        };
        const char *config_path = NULL, *ctl = BINDIR "/linkprobectl", *bus_address = NULL;
        const char *icon_dir = DATADIR "/icons/hicolor/scalable/status";
        AppletConfig config;
        App a = {};
        int c, r;

        log_set_max_level(LOG_NOTICE);
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("linkprobe-applet %s\n", VERSION);
                        return 0;
                case ARG_CONFIG:
                        config_path = optarg;
                        break;
                case ARG_CTL:
                        ctl = optarg;
                        break;
                case ARG_BUS_ADDRESS:
                        bus_address = optarg;
                        break;
                case ARG_ICON_DIR:
                        icon_dir = optarg;
                        break;
                case ARG_LOG_LEVEL:
                        r = log_level_from_string(optarg);
                        if (r < 0) {
                                log_error("Unknown log level %s.", optarg);
                                return 2;
                        }
                        log_set_max_level(r);
                        break;
                default:
                        return 2;
                }
        if (optind < argc) {
                log_error("linkprobe-applet takes no arguments (%s).", argv[optind]);
                return 2;
        }

        applet_config_defaults(&config);
        if (applet_config_load(&config, config_path) < 0)
                return 1;

        /* Without a display the icon and the notifications still work (the host draws them). */
        if (gtk_init_check(&argc, &argv))
                a.window = details_window_new(ctl, bus_address);
        else
                log_notice("No display (DISPLAY or WAYLAND_DISPLAY): the details window is not available.");

        /* sd-bus reads DBUS_SESSION_BUS_ADDRESS, DBUS_SYSTEM_BUS_ADDRESS and XDG_RUNTIME_DIR with
         * secure_getenv(): with file capabilities (GTK already refused setuid and setgid) they are
         * ignored without a word, and only the default sockets are tried. The applet needs no privilege. */
        if (getauxval(AT_SECURE))
                log_warning("Running with file capabilities (secure-execution mode): DBUS_SESSION_BUS_ADDRESS, "
                            "DBUS_SYSTEM_BUS_ADDRESS and XDG_RUNTIME_DIR are ignored, only the default buses are "
                            "tried; linkprobe-applet needs no capabilities (--bus-address= still names "
                            "linkprobed's bus).");
        r = sd_bus_open_user_with_description(&a.session, "session");
        if (r < 0) {
                log_error_errno(r, "Cannot connect to the session bus: %m");
                return 1;
        }

        a.loop = g_main_loop_new(NULL, FALSE);
        a.menu = menu_new(a.session, on_menu_activated, &a);
        a.sni = sni_new(a.session, icon_dir, on_icon_activated, &a);
        a.notifier = notifier_new(a.session, &config, icon_dir);
        a.session_source = bus_glib_attach(a.session, on_session_lost, &a);
        if (!a.session_source) {
                log_error("Cannot watch the session bus.");
                return 1;
        }

        ModelCallbacks callbacks = {
                .changed = on_model_changed,
                .thunderbolt_added = on_thunderbolt_added,
                .health_changed = on_health_changed,
        };
        a.model = model_new(bus_address, &callbacks, &a);
        model_start(a.model);

        g_unix_signal_add(SIGTERM, on_signal, &a);
        g_unix_signal_add(SIGINT, on_signal, &a);
        g_main_loop_run(a.loop);

        if (a.refresh)
                g_source_remove(a.refresh);
        model_free(a.model);
        details_window_free(a.window);
        notifier_free(a.notifier);
        sni_free(a.sni);
        menu_free(a.menu);
        if (a.session_source) {
                g_source_destroy(a.session_source);
                g_source_unref(a.session_source);
        }
        sd_bus_flush_close_unref(a.session);
        g_main_loop_unref(a.loop);
        return a.exit_status;
}
