/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-bus.h>

#include "bus-object.h"
#include "manager.h"
#include "shared/log.h"
#include "shared/string-util.h"

static int manager_enqueue(Manager *m, BusObject *o) {
        if (o->dirty_index > 0)
                return 0;

        if (m->n_dirty == m->n_dirty_allocated) {
                size_t n = MAX(m->n_dirty_allocated * 2, (size_t) 64);
                BusObject **grown = reallocarray(m->dirty, n, sizeof(BusObject *));
                if (!grown)
                        return log_oom();
                m->dirty = grown;
                m->n_dirty_allocated = n;
        }
        m->dirty[m->n_dirty++] = o;
        o->dirty_index = m->n_dirty;
        return manager_schedule_flush(m);
}

static void manager_dequeue(Manager *m, BusObject *o) {
        if (o->dirty_index == 0)
                return;
        m->dirty[o->dirty_index - 1] = NULL;
        o->dirty_index = 0;
}

void bus_object_init(BusObject *o, Manager *m, const BusObjectType *type, char *path) {
        *o = (BusObject) {
                .manager = m,
                .type = type,
                .path = path,
        };
        (void) manager_enqueue(m, o);
}

void bus_object_changed(BusObject *o, const char *property) {
        if (!o->manager)
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
        (void) manager_enqueue(o->manager, o);
}

void bus_object_queue(BusObject *o) {
        if (o->manager)
                (void) manager_enqueue(o->manager, o);
}

int bus_object_set_string(BusObject *o, char **field, const char *value, const char *property) {
        int r = free_and_strdup(field, value);
        if (r > 0)
                bus_object_changed(o, property);
        return r;
}

void bus_object_remove(BusObject *o) {
        Manager *m = o->manager;
        int r;

        if (!m)
                return;
        if (o->announced && m->bus_name_acquired) {
                r = sd_bus_emit_object_removed(m->bus, o->path);
                if (r < 0)
                        log_debug_errno(r, "%s: failed to emit InterfacesRemoved: %m", o->path);
        }
        o->announced = false;
        o->n_changed = 0;
        manager_dequeue(m, o);
}

void bus_object_done(BusObject *o) {
        if (o->manager)
                manager_dequeue(o->manager, o);
        o->path = mfree(o->path);
        o->manager = NULL;
}

static void bus_object_emit(BusObject *o) {
        Manager *m = o->manager;
        int r;

        if (!o->announced) {
                o->announced = true;
                if (m->bus_name_acquired) {
                        r = sd_bus_emit_object_added(m->bus, o->path);
                        if (r < 0)
                                log_debug_errno(r, "%s: failed to emit InterfacesAdded: %m", o->path);
                }
        } else if (o->n_changed > 0 && m->bus_name_acquired) {
                o->changed[o->n_changed] = NULL;
                r = sd_bus_emit_properties_changed_strv(m->bus, o->path, o->type->interface,
                                                        (char **) o->changed);
                if (r < 0)
                        log_debug_errno(r, "%s: failed to emit PropertiesChanged: %m", o->path);
        }
        o->n_changed = 0;
}

void manager_flush_bus_objects(Manager *m) {
        while (m->n_dirty > 0) {
                size_t prepared = 0;

                /* Preparing an object (re-reading sysfs) may change facts other objects derive from,
                 * which queues those; prepare until nothing new arrives, then emit the whole batch. */
                for (;;) {
                        for (; prepared < m->n_dirty; prepared++) {
                                BusObject *o = m->dirty[prepared];
                                if (o && o->type->prepare)
                                        o->type->prepare(o);
                        }
                        manager_after_prepare(m);
                        if (prepared == m->n_dirty)
                                break;
                }

                BusObject **batch = TAKE_PTR(m->dirty);
                size_t n = m->n_dirty;
                m->n_dirty = m->n_dirty_allocated = 0;

                for (size_t i = 0; i < n; i++) {
                        BusObject *o = batch[i];
                        if (!o)
                                continue;
                        o->dirty_index = 0;
                        bus_object_emit(o);
                }
                free(batch);
        }
}
