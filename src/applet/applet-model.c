/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-model.c — the system bus side of the applet.
 *
 * The matches carry no sender= (dbus-daemon would resolve a well-known name, sd-bus's local filter
 * would not); instead every signal is checked against the unique name that owns
 * org.linkprobe.LinkProbe1 now, so nobody else on the bus can feed the applet objects. The
 * GetManagedObjects reply replaces the store: signals sent before it are already in it, signals sent
 * after it arrive after it. */
#include <glib.h>

#include "applet-model.h"
#include "shared/bus-json.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/macros.h"
#include "shared/string-util.h"
#include "applet-glib.h"

#define RECONNECT_SEC 5

struct Model {
        ModelCallbacks cb;
        char *address;          /* NULL: the system bus */
        void *userdata;
        sd_bus *bus;
        GSource *source;
        guint reconnect_timer;
        char *owner;            /* unique name of linkprobed, NULL while it is not running */
        bool loaded;
        sd_bus_slot *load_slot; /* the GetManagedObjects in flight */
        json_object *objects;
        const char *status;
        bool said_not_running;
};

static void model_changed(Model *m) {
        if (m->cb.changed)
                m->cb.changed(m, m->userdata);
}

static void model_clear(Model *m, const char *status) {
        m->load_slot = sd_bus_slot_unref(m->load_slot);
        json_object_put(m->objects);
        m->objects = json_object_new_object();
        m->loaded = false;
        m->status = status;
        model_changed(m);
}

Model *model_new(const char *address, const ModelCallbacks *callbacks, void *userdata) {
        Model *m = g_new0(Model, 1);

        m->address = g_strdup(address);
        m->cb = *callbacks;
        m->userdata = userdata;
        m->objects = json_object_new_object();
        m->status = "connecting to the system bus";
        return m;
}

void model_free(Model *m) {
        if (!m)
                return;
        if (m->reconnect_timer)
                g_source_remove(m->reconnect_timer);
        sd_bus_slot_unref(m->load_slot);
        if (m->source) {
                g_source_destroy(m->source);
                g_source_unref(m->source);
        }
        sd_bus_flush_close_unref(m->bus);
        json_object_put(m->objects);
        g_free(m->owner);
        g_free(m->address);
        g_free(m);
}

bool model_running(const Model *m) {
        return m->loaded;
}

const char *model_status(const Model *m) {
        return m->loaded ? "running" : m->status;
}

json_object *model_objects(const Model *m) {
        return m->objects;
}

json_object *model_property(const Model *m, const char *path, const char *interface, const char *property) {
        json_object *o, *i, *p;

        if (!path || !json_object_object_get_ex(m->objects, path, &o) ||
            !json_object_object_get_ex(o, interface, &i) || !json_object_object_get_ex(i, property, &p))
                return NULL;
        return p;
}

static bool from_daemon(Model *m, sd_bus_message *msg) {
        const char *sender = sd_bus_message_get_sender(msg);

        return m->owner && sender && streq(sender, m->owner);
}

static const char *health_of(json_object *iface) {
        json_object *h;

        return iface && json_object_object_get_ex(iface, "Health", &h) ? json_object_get_string(h) : NULL;
}

static int on_properties_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Model *m = userdata;
        const char *interface, *path = sd_bus_message_get_path(msg);
        json_object *changed = NULL, *object, *props;
        g_autofree char *old_health = NULL;
        int r;

        if (!from_daemon(m, msg) || !m->loaded || !path)
                return 0;
        r = sd_bus_message_read(msg, "s", &interface);
        if (r < 0)
                return 0;
        r = bus_message_read_json(msg, &changed);
        if (r < 0 || !json_object_is_type(changed, json_type_object)) {
                json_object_put(changed);
                return 0;
        }
        if (!json_object_object_get_ex(m->objects, path, &object) ||
            !json_object_object_get_ex(object, interface, &props)) {
                /* Not announced (yet): the object manager's InterfacesAdded carries it whole. */
                json_object_put(changed);
                return 0;
        }
        old_health = g_strdup(health_of(props));
        json_object_object_foreach(changed, key, value)
                json_object_object_add(props, key, json_object_get(value));
        json_object_put(changed);

        const char *new_health = health_of(props);
        if (m->cb.health_changed && old_health && new_health && !streq(old_health, new_health))
                m->cb.health_changed(m, path, interface, old_health, new_health, m->userdata);
        model_changed(m);
        return 0;
}

