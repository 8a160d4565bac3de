/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <libudev.h>
#include <systemd/sd-daemon.h>

#include "gpu-bus.h"
#include "gpu-prober.h"
#include "gpu.h"
#include "inhibit.h"
#include "link-bus.h"
#include "link.h"
#include "manager-bus.h"
#include "manager.h"
#include "metrics.h"
#include "summary.h"
#include "link-speed.h"
#include "netlink.h"
#include "rdma.h"
#include "peer-bus.h"
#include "peer.h"
#include "reconcile.h"
#include "responder-supervisor.h"
#include "sysfs/sysfs.h"
#include "tbt.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "udev.h"

static const char *const manager_state_table[_MANAGER_STATE_MAX] = {
        [MANAGER_STARTING] = "starting",
        [MANAGER_RUNNING] = "running",
        [MANAGER_DEGRADED] = "degraded",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manager_state, ManagerState, manager_state_table)

static int link_compare(const void *key, const void *object) {
        return compare_int_key(key, ((const Link *) object)->ifindex);
}

static int on_flush(sd_event_source *s, void *userdata) {
        manager_flush_bus_objects(userdata);
        return 0;
}

int manager_schedule_flush(Manager *m) {
        if (!m->flush_source)
                return 0;
        return sd_event_source_set_enabled(m->flush_source, SD_EVENT_ONESHOT);
}

void manager_after_prepare(Manager *m) {
        reconcile_links_changed(m);
        if (m->links_topology_changed) {
                tbt_update_links(m); /* may change an input of ConnectionType itself */
                m->links_topology_changed = false;
                links_update_connection_types(m);
        }
        /* Last: it derives from everything above. */
        summary_update(m);
}

void manager_published(Manager *m) {
        metrics_exporter_changed(m->metrics);
}

static void manager_update_state(Manager *m) {
        ManagerState s;

        if (!m->bus_name_acquired)
                s = MANAGER_STARTING;
        else
                s = strv_length(m->degraded_reasons) > 0 ? MANAGER_DEGRADED : MANAGER_RUNNING;
        bus_object_set(&m->manager_object, m->state, s, "State");
}

void manager_set_degraded(Manager *m, const char *reason, bool on) {
        size_t n = strv_length(m->degraded_reasons);
        size_t i;

        for (i = 0; i < n; i++)
                if (streq(m->degraded_reasons[i], reason))
                        break;
        if (on == (i < n))
                return;

        if (on) {
                char **grown = reallocarray(m->degraded_reasons, n + 2, sizeof(char *));
                if (!grown) {
                        log_oom();
                        return;
                }
                m->degraded_reasons = grown;
                m->degraded_reasons[n] = strdup(reason);
                m->degraded_reasons[n + 1] = NULL;
                if (!m->degraded_reasons[n]) {
                        log_oom();
                        return;
                }
                log_warning("Degraded: %s.", reason);
        } else {
                free(m->degraded_reasons[i]);
                memmove(m->degraded_reasons + i, m->degraded_reasons + i + 1, (n - i) * sizeof(char *));
                log_info("No longer degraded: %s.", reason);
        }
        bus_object_changed(&m->manager_object, "DegradedReasons");
        manager_update_state(m);
}

