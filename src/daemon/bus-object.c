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
                manager_published(m);
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

/* Returns whether a signal went out. */
static bool bus_object_emit(BusObject *o) {
        Manager *m = o->manager;
        bool sent = false;
        int r;

        if (!o->announced) {
                o->announced = true;
                if (m->bus_name_acquired) {
                        r = sd_bus_emit_object_added(m->bus, o->path);
                        if (r < 0)
                                log_debug_errno(r, "%s: failed to emit InterfacesAdded: %m", o->path);
                        sent = true;
                }
        } else if (o->n_changed > 0 && m->bus_name_acquired) {
                o->changed[o->n_changed] = NULL;
                r = sd_bus_emit_properties_changed_strv(m->bus, o->path, o->type->interface,
                                                        (char **) o->changed);
                if (r < 0)
                        log_debug_errno(r, "%s: failed to emit PropertiesChanged: %m", o->path);
                sent = true;
        }
        o->n_changed = 0;
        return sent;
}

void manager_flush_bus_objects(Manager *m) {
        bool published = false;

        /* A removal queues nothing, yet facts other objects derive from it may have moved. */
        manager_after_prepare(m);
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
                        published |= bus_object_emit(o);
                }
                free(batch);
        }
        if (published)
                manager_published(m);
}

static const BusObject *kind_bus_object(const BusObjectKind *kind, const void *object) {
        return (const BusObject *) (const void *) ((const uint8_t *) object + kind->bus_offset);
}

static const Table *kind_table(Manager *m, const BusObjectKind *kind) {
        return (const Table *) (const void *) ((const uint8_t *) m + kind->table_offset);
}

static int kind_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                     sd_bus_error *error) {
        const BusKindRegistration *reg = userdata;
        _cleanup_(freep) char *label = NULL;
        void *object;

        if (sd_bus_path_decode(path, reg->kind->prefix, &label) <= 0)
                return 0;
        object = reg->kind->lookup(reg->manager, label);
        if (!object)
                return 0;
        const BusObject *o = kind_bus_object(reg->kind, object);
        if (!o->path || !streq(o->path, path))
                return 0;
        *found = object;
        return 1;
}

static int kind_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *error) {
        const BusKindRegistration *reg = userdata;
        const Table *table = kind_table(reg->manager, reg->kind);
        _cleanup_(strv_freep) char **l = NULL;
        size_t n = 0;
        void *object;

        l = new0(char *, table_size(table) + 1);
        if (!l)
                return -ENOMEM;
        TABLE_FOREACH(object, table) {
                const BusObject *o = kind_bus_object(reg->kind, object);
                if (!o->path)
                        continue;
                l[n] = strdup(o->path);
                if (!l[n])
                        return -ENOMEM;
                n++;
        }
        *nodes = TAKE_PTR(l);
        return 1;
}

int manager_add_bus_kind(Manager *m, const BusObjectKind *kind) {
        BusKindRegistration *reg;
        int r;

        if (m->n_bus_kinds >= ELEMENTSOF(m->bus_kinds))
                return -E2BIG;
        reg = &m->bus_kinds[m->n_bus_kinds];
        *reg = (BusKindRegistration) { .manager = m, .kind = kind };

        r = sd_bus_add_fallback_vtable(m->bus, NULL, kind->prefix, kind->interface, kind->vtable, kind_find, reg);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(m->bus, NULL, kind->prefix, kind_enumerate, reg);
        if (r < 0)
                return r;
        m->n_bus_kinds++;
        return 0;
}

/* The same rules sd-bus applies to a property without a getter (bus-objects.c): strings and paths
 * are char* fields, "as" a char** field, everything else the field itself (a 'b' is an int). */
static int append_field(sd_bus_message *reply, const char *signature, void *field) {
        switch (signature[0]) {
        case SD_BUS_TYPE_STRING:
        case SD_BUS_TYPE_SIGNATURE:
                return sd_bus_message_append_basic(reply, signature[0], strempty(*(char **) field));
        case SD_BUS_TYPE_OBJECT_PATH:
                return sd_bus_message_append_basic(reply, signature[0], *(char **) field ?: "/");
        case SD_BUS_TYPE_ARRAY:
                if (streq(signature, "as"))
                        return sd_bus_message_append_strv(reply, *(char ***) field);
                return -EINVAL;
        }
        return sd_bus_message_append_basic(reply, signature[0], field);
}

/* Closes the n innermost open containers, stopping at the first error. */
static int close_containers(sd_bus_message *m, unsigned n) {
        int r = 0;

        while (r >= 0 && n-- > 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_all_properties(sd_bus_message *reply, const char *path, const char *interface,
                              const sd_bus_vtable *vtable, void *userdata, sd_bus_error *error) {
        sd_bus *bus = sd_bus_message_get_bus(reply);
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        for (const sd_bus_vtable *v = vtable; v->type != _SD_BUS_VTABLE_END; v++) {
                if (v->type != _SD_BUS_VTABLE_PROPERTY && v->type != _SD_BUS_VTABLE_WRITABLE_PROPERTY)
                        continue;
                /* GetAll leaves these out too. */
                if (v->flags & (SD_BUS_VTABLE_HIDDEN | SD_BUS_VTABLE_PROPERTY_EXPLICIT))
                        continue;

                void *field = (uint8_t *) userdata + v->x.property.offset;
                r = sd_bus_message_open_container(reply, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append_basic(reply, 's', v->x.property.member);
                if (r >= 0)
                        r = sd_bus_message_open_container(reply, 'v', v->x.property.signature);
                if (r >= 0)
                        r = v->x.property.get ? v->x.property.get(bus, path, interface, v->x.property.member, reply,
                                                                  field, error)
                                              : append_field(reply, v->x.property.signature, field);
                if (r >= 0)
                        r = close_containers(reply, 2); /* the variant, the dict entry */
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

int manager_append_managed_objects(Manager *m, sd_bus_message *reply, sd_bus_error *error) {
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{oa{sa{sv}}}");
        if (r < 0)
                return r;
        for (size_t k = 0; k < m->n_bus_kinds; k++) {
                const BusObjectKind *kind = m->bus_kinds[k].kind;
                const Table *table = kind_table(m, kind);
                void *object;

                TABLE_FOREACH(object, table) {
                        const BusObject *o = kind_bus_object(kind, object);
                        if (!o->path)
                                continue;

                        r = sd_bus_message_open_container(reply, 'e', "oa{sa{sv}}");
                        if (r >= 0)
                                r = sd_bus_message_append_basic(reply, 'o', o->path);
                        if (r >= 0)
                                r = sd_bus_message_open_container(reply, 'a', "{sa{sv}}");
                        if (r >= 0)
                                r = sd_bus_message_open_container(reply, 'e', "sa{sv}");
                        if (r >= 0)
                                r = sd_bus_message_append_basic(reply, 's', kind->interface);
                        if (r >= 0)
                                r = bus_append_all_properties(reply, o->path, kind->interface, kind->vtable, object,
                                                              error);
                        if (r >= 0)
                                r = close_containers(reply, 3); /* interface entry, its array, path entry */
                        if (r < 0)
                                return r;
                }
        }
        return sd_bus_message_close_container(reply);
}
