/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* udev.h — one libudev monitor for every subsystem a source of facts cares about */
#pragma once

#include <systemd/sd-event.h>

#include "shared/macros.h"

typedef struct UdevSource UdevSource;
struct udev_device;

/* action is "add", "change", "remove", "bind", "unbind", "move", "online", "offline". */
typedef void (*udev_event_handler_t)(void *userdata, struct udev_device *device, const char *action);
/* Reads the subsystem's current state from scratch (start-up, overrun, Refresh) and publishes the
 * differences. */
typedef int (*udev_enumerate_handler_t)(void *userdata);

/* The monitor's receive buffer is set to rcvbuf bytes when it starts. */
int udev_source_new(sd_event *event, uint64_t rcvbuf, UdevSource **ret);
UdevSource *udev_source_free(UdevSource *u);
DEFINE_TRIVIAL_CLEANUP_FUNC(UdevSource *, udev_source_free);

/* Registers a subsystem before udev_source_start(). */
int udev_source_add_subsystem(UdevSource *u, const char *subsystem, udev_event_handler_t on_event,
                               udev_enumerate_handler_t enumerate, void *userdata);
/* Connects the monitor (filters, receive buffer) and starts receiving. Call before enumerating. */
int udev_source_start(UdevSource *u);
/* Runs every subsystem's enumerate handler. */
int udev_source_enumerate(UdevSource *u);

uint64_t udev_source_overruns(const UdevSource *u);
