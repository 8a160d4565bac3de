/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Thunderbolt/USB4 devices we publish: a table of what sysfs says per device, updated from udev
 * events and full enumerations through one path, and the tree (tbt-topology) rebuilt after every
 * change so rates, classes and paths below a changed hop follow at once. */
#include <inttypes.h>
#include <libudev.h>

#include "shared/bus-names.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "tbt.h"
#include "udev.h"

const BusObjectType tbt_bus_type = {
        .interface = TBT_INTERFACE,
};

static int tbt_object_compare(const void *key, const void *object) {
        return strcmp(key, ((const TbtObject *) object)->sysname);
}

bool tbt_any_published(Thunderbolt *t) {
        TbtObject *o;

        TABLE_FOREACH(o, &t->objects)
                if (o->published)
                        return true;
        return false;
}

int tbt_object_path(const char *sysname, char **ret) {
        return sd_bus_path_encode(TBT_PATH_PREFIX, sysname, ret);
}

/* Published objects live in objects, which GetManagedObjects walks; services, which only the tree
 * needs, in services. */
static Table *tbt_table(Thunderbolt *tbt, TbtKind kind) {
        return kind == TBT_KIND_SERVICE ? &tbt->services : &tbt->objects;
}

/* Every object of both tables; the body must not remove (use the tables one by one for that). */
#define TBT_FOREACH(o, tbt)                                                                   \
        for (Table *_tables_[2] = { &(tbt)->objects, &(tbt)->services }, **_t_ = _tables_;   \
             _t_ < _tables_ + 2; _t_++)                                                       \
                TABLE_FOREACH(o, *_t_)

static size_t tbt_count(Thunderbolt *tbt) {
        return table_size(&tbt->objects) + table_size(&tbt->services);
}

TbtObject *tbt_object_get(Thunderbolt *tbt, const char *sysname) {
        TbtObject *o;

        if (!sysname)
                return NULL;
        o = table_get(&tbt->objects, sysname);
        return o ?: table_get(&tbt->services, sysname);
}

static TbtObject *tbt_object_free(TbtObject *o) {
        if (!o)
                return NULL;
        bus_object_done(&o->bus);
        tbt_device_free(o->device);
        free(o->sysname);
        free(o->sysname_utf8);
        free(o->parent_path);
        free(o->degraded_reason);
        strv_free(o->problems);
        strv_free(o->services);
        free(o->derived.net_interface_path);
        free(o->derived.pci_device_path);
        free(o->derived.path_limited_by);
        health_state_done(&o->derived.health_state);
        return mfree(o);
}

void thunderbolt_init(Thunderbolt *tbt, BusPublisher *p, int sysfs_fd) {
        *tbt = (Thunderbolt) {
                .objects = TABLE_INIT(tbt_object_compare),
                .services = TABLE_INIT(tbt_object_compare),
                .publisher = p,
                .sysfs_fd = sysfs_fd,
        };
}

void thunderbolt_done(Thunderbolt *tbt) {
        TbtObject *o;

        TBT_FOREACH(o, tbt)
                tbt_object_free(o);
        table_done(&tbt->objects);
        table_done(&tbt->services);
        tbt_departures_done(&tbt->departed);
}

static void count_change(TbtObject *o, const char *what) {
        tbt_link_changes_add(&o->link_changes, now_usec(CLOCK_MONOTONIC));
        bus_object_changed(&o->bus, "LinkChanges");
        log_tbt_debug(o, "%s: link change %" PRIu32 ".", what, o->link_changes.count);
}

