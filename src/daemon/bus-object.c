/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>

#include "bus-object.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/string-util.h"

static int on_flush(sd_event_source *s, void *userdata) {
        bus_publisher_flush(userdata);
        return 0;
}

int bus_publisher_init(BusPublisher *p, sd_event *event, const BusPublisherHooks *hooks) {
        int r;

        *p = (BusPublisher) { .hooks = *hooks };
        r = sd_event_add_defer(event, &p->flush_source, on_flush, p);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(p->flush_source, SD_EVENT_OFF);
        (void) sd_event_source_set_description(p->flush_source, "bus-flush");
        return 0;
}

void bus_publisher_done(BusPublisher *p) {
        p->flush_source = sd_event_source_disable_unref(p->flush_source);
        p->dirty = mfree(p->dirty);
        p->n_dirty = p->n_dirty_allocated = 0;
}

void bus_publisher_schedule(BusPublisher *p) {
        if (p->flush_source)
                (void) sd_event_source_set_enabled(p->flush_source, SD_EVENT_ONESHOT);
}

static int publisher_enqueue(BusPublisher *p, BusObject *o) {
        if (o->dirty_index > 0)
                return 0;

        if (p->n_dirty == p->n_dirty_allocated) {
                size_t n = MAX(p->n_dirty_allocated * 2, (size_t) 64);
                BusObject **grown = reallocarray(p->dirty, n, sizeof(BusObject *));
                if (!grown)
                        return log_oom();
                p->dirty = grown;
                p->n_dirty_allocated = n;
        }
        p->dirty[p->n_dirty++] = o;
        o->dirty_index = p->n_dirty;
        bus_publisher_schedule(p);
        return 0;
}

static void publisher_dequeue(BusPublisher *p, BusObject *o) {
        if (o->dirty_index == 0)
                return;
        p->dirty[o->dirty_index - 1] = NULL;
        o->dirty_index = 0;
}

void bus_object_init(BusObject *o, BusPublisher *p, const BusObjectType *type, char *path) {
        *o = (BusObject) {
                .publisher = p,
                .type = type,
                .path = path,
        };
        (void) publisher_enqueue(p, o);
}

int bus_object_init_root(BusObject *o, BusPublisher *p, const BusObjectType *type) {
        char *path = strdup(BUS_PATH);

        if (!path)
                return -ENOMEM;
        bus_object_init(o, p, type, path);
        o->announced = true;
        return 0;
}

void bus_object_changed(BusObject *o, const char *property) {
        if (!o->publisher)
                return;
        if (o->announced) {
                bool seen = false;
                for (unsigned i = 0; i < o->n_changed; i++)
                        if (o->changed[i] == property || streq(o->changed[i], property)) {
                                seen = true;
                                break;
                        }
                if (!seen) {
                        if (o->n_changed < BUS_OBJECT_CHANGED_MAX)
                                o->changed[o->n_changed++] = property;
                        else
                                log_warning("%s: more than %d properties changed at once, dropping %s",
                                            o->path, BUS_OBJECT_CHANGED_MAX, property);
                }
        }
        (void) publisher_enqueue(o->publisher, o);
}

void bus_object_queue(BusObject *o) {
        if (o->publisher)
                (void) publisher_enqueue(o->publisher, o);
}

bool bus_object_set_double(BusObject *o, double *field, double value, const char *property) {
        if ((isnan(*field) && isnan(value)) || *field == value)
                return false;
        *field = value;
        bus_object_changed(o, property);
        return true;
}

int bus_object_set_string(BusObject *o, char **field, const char *value, const char *property) {
        int r = free_and_strdup(field, value);
        if (r > 0)
                bus_object_changed(o, property);
        return r;
}

int bus_object_set_strv(BusObject *o, char ***field, char ***value, const char *property) {
        if (strv_equal(*field, *value)) {
                *value = strv_free(*value);
                return 0;
        }
        strv_free(*field);
        *field = TAKE_PTR(*value);
        bus_object_changed(o, property);
        return 1;
}

typedef int (*EmitFunction)(sd_bus *bus, BusObject *o);

