/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon as a whole: what it holds, in which order it starts, and how its parts are tied. */
#include <linux/netlink.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "event-loop.h"
#include "gpu-prober.h"
#include "inhibit.h"
#include "link-ethtool-ask.h"
#include "link-ethtool.h"
#include "link-watch.h"
#include "lldp.h"
#include "manager.h"
#include "metrics.h"
#include "pci-watch.h"
#include "rdma-watch.h"
#include "netlink.h"
#include "reconcile.h"
#include "responder-supervisor.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/socket-util.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "sysfs/sysfs.h"
#include "udev.h"
#include "unit-watch.h"
#include "watch.h"

/* Start-up phases at debug level, in ms since manager_new(): where the time to READY=1 goes. */
static void startup_stamp(const Manager *m, const char *phase) {
        struct rusage ru = {};

        if (log_get_max_level() < LOG_DEBUG)
                return;
        (void) getrusage(RUSAGE_SELF, &ru);
        log_debug("Start-up: %s after %.1f ms (CPU of all threads so far: user %.1f ms, system %.1f ms; %ld page "
                  "faults).", phase, (double) (now_usec(CLOCK_MONOTONIC) - m->created_usec) / USEC_PER_MSEC,
                  ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
                  ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3, ru.ru_minflt + ru.ru_majflt);
}

static void on_derive(BusPublisher *p, size_t from, size_t to, void *userdata) {
        Manager *m = userdata;
        derive_run(&m->derive, p, from, to);
        /* The InfiniBand queries the pass's re-reads asked for; a port that was asked changed, and the
         * fabric may have with it: sweep again. */
        if (rdma_remote_sync(m->rdma_remote) > 0)
                fabric_sweep_request(m->fabric_sweep);
}

/* "running: 2 links degraded, 1 flapping": what systemctl status shows. */
static char *manager_status_text(Manager *m) {
        static const struct {
                Health health;
                const char *text;
        } parts[] = {
                { HEALTH_DEGRADED, "degraded" },
                { HEALTH_FLAPPING, "flapping" },
                { HEALTH_ERRORS, "with errors" },
        };
        _cleanup_(freep) char *text = NULL;
        unsigned counts[_HEALTH_MAX];
        size_t len = 0;
        FILE *f;

        derive_health_tally(&m->derive.health, counts);
        f = open_memstream(&text, &len);
        if (!f)
                return NULL;
        /* Nothing here moves with the number of links: systemd hears of health, not of every veth. */
        fprintf(f, "running: ");
        if (!m->watch)
                fprintf(f, "links not watched for health ([Watch] IntervalSec=0)");
        else if (counts[HEALTH_DEGRADED] + counts[HEALTH_FLAPPING] + counts[HEALTH_ERRORS] == 0)
                fprintf(f, "all links healthy");
        else {
                const char *sep = "";
                bool first = true;
                for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                        unsigned n = counts[parts[i].health];
                        if (n == 0)
                                continue;
                        /* "links" once: every watched object is a link of some kind (PCIe, RDMA,
                         * Thunderbolt, network). */
                        fprintf(f, "%s%u %s%s", sep, n, first ? (n == 1 ? "link " : "links ") : "", parts[i].text);
                        sep = ", ";
                        first = false;
                }
        }
        if (fclose(f) != 0)
                return mfree(text);
        return TAKE_PTR(text);
}

/* The service manager is told without waiting (notify_socket_send()): a status it could not take is
 * said again at the next change. */
static int manager_notify(const char *what, const char *status) {
        _cleanup_(freep) char *message = NULL;
        int r;

        if (asprintf(&message, "%s%sSTATUS=%s", strempty(what), what ? "\n" : "", strempty(status)) < 0)
                return log_oom();
        r = notify_socket_send(message);
        if (r < 0)
                log_debug_errno(r, "Could not tell the service manager \"%s\": %m", message);
        return r;
}

/* STATUS= again when it changed, once READY=1 went out with the first. */
static void manager_notify_status(Manager *m) {
        _cleanup_(freep) char *text = NULL;

        if (!m->status_text)
                return;
        text = manager_status_text(m);
        if (!text || streq(text, m->status_text))
                return;
        if (manager_notify(NULL, text) < 0)
                return;
        free_and_replace(m->status_text, text);
}

static void on_published(void *userdata) {
        Manager *m = userdata;
        metrics_exporter_changed(m->metrics);
        identity_file_update(&m->identity_file, &m->node);
        manager_notify_status(m);
}