/* Takes over d. */
static int tbt_object_new(Thunderbolt *tbt, TbtDevice *d, TbtObject **ret) {
        _cleanup_(tbt_device_freep) TbtDevice *device = d;
        _cleanup_(freep) char *path = NULL;
        TbtObject *o;
        int r;

        if (device->kind != TBT_KIND_SERVICE) {
                r = tbt_object_path(device->sysname, &path);
                if (r < 0)
                        return r;
        }

        o = new0(TbtObject, 1);
        if (!o)
                return -ENOMEM;
        o->sysname = strdup(device->sysname);
        o->sysname_utf8 = utf8_escape_invalid(device->sysname);
        if (!o->sysname || !o->sysname_utf8) {
                tbt_object_free(o);
                return -ENOMEM;
        }
        o->owner = tbt;
        o->type = _TBT_NODE_TYPE_INVALID;
        o->depth = -1;
        o->link_class = _TBT_LINK_CLASS_INVALID;
        o->derived.health_state = HEALTH_STATE_INIT;

        r = table_put(tbt_table(tbt, device->kind), o->sysname, o);
        if (r < 0) {
                tbt_object_free(o);
                return r;
        }
        o->device = TAKE_PTR(device);
        if (path) {
                bus_object_init(&o->bus, tbt->publisher, &tbt_bus_type, TAKE_PTR(path));
                o->published = true;
                /* The same device back after it was unplugged: its count goes on, one more change. */
                if (tbt_departures_take(&tbt->departed, o->device->unique_id, &o->link_changes))
                        count_change(o, "Back again");
        }
        log_tbt_debug(o, "Added (%s).", tbt_kind_to_string(o->device->kind));
        *ret = o;
        return 0;
}

static void tbt_object_remove(TbtObject *o) {
        Thunderbolt *tbt = o->owner;

        log_tbt_debug(o, "Removed.");
        if (o->published && IN_SET(o->device->kind, TBT_KIND_ROUTER, TBT_KIND_PEER) &&
            tbt_departures_remember(&tbt->departed, o->device->unique_id, &o->link_changes) < 0)
                log_oom(); /* forgetting it costs one uncounted replug */
        /* InterfacesRemoved needs the object still findable. */
        bus_object_remove(&o->bus);
        table_remove(tbt_table(tbt, o->device->kind), o->sysname);
        tbt_object_free(o);
}

/* Whether d is below the device named ancestor, following the parents we know. */
static bool tbt_is_below(Thunderbolt *tbt, const TbtDevice *d, const char *ancestor) {
        size_t steps = 0, limit = tbt_count(tbt);

        for (const char *p = d->parent; p && steps <= limit; steps++) {
                TbtObject *parent;

                if (streq(p, ancestor))
                        return true;
                parent = tbt_object_get(tbt, p);
                if (!parent)
                        return false;
                p = parent->device->parent;
        }
        return false;
}

/* A device went away: so did everything below it (the kernel removes children first, but after a
 * lost event or an overrun only the dock's own removal may tell us). */
static void tbt_remove_subtree(Thunderbolt *tbt, const char *sysname) {
        _cleanup_(strv_freep) char **doomed = NULL;
        TbtObject *o;

        TBT_FOREACH(o, tbt)
                if (streq(o->sysname, sysname) || tbt_is_below(tbt, o->device, sysname))
                        if (strv_consume(&doomed, strdup(o->sysname)) < 0) {
                                log_oom();
                                return;
                        }
        STRV_FOREACH(name, doomed) {
                o = tbt_object_get(tbt, *name);
                if (o)
                        tbt_object_remove(o);
        }
}

/* Facts that make a device what it is. If one differs between two reads of the same name, another
 * device took the name (replugged while we were not listening): a new object, not a change. */
static bool tbt_identity_differs(const TbtDevice *a, const TbtDevice *b) {
        return a->kind != b->kind || !streq_ptr(a->unique_id, b->unique_id) ||
               a->has_vendor_id != b->has_vendor_id || a->vendor_id != b->vendor_id ||
               a->has_device_id != b->has_device_id || a->device_id != b->device_id ||
               a->generation != b->generation || a->has_route != b->has_route || a->route != b->route;
}

/* Records which published properties read straight from the device differ, then takes over d. */
static void tbt_object_set_device(TbtObject *o, TbtDevice *d) {
        TbtDevice *old = o->device;
        const struct {
                bool differs;
                const char *property;
        } fields[] = {
                { !streq_ptr(old->device_name, d->device_name), "Name" },
                { !streq_ptr(old->vendor_name, d->vendor_name), "Vendor" },
                { !streq_ptr(old->nvm_version, d->nvm_version), "NvmVersion" },
                { old->authorized != d->authorized, "Authorized" },
                { old->security != d->security, "SecurityLevel" },
                { old->rx.lanes != d->rx.lanes, "RxLanes" },
                { old->tx.lanes != d->tx.lanes, "TxLanes" },
                { old->rx.lane_gbps != d->rx.lane_gbps, "RxLaneGbps" },
                { old->tx.lane_gbps != d->tx.lane_gbps, "TxLaneGbps" },
        };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (fields[i].differs)
                        bus_object_changed(&o->bus, fields[i].property);
        o->device = d;
        tbt_device_free(old);
}