int manager_new(const Config *config, const ManagerOptions *options, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        const char *root;
        int r;

        m = new0(Manager, 1);
        if (!m)
                return log_oom();
        m->config = *config;
        m->options = *options;
        m->links = TABLE_INIT(link_compare);
        m->rdma_ports = TABLE_INIT(rdma_port_compare);
        m->rdma_devices = TABLE_INIT(rdma_device_compare);
        m->thunderbolt = TABLE_INIT(tbt_object_compare);
        m->thunderbolt_services = TABLE_INIT(tbt_object_compare);
        m->peers = TABLE_INIT(peer_compare_key);
        m->peer_targets = TABLE_INIT(peer_target_compare_key);
        m->node.hostname_fd = -EBADF;
        m->state_dir_fd = -EBADF;
        /* Cheap but not free: a few calls a second per client is plenty for anyone. */
        ratelimit_init(&m->read_ratelimit, 2, 10, 1024);

        root = options->sysfs_root ?: "/sys";
        m->sysfs_fd = sysfs_root_open(root);
        if (m->sysfs_fd < 0)
                return log_error_errno(m->sysfs_fd, "Cannot open the sysfs root %s: %m", root);

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");

        r = sd_event_add_defer(m->event, &m->flush_source, on_flush, m);
        if (r < 0)
                return log_error_errno(r, "Failed to create the flush source: %m");
        (void) sd_event_source_set_enabled(m->flush_source, SD_EVENT_OFF);
        (void) sd_event_source_set_description(m->flush_source, "bus-flush");

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;

        m->responder = responder_supervisor_free(m->responder);
        m->reconciler = reconcile_free(m->reconciler);
        peers_free(m);
        for (size_t i = 0; i < m->n_responder_fds; i++)
                safe_close(m->responder_fds[i]);
        free(m->responder_fds);
        m->metrics = metrics_exporter_free(m->metrics);
        m->gpu_prober = gpu_prober_free(m->gpu_prober);
        gpus_free(m);
        m->inhibitors = inhibitors_free(m->inhibitors);
        /* Before the links and the sysfs root: the worker reads through the latter. */
        m->speed_reader = link_speed_reader_free(m->speed_reader);
        links_free(m);
        rdma_free(m);
        tbt_objects_free(m);
        m->netlink = netlink_free(m->netlink);
        m->udev = udev_source_free(m->udev);
        node_done(&m->node);
        memory_done(&m->memory);
        bus_object_done(&m->manager_object);
        bus_object_done(&m->node_object);
        bus_object_done(&m->memory_object);
        bus_object_done(&m->summary_object);
        summary_done(&m->summary);
        free(m->dirty);
        strv_free(m->degraded_reasons);
        ratelimit_done(&m->read_ratelimit);
        sd_event_source_disable_unref(m->flush_source);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        safe_close(m->sysfs_fd);
        safe_close(m->state_dir_fd);
        config_done(&m->config);
        return mfree(m);
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        log_info("Received SIG%s, exiting.", sigabbrev_np((int) si->ssi_signo));
        return sd_event_exit(m->event, 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        log_info("Received SIGHUP, refreshing.");
        (void) manager_refresh(userdata);
        return 0;
}

static int manager_setup_signals(Manager *m) {
        sigset_t mask;
        int r;

        /* sd-event (v252) wants the signals blocked before it takes them over. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGCHLD); /* probe children are reaped by sd-event */
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");

        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m");
        return 0;
}

static int manager_connect_bus(Manager *m) {
        int r = -EINVAL;

        switch (m->options.bus_kind) {
        case BUS_KIND_SYSTEM:
                r = sd_bus_open_system_with_description(&m->bus, "linkprobed");
                break;
        case BUS_KIND_USER:
                r = sd_bus_open_user_with_description(&m->bus, "linkprobed");
                break;
        case BUS_KIND_ADDRESS:
                r = sd_bus_new(&m->bus);
                if (r >= 0)
                        r = sd_bus_set_address(m->bus, m->options.bus_address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(m->bus, true);
                if (r >= 0)
                        r = sd_bus_set_description(m->bus, "linkprobed");
                if (r >= 0)
                        r = sd_bus_start(m->bus);
                break;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the %s bus: %m",
                                       m->options.bus_kind == BUS_KIND_USER ? "user"
                                       : m->options.bus_kind == BUS_KIND_SYSTEM ? "system" : "given");

        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");

        /* Losing the bus must end the process with a failure so systemd restarts us. */
        r = sd_bus_set_exit_on_disconnect(m->bus, true);
        if (r < 0)
                return log_error_errno(r, "Failed to set exit-on-disconnect: %m");
        return 0;
}

static int manager_request_name(Manager *m) {
        int r;

        r = sd_bus_request_name(m->bus, BUS_NAME, 0);
        if (r == -EEXIST || r == -EALREADY)
                return log_error_errno(r, "Another process already owns %s; is linkprobed already running?",
                                       BUS_NAME);
        if (r == -EACCES || r == -EPERM)
                return log_error_errno(r, "Not allowed to own %s on this bus (check the D-Bus policy "
                                          "org.linkprobe.LinkProbe1.conf, or use --user / --bus-address=).",
                                       BUS_NAME);
        if (r < 0)
                return log_error_errno(r, "Failed to request the bus name %s: %m", BUS_NAME);
        return 0;
}

/* systemd may hand us a NETLINK_ROUTE socket (ListenNetlink=route with a large ReceiveBuffer=) so
 * the buffer is big without CAP_NET_ADMIN, and listening TCP sockets named "responder" for the
 * responder (socket activation). Anything else passed is closed with a notice. */
static int manager_take_listen_fds(Manager *m, int *ret_netlink_fd) {
        _cleanup_(strv_freep) char **names = NULL;
        int n, netlink_fd = -EBADF;

        n = sd_listen_fds_with_names(true, &names);
        if (n < 0)
                return log_error_errno(n, "Failed to read the file descriptors passed by systemd: %m");

        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;
                int protocol = -1;
                socklen_t len = sizeof(protocol);

                if (netlink_fd < 0 && sd_is_socket(fd, AF_NETLINK, SOCK_RAW, -1) > 0 &&
                    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) >= 0 && protocol == NETLINK_ROUTE) {
                        netlink_fd = fd;
                        continue;
                }
                /* FileDescriptorName=responder: a listening socket the responder is to serve. */
                if (names && names[i] && streq(names[i], "responder") && sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) > 0) {
                        int *grown = reallocarray(m->responder_fds, m->n_responder_fds + 1, sizeof(int));
                        if (grown) {
                                m->responder_fds = grown;
                                m->responder_fds[m->n_responder_fds++] = fd;
                                continue;
                        }
                }
                log_notice("Ignoring unexpected file descriptor %d (%s) passed by systemd.", fd,
                           names && names[i] ? names[i] : "unnamed");
                safe_close(fd);
        }
        *ret_netlink_fd = netlink_fd;
        return 0;
}

