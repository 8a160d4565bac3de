/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-glib.c — sd-bus on GLib's loop: the bus fd polled with the events and the timeout sd-bus asks
 * for, re-asked before each poll (sd_bus_get_events() changes as messages queue up), and
 * sd_bus_process() run until it has nothing left. */
#include <poll.h>

#include "applet-glib.h"
#include "shared/log.h"
#include "shared/macros.h"

typedef struct BusSource {
        GSource source;
        sd_bus *bus;
        gpointer tag;
        BusLostFunc lost;
        void *userdata;
} BusSource;

static gboolean bus_source_prepare(GSource *s, gint *timeout_ms) {
        BusSource *b = (BusSource *) s;
        uint64_t usec;
        int events;

        events = sd_bus_get_events(b->bus);
        g_source_modify_unix_fd(s, b->tag, events < 0 ? 0 : (GIOCondition) events);
        *timeout_ms = -1;
        if (sd_bus_get_timeout(b->bus, &usec) >= 0 && usec != UINT64_MAX) {
                uint64_t now = (uint64_t) g_get_monotonic_time();
                *timeout_ms = usec <= now ? 0 : (gint) MIN((usec - now + 999) / 1000, (uint64_t) G_MAXINT);
        }
        /* Messages already read into sd-bus's queue do not wake the fd. */
        return *timeout_ms == 0;
}

static gboolean bus_source_check(GSource *s) {
        BusSource *b = (BusSource *) s;

        return g_source_query_unix_fd(s, b->tag) != 0;
}

static gboolean bus_source_dispatch(GSource *s, GSourceFunc callback, gpointer user_data) {
        BusSource *b = (BusSource *) s;
        int r;

        /* A bounded number of rounds per wake-up: a flood of signals must not starve GTK. */
        for (unsigned i = 0; i < 256; i++) {
                r = sd_bus_process(b->bus, NULL);
                if (r <= 0)
                        break;
        }
        if (r < 0 || !sd_bus_is_open(b->bus)) {
                log_debug_errno(r, "Bus connection lost: %m");
                if (b->lost)
                        b->lost(b->bus, b->userdata);
                return G_SOURCE_REMOVE;
        }
        return G_SOURCE_CONTINUE;
}

static void bus_source_finalize(GSource *s) {
        BusSource *b = (BusSource *) s;

        sd_bus_unref(b->bus);
}

static GSourceFuncs bus_source_funcs = {
        .prepare = bus_source_prepare,
        .check = bus_source_check,
        .dispatch = bus_source_dispatch,
        .finalize = bus_source_finalize,
};

GSource *bus_glib_attach(sd_bus *bus, BusLostFunc lost, void *userdata) {
        BusSource *b;
        int fd;

        fd = sd_bus_get_fd(bus);
        if (fd < 0)
                return NULL;
        b = (BusSource *) g_source_new(&bus_source_funcs, sizeof(BusSource));
        b->bus = sd_bus_ref(bus);
        b->lost = lost;
        b->userdata = userdata;
        b->tag = g_source_add_unix_fd(&b->source, fd, G_IO_IN);
        g_source_attach(&b->source, NULL);
        return &b->source;
}
