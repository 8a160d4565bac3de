/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci-bus.h — the Pci interface of pci/<address> objects, and Manager.GetAffinity() */
#pragma once

#include <systemd/sd-bus.h>

typedef struct BusRegistry BusRegistry;
typedef struct Pci Pci;

int pci_bus_register(BusRegistry *registry, Pci *pci);
/* GetAffinity() -> a(ooss): the relation of every pair of published devices (userdata: the Manager). */
int bus_method_get_affinity(sd_bus_message *message, void *userdata, sd_bus_error *error);
