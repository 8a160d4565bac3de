/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/gmo-replay — the floor under GetManagedObjects through a bus: a server that does nothing but
 * answer it with the reply it fetched once from linkprobed, byte for byte. libdbus, not sd-bus: its
 * dbus_message_copy() copies a message's bytes as they are, where sd-bus can only re-marshal a message
 * element by element (slower than linkprobed building its reply). So a client timed against this server
 * and against linkprobed sees the same bytes cross the same broker, and the difference is linkprobed
 * building its answer.
 *
 *   gmo-replay ADDRESS NAME
 *
 * Fetches the reply, takes NAME on the bus at ADDRESS, prints "ready" and serves until it is killed. */
#include <dbus/dbus.h>
#include <stdio.h>

#include "shared/bus-names.h"

static int fail(const char *what, DBusError *error) {
        fprintf(stderr, "gmo-replay: %s: %s\n", what, dbus_error_is_set(error) ? error->message : "out of memory");
        dbus_error_free(error);
        return 1;
}

static void answer(DBusConnection *bus, DBusMessage *call, DBusMessage *stored) {
        DBusMessage *reply = dbus_message_copy(stored);

        if (!reply || !dbus_message_set_reply_serial(reply, dbus_message_get_serial(call)) ||
            !dbus_message_set_destination(reply, dbus_message_get_sender(call)) || !dbus_connection_send(bus, reply, NULL))
                fprintf(stderr, "gmo-replay: cannot answer: out of memory\n");
        if (reply)
                dbus_message_unref(reply);
        dbus_connection_flush(bus);
}

int main(int argc, char *argv[]) {
        DBusError error;
        DBusConnection *bus;
        DBusMessage *call, *stored;

        if (argc != 3) {
                fprintf(stderr, "usage: gmo-replay ADDRESS NAME\n");
                return 2;
        }
        dbus_error_init(&error);
        bus = dbus_connection_open_private(argv[1], &error);
        if (!bus || !dbus_bus_register(bus, &error))
                return fail("cannot connect", &error);
        call = dbus_message_new_method_call(BUS_NAME, BUS_PATH, "org.freedesktop.DBus.ObjectManager",
                                            "GetManagedObjects");
        if (!call)
                return fail("cannot ask linkprobed", &error);
        stored = dbus_connection_send_with_reply_and_block(bus, call, DBUS_TIMEOUT_USE_DEFAULT, &error);
        dbus_message_unref(call);
        if (!stored)
                return fail("linkprobed did not answer", &error);
        if (dbus_bus_request_name(bus, argv[2], DBUS_NAME_FLAG_DO_NOT_QUEUE, &error) !=
            DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
                return fail("cannot take the name", &error);
        printf("ready\n");
        fflush(stdout);

        while (dbus_connection_read_write(bus, -1)) {
                DBusMessage *m;

                while ((m = dbus_connection_pop_message(bus))) {
                        if (dbus_message_is_method_call(m, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))
                                answer(bus, m, stored);
                        dbus_message_unref(m);
                }
        }
        return 1; /* the bus went away */
}
