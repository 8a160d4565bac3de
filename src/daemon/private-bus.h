/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* private-bus.h — the private socket: root talks to linkprobed directly, without the bus in between */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-object.h"

typedef struct PrivateBus PrivateBus;

/* Registers the daemon's objects on a new client's connection. */
typedef int (*PrivateBusAttach)(sd_bus *bus, void *userdata);

/* Creates a listening AF_UNIX stream socket at path, mode 0600 (root only), replacing a socket left
 * there by an earlier run but nothing else. */
int private_bus_listen(const char *path, int *ret_fd);

/* Serves D-Bus peer-to-peer on listen_fd (taken, also on failure): every client whose credentials say
 * root (or the daemon's own user) gets the objects attach() registers and every signal publisher
 * sends; at most BUS_PUBLISHER_DIRECT_MAX clients at once. */
int private_bus_new(sd_event *event, int listen_fd, BusPublisher *publisher, PrivateBusAttach attach, void *userdata,
                    PrivateBus **ret);
PrivateBus *private_bus_free(PrivateBus *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(PrivateBus *, private_bus_free);