static int on_interfaces_added(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Model *m = userdata;
        const char *path;
        json_object *ifaces = NULL, *object;
        bool is_new;
        int r;

        if (!from_daemon(m, msg) || !m->loaded)
                return 0;
        r = sd_bus_message_read(msg, "o", &path);
        if (r < 0)
                return 0;
        r = bus_message_read_json(msg, &ifaces);
        if (r < 0 || !json_object_is_type(ifaces, json_type_object)) {
                json_object_put(ifaces);
                return 0;
        }
        is_new = !json_object_object_get_ex(m->objects, path, &object);
        if (is_new) {
                object = json_object_new_object();
                json_object_object_add(m->objects, path, object);
        }
        json_object_object_foreach(ifaces, key, value)
                json_object_object_add(object, key, json_object_get(value));
        json_object_put(ifaces);

        if (m->cb.thunderbolt_added && json_object_object_get_ex(object, TBT_INTERFACE, NULL) &&
            (is_new || json_object_object_length(object) == 1))
                m->cb.thunderbolt_added(m, path, m->userdata);
        model_changed(m);
        return 0;
}

static int on_interfaces_removed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Model *m = userdata;
        const char *path, *interface;
        json_object *object;
        int r;

        if (!from_daemon(m, msg) || !m->loaded)
                return 0;
        r = sd_bus_message_read(msg, "o", &path);
        if (r < 0 || !json_object_object_get_ex(m->objects, path, &object))
                return 0;
        r = sd_bus_message_enter_container(msg, 'a', "s");
        if (r < 0)
                return 0;
        while ((r = sd_bus_message_read(msg, "s", &interface)) > 0)
                json_object_object_del(object, interface);
        if (json_object_object_length(object) == 0)
                json_object_object_del(m->objects, path);
        model_changed(m);
        return 0;
}

/* The root object's interfaces: GetManagedObjects lists only the objects below the manager. */
static int on_root_loaded(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Model *m = userdata;
        json_object *props = NULL, *root;

        if (sd_bus_message_is_method_error(reply, NULL) || !m->loaded)
                return 0;
        if (bus_message_read_json(reply, &props) < 0 || !json_object_is_type(props, json_type_object)) {
                json_object_put(props);
                return 0;
        }
        /* Which interface: the properties say (Summary has FastestLink, Manager WatchIntervalUSec, Node
         * Hostname). */
        if (!json_object_object_get_ex(m->objects, BUS_PATH, &root)) {
                root = json_object_new_object();
                json_object_object_add(m->objects, BUS_PATH, root);
        }
        json_object_object_add(root, json_object_object_get_ex(props, "FastestLink", NULL)         ? SUMMARY_INTERFACE
                                     : json_object_object_get_ex(props, "WatchIntervalUSec", NULL) ? MANAGER_INTERFACE
                                                                                                   : NODE_INTERFACE,
                               props);
        model_changed(m);
        return 0;
}

static int on_objects_loaded(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Model *m = userdata;
        json_object *objects = NULL;
        int r;

        m->load_slot = sd_bus_slot_unref(m->load_slot);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                log_warning("linkprobed did not list its objects: %s", e->message ?: e->name);
                model_clear(m, "linkprobed did not answer");
                return 0;
        }
        r = bus_message_read_json(reply, &objects);
        if (r < 0 || !json_object_is_type(objects, json_type_object)) {
                json_object_put(objects);
                log_warning_errno(r < 0 ? r : -EBADMSG, "Cannot read linkprobed's objects: %m");
                model_clear(m, "linkprobed sent objects the applet cannot read");
                return 0;
        }
        json_object_put(m->objects);
        m->objects = objects;
        m->loaded = true;
        m->said_not_running = false;
        log_info("linkprobed is running: %d objects.", json_object_object_length(objects));
        json_object_object_del(m->objects, BUS_PATH);
        static const char *const root_interfaces[] = { SUMMARY_INTERFACE, NODE_INTERFACE, MANAGER_INTERFACE };
        for (size_t i = 0; i < ELEMENTSOF(root_interfaces); i++) {
                r = sd_bus_call_method_async(m->bus, NULL, m->owner, BUS_PATH, "org.freedesktop.DBus.Properties",
                                             "GetAll", on_root_loaded, m, "s", root_interfaces[i]);
                if (r < 0)
                        log_warning_errno(r, "Cannot ask linkprobed for its summary: %m");
        }
        model_changed(m);
        return 0;
}

