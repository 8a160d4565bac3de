/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/gmo-client — times GetManagedObjects as a C client sees it: call sent to reply received and
 * validated by sd-bus, not unpacked into a language's objects (GDBus building GVariants for 2000
 * links costs more than the daemon's answer). Prints one JSON array of microseconds. With "ping", the
 * call is org.freedesktop.DBus.Peer.Ping instead, which the daemon answers at once: how long its loop
 * takes to come to a call, and nothing else.
 *
 *   gmo-client [--direct] [--dest=NAME] ADDRESS COUNT [ping]
 *
 * --direct: ADDRESS is linkprobed's private socket (unix:path=...), a peer-to-peer connection with no
 * bus in between, so no Hello. --dest=NAME: ask NAME instead of linkprobed (bench/gmo-replay). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "shared/bus-names.h"
#include "shared/macros.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *dest = BUS_NAME;
        bool direct = false;
        int n;

        for (; argc > 1 && startswith(argv[1], "--"); argc--, argv++)
                if (streq(argv[1], "--direct"))
                        direct = true;
                else if (startswith(argv[1], "--dest="))
                        dest = argv[1] + strlen("--dest=");
                else
                        argc = 0; /* unknown: the usage below */
        bool ping = argc == 4 && streq(argv[3], "ping");
        if ((argc != 3 && !ping) || (n = atoi(argv[2])) <= 0) {
                fprintf(stderr, "usage: gmo-client [--direct] [--dest=NAME] ADDRESS COUNT [ping]\n");
                return 2;
        }
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, argv[1]) < 0 || sd_bus_set_bus_client(bus, !direct) < 0 ||
            sd_bus_start(bus) < 0) {
                fprintf(stderr, "gmo-client: cannot connect to %s\n", argv[1]);
                return 1;
        }

        printf("[");
        for (int i = 0; i < n; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                sd_bus_error error = SD_BUS_ERROR_NULL;
                uint64_t start = now_usec(CLOCK_MONOTONIC);
                int r = ping ? sd_bus_call_method(bus, dest, BUS_PATH, "org.freedesktop.DBus.Peer", "Ping", &error,
                                                  &reply, "")
                             : sd_bus_call_method(bus, dest, BUS_PATH, "org.freedesktop.DBus.ObjectManager",
                                                  "GetManagedObjects", &error, &reply, "");
                uint64_t took = now_usec(CLOCK_MONOTONIC) - start;
                if (r < 0) {
                        fprintf(stderr, "gmo-client: %s\n", error.message ?: "call failed");
                        sd_bus_error_free(&error);
                        return 1;
                }
                printf("%s%" PRIu64, i ? "," : "", took);
        }
        printf("]\n");
        return 0;
}
