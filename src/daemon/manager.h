/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.h — the daemon: the event loop, the bus, every kind of object and every source of facts */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-object.h"
#include "bus-registry.h"
#include "heap.h"
#include "private-bus.h"
#include "config.h"
#include "derive.h"
#include "fabric-sweep.h"
#include "identity-file.h"
#include "gpu.h"
#include "link.h"
#include "memory.h"
#include "neighbor.h"
#include "node.h"
#include "peer.h"
#include "pci.h"
#include "persist.h"
#include "rdma-remote.h"
#include "rdma.h"
#include "shared/ratelimit.h"
#include "state-file.h"
#include "status.h"
#include "switch.h"
#include "tbt.h"

typedef struct GpuProber GpuProber;
typedef struct Inhibitors Inhibitors;
typedef struct LldpReceiver LldpReceiver;
typedef struct MetricsExporter MetricsExporter;
typedef struct Netlink Netlink;
typedef struct Reconciler Reconciler;
typedef struct ResponderSupervisor ResponderSupervisor;
typedef struct UdevSource UdevSource;
typedef struct UnitWatch UnitWatch;
typedef struct Watch Watch;
typedef struct LinkWatch LinkWatch;

typedef enum BusConnection {
        BUS_CONNECTION_SYSTEM,
        BUS_CONNECTION_USER,
        BUS_CONNECTION_ADDRESS,
} BusConnection;

typedef struct ManagerOptions {
        BusConnection bus;
        const char *bus_address;
        const char *sysfs_root;
        uint64_t netlink_rcvbuf; /* --netlink-rcvbuf=, overrides the config, 0 = not set */
        const char *state_directory; /* --state-directory=, else $STATE_DIRECTORY, else /var/lib/linkprobe */
        const char *config_path;     /* the configuration read at start, read again on SIGHUP */
        bool config_must_exist;      /* --config= named it */
        const char *private_socket;  /* --private-socket=: created and removed by us; NULL: systemd's, if any */
} ManagerOptions;

typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        Config config;
        ManagerOptions options;
        int sysfs_fd;
        StateDirectory state_directory;

        /* What is published, and the root object's interfaces. */
        BusPublisher publisher;
        BusRegistry registry;
        DaemonStatus status;
        Node node;
        Memory memory;

        /* One state per kind of object: what its source says. */
        Links links;
        Thunderbolt thunderbolt;
        Rdma rdma;
        Gpus gpus;
        Pci pci;
        Peers peers;
        Neighbors neighbors;
        Switches switches;
        Persist persist;
        IdentityFile identity_file; /* Node.derived.identity, for the responder */
        /* What combines them: the derivation pass, and the Summary it keeps. */
        Derive derive;

        /* Sources of facts and the work that measures. */
        Netlink *netlink;
        UdevSource *udev;
        LldpReceiver *lldp; /* switches from LLDP on Ethernet links */
        Inhibitors *inhibitors;
        UnitWatch *unit_watch; /* [Inhibit] WhileUnitsActive=; NULL when none */
        Reconciler *reconciler;
        GpuProber *gpu_prober; /* NULL with [Gpu] Enabled=no */
        FabricSweep *fabric_sweep; /* NULL unless [Fabric] Sweep=yes */
        RdmaRemote *rdma_remote;   /* InfiniBand neighbours; NULL before the sources start */
        ResponderSupervisor *responder;
        MetricsExporter *metrics;
        Watch *watch;       /* [Watch] IntervalSec=; NULL when off */
        LinkWatch *link_watch; /* the links' part of it (its dumps' socket) */
        HeapKeeper *heap;
        PrivateBus *private_bus; /* root's direct connections; NULL when there is no private socket */
        int private_fd;          /* the private socket's listening fd, until private_bus takes it */
        char *status_text;  /* the last STATUS= sent to systemd */
        int netlink_fd;     /* a NETLINK_ROUTE socket systemd passed, until netlink takes it */
        int *responder_fds; /* listening sockets systemd passed for the responder, until it starts */
        size_t n_responder_fds;

        RateLimit read_ratelimit; /* Refresh() and GetMetrics(), per sender */
        uint64_t last_refresh_usec;
        uint64_t created_usec; /* CLOCK_MONOTONIC at manager_new(), for the start-up timings */
} Manager;

int manager_new(const Config *config, const ManagerOptions *options, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Signals, the descriptors systemd passed, the bus connection. The bus objects are registered next
 * (manager_bus_register()), then manager_start(). */
int manager_connect(Manager *m);
/* Connects the sources of facts, enumerates, takes the bus name, reports READY=1, then starts what
 * measures. */
int manager_start(Manager *m);
int manager_run(Manager *m);

/* Re-reads every source of facts and publishes the differences (Refresh(), SIGHUP). */
int manager_refresh(Manager *m);

/* The metrics exposition of everything published, into a new string (userdata: the Manager). */
int manager_render_metrics(void *userdata, char **ret, size_t *ret_size);
