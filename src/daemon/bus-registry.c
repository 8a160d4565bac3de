/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-object.h"
#include "bus-registry.h"
#include "bus-util.h"
#include "shared/string-util.h"

static const BusObject *registration_bus_object(const BusKindRegistration *reg, const void *object) {
        return (const BusObject *) (const void *) ((const uint8_t *) object + reg->kind->bus_offset);
}

static int kind_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                     sd_bus_error *error) {
        const BusKindRegistration *reg = userdata;
        _cleanup_(freep) char *label = NULL;
        void *object;

        if (sd_bus_path_decode(path, reg->kind->prefix, &label) <= 0)
                return 0;
        object = reg->kind->lookup(reg->collection, label);
        if (!object)
                return 0;
        const BusObject *o = registration_bus_object(reg, object);
        if (!o->path || !streq(o->path, path))
                return 0;
        *found = object;
        return 1;
}

static int kind_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *error) {
        const BusKindRegistration *reg = userdata;
        _cleanup_(strv_freep) char **l = NULL;
        size_t n = 0;
        void *object;

        l = new0(char *, table_size(reg->table) + 1);
        if (!l)
                return -ENOMEM;
        TABLE_FOREACH(object, reg->table) {
                const BusObject *o = registration_bus_object(reg, object);
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

static int kind_attach(sd_bus *bus, BusKindRegistration *reg) {
        int k;

        k = sd_bus_add_fallback_vtable(bus, NULL, reg->kind->prefix, reg->kind->interface, reg->kind->vtable, kind_find,
                                       reg);
        if (k < 0)
                return k;
        return sd_bus_add_node_enumerator(bus, NULL, reg->kind->prefix, kind_enumerate, reg);
}

int bus_registry_add(BusRegistry *r, const BusKind *kind, const Table *table, void *collection) {
        BusKindRegistration *reg;
        int k;

        if (r->n_kinds >= ELEMENTSOF(r->kinds))
                return -E2BIG;
        reg = &r->kinds[r->n_kinds];
        *reg = (BusKindRegistration) { .kind = kind, .table = table, .collection = collection };

        k = kind_attach(r->bus, reg);
        if (k < 0)
                return k;
        r->n_kinds++;
        return 0;
}

int bus_registry_attach(BusRegistry *r, sd_bus *bus) {
        for (size_t i = 0; i < r->n_kinds; i++) {
                int k = kind_attach(bus, &r->kinds[i]);
                if (k < 0)
                        return k;
        }
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
                /* sd-bus checked the member name when the vtable was added (ASCII): not again per object. */
                if (r >= 0)
                        r = bus_message_append_valid_string(reply, v->x.property.member);
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

int bus_registry_append_managed_objects(const BusRegistry *r, sd_bus_message *reply, sd_bus_error *error) {
        int k;

        k = sd_bus_message_open_container(reply, 'a', "{oa{sa{sv}}}");
        if (k < 0)
                return k;
        for (size_t i = 0; i < r->n_kinds; i++) {
                const BusKindRegistration *reg = &r->kinds[i];
                void *object;

                TABLE_FOREACH(object, reg->table) {
                        const BusObject *o = registration_bus_object(reg, object);
                        if (!o->path)
                                continue;

                        k = sd_bus_message_open_container(reply, 'e', "oa{sa{sv}}");
                        if (k >= 0)
                                k = sd_bus_message_append_basic(reply, 'o', o->path);
                        if (k >= 0)
                                k = sd_bus_message_open_container(reply, 'a', "{sa{sv}}");
                        if (k >= 0)
                                k = sd_bus_message_open_container(reply, 'e', "sa{sv}");
                        if (k >= 0)
                                k = bus_message_append_valid_string(reply, reg->kind->interface);
                        if (k >= 0)
                                k = bus_append_all_properties(reply, o->path, reg->kind->interface, reg->kind->vtable,
                                                              object, error);
                        if (k >= 0)
                                k = close_containers(reply, 3); /* interface entry, its array, path entry */
                        if (k < 0)
                                return k;
                }
        }
        return sd_bus_message_close_container(reply);
}