/* The one path for enumeration and events: takes over d. */
static int tbt_object_update(Thunderbolt *tbt, TbtDevice *d) {
        TbtObject *o = tbt_object_get(tbt, d->sysname);
        int r;

        if (o && tbt_identity_differs(o->device, d)) {
                log_tbt_debug(o, "Another device under the same name; replacing the object.");
                tbt_object_remove(o);
                o = NULL;
        }
        if (!o) {
                r = tbt_object_new(tbt, d, &o);
                if (r < 0)
                        return r;
        } else
                tbt_object_set_device(o, d);
        o->seen = true;
        return 0;
}

static void tbt_read_device(Thunderbolt *tbt, const char *sysname) {
        TbtDevice *d = NULL;
        int r;

        r = tbt_device_read(tbt->sysfs_fd, sysname, &d);
        if (r == -ENOMEM) {
                log_oom();
                return;
        }
        if (r < 0) {
                /* Gone again (unplugged while we read), or no longer a kind we know. */
                log_debug_errno(r, "Thunderbolt device %s cannot be read, dropping it: %m", sysname);
                tbt_remove_subtree(tbt, sysname);
                return;
        }
        r = tbt_object_update(tbt, d);
        if (r < 0)
                log_warning_errno(r, "Failed to add Thunderbolt device %s: %m", sysname);
}