/* Announces Inhibited and lets the probes that were held off catch up. */
static void on_inhibitors_changed(unsigned old_mask, unsigned new_mask, void *userdata) {
        Manager *m = userdata;

        bus_object_changed(&m->status.bus, "Inhibited");
        if (!(old_mask & INHIBIT_GPU) && (new_mask & INHIBIT_GPU))
                gpu_prober_inhibited(m->gpu_prober);
        reconcile_inhibited(m->reconciler, new_mask & ~old_mask);
        if ((old_mask & INHIBIT_GPU) && !(new_mask & INHIBIT_GPU))
                gpu_prober_inhibit_released(m->gpu_prober);
        /* RDMA paths held back while inhibited are due now. */
        if ((old_mask & INHIBIT_RDMA) && !(new_mask & INHIBIT_RDMA))
                reconcile_schedule(m->reconciler);
}

static bool sysfs_root_is_the_machines(const char *root) {
        return !root || streq(root, "/sys") || streq(root, "/sys/");
}

static void on_fabric_swept(void *userdata) {
        Manager *m = userdata;

        bus_publisher_schedule(&m->publisher);
}

int manager_new(const Config *config, const ManagerOptions *options, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        const char *root;
        int r;

        m = new0(Manager, 1);
        if (!m)
                return log_oom();
        m->created_usec = now_usec(CLOCK_MONOTONIC);
        m->config = *config;
        m->options = *options;
        m->state_directory = STATE_DIRECTORY_INIT(options->state_directory);
        m->netlink_fd = -EBADF;
        m->private_fd = -EBADF;
        /* Cheap but not free: a few calls a second per client is plenty for anyone. */
        ratelimit_init(&m->read_ratelimit, 2, 10, 1024);

        root = options->sysfs_root ?: "/sys";
        m->sysfs_fd = sysfs_root_open(root);
        if (m->sysfs_fd < 0)
                return log_error_errno(m->sysfs_fd, "Cannot open the sysfs root %s: %m", root);

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");
        r = heap_keeper_new(m->event, &m->heap);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the heap's trim: %m");

        r = bus_publisher_init(&m->publisher, m->event,
                               &(BusPublisherHooks) {
                                       .derive = on_derive,
                                       .published = on_published,
                                       .userdata = m,
                               });
        if (r < 0)
                return log_error_errno(r, "Failed to create the bus flush: %m");

        links_init(&m->links, &m->publisher, m->sysfs_fd);
        thunderbolt_init(&m->thunderbolt, &m->publisher, m->sysfs_fd);
        rdma_init(&m->rdma, &m->publisher, m->event, m->sysfs_fd, sysfs_root_is_the_machines(options->sysfs_root));
        gpus_init(&m->gpus, &m->publisher);
        pci_init(&m->pci, &m->publisher, m->sysfs_fd);
        peers_init(&m->peers, &m->publisher, &m->config.peers);
        neighbors_init(&m->neighbors, &m->publisher);
        switches_init(&m->switches, &m->publisher);
        m->rdma.switches = &m->switches;
        m->persist = (Persist) { .peers = &m->peers, .directory = &m->state_directory };
        m->identity_file = (IdentityFile) { .directory = &m->state_directory };

        r = daemon_status_init(&m->status, &m->publisher);
        if (r >= 0)
                r = derive_init(&m->derive, &m->publisher, &m->links, &m->thunderbolt, &m->rdma, &m->peers);
        if (r >= 0)
                r = inhibitors_new(m->event, on_inhibitors_changed, m, &m->inhibitors);
        if (r >= 0)
                r = reconcile_new(&(ReconcilerContext) {
                                          .peers = &m->peers,
                                          .links = &m->links,
                                          .event = m->event,
                                          .config = &m->config.peers,
                                          .inhibitors = m->inhibitors,
                                          .persist = &m->persist,
                                  },
                                  &m->reconciler);
        if (r >= 0 && m->config.gpu_enabled)
                r = gpu_prober_new(&(GpuProberContext) {
                                           .gpus = &m->gpus,
                                           .event = m->event,
                                           .config = &m->config,
                                           .status = &m->status,
                                           .inhibitors = m->inhibitors,
                                           .state_directory = &m->state_directory,
                                           .publisher = &m->publisher,
                                   },
                                   &m->gpu_prober);
        if (r >= 0 && m->config.fabric_sweep)
                r = fabric_sweep_new(m->event, &m->switches, &m->config.fabric, &m->fabric_sweep);
        if (r < 0)
                return log_oom();
        if (m->fabric_sweep) {
                m->fabric_sweep->applied = on_fabric_swept;
                m->fabric_sweep->userdata = m;
        }
        m->derive.peers.reconciler = m->reconciler;
        m->derive.pci = &m->pci;
        m->derive.gpus = &m->gpus;
        m->derive.switches = &m->switches;
        m->derive.health.interval_usec = m->config.watch_interval_usec;
        m->derive.health.limits = &m->config.health;
        m->derive.summary.pci = &m->pci;
        m->derive.neighbors = (DeriveNeighbors) {
                .neighbors = &m->neighbors,
                .node = &m->node,
                .peers = &m->peers,
                .links = &m->links,
                .thunderbolt = &m->thunderbolt,
                .rdma = &m->rdma,
                .authenticate = m->config.peers.psk_file != NULL,
        };

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;

        /* What runs children and holds descriptors first, then the objects, then the bus. */
        m->responder = responder_supervisor_free(m->responder);
        m->reconciler = reconcile_free(m->reconciler);
        m->gpu_prober = gpu_prober_free(m->gpu_prober);
        m->fabric_sweep = fabric_sweep_free(m->fabric_sweep);
        /* Before the RDMA ports: its worker's answers name them. */
        m->rdma_remote = rdma_remote_free(m->rdma_remote);
        m->metrics = metrics_exporter_free(m->metrics);
        m->watch = watch_free(m->watch);
        m->link_watch = link_watch_free(m->link_watch);
        m->unit_watch = unit_watch_free(m->unit_watch);
        m->inhibitors = inhibitors_free(m->inhibitors);
        for (size_t i = 0; i < m->n_responder_fds; i++)
                safe_close(m->responder_fds[i]);
        free(m->responder_fds);
        m->netlink = netlink_free(m->netlink);
        safe_close(m->netlink_fd);
        safe_close(m->private_fd);
        if (m->private_bus) {
                m->private_bus = private_bus_free(m->private_bus);
                if (m->options.private_socket)
                        (void) unlink(m->options.private_socket);
        }
        m->udev = udev_source_free(m->udev);
        m->lldp = lldp_receiver_free(m->lldp);

        derive_done(&m->derive);
        neighbors_done(&m->neighbors);
        switches_done(&m->switches);
        peers_done(&m->peers);
        pci_done(&m->pci);
        gpus_done(&m->gpus);
        rdma_done(&m->rdma);
        thunderbolt_done(&m->thunderbolt);
        /* Before the sysfs root: the speed reader's worker reads through it. */
        links_done(&m->links);
        node_done(&m->node);
        memory_done(&m->memory);
        daemon_status_done(&m->status);
        bus_publisher_done(&m->publisher);

        ratelimit_done(&m->read_ratelimit);
        sd_bus_flush_close_unref(m->bus);
        heap_keeper_free(m->heap);
        sd_event_unref(m->event);
        safe_close(m->sysfs_fd);
        state_directory_done(&m->state_directory);
        free(m->status_text);
        config_done(&m->config);
        return mfree(m);
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        log_info("Received SIG%s, exiting.", sigabbrev_np((int) si->ssi_signo));
        return sd_event_exit(m->event, 0);
}

