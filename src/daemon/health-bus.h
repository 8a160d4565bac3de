/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* health-bus.h — Health, HealthReason, Degraded and DegradedReason: the same four properties, with the
 * same getters, on every judged kind (Link, RdmaPort, Pci, Thunderbolt) */
#pragma once

#include <systemd/sd-bus.h>

#include "bus-util.h"
#include "health.h"

/* Health as "s": health_to_string() of a Health field. */
int health_bus_get_health(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error);

/*
 * The two pairs of vtable entries, where each kind's interface lists them (the order of the properties
 * is part of the published interface, so the pairs stay apart where they always stood). state names the
 * kind's HealthState member (derived.health_state).
 */
#define HEALTH_BUS_PROPERTIES(type, state)                                                                     \
        SD_BUS_PROPERTY("Health", "s", health_bus_get_health, offsetof(type, state.health),                    \
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),                                                  \
        SD_BUS_PROPERTY("HealthReason", "s", bus_property_get_string, offsetof(type, state.health_reason),     \
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

#define HEALTH_BUS_DEGRADED_PROPERTIES(type, state)                                                            \
        SD_BUS_PROPERTY("Degraded", "b", bus_property_get_bool, offsetof(type, state.degraded),                \
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),                                                  \
        SD_BUS_PROPERTY("DegradedReason", "s", bus_property_get_string, offsetof(type, state.degraded_reason), \
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
