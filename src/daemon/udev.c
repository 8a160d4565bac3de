/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <libudev.h>
#include <sys/epoll.h>

#include "shared/log.h"
#include "shared/socket-util.h"
#include "udev.h"

#define UDEV_SUBSYSTEMS_MAX 8

typedef struct UdevSubscription {
        const char *subsystem;
        udev_event_handler_t on_event;
        udev_enumerate_handler_t enumerate;
        void *userdata;
} UdevSubscription;

struct UdevSource {
        sd_event *event;
        uint64_t rcvbuf;
        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event_source *io;
        UdevSubscription subscriptions[UDEV_SUBSYSTEMS_MAX];
        size_t n_subscriptions;
        uint64_t n_overruns;
};

int udev_source_new(sd_event *event, uint64_t rcvbuf, UdevSource **ret) {
        UdevSource *u = new0(UdevSource, 1);
        if (!u)
                return log_oom();
        u->event = event;
        u->rcvbuf = rcvbuf;
        u->udev = udev_new();
        if (!u->udev) {
                free(u);
                return log_error_errno(errno ?: ENOMEM, "Failed to create a udev context: %m");
        }
        *ret = u;
        return 0;
}

UdevSource *udev_source_free(UdevSource *u) {
        if (!u)
                return NULL;
        sd_event_source_disable_unref(u->io);
        udev_monitor_unref(u->monitor);
        udev_unref(u->udev);
        return mfree(u);
}

int udev_source_add_subsystem(UdevSource *u, const char *subsystem, udev_event_handler_t on_event,
                               udev_enumerate_handler_t enumerate, void *userdata) {
        if (u->n_subscriptions >= UDEV_SUBSYSTEMS_MAX)
                return -E2BIG;
        if (u->monitor)
                return -EBUSY;
        u->subscriptions[u->n_subscriptions++] = (UdevSubscription) {
                .subsystem = subsystem,
                .on_event = on_event,
                .enumerate = enumerate,
                .userdata = userdata,
        };
        return 0;
}

int udev_source_enumerate(UdevSource *u) {
        int ret = 0;

        for (size_t i = 0; i < u->n_subscriptions; i++)
                if (u->subscriptions[i].enumerate) {
                        int r = u->subscriptions[i].enumerate(u->subscriptions[i].userdata);
                        if (r < 0 && ret == 0)
                                ret = r;
                }
        return ret;
}

static void udev_dispatch(UdevSource *u, struct udev_device *d) {
        const char *subsystem = udev_device_get_subsystem(d), *action = udev_device_get_action(d);

        if (!subsystem || !action)
                return;
        for (size_t i = 0; i < u->n_subscriptions; i++)
                if (streq(u->subscriptions[i].subsystem, subsystem) && u->subscriptions[i].on_event)
                        u->subscriptions[i].on_event(u->subscriptions[i].userdata, d, action);
}

static int on_udev_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        UdevSource *u = userdata;
        bool overrun = false;

        /* Drain everything queued; one wakeup may carry a whole dock's worth of devices. */
        for (;;) {
                struct udev_device *d;

                errno = 0;
                d = udev_monitor_receive_device(u->monitor);
                if (d) {
                        udev_dispatch(u, d);
                        udev_device_unref(d);
                        continue;
                }
                if (errno == ENOBUFS) {
                        overrun = true;
                        continue;
                }
                /* EAGAIN: done. Anything else (a message from a sender we do not trust, a bad
                 * message) was dropped by libudev; keep going. */
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == 0)
                        break;
                log_debug_errno(errno, "Dropped a udev message: %m");
        }

        if (overrun) {
                u->n_overruns++;
                log_info("udev monitor overrun (%" PRIu64 " so far), re-enumerating devices.", u->n_overruns);
                (void) udev_source_enumerate(u);
        }
        return 0;
}

/* Events processed by udevd (group "udev") carry its rules' properties; without udevd (containers,
 * early boot) the kernel's own uevents are all there is. umockdev's testbeds emulate the former. */
static const char *udev_source_kind(void) {
        if (getenv("UMOCKDEV_DIR") || access("/run/udev/control", F_OK) >= 0)
                return "udev";
        return "kernel";
}

int udev_source_start(UdevSource *u) {
        const char *source = udev_source_kind();
        int r, fd;

        u->monitor = udev_monitor_new_from_netlink(u->udev, source);
        if (!u->monitor)
                return log_warning_errno(errno ?: EIO, "Failed to create a udev monitor: %m");

        for (size_t i = 0; i < u->n_subscriptions; i++) {
                r = udev_monitor_filter_add_match_subsystem_devtype(u->monitor, u->subscriptions[i].subsystem, NULL);
                if (r < 0)
                        return log_warning_errno(r, "Failed to filter udev events: %m");
        }

        r = udev_monitor_enable_receiving(u->monitor);
        if (r < 0)
                return log_warning_errno(r, "Failed to start the udev monitor: %m");

        fd = udev_monitor_get_fd(u->monitor);
        /* libudev 252 leaves the buffer at the default; a dock with a dozen devices overruns it. */
        r = socket_set_rcvbuf(fd, u->rcvbuf);
        if (r < 0)
                log_warning_errno(r, "Failed to set the udev monitor's receive buffer: %m");

        r = sd_event_add_io(u->event, &u->io, fd, EPOLLIN, on_udev_io, u);
        if (r < 0)
                return log_warning_errno(r, "Failed to watch the udev monitor: %m");
        (void) sd_event_source_set_description(u->io, "udev");
        log_debug("udev monitor listening to %s events.", source);
        return 0;
}

uint64_t udev_source_overruns(const UdevSource *u) {
        return u ? u->n_overruns : 0;
}
