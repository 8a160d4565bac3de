/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma.h — RDMA ports as published objects: sysfs facts, live verbs state, and their network interfaces */
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

void rdma_init(Rdma *rdma, BusPublisher *p, sd_event *event, int sysfs_fd, bool verbs_allowed);
void rdma_done(Rdma *rdma);
/* Follows the udev subsystems "infiniband" and "infiniband_verbs"; call before the monitor starts.
 * The enumeration then runs with every other udev source's. */
int rdma_watch(Rdma *rdma, UdevSource *udev);

/**
 * rdma_enumerate() - read every RDMA device again and publish the differences
 * @userdata: the Rdma
 *
 * Start-up, udev overrun and Refresh(). Ports that are gone are removed, new ones added, changed
 * ones announced. No RDMA subsystem is a normal state: no ports, nothing logged.
 *
 * Return: 0, or -errno when class/infiniband exists but cannot be listed.
 */
int rdma_enumerate(void *userdata);

/**
 * rdma_device_process() - read one device again (a udev event named it)
 * @rdma: the ports and devices
 * @name: the device's name in class/infiniband
 * @try_verbs: also try to open the device with libibverbs if it is not open yet
 *
 * A device that is gone (or never was) has its ports removed.
 */
void rdma_device_process(Rdma *rdma, const char *name, bool try_verbs);
void rdma_device_remove(Rdma *rdma, const char *name);

/* A uverbs device went away: whoever holds it open must let go now. For a driver that cannot
 * disassociate user contexts (rxe, siw, ...) the kernel waits for every open file before it
 * removes the RDMA device, and the "remove" of the RDMA device itself only comes after that. */
void rdma_uverbs_removed(Rdma *rdma, const char *uverbs);

/* The key "<device>_<port>" and the object path rdma/<key>. */
int rdma_port_object_path(const char *device, unsigned port, char **ret_key, char **ret_path);

/* Marks a port for re-reading at the next flush (a verbs event, or its network interface's carrier
 * or speed moved). */
void rdma_port_request_reread(RdmaPort *p);
RdmaPort *rdma_port_get(Rdma *rdma, const char *device, unsigned number);
/* The first active port, on device (NULL: any) with number port (0: any). */
RdmaPort *rdma_find_active_port(Rdma *rdma, const char *device, unsigned port);
bool rdma_port_is_active(const RdmaPort *p);

/* For rdma-remote.c: a device read from libibumad published like one read from sysfs. */
void rdma_device_apply(Rdma *rdma, const InfinibandDevice *d, bool try_verbs);
RdmaDevice *rdma_device_get(Rdma *rdma, const char *name);


/* Tells RDMA ports apart from others in the publisher's queue. */
extern const BusObjectType rdma_port_bus_type;

#define log_rdma_full_errno(p, level, error, ...) log_object_full_errno(level, error, "RDMA_PORT", (p)->key, __VA_ARGS__)
#define log_rdma_debug(p, ...) (void) log_rdma_full_errno(p, LOG_DEBUG, 0, __VA_ARGS__)
#define log_rdma_warning_errno(p, error, ...) log_rdma_full_errno(p, LOG_WARNING, error, __VA_ARGS__)