static int emit_added(sd_bus *bus, BusObject *o) {
        return sd_bus_emit_object_added(bus, o->path);
}

static int emit_removed(sd_bus *bus, BusObject *o) {
        return sd_bus_emit_object_removed(bus, o->path);
}

static int emit_changed(sd_bus *bus, BusObject *o) {
        return sd_bus_emit_properties_changed_strv(bus, o->path, o->type->interface, (char **) o->changed);
}

/* On the bus, and to every client of the private socket: a direct connection has no match rules, so
 * each gets what a bus client subscribed to everything would. */
static void publisher_emit(BusPublisher *p, BusObject *o, EmitFunction emit, const char *what) {
        int r;

        r = emit(p->bus, o);
        if (r < 0)
                log_debug_errno(r, "%s: failed to emit %s: %m", o->path, what);
        for (size_t i = 0; i < p->n_direct; i++) {
                r = emit(p->direct[i], o);
                if (r < 0)
                        log_debug_errno(r, "%s: failed to emit %s to a direct client: %m", o->path, what);
        }
}

int bus_publisher_add_direct(BusPublisher *p, sd_bus *bus) {
        if (p->n_direct >= ELEMENTSOF(p->direct))
                return -EMFILE;
        p->direct[p->n_direct++] = bus;
        return 0;
}

void bus_publisher_remove_direct(BusPublisher *p, sd_bus *bus) {
        for (size_t i = 0; i < p->n_direct; i++)
                if (p->direct[i] == bus) {
                        p->direct[i] = p->direct[--p->n_direct];
                        return;
                }
}

void bus_object_remove(BusObject *o) {
        BusPublisher *p = o->publisher;

        if (!p)
                return;
        if (o->announced && p->name_acquired) {
                publisher_emit(p, o, emit_removed, "InterfacesRemoved");
                if (p->hooks.published)
                        p->hooks.published(p->hooks.userdata);
        }
        o->announced = false;
        o->n_changed = 0;
        publisher_dequeue(p, o);
        /* What other objects derive from this one must follow, though nothing is queued. */
        bus_publisher_schedule(p);
}

void bus_object_done(BusObject *o) {
        if (o->publisher)
                publisher_dequeue(o->publisher, o);
        o->path = mfree(o->path);
        o->publisher = NULL;
}

/* Returns whether a signal went out. */
static bool bus_object_emit(BusObject *o) {
        BusPublisher *p = o->publisher;
        bool sent = false;

        if (!o->announced) {
                o->announced = true;
                if (p->name_acquired) {
                        publisher_emit(p, o, emit_added, "InterfacesAdded");
                        sent = true;
                }
        } else if (o->n_changed > 0 && p->name_acquired) {
                o->changed[o->n_changed] = NULL;
                publisher_emit(p, o, emit_changed, "PropertiesChanged");
                sent = true;
        }
        o->n_changed = 0;
        return sent;
}

void bus_publisher_flush(BusPublisher *p) {
        size_t prepared = 0, derived = 0;
        bool published = false;

        /* Record, derive, publish: prepare what sources marked (re-reading sysfs may mark more), let
         * the derivation pass see what is new, and go round again while it queued anything. */
        for (;;) {
                for (; prepared < p->n_dirty; prepared++) {
                        BusObject *o = p->dirty[prepared];
                        if (o && o->type->prepare)
                                o->type->prepare(o);
                }
                if (p->hooks.derive)
                        p->hooks.derive(p, derived, prepared, p->hooks.userdata);
                derived = prepared;
                if (prepared == p->n_dirty)
                        break;
        }

        BusObject **batch = TAKE_PTR(p->dirty);
        size_t n = p->n_dirty;
        p->n_dirty = p->n_dirty_allocated = 0;
        for (size_t i = 0; i < n; i++) {
                BusObject *o = batch[i];
                if (!o)
                        continue;
                o->dirty_index = 0;
                published |= bus_object_emit(o);
        }
        free(batch);

        if (published && p->hooks.published)
                p->hooks.published(p->hooks.userdata);
}
