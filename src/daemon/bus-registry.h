/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-registry.h — object kinds on the bus: fallback vtables, node enumerators, GetManagedObjects */
#pragma once

#include <systemd/sd-bus.h>

#include "shared/table.h"

/*
 * A kind of child object (links, Thunderbolt devices, ...): its interface, its vtable and how its
 * objects are found. GetManagedObjects is answered straight from the kinds' tables with each
 * vtable's own getters, so there is one definition of every property, and a reply for thousands of
 * links costs a loop instead of sd-bus's generic per-path lookups.
 */
typedef struct BusKind {
        const char *prefix; /* the objects' paths are sd_bus_path_encode(prefix, label) */
        const char *interface;
        const sd_bus_vtable *vtable;
        size_t bus_offset;  /* offsetof(Object, bus), a BusObject */
        /* The object a decoded path label names in collection, or NULL. Only an object whose bus
         * path is exactly the path asked for is found, so "07" or another spelling of "7" names
         * nothing. */
        void *(*lookup)(void *collection, const char *label);
} BusKind;

typedef struct BusKindRegistration {
        const BusKind *kind;
        const Table *table; /* the objects, in the order GetManagedObjects lists them */
        void *collection;   /* what lookup() searches */
} BusKindRegistration;

#define BUS_REGISTRY_KINDS_MAX 16

typedef struct BusRegistry {
        sd_bus *bus;
        BusKindRegistration kinds[BUS_REGISTRY_KINDS_MAX];
        size_t n_kinds;
} BusRegistry;

/* Publishes a kind: its fallback vtable with the lookup, a node enumerator over table, and its
 * place in GetManagedObjects. Objects whose bus path is not set yet are not published. */
int bus_registry_add(BusRegistry *r, const BusKind *kind, const Table *table, void *collection);
/* Publishes every kind added so far on one more connection (a client of the private socket): the
 * same lookups over the same tables. */
int bus_registry_attach(BusRegistry *r, sd_bus *bus);

/* Appends a{sv} with every property of vtable (as GetAll would list them) for the object userdata.
 * GetManagedObjects calls every getter of every object (2000 links: 40000 calls), and sd-bus's own
 * appending is already most of its cost: getters append with sd_bus_message_append_basic(), not a
 * format string, and what needs formatting is formatted once, when the state changes. */
int bus_append_all_properties(sd_bus_message *reply, const char *path, const char *interface,
                              const sd_bus_vtable *vtable, void *userdata, sd_bus_error *error);
/* Appends GetManagedObjects' a{oa{sa{sv}}} for every registered kind. */
int bus_registry_append_managed_objects(const BusRegistry *r, sd_bus_message *reply, sd_bus_error *error);
