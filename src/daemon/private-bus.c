/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The private socket, as systemd's /run/systemd/private: root's tools talk D-Bus to linkprobed
 * directly. Through dbus-daemon a GetManagedObjects of 2000 links is read 2 KiB at a time, checked
 * and written again by the broker, which costs more than the daemon's whole answer; here the client
 * reads it straight from us. The objects and their signals are the bus's own: each client's connection
 * gets the same registrations (manager_bus_attach()) and every signal the publisher sends.
 *
 * Who may connect is decided by the kernel's SO_PEERCRED, before a byte is read: root, or the user the
 * daemon runs as (tests). The socket's mode (0600, set by linkprobed-private.socket or here) keeps
 * everyone else out already; the check keeps them out also where the mode was changed.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "private-bus.h"
#include "shared/log.h"
#include "shared/socket-util.h"
#include "shared/macros.h"

typedef struct Client {
        sd_bus *bus;
        /* sd-bus before v253 (systemd#24875) leaves a message that came in one read with the
         * client's BEGIN unread until more bytes arrive, and a client that sends BEGIN and its first
         * call together (GDBus does) then waits for nothing. Until the connection is up and that
         * is read, the loop hands it to sd-bus once more after each iteration. */
        sd_event_source *settle;
} Client;

struct PrivateBus {
        sd_event *event;
        int fd;
        sd_event_source *accept_source;
        BusPublisher *publisher;
        PrivateBusAttach attach;
        void *userdata;
        sd_id128_t server_id;
        Client clients[BUS_PUBLISHER_DIRECT_MAX];
        size_t n_clients;
};

static void client_drop(PrivateBus *b, sd_bus *bus) {
        for (size_t i = 0; i < b->n_clients; i++)
                if (b->clients[i].bus == bus) {
                        sd_event_source_disable_unref(b->clients[i].settle);
                        b->clients[i] = b->clients[--b->n_clients];
                        break;
                }
        bus_publisher_remove_direct(b->publisher, bus);
        (void) sd_bus_detach_event(bus);
        sd_bus_close_unref(bus);
}

static int on_client_settle(sd_event_source *s, void *userdata) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = sd_bus_ref(userdata); /* processing may drop the client */
        int r;

        if (sd_bus_is_ready(bus) <= 0)
                return 0; /* still authenticating */
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        do
                r = sd_bus_process(bus, NULL);
        while (r > 0);
        return 0;
}

/* sd-bus tells a closed connection's matches with this local signal; it holds its own reference while
 * it dispatches, so the connection can be let go of here. */
static int on_client_disconnected(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        PrivateBus *b = userdata;

        log_debug("A client of the private socket disconnected.");
        client_drop(b, sd_bus_message_get_bus(message));
        return 0;
}

static int client_start(PrivateBus *b, int fd) {
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        sd_event_source *settle = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        r = sd_bus_set_fd(bus, fd, fd);
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        r = sd_bus_set_server(bus, true, b->server_id);
        if (r >= 0)
                r = sd_bus_set_description(bus, "private-client");
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0)
                r = b->attach(bus, b->userdata);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                        "org.freedesktop.DBus.Local", "Disconnected", on_client_disconnected, b);
        if (r >= 0)
                r = sd_bus_attach_event(bus, b->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_event_add_post(b->event, &settle, on_client_settle, bus);
        if (r >= 0)
                r = bus_publisher_add_direct(b->publisher, bus);
        if (r < 0) {
                sd_event_source_disable_unref(settle);
                (void) sd_bus_detach_event(bus);
                return r;
        }
        b->clients[b->n_clients++] = (Client) { .bus = TAKE_PTR(bus), .settle = settle };
        return 0;
}

static int on_accept(sd_event_source *s, int listen_fd, uint32_t revents, void *userdata) {
        PrivateBus *b = userdata;
        _cleanup_(closep) int fd = -EBADF;
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        int r;

        fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_warning_errno(errno, "Failed to accept a client of the private socket: %m");
                return 0;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return log_warning_errno(errno, "Cannot read the credentials of a private socket client: %m"), 0;
        if (cred.uid != 0 && cred.uid != geteuid()) {
                log_notice("Refused uid %u (pid %d) on the private socket: it is for root.", (unsigned) cred.uid,
                           (int) cred.pid);
                return 0;
        }
        if (b->n_clients >= ELEMENTSOF(b->clients)) {
                log_notice("Refused pid %d on the private socket: %zu clients are connected already.", (int) cred.pid,
                           b->n_clients);
                return 0;
        }
        r = client_start(b, TAKE_FD(fd));
        if (r < 0)
                log_warning_errno(r, "Failed to set up a connection on the private socket: %m");
        return 0;
}

int private_bus_listen(const char *path, int *ret_fd) {
        _cleanup_(closep) int fd = -EBADF;
        struct sockaddr_un sa;
        struct stat st;
        mode_t old_mask;
        int r;

        r = socket_unix_address(path, &sa);
        if (r < 0)
                return r;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* A socket left by a daemon that died is replaced; any other file is not ours to remove. */
        if (lstat(path, &st) >= 0) {
                if (!S_ISSOCK(st.st_mode))
                        return -EEXIST;
                if (unlink(path) < 0)
                        return -errno;
        }
        old_mask = umask(0177); /* bind() makes the socket 0777 less the mask: 0600 */
        r = bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
        umask(old_mask);
        if (r < 0)
                return r;
        if (listen(fd, SOMAXCONN) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int private_bus_new(sd_event *event, int listen_fd, BusPublisher *publisher, PrivateBusAttach attach, void *userdata,
                    PrivateBus **ret) {
        _cleanup_(private_bus_freep) PrivateBus *b = NULL;
        int r;

        b = new0(PrivateBus, 1);
        if (!b) {
                safe_close(listen_fd);
                return -ENOMEM;
        }
        b->fd = listen_fd;
        b->event = sd_event_ref(event);
        b->publisher = publisher;
        b->attach = attach;
        b->userdata = userdata;

        r = sd_id128_randomize(&b->server_id);
        if (r < 0)
                return r;
        r = sd_event_add_io(event, &b->accept_source, b->fd, EPOLLIN, on_accept, b);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(b);
        return 0;
}

PrivateBus *private_bus_free(PrivateBus *b) {
        if (!b)
                return NULL;
        while (b->n_clients > 0)
                client_drop(b, b->clients[b->n_clients - 1].bus);
        sd_event_source_disable_unref(b->accept_source);
        safe_close(b->fd);
        sd_event_unref(b->event);
        return mfree(b);
}