static void net_udev_event(Manager *m, struct udev_device *d, const char *action) {
        const char *s = udev_device_get_property_value(d, "IFINDEX");
        int ifindex;
        Link *l;

        /* Netlink owns a link's existence; udev only tells us that sysfs facts (driver binding,
         * DEVTYPE from rules) may have changed. */
        if (!s || parse_int(s, &ifindex) < 0)
                return;
        l = link_get(m, ifindex);
        if (l)
                link_request_sysfs(l);
}

static int net_udev_enumerate(Manager *m) {
        links_request_sysfs(m);
        return 0;
}

int manager_start(Manager *m) {
        int r, netlink_fd = -EBADF;

        r = manager_setup_signals(m);
        if (r < 0)
                return r;
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog: %m");

        r = manager_take_listen_fds(m, &netlink_fd);
        if (r < 0)
                return r;

        r = manager_connect_bus(m);
        if (r < 0)
                return r;
        r = manager_bus_register(m);
        if (r < 0)
                return log_error_errno(r, "Failed to register bus objects: %m");
        r = link_bus_register(m);
        if (r < 0)
                return log_error_errno(r, "Failed to register link objects: %m");

        r = link_speed_reader_new(m, &m->speed_reader);
        if (r < 0)
                /* Speeds are then read on the loop, as before READY=1 anyway. */
                log_warning_errno(r, "Failed to start the link speed reader, reading in place: %m");

        /* Listen first, enumerate second: nothing that happens in between can be missed. */
        r = netlink_new(m, netlink_fd, &m->netlink);
        if (r < 0)
                return r;

        r = udev_source_new(m, &m->udev);
        if (r < 0)
                return r;
        r = udev_source_add_subsystem(m->udev, "net", net_udev_event, net_udev_enumerate);
        if (r < 0)
                return log_error_errno(r, "Failed to watch udev's net subsystem: %m");

        /* Sources of facts beyond links register their bus objects and udev subsystems here, before
         * the monitor starts; their enumerate handlers run with udev_source_enumerate() below. */
        r = rdma_start(m);
        if (r < 0)
                return r;
        r = tbt_setup(m);
        if (r < 0)
                return r;
        r = peer_bus_register(m);
        if (r < 0)
                return log_error_errno(r, "Failed to register peer objects: %m");
        r = reconcile_new(m, &m->reconciler);
        if (r < 0)
                return log_oom();
        r = gpu_bus_register(m);
        if (r < 0)
                return log_error_errno(r, "Failed to register GPU objects: %m");

        r = udev_source_start(m->udev);
        if (r < 0)
                /* Netlink alone keeps links right and the other sources are read on Refresh(). */
                manager_set_degraded(m, "udev-monitor-unavailable", true);

        r = node_start(m);
        if (r < 0)
                return r;
        r = memory_start(m);
        if (r < 0)
                return r;

        r = netlink_enumerate(m->netlink);
        if (r < 0)
                return r;
        if (m->udev)
                (void) udev_source_enumerate(m->udev);

        /* Everything found so far is published with the name: no signals for it. */
        manager_flush_bus_objects(m);

        r = manager_request_name(m);
        if (r < 0)
                return r;
        m->bus_name_acquired = true;
        manager_update_state(m);
        manager_flush_bus_objects(m);

        log_info("linkprobed %s running: %zu links.", VERSION, table_size(&m->links));
        (void) sd_notifyf(false, "READY=1\nSTATUS=Watching %zu links.", table_size(&m->links));

        /* Work that is not part of the picture of the kernel's facts (measurements, persisted results,
         * responders) starts here, after READY=1. */
        r = reconcile_start(m);
        if (r < 0)
                return r;
        r = responder_supervisor_start(m, m->responder_fds, m->n_responder_fds, &m->responder);
        m->responder_fds = mfree(m->responder_fds); /* taken over, whatever happened */
        m->n_responder_fds = 0;
        if (r < 0)
                return r;
        r = metrics_exporter_start(m, &m->metrics);
        if (r < 0)
                return r;
        r = gpu_prober_start(m);
        if (r < 0)
                return r;
        return 0;
}

