/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-object.h — what an rdma/<device>_<port> object holds, for the files that make up the RDMA kind:
 * rdma.c (devices, ports, udev), rdma-port-state.c (what a read changes), rdma-remote.c, the watch and the
 * derivation pass. The functions are in rdma.h and rdma-port-state.h. */
#pragma once

#include <systemd/sd-event.h>

#include "bus-object.h"
#include "counter.h"
#include "health.h"
#include "log-object.h"
#include "rdma-live.h"
#include "shared/table.h"
#include "sysfs/infiniband.h"
#include "sysfs/watched.h"

typedef struct UdevSource UdevSource;

/* Every RDMA port, and the devices they belong to. No RDMA subsystem is a normal state: empty. */
typedef struct Switches Switches;

typedef struct Rdma {
        Table ports;   /* RdmaPort* by "<device>_<port>" */
        Table devices; /* RdmaDevice* by name */
        BusPublisher *publisher;
        sd_event *event;
        int sysfs_fd;
        /* The sysfs root is this machine's own, so libibverbs sees the same devices. */
        bool verbs_allowed;
        /* Ports came or went, or changed their interfaces or transport: the derivation pass redoes
         * the cross-links with network links. */
        bool changed;
        /* The first enumeration is done: a port that appears now is new, and its error counters count
         * from zero since it appeared. */
        bool enumerated;
        /* What the InfiniBand subnet management queries (rdma-remote.c, which owns them) are asked to do
         * at the end of the pass: a port's neighbour (RdmaPort.remote.wanted), libibumad's CAs listed. */
        bool remote_wanted;
        bool umad_list_wanted;
        /* Where a neighbour that is a switch is recorded (rdma-remote.c); NULL: nowhere (unit tests). */
        Switches *switches;
} Rdma;

/* One non-zero GID table entry as published. */
typedef struct RdmaPortGid {
        unsigned index;
        uint8_t gid[16];
        RdmaGidType type;
        char *netdev; /* kernel bytes, NULL when the entry has no interface */
} RdmaPortGid;

typedef struct RdmaPort {
        char *key; /* "<device>_<port>": the table key and the label of the object path */
        Rdma *owner;
        BusObject bus;

        char *device; /* the kernel's name (bytes; escaped for D-Bus) */
        unsigned number;

        /* Identity: fixed for the object's life. Should a re-read find other values (a device
         * replaced under the same name without a uevent), the object is removed and added again. */
        RdmaNodeType node_type;
        uint64_t node_guid;
        uint64_t sys_image_guid;
        char *fw_ver;
        char *hca_type;
        char *board_id;
        char *device_path; /* canonical sysfs path of the RDMA device, for the PCI function it sits on */

        /* State, announced as it changes. With libibverbs the live fields come from
         * ibv_query_port(), the rest (and everything without verbs) from sysfs. */
        RdmaPortStatus status;
        RdmaTransport transport;
        RdmaPortGid *gids;
        size_t n_gids;
        char **netdevs;       /* the port's network interfaces (kernel bytes), its own first */
        int *netdev_ifindexes; /* their indexes in class/net when the port was read; 0 unknown */

        /* Over time (rdma-watch.c): the port's counters at the watch's last sample, the rates of
         * its data counters over the interval, recent errors and link changes. */
        struct {
                bool sampled;
                bool any; /* at least one counter file was readable at the last sample */
                uint64_t at;
                uint64_t value[_INFINIBAND_COUNTER_MAX]; /* as read (data in bytes); COUNTER_UNKNOWN */
                uint64_t last[_INFINIBAND_COUNTER_MAX];
                double rx_gbps, tx_gbps; /* NaN unknown */
                Window symbol_errors, rcv_errors, link_downed, link_recoveries;
        } watch;

        /* The port at the other end of the cable, as its subnet management agent answers (rdma-remote.c):
         * asked when the port's state is read again, never polled. */
        struct {
                bool wanted;       /* read again after an event: ask its neighbour (rdma-remote.c) */
                uint64_t seq;      /* of the query in flight; 0 none */
                bool again;        /* an event came while it was in flight: ask once more */
                unsigned retries;  /* queries in a row that found the port flapping */
                bool known;        /* the fields below hold a neighbour */
                uint64_t node_guid;
                RdmaNodeType node_type;
                char *description; /* bytes, escaped for D-Bus */
                unsigned port;
                RdmaWidth best_width;
                RdmaSpeed best_speed;
                double best_gbps;
                bool degraded;
                char *degraded_reason;
                char *problem; /* the last warning, said once until it changes */
                char *switch_key; /* the switch recorded for it (switch.c), NULL none */
        } remote;

        bool reread; /* re-read from sysfs (and verbs) at the next flush */
        bool seen;   /* mark and sweep */

        /* Derived (derive-link.c writes these): the first of netdevs that is one of our links, and
         * that link's carrier and speed when the port was last read. A change re-reads the port, since
         * RoCE port state follows the Ethernet link and the kernel sends no uevent for it. */
        struct {
                char *net_interface_path;
                int net_ifindex;
                bool netdev_seen;
                bool netdev_carrier;
                uint32_t netdev_speed_mbps;
                char *pci_device_path; /* PciDevice (derive-pci.c) */
                /* Traffic through the IP stack of its network interface (derive-health.c): on RoCE the
                 * port's counters leave it out, on InfiniBand they include IPoIB's. NaN unknown. */
                double ip_rx_gbps, ip_tx_gbps;
                RdmaFallback fallback; /* suspected fallback to sockets (health_rdma_fallback()) */
                /* derive-health.c: Health and HealthReason. Degraded and DegradedReason are remote's, the
                 * structural fact the judge makes its degraded verdict (health-bus.h publishes them). */
                HealthState health_state;
                char *switch_path; /* Switch: the switch at the far end (derive-switch.c) */
        } derived;
} RdmaPort;

/* Per RDMA device: what is not published but kept for its ports (the libibverbs handle). */
typedef struct RdmaDevice {
        char *name;
        Rdma *owner;
        RdmaLive live;
        bool seen;
        /* Known from libibumad only: sysfs has no such device (ibsim's umad2sim, or a root that is not
         * the machine's own); its ports' state comes from their PortInfo. */
        bool from_umad;
} RdmaDevice;

#define log_rdma_full_errno(p, level, error, ...) log_object_full_errno(level, error, "RDMA_PORT", (p)->key, __VA_ARGS__)
#define log_rdma_debug(p, ...) (void) log_rdma_full_errno(p, LOG_DEBUG, 0, __VA_ARGS__)
#define log_rdma_warning_errno(p, error, ...) log_rdma_full_errno(p, LOG_WARNING, error, __VA_ARGS__)
