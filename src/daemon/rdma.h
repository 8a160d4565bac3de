/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma.h — RDMA ports as published objects: sysfs facts, live verbs state, and their network interfaces */
#pragma once

#include <systemd/sd-event.h>

#include "bus-object.h"
#include "sysfs/infiniband.h"

typedef struct Manager Manager;
typedef struct Link Link;
typedef struct RdmaVerbsDevice RdmaVerbsDevice;

/* One non-zero GID table entry as published. */
typedef struct RdmaPortGid {
        unsigned index;
        uint8_t gid[16];
        RdmaGidType type;
        char *netdev; /* kernel bytes, NULL when the entry has no interface */
} RdmaPortGid;

typedef struct RdmaPort {
        char *key; /* "<device>_<port>": the table key and the label of the object path */
        Manager *manager;
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

        /* State, announced as it changes. With libibverbs the live fields come from
         * ibv_query_port(), the rest (and everything without verbs) from sysfs. */
        RdmaPortStatus status;
        RdmaTransport transport;
        RdmaPortGid *gids;
        size_t n_gids;
        char **netdevs; /* the port's network interfaces (kernel bytes), its own first */

        /* The Link of the first of netdevs that is one of our links. */
        char *net_interface_path;
        int net_ifindex;
        /* That link's carrier and speed when the port was last read: a change re-reads the port,
         * since RoCE port state follows the Ethernet link and the kernel sends no uevent for it. */
        bool netdev_seen;
        bool netdev_carrier;
        uint32_t netdev_speed_mbps;

        bool reread; /* re-read from sysfs (and verbs) at the next flush */
        bool seen;   /* mark and sweep */
} RdmaPort;

/* Per RDMA device: what is not published but kept for its ports (the libibverbs handle). */
typedef struct RdmaDevice {
        char *name;
        Manager *manager;
        RdmaVerbsDevice *verbs;
        char *uverbs; /* its class/infiniband_verbs entry ("uverbs0"), while verbs is open */
        sd_event_source *verbs_source;
        int verbs_error; /* why verbs are not used (negative errno), logged once per value */
        bool seen;
} RdmaDevice;

int rdma_port_compare(const void *key, const void *object);
int rdma_device_compare(const void *key, const void *object);
void rdma_free(Manager *m);

/* Registers the bus objects and the udev subsystem "infiniband"; call before the udev monitor
 * starts. The enumeration then runs with every other udev source's. */
int rdma_start(Manager *m);

/**
 * rdma_enumerate() - read every RDMA device again and publish the differences
 * @m: the manager
 *
 * Start-up, udev overrun and Refresh(). Ports that are gone are removed, new ones added, changed
 * ones announced. No RDMA subsystem is a normal state: no ports, nothing logged.
 *
 * Return: 0, or -errno when class/infiniband exists but cannot be listed.
 */
int rdma_enumerate(Manager *m);

/**
 * rdma_device_process() - read one device again (a udev event named it)
 * @m: the manager
 * @name: the device's name in class/infiniband
 * @try_verbs: also try to open the device with libibverbs if it is not open yet
 *
 * A device that is gone (or never was) has its ports removed.
 */
void rdma_device_process(Manager *m, const char *name, bool try_verbs);
void rdma_device_remove(Manager *m, const char *name);

/* The hooks of the Link object: after its facts were re-read (netlink event, rename, carrier,
 * speed), and before it goes away. They keep Link.RdmaPort, ConnectionType and
 * RdmaPort.NetInterface right whichever side changes first, and re-read a port whose network
 * interface's carrier or speed changed. */
void rdma_link_changed(Link *l);
void rdma_link_removed(Link *l);

/* Marks a port for re-reading at the next flush. */
void rdma_port_request_reread(RdmaPort *p);
RdmaPort *rdma_port_get(Manager *m, const char *device, unsigned number);

/**
 * rdma_port_status_merge() - the live status to publish from sysfs and (optionally) verbs
 * @sysfs: the port as sysfs shows it
 * @verbs: the port as ibv_query_port() saw it, or NULL
 * @ret: every field verbs knows from verbs, the rest from sysfs
 */
void rdma_port_status_merge(const RdmaPortStatus *sysfs, const RdmaPortStatus *verbs, RdmaPortStatus *ret);
