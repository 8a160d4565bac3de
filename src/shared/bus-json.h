/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-json.h — D-Bus values as json-c objects, for `linkprobectl --json` and tests */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "json-util.h"

/* Reads the next complete value (any signature) from m. Dicts become objects, arrays and structs
 * become arrays, variants are unwrapped. The object path "/" (no object) and doubles that are not
 * finite become null. */
int bus_message_read_json(sd_bus_message *m, json_object **ret);

/* GetManagedObjects below root as {path: {interface: {property: value}}}. */
int bus_get_managed_objects_json(sd_bus *bus, const char *destination, const char *root,
                                 json_object **ret, sd_bus_error *error);
/* Properties.GetAll as {property: value}. */
int bus_get_all_json(sd_bus *bus, const char *destination, const char *path, const char *interface,
                     json_object **ret, sd_bus_error *error);