/* This node's lines of the tree's problems ("<sysname>: ..."), escaped for D-Bus. */
static int tbt_node_problems(const TbtTopology *t, const char *sysname, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        size_t len = strlen(sysname);
        int r;

        STRV_FOREACH(p, t->problems) {
                if (strncmp(*p, sysname, len) != 0 || !startswith(*p + len, ": "))
                        continue;
                r = strv_consume(&l, utf8_escape_invalid(*p + len + 2));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int tbt_node_services(TbtObject *const *objects, const TbtTopology *t, size_t i, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        int r;

        for (size_t c = 0; c < t->n_children[i]; c++) {
                const TbtDevice *s = objects[t->children[t->child_start[i] + c]]->device;
                const char *key;

                if (s->kind != TBT_KIND_SERVICE)
                        continue;
                key = s->service_key ?: "unknown";
                if (strv_contains(l, key))
                        continue;
                r = strv_consume(&l, strdup(key));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int tbt_object_apply_node(TbtObject *const *objects, const TbtTopology *t, size_t i) {
        _cleanup_(strv_freep) char **problems = NULL, **services = NULL;
        const TbtNode *node = &t->nodes[i];
        TbtObject *o = objects[i], *parent = node->parent >= 0 ? objects[node->parent] : NULL;
        int r;

        bus_object_set(&o->bus, o->type, node->type, "Type");
        r = bus_object_set_string(&o->bus, &o->parent_path, parent && parent->published ? parent->bus.path : NULL,
                                  "Parent");
        if (r < 0)
                return r;
        bus_object_set(&o->bus, o->depth, node->depth, "Depth");
        bus_object_set(&o->bus, o->usb4_version, node->usb4_version, "Usb4Version");

        if (o->has_link && node->has_link && tbt_rate_changed(o->rx_gbps, o->tx_gbps, node->link.rx_gbps, node->link.tx_gbps))
                count_change(o, "Link rate or lanes changed");
        o->has_link = node->has_link;
        bus_object_set(&o->bus, o->link_class, node->has_link ? node->link.link_class : _TBT_LINK_CLASS_INVALID,
                       "LinkClass");
        bus_object_set(&o->bus, o->rx_gbps, node->link.rx_gbps, "RxGbps");
        bus_object_set(&o->bus, o->tx_gbps, node->link.tx_gbps, "TxGbps");
        bus_object_set(&o->bus, o->path_rx_gbps, node->path_rx_gbps, "PathRxGbps");
        bus_object_set(&o->bus, o->path_tx_gbps, node->path_tx_gbps, "PathTxGbps");
        bus_object_set(&o->bus, o->degraded, node->link.degraded, "Degraded");
        r = bus_object_set_string(&o->bus, &o->degraded_reason, node->link.degraded_reason, "DegradedReason");
        if (r < 0)
                return r;
        if (r > 0 && o->degraded_reason)
                log_tbt_info(o, "Degraded: %s.", o->degraded_reason);
        o->path_generation = tbt_topology_path_generation(t, i);

        r = tbt_node_problems(t, o->sysname, &problems);
        if (r < 0)
                return r;
        STRV_FOREACH(p, problems)
                if (!strv_contains(o->problems, *p))
                        log_tbt_warning(o, "%s", *p);
        (void) bus_object_set_strv(&o->bus, &o->problems, &problems, "Problems");

        if (o->device->kind == TBT_KIND_PEER) {
                r = tbt_node_services(objects, t, i, &services);
                if (r < 0)
                        return r;
                (void) bus_object_set_strv(&o->bus, &o->services, &services, "Services");
        }
        return 0;
}

/* Rebuilds the tree from the table (a few dozen devices at most: cheap) and publishes what moved. */
static void tbt_apply_topology(Thunderbolt *tbt) {
        size_t n = tbt_count(tbt), i = 0;
        _cleanup_(freep) TbtObject **objects = new0(TbtObject *, n + 1);
        _cleanup_(freep) TbtDevice **devices = new0(TbtDevice *, n + 1);
        _cleanup_(tbt_topology_freep) TbtTopology *t = NULL;
        TbtObject *o;
        int r;

        if (!objects || !devices) {
                log_oom();
                return;
        }
        TBT_FOREACH(o, tbt) {
                objects[i] = o;
                devices[i++] = o->device;
        }
        r = tbt_topology_build(devices, n, &t);
        if (r < 0) {
                log_oom();
                return;
        }
        for (i = 0; i < n; i++) {
                r = tbt_object_apply_node(objects, t, i);
                if (r < 0) {
                        log_oom();
                        return;
                }
        }
        /* Network interfaces and services are tied together by the derivation pass. */
        tbt->changed = true;
        bus_publisher_schedule(tbt->publisher);
}

void tbt_udev_event(void *userdata, struct udev_device *device, const char *action) {
        Thunderbolt *tbt = userdata;
        const char *sysname = udev_device_get_sysname(device);

        if (isempty(sysname))
                return;
        log_debug("udev: thunderbolt %s %s", action, sysname);
        /* The event says only that something happened; the facts are read from sysfs. A removal is
         * taken at its word: the device's directory may linger for a moment. */
        if (streq(action, "remove"))
                tbt_remove_subtree(tbt, sysname);
        else
                tbt_read_device(tbt, sysname);
        tbt_apply_topology(tbt);
}

int tbt_enumerate_all(void *userdata) {
        Thunderbolt *tbt = userdata;
        TbtDevice **devices = NULL;
        size_t n = 0;
        TbtObject *o;
        int r;

        r = tbt_enumerate(tbt->sysfs_fd, &devices, &n);
        if (r < 0)
                return log_warning_errno(r, "Failed to enumerate Thunderbolt devices: %m");

        TBT_FOREACH(o, tbt)
                o->seen = false;
        for (size_t i = 0; i < n; i++) {
                r = tbt_object_update(tbt, TAKE_PTR(devices[i]));
                if (r < 0)
                        log_warning_errno(r, "Failed to add a Thunderbolt device: %m");
        }
        free(devices);
        TABLE_FOREACH_SAFE(o, &tbt->objects)
                if (!o->seen)
                        tbt_object_remove(o);
        TABLE_FOREACH_SAFE(o, &tbt->services)
                if (!o->seen)
                        tbt_object_remove(o);

        tbt_apply_topology(tbt);
        log_debug("Thunderbolt: %zu devices.", tbt_count(tbt));
        return 0;
}

int thunderbolt_watch(Thunderbolt *tbt, UdevSource *udev) {
        int r;

        r = udev_source_add_subsystem(udev, "thunderbolt", tbt_udev_event, tbt_enumerate_all, tbt);
        if (r < 0)
                return log_error_errno(r, "Failed to watch udev's thunderbolt subsystem: %m");
        return 0;
}
