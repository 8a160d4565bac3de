/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/latency-client — flaps a link and measures, per flap, how long after the kernel's RTM_NEWLINK
 * reaches our own netlink socket the daemon's PropertiesChanged reaches us over D-Bus. Both arrive in
 * this one process, timed with the same clock the moment each is read, so scheduling noise of a
 * scripting language does not enter. Prints one JSON array of microseconds.
 *
 *   latency-client BUS_ADDRESS OBJECT_PATH IFNAME COUNT */
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "shared/macros.h"
#include "shared/time-util.h"

typedef struct State {
        int ifindex;
        bool want_up;
        uint64_t kernel_at, bus_at;
} State;

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        State *s = userdata;
        const char *interface;

        if (sd_bus_message_read(m, "s", &interface) < 0 || sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return 0;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                const char *name, *value;
                if (sd_bus_message_read(m, "s", &name) < 0)
                        return 0;
                if (streq(name, "AdminState") && sd_bus_message_read(m, "v", "s", &value) >= 0) {
                        if (streq(value, s->want_up ? "up" : "down") && s->bus_at == 0)
                                s->bus_at = now_usec(CLOCK_MONOTONIC);
                } else if (sd_bus_message_skip(m, "v") < 0)
                        return 0;
                sd_bus_message_exit_container(m);
        }
        return 0;
}

static void read_netlink(int fd, State *s) {
        char buf[65536];
        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n <= 0)
                        return;
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK(h, (size_t) n); h = NLMSG_NEXT(h, n)) {
                        if (h->nlmsg_type != RTM_NEWLINK)
                                continue;
                        struct ifinfomsg *ifi = NLMSG_DATA(h);
                        if (ifi->ifi_index == s->ifindex && !!(ifi->ifi_flags & IFF_UP) == s->want_up && s->kernel_at == 0)
                                s->kernel_at = now;
                }
        }
}

static int set_up(int fd, const char *ifname, bool up) {
        struct ifreq ifr = {};
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                return -errno;
        ifr.ifr_flags = up ? (ifr.ifr_flags | IFF_UP) : (ifr.ifr_flags & ~IFF_UP);
        return ioctl(fd, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
}

/* Flips the link and waits (at most a second) until both the kernel and the daemon said so. */
static int flap(sd_bus *bus, int nl, int ctl, const char *ifname, State *s, bool up) {
        s->want_up = up;
        s->kernel_at = s->bus_at = 0;
        if (set_up(ctl, ifname, up) < 0)
                return -1;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC;
        while (s->kernel_at == 0 || s->bus_at == 0) {
                struct pollfd p[2] = { { .fd = nl, .events = POLLIN }, { .fd = sd_bus_get_fd(bus), .events = sd_bus_get_events(bus) } };
                if (now_usec(CLOCK_MONOTONIC) > deadline)
                        return -1;
                if (poll(p, 2, 100) < 0)
                        return -1;
                if (p[0].revents)
                        read_netlink(nl, s);
                while (sd_bus_process(bus, NULL) > 0)
                        ;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
        State s = {};
        char rule[512];
        int n, nl, ctl;

        if (argc != 5 || (n = atoi(argv[4])) <= 0) {
                fprintf(stderr, "usage: latency-client BUS_ADDRESS OBJECT_PATH IFNAME COUNT\n");
                return 2;
        }
        s.ifindex = (int) if_nametoindex(argv[3]);
        nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s.ifindex <= 0 || nl < 0 || ctl < 0 || bind(nl, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return 1;
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, argv[1]) < 0 || sd_bus_set_bus_client(bus, 1) < 0 ||
            sd_bus_start(bus) < 0)
                return 1;
        snprintf(rule, sizeof(rule), "type='signal',interface='org.freedesktop.DBus.Properties',"
                 "member='PropertiesChanged',path='%s'", argv[2]);
        if (sd_bus_add_match(bus, NULL, rule, on_changed, &s) < 0)
                return 1;

        printf("[");
        for (int i = 0, printed = 0; i < n; i++) {
                if (flap(bus, nl, ctl, argv[3], &s, false) < 0)
                        continue;
                int64_t delta = (int64_t) s.bus_at - (int64_t) s.kernel_at;
                printf("%s%" PRId64, printed++ ? "," : "", delta);
                (void) flap(bus, nl, ctl, argv[3], &s, true);
        }
        printf("]\n");
        return 0;
}