/* [Health] takes effect at once: a reload judges everything again with the new limits. The rest of the
 * file is read at start only (it sizes sockets, binds addresses, starts probes). A file that does not
 * load is refused whole, each error logged with its line, and the limits in use are kept. */
static void manager_reload_health(Manager *m) {
        _cleanup_(config_done) Config fresh;

        config_init(&fresh);
        if (config_load(&fresh, m->options.config_path, m->options.config_must_exist) < 0) {
                log_warning("Keeping the [Health] limits in use: %s has errors (above).", m->options.config_path);
                return;
        }
        if (memcmp(&fresh.health, &m->config.health, sizeof(HealthLimits)) == 0)
                return;
        m->config.health = fresh.health;
        m->derive.health.sampled = true; /* every object judged again at the next pass */
        log_info("Read [Health] from %s again; every object is judged with the new limits.", m->options.config_path);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received SIGHUP, reloading [Health] and refreshing.");
        if (m->options.config_path)
                manager_reload_health(m);
        (void) manager_refresh(m);
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

        switch (m->options.bus) {
        case BUS_CONNECTION_SYSTEM:
                r = sd_bus_open_system_with_description(&m->bus, "linkprobed");
                break;
        case BUS_CONNECTION_USER:
                r = sd_bus_open_user_with_description(&m->bus, "linkprobed");
                break;
        case BUS_CONNECTION_ADDRESS:
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
                                       m->options.bus == BUS_CONNECTION_USER ? "user"
                                       : m->options.bus == BUS_CONNECTION_SYSTEM ? "system" : "given");

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
                /* FileDescriptorName=private (linkprobed-private.socket): root's direct connections. */
                if (m->private_fd < 0 && names && names[i] && streq(names[i], "private") &&
                    sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0) {
                        m->private_fd = fd;
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

int manager_connect(Manager *m) {
        int r;

        r = manager_setup_signals(m);
        if (r < 0)
                return r;
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog: %m");
        r = manager_take_listen_fds(m, &m->netlink_fd);
        if (r < 0)
                return r;
        r = manager_connect_bus(m);
        if (r < 0)
                return r;
        m->publisher.bus = m->bus;
        m->registry.bus = m->bus;
        startup_stamp(m, "bus connected");
        return 0;
}

int manager_start(Manager *m) {
        int r;

        r = links_start_speed_reader(&m->links, m->event);
        if (r < 0)
                /* Speeds are then read on the loop, as before READY=1 anyway. */
                log_warning_errno(r, "Failed to start the link speed reader, reading in place: %m");
        startup_stamp(m, "speed reader");

        /* It follows the links from their first dump on. Without a packet socket (no CAP_NET_RAW) it
         * says so and leaves the rest working. */
        r = lldp_receiver_new(m->event, &m->links, &m->switches, &m->lldp);
        if (r < 0)
                return log_error_errno(r, "Failed to set up LLDP reception: %m");
        startup_stamp(m, "lldp");

        r = links_start_ethtool(&m->links, m->event);
        if (r < 0)
                /* Links then say their link modes are unknown; everything else stands. */
                log_warning_errno(r, "Failed to start asking ethtool for link modes: %m");
        startup_stamp(m, "ethtool");

        /* Listen first, enumerate second: nothing that happens in between can be missed. */
        r = netlink_new(m->event, &m->links, &m->status, TAKE_FD(m->netlink_fd),
                        m->options.netlink_rcvbuf ?: m->config.netlink_rcvbuf, &m->netlink);
        if (r < 0)
                return r;
        startup_stamp(m, "netlink socket");
        r = udev_source_new(m->event, m->config.udev_rcvbuf, &m->udev);
        if (r < 0)
                return r;
        r = links_watch(&m->links, m->udev);
        if (r >= 0)
                r = thunderbolt_watch(&m->thunderbolt, m->udev);
        if (r >= 0)
                r = rdma_remote_new(&m->rdma, &m->rdma_remote);
        if (r >= 0)
                r = rdma_watch(&m->rdma, m->udev);
        if (r >= 0)
                r = pci_watch(&m->pci, m->udev);
        if (r < 0)
                return r;
        r = udev_source_start(m->udev);
        if (r < 0)
                /* Netlink alone keeps links right and the other sources are read on Refresh(). */
                daemon_status_set_degraded(&m->status, "udev-monitor-unavailable", true);
        startup_stamp(m, "udev");

        if (m->config.inhibit.units) {
                r = unit_watch_new(m->bus, m->config.inhibit.units, m->config.inhibit.what, m->inhibitors, &m->status,
                                   &m->unit_watch);
                if (r < 0)
                        return log_error_errno(r, "Cannot follow [Inhibit] WhileUnitsActive=: %m");
        }

        r = node_start(&m->node, &m->publisher, m->event, m->sysfs_fd);
        if (r < 0)
                return r;
        r = memory_start(&m->memory, &m->publisher, m->event, m->config.memory_poll_usec,
                         m->config.memory_change_percent);
        if (r < 0)
                return r;
        startup_stamp(m, "node, memory");

        /* Link modes, link state, speed and duplex for the first flush from two ethtool dumps, not a
         * sysfs read and two requests a link, taken beside the netlink dumps; a test's sysfs tree
         * (--sysfs-root) or replayed ethtool answers are read as before. */
        if (sysfs_root_is_the_machines(m->options.sysfs_root) && !link_ethtool_replay)
                links_dump_ethtool_begin(&m->links);
        r = netlink_enumerate(m->netlink);
        startup_stamp(m, "netlink dumps");
        links_dump_ethtool_end(&m->links);
        if (r < 0)
                return r;
        startup_stamp(m, "ethtool dumps");
        (void) udev_source_enumerate(m->udev);
        startup_stamp(m, "udev enumeration");

        /* Everything found so far is published with the name: no signals for it. */
        bus_publisher_flush(&m->publisher);
        startup_stamp(m, "first flush");
        /* The first sample, of what is published now, so that counters and health are there from the
         * start. */
        r = link_watch_new(m->event, m->netlink, &m->links, &m->link_watch);
        if (r < 0)
                return log_oom();
        r = watch_new(&(WatchContext) {
                              .event = m->event,
                              .interval_usec = m->config.watch_interval_usec,
                              .samplers = { link_watch_sampler(m->link_watch), pci_watch_sampler(&m->pci),
                                            rdma_watch_sampler(&m->rdma) },
                              .n_samplers = 3,
                              .publisher = &m->publisher,
                              .sampled = &m->derive.health.sampled,
                      },
                      &m->watch);
        if (r < 0)
                return r;
        watch_start(m->watch);
        startup_stamp(m, "watch started");
        bus_publisher_flush(&m->publisher);
        startup_stamp(m, "second flush");
        r = manager_request_name(m);
        if (r < 0)
                return r;
        m->publisher.name_acquired = true;
        startup_stamp(m, "name");
        daemon_status_update(&m->status);
        bus_publisher_flush(&m->publisher);

        startup_stamp(m, "READY=1");
        log_info("linkprobed %s running: %zu links.", VERSION, table_size(&m->links.table));
        m->status_text = manager_status_text(m);
        /* READY=1 must arrive: with the queue full (it never is this early) it waits as sd_notify() does. */
        if (manager_notify("READY=1", m->status_text) == -EAGAIN)
                (void) sd_notifyf(false, "READY=1\nSTATUS=%s", strempty(m->status_text));

        /* Work that is not part of the picture of the kernel's facts (measurements, persisted results,
         * responders) starts here, after READY=1. A node that serves tests shares a lock between its
         * responder and its probes, so the two never measure at once (linkprobe-responder(8)). */
        _cleanup_(freep) char *measure_lock = NULL;
        if ((strv_length(m->config.peers.listen) > 0 || m->n_responder_fds > 0) &&
            state_directory_path(&m->state_directory, MEASURE_LOCK_FILE_NAME, &measure_lock) >= 0)
                reconcile_set_measure_lock(m->reconciler, measure_lock);
        r = reconcile_start(m->reconciler);
        if (r < 0)
                return r;
        _cleanup_(freep) char *identity_path = NULL;
        if (strv_length(m->config.peers.listen) > 0 || m->n_responder_fds > 0) {
                m->identity_file.enabled = true;
                identity_file_update(&m->identity_file, &m->node);
                if (m->identity_file.written)
                        (void) identity_file_path(&m->identity_file, &identity_path);
        }
        r = responder_supervisor_start(m->event, &m->config.peers, &m->status, m->responder_fds, m->n_responder_fds,
                                       identity_path, measure_lock, &m->responder);
        m->responder_fds = mfree(m->responder_fds); /* taken over, whatever happened */
        m->n_responder_fds = 0;
        if (r < 0)
                return r;
        r = metrics_exporter_start(m->event, &m->config, manager_render_metrics, m, &m->metrics);
        if (r < 0)
                return r;
        if (m->gpu_prober) {
                r = gpu_prober_start(m->gpu_prober);
                if (r < 0)
                        return r;
        } else
                log_debug("GPU probing is off ([Gpu] Enabled=no).");
        if (m->fabric_sweep)
                fabric_sweep_request(m->fabric_sweep);
        return 0;
}

int manager_run(Manager *m) {
        int r = event_loop_run(m->event);

        (void) manager_notify("STOPPING=1", "Shutting down.");
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
        links_request_sysfs(&m->links);
        if (m->udev)
                (void) udev_source_enumerate(m->udev);
        node_refresh(&m->node);
        memory_refresh(&m->memory);
        fabric_sweep_request(m->fabric_sweep);
        return r;
}

int manager_render_metrics(void *userdata, char **ret, size_t *ret_size) {
        Manager *m = userdata;
        MetricsSources sources = {
                .status = &m->status,
                .node = &m->node,
                .memory = &m->memory,
                .links = &m->links,
                .thunderbolt = &m->thunderbolt,
                .rdma = &m->rdma,
                .gpus = &m->gpus,
                .peers = &m->peers,
                .pci = &m->pci,
                .neighbors = &m->neighbors,
                .switches = &m->switches,
                .netlink_overruns = netlink_overruns(m->netlink),
                .udev_overruns = udev_source_overruns(m->udev),
        };

        return metrics_render_string(&sources, ret, ret_size);
}
