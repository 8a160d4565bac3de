/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-object.h — change tracking for published objects: one signal per object per loop iteration */
#pragma once

#include <systemd/sd-bus.h>

#include "shared/macros.h"

typedef struct Manager Manager;
typedef struct BusObject BusObject;

#define BUS_OBJECT_CHANGED_MAX 48

typedef struct BusObjectType {
        const char *interface;
        /* Runs once per flush before the object's signal goes out, however many events touched it in
         * this iteration: the place for work they should share, such as re-reading sysfs. */
        void (*prepare)(BusObject *o);
} BusObjectType;

/*
 * Embedded in every published object. Changes are collected by property name and sent by the
 * manager's flush (a defer event source), so a burst of netlink messages for one link becomes one
 * PropertiesChanged, and a new object becomes one InterfacesAdded with its final values.
 */
struct BusObject {
        Manager *manager;
        const BusObjectType *type;
        char *path;
        bool announced;     /* InterfacesAdded went out, or the object predates our bus name */
        size_t dirty_index; /* 1 + position in manager->dirty, 0 when not queued */
        unsigned n_changed;
        const char *changed[BUS_OBJECT_CHANGED_MAX + 1];
};

/* Takes ownership of path. The object is queued for InterfacesAdded. */
void bus_object_init(BusObject *o, Manager *m, const BusObjectType *type, char *path);
/* Marks property (a string with static lifetime) as changed. Unannounced objects need no names. */
void bus_object_changed(BusObject *o, const char *property);
/* Queues the object for the next flush without naming a property (its prepare() decides). */
void bus_object_queue(BusObject *o);
/* Emits InterfacesRemoved if the object was announced (it must still be findable by the bus's
 * object lookup) and drops pending changes. Call before taking the object out of its table. */
void bus_object_remove(BusObject *o);
/* Releases the path and dequeues. */
void bus_object_done(BusObject *o);

/* Sends every queued change. Also called directly after the initial enumeration. */
void manager_flush_bus_objects(Manager *m);
int manager_schedule_flush(Manager *m);

/*
 * A kind of child object (links, Thunderbolt devices, ...): its interface, its vtable and where the
 * manager keeps its objects. GetManagedObjects is answered straight from these tables with each
 * vtable's own getters, so there is one definition of every property, and a reply for thousands of
 * links costs a loop instead of sd-bus's generic per-path lookups.
 */
typedef struct BusObjectKind {
        const char *prefix; /* the objects' paths are sd_bus_path_encode(prefix, label) */
        const char *interface;
        const sd_bus_vtable *vtable;
        size_t table_offset; /* offsetof(Manager, the Table of this kind) */
        size_t bus_offset;   /* offsetof(Object, bus) */
        /* The object a decoded path label names, or NULL. Only an object whose bus path is exactly the
         * path asked for is found, so "07" or another spelling of "7" names nothing. */
        void *(*lookup)(Manager *m, const char *label);
} BusObjectKind;

typedef struct BusKindRegistration {
        Manager *manager;
        const BusObjectKind *kind;
} BusKindRegistration;

/* Publishes a kind: its fallback vtable with the lookup, a node enumerator over its table, and its
 * place in GetManagedObjects. Objects whose bus path is not set yet are not published. */
int manager_add_bus_kind(Manager *m, const BusObjectKind *kind);

/* Appends a{sv} with every property of vtable (as GetAll would list them) for the object userdata. */
int bus_append_all_properties(sd_bus_message *reply, const char *path, const char *interface,
                              const sd_bus_vtable *vtable, void *userdata, sd_bus_error *error);
/* Appends GetManagedObjects' a{oa{sa{sv}}} for every registered kind. */
int manager_append_managed_objects(Manager *m, sd_bus_message *reply, sd_bus_error *error);

/* Updates *field and records the change when the value differs. */
#define bus_object_set(o, field, value, property)                   \
        ({                                                          \
                __typeof__(field) _v_ = (value);                    \
                bool _c_ = (field) != _v_;                          \
                if (_c_) {                                          \
                        (field) = _v_;                              \
                        bus_object_changed((o), (property));        \
                }                                                   \
                _c_;                                                \
        })

/* The same for owned strings (NULL allowed). Returns 1 if changed, 0 if equal, -ENOMEM. */
int bus_object_set_string(BusObject *o, char **field, const char *value, const char *property);
