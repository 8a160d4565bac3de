/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inhibit-bus.h — Manager.Inhibit(), ListInhibitors() and the Inhibited property */
#pragma once

#include <systemd/sd-bus.h>

int bus_method_inhibit(sd_bus_message *message, void *userdata, sd_bus_error *error);
int bus_method_list_inhibitors(sd_bus_message *message, void *userdata, sd_bus_error *error);
int bus_property_get_inhibited(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error);
