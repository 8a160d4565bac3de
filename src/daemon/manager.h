/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.h — the daemon's state: event loop, bus connection, object tables and fact sources */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-object.h"
#include "config.h"
#include "node.h"
#include "summary.h"
#include "shared/ratelimit.h"
#include "shared/table.h"

#define BUS_NAME "org.linkprobe.LinkProbe1"
#define BUS_PATH "/org/linkprobe/LinkProbe1"
#define BUS_INTERFACE_PREFIX "org.linkprobe.LinkProbe1"

typedef struct Netlink Netlink;
typedef struct LinkSpeedReader LinkSpeedReader;
typedef struct UdevSource UdevSource;
typedef struct Reconciler Reconciler;
typedef struct ResponderSupervisor ResponderSupervisor;
typedef struct MetricsExporter MetricsExporter;
typedef struct GpuProber GpuProber;
typedef struct Inhibitors Inhibitors;

typedef enum ManagerState {
        MANAGER_STARTING,
        MANAGER_RUNNING,
        MANAGER_DEGRADED, /* a source of facts is unavailable; see DegradedReasons */
        _MANAGER_STATE_MAX,
        _MANAGER_STATE_INVALID = -EINVAL,
} ManagerState;

typedef enum BusKind {
        BUS_KIND_SYSTEM,
        BUS_KIND_USER,
        BUS_KIND_ADDRESS,
} BusKind;

typedef struct ManagerOptions {
        BusKind bus_kind;
        const char *bus_address;
        const char *sysfs_root;
        uint64_t netlink_rcvbuf; /* --netlink-rcvbuf=, overrides the config, 0 = not set */
        const char *state_directory; /* --state-directory=, else $STATE_DIRECTORY, else /var/lib/linkprobe */
} ManagerOptions;

struct Manager {
        sd_event *event;
        sd_bus *bus;
        Config config;
        ManagerOptions options;

        int sysfs_fd;
        int state_dir_fd; /* opened on first use: see manager_open_state_directory() */
        ManagerState state;
        char **degraded_reasons;
        bool bus_name_acquired; /* signals go out only once clients can reach us by name */

        Table links; /* Link* by ifindex */
        bool links_topology_changed;
        Table rdma_ports;   /* RdmaPort* by "<device>_<port>" */
        Table rdma_devices; /* RdmaDevice* by name */
        Table thunderbolt;          /* TbtObject* by sysname: what is published */
        Table thunderbolt_services; /* TbtObject* by sysname: XDomain services, folded into peers */

        Netlink *netlink;
        LinkSpeedReader *speed_reader;
        UdevSource *udev;

        /* Measured peer paths (peer.c, reconcile.c, persist.c) and the responder. */
        Table peers;        /* Peer* by key: one per measured path */
        Table peer_targets; /* PeerTarget* by address: what is wanted measured, and why */
        Reconciler *reconciler;
        ResponderSupervisor *responder;
        int *responder_fds; /* listening sockets systemd passed for the responder, until it starts */
        size_t n_responder_fds;
        bool persist_failing;
        uint64_t persist_retry_after;

        Node node;
        Memory memory;

        MetricsExporter *metrics;

        Table gpus;             /* Gpu* by number (gpu.c) */
        GpuProber *gpu_prober;  /* when linkprobe-probe-gpu runs (gpu-prober.c) */
        Inhibitors *inhibitors; /* Manager.Inhibit() (inhibit.c; manager_is_inhibited() in inhibit.h) */
        RateLimit read_ratelimit; /* Refresh() and GetMetrics(), per sender */

        /* Root-object interfaces, tracked like any other object. */
        BusObject manager_object;
        BusObject node_object;
        BusObject memory_object;
        BusObject summary_object;
        Summary summary;

        BusKindRegistration bus_kinds[8];
        size_t n_bus_kinds;

        BusObject **dirty;
        size_t n_dirty, n_dirty_allocated;
        sd_event_source *flush_source;
        uint64_t last_refresh_usec;
};

int manager_new(const Config *config, const ManagerOptions *options, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Connects to the bus and the kernel, enumerates, takes the bus name and reports READY=1. */
int manager_start(Manager *m);
int manager_run(Manager *m);

/* Re-reads every source of facts and publishes the differences (Refresh(), SIGHUP). */
int manager_refresh(Manager *m);

/* The directory for persisted results, created if missing. Returns a directory fd owned by the
 * manager, or -errno (the caller keeps its state in memory and says so). */
int manager_open_state_directory(Manager *m);

void manager_set_degraded(Manager *m, const char *reason, bool on);

/* Called by the flush between preparing and emitting (derived facts across objects). */
void manager_after_prepare(Manager *m);
/* Called by a flush that sent signals: what we publish changed. */
void manager_published(Manager *m);

const char *manager_state_to_string(ManagerState s) _const_;
