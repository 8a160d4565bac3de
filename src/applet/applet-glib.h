/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-glib.h — an sd_bus connection driven by GLib's main loop (GTK owns the loop) */
#pragma once

#include <glib.h>
#include <systemd/sd-bus.h>

/* Called once when the connection is lost (the bus daemon went away); the source is gone by then. */
typedef void (*BusLostFunc)(sd_bus *bus, void *userdata);

/* A GSource that dispatches bus until it is destroyed; it holds a reference to bus. */
GSource *bus_glib_attach(sd_bus *bus, BusLostFunc lost, void *userdata);
