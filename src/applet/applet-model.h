/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-model.h — linkprobed's objects as the applet knows them: one GetManagedObjects when the name
 * appears, then InterfacesAdded/Removed and PropertiesChanged; nothing is ever polled */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct Model Model;

typedef struct ModelCallbacks {
        /* Anything changed (the caller debounces what it redraws). */
        void (*changed)(Model *m, void *userdata);
        /* Live events only, never for what the first GetManagedObjects after a (re)start returned. */
        void (*thunderbolt_added)(Model *m, const char *path, void *userdata);
        void (*health_changed)(Model *m, const char *path, const char *interface, const char *old_health,
                               const char *new_health, void *userdata);
} ModelCallbacks;

/* address: the bus linkprobed is on (linkprobed --bus-address=), NULL for the system bus. */
Model *model_new(const char *address, const ModelCallbacks *callbacks, void *userdata);
void model_free(Model *m);

/* Connects (DBUS_SYSTEM_BUS_ADDRESS honoured) and follows the daemon; where the bus itself is gone,
 * tries again every few seconds. */
void model_start(Model *m);

/* Whether linkprobed owns its name and its objects are loaded. */
bool model_running(const Model *m);
/* Why not, for people: "linkprobed is not running", "the system bus is not reachable", ... */
const char *model_status(const Model *m);
/* {path: {interface: {property: value}}} (bus-json.h's mapping); never NULL. */
json_object *model_objects(const Model *m);
/* One property of one object, NULL where it is missing. */
json_object *model_property(const Model *m, const char *path, const char *interface, const char *property);
