/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-util.h — property getters for fields a vtable names with offsetof(), as sd-bus intends */
#pragma once

#include <systemd/sd-bus.h>

/*
 * Each getter's userdata points at the field (the object plus the vtable entry's offsetof()), so
 * one getter serves every property of its kind:
 *   SD_BUS_PROPERTY("Name", "s", bus_property_get_string, offsetof(Gpu, inventory.name), ...)
 */

/* A char* as "s"; NULL is "". */
int bus_property_get_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* A char* that is valid UTF-8 by construction (escaped or formatted by us when it was set), as "s"
 * without sd-bus checking it again (bus_message_append_valid_string()); NULL is "". */
int bus_property_get_valid_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* A char* the kernel or a driver chose, as "s" with invalid UTF-8 escaped; NULL is "". */
int bus_property_get_escaped(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* A char* object path as "o"; NULL (no such object) is "/". */
int bus_property_get_object_path(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* A bool as "b". */
int bus_property_get_bool(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* A char** as "as"; NULL is the empty array. */
int bus_property_get_strv(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error);

/* Appends s as "s", written in place without sd-bus checking it as UTF-8 again: only for strings that
 * are valid by construction (our constant names, text we formatted, names escaped when they arrived).
 * GetManagedObjects appends a dozen per link, and sd_bus_message_append_basic()'s check made each half
 * again as dear. Invalid UTF-8 here would reach the bus, which disconnects a sender of an invalid
 * message: anything a kernel, a driver or a peer chose goes through the checked getters. NULL is "". */
int bus_message_append_valid_string(sd_bus_message *m, const char *s);
/* Appends s as "s" with invalid UTF-8 escaped; NULL is "". */
int bus_message_append_escaped(sd_bus_message *m, const char *s);

/* Defines a getter for an enum field of type that publishes to_string(value) as "s" (a constant name:
 * written without a UTF-8 check). */
#define BUS_DEFINE_PROPERTY_GET_ENUM(function, type, to_string)                                            \
        static int function(sd_bus *bus, const char *path, const char *interface, const char *property,    \
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {                  \
                const type *v = userdata;                                                                  \
                return bus_message_append_valid_string(reply, to_string(*v));                              \
        }