static void model_owner_set(Model *m, const char *owner) {
        g_free(m->owner);
        m->owner = isempty(owner) ? NULL : g_strdup(owner);
        if (!m->owner) {
                if (!m->said_not_running)
                        log_notice("linkprobed is not running; waiting for it to start.");
                m->said_not_running = true;
                model_clear(m, "linkprobed is not running");
                return;
        }
        model_clear(m, "linkprobed is starting");
        /* To the unique name: a reply from a daemon that has gone and come back is not mixed in. */
        int r = sd_bus_call_method_async(m->bus, &m->load_slot, m->owner, BUS_PATH,
                                         "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
                                         on_objects_loaded, m, NULL);
        if (r < 0)
                log_warning_errno(r, "Cannot ask linkprobed for its objects: %m");
}

static int on_name_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Model *m = userdata;
        const char *name, *old_owner, *new_owner;

        if (!streq_ptr(sd_bus_message_get_sender(msg), "org.freedesktop.DBus"))
                return 0;
        if (sd_bus_message_read(msg, "sss", &name, &old_owner, &new_owner) < 0 || !streq(name, BUS_NAME))
                return 0;
        model_owner_set(m, new_owner);
        return 0;
}

static int on_get_name_owner(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Model *m = userdata;
        const char *owner = NULL;

        if (!sd_bus_message_is_method_error(reply, NULL))
                (void) sd_bus_message_read(reply, "s", &owner);
        model_owner_set(m, owner);
        return 0;
}

static void on_bus_lost(sd_bus *bus, void *userdata);

static gboolean on_reconnect(gpointer userdata) {
        Model *m = userdata;

        m->reconnect_timer = 0;
        model_start(m);
        return G_SOURCE_REMOVE;
}

static void model_schedule_reconnect(Model *m) {
        if (!m->reconnect_timer)
                m->reconnect_timer = g_timeout_add_seconds(RECONNECT_SEC, on_reconnect, m);
}

static void on_bus_lost(sd_bus *bus, void *userdata) {
        Model *m = userdata;

        log_warning("The system bus went away; connecting again every %d s.", RECONNECT_SEC);
        g_clear_pointer(&m->source, g_source_unref);
        m->load_slot = sd_bus_slot_unref(m->load_slot);
        m->bus = sd_bus_flush_close_unref(m->bus);
        g_clear_pointer(&m->owner, g_free);
        model_clear(m, "the system bus is not reachable");
        model_schedule_reconnect(m);
}

void model_start(Model *m) {
        static const struct {
                const char *match;
                sd_bus_message_handler_t handler;
        } matches[] = {
                { "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                  "member='NameOwnerChanged',arg0='" BUS_NAME "'", on_name_owner_changed },
                { "type='signal',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded',"
                  "path='" BUS_PATH "'", on_interfaces_added },
                { "type='signal',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesRemoved',"
                  "path='" BUS_PATH "'", on_interfaces_removed },
                { "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                  "path_namespace='" BUS_PATH "'", on_properties_changed },
        };
        int r;

        if (m->address) {
                r = sd_bus_new(&m->bus);
                if (r >= 0)
                        r = sd_bus_set_address(m->bus, m->address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(m->bus, true);
                if (r >= 0)
                        r = sd_bus_set_description(m->bus, "linkprobed's bus");
                if (r >= 0)
                        r = sd_bus_start(m->bus);
        } else
                r = sd_bus_open_system_with_description(&m->bus, "system");
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(matches); i++)
                r = sd_bus_add_match_async(m->bus, NULL, matches[i].match, matches[i].handler, NULL, m);
        /* After the matches: an owner change between the two is seen by one or the other. */
        if (r >= 0)
                r = sd_bus_call_method_async(m->bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                             "org.freedesktop.DBus", "GetNameOwner", on_get_name_owner, m, "s",
                                             BUS_NAME);
        if (r >= 0) {
                m->source = bus_glib_attach(m->bus, on_bus_lost, m);
                if (!m->source)
                        r = -EBADF;
        }
        if (r < 0) {
                if (m->status == NULL || !streq(m->status, "the system bus is not reachable"))
                        log_warning_errno(r, "Cannot connect to the system bus: %m; trying again every %d s.",
                                          RECONNECT_SEC);
                m->bus = sd_bus_flush_close_unref(m->bus);
                model_clear(m, "the system bus is not reachable");
                model_schedule_reconnect(m);
        }
}