int manager_open_state_directory(Manager *m) {
        const char *dir = m->options.state_directory;
        _cleanup_(freep) char *from_env = NULL;
        int fd;

        if (m->state_dir_fd >= 0)
                return m->state_dir_fd;

        if (!dir) {
                /* systemd's StateDirectory= sets this (several paths are separated by ':'). */
                const char *e = getenv("STATE_DIRECTORY");
                if (!isempty(e)) {
                        from_env = strndup(e, strcspn(e, ":"));
                        if (!from_env)
                                return log_oom();
                        dir = from_env;
                } else
                        dir = LOCALSTATEDIR "/lib/linkprobe";
        }

        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return log_warning_errno(errno, "Cannot create the state directory %s: %m", dir);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return log_warning_errno(errno, "Cannot open the state directory %s: %m", dir);
        m->state_dir_fd = fd;
        return fd;
}

int manager_run(Manager *m) {
        int r = sd_event_loop(m->event);

        (void) sd_notify(false, "STOPPING=1\nSTATUS=Shutting down.");
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        if (r != 0)
                log_error("Exiting with status %d (lost the bus connection?).", r);
        return r;
}

int manager_refresh(Manager *m) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int r = 0;

        /* However many clients ask, a re-dump every 100 ms keeps everything fresh. */
        if (m->last_refresh_usec != 0 && now - m->last_refresh_usec < 100 * USEC_PER_MSEC)
                return 0;
        m->last_refresh_usec = now;

        if (m->netlink)
                r = netlink_resync(m->netlink);
        links_request_sysfs(m);
        if (m->udev)
                (void) udev_source_enumerate(m->udev);
        node_refresh(m);
        memory_refresh(m);
        return r;
}
