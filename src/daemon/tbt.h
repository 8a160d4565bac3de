/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt.h — Thunderbolt/USB4 domains, routers, peers and retimers as we publish them, kept live from udev */
#pragma once

#include "bus-object.h"
#include "sysfs/thunderbolt.h"
#include "tbt-topology.h"

typedef struct Manager Manager;
typedef struct Link Link;
struct udev_device;

/*
 * One device of bus/thunderbolt. Every kind is kept, so the tree can be built, but XDomain services are
 * not published: a service is a protocol the peer offers (thunderbolt-net, a DMA test), with no link
 * and no rate of its own, so it is folded into its peer (Services, NetInterface). Published objects
 * are in Manager.thunderbolt (which GetManagedObjects walks), services in Manager.thunderbolt_services.
 */
typedef struct TbtObject {
        char *sysname; /* the table's key: "domain0", "0-301", "0-301.0", "0-0:1.1" */
        char *sysname_utf8; /* what D-Bus can carry: the kernel's bytes, invalid UTF-8 escaped */
        Manager *manager;
        BusObject bus; /* initialised only when published */
        bool published;
        bool seen;         /* mark and sweep of a full enumeration */
        TbtDevice *device; /* what sysfs said at the last read */

        /* From the tree, recomputed after every change (tbt_apply_topology) */
        TbtNodeType type;
        char *parent_path; /* the parent's object path; NULL for a domain or an orphan */
        int depth;         /* -1 unknown */
        unsigned usb4_version;
        bool has_link;
        TbtLinkClass link_class;
        unsigned rx_gbps, tx_gbps, path_rx_gbps, path_tx_gbps;
        bool degraded;
        char *degraded_reason;
        char **problems;
        unsigned path_generation; /* peers: 3, 4, 5 for the network link's ConnectionType; 0 unknown */
        char **services;          /* peers: the keys of their XDomain services */
        char *net_interface_path; /* peers: the Link object of their thunderbolt-net interface */
        Link *net_link;           /* scratch of tbt_update_links() */
} TbtObject;

/* The table's comparison: the key is a sysname (const char *). */
int tbt_object_compare(const void *key, const void *object);
TbtObject *tbt_object_get(Manager *m, const char *sysname);
void tbt_objects_free(Manager *m);

/* Registers the bus objects and the udev subsystem; call where manager_start() lets sources do so. */
int tbt_setup(Manager *m);

/* The udev handlers: add, change and the rest re-read the device; remove drops it and every device
 * below it. The enumeration re-reads everything, marks and sweeps, and publishes the differences. */
void tbt_udev_event(Manager *m, struct udev_device *device, const char *action);
int tbt_enumerate_all(Manager *m);

/*
 * Cross-links network links and peers: a link whose backing device is an XDomain service gets the
 * service's peer as ThunderboltPeer, the peer's path generation (ConnectionType) and path rate
 * (SpeedMbps when the driver reports none); the peer gets the link as NetInterface. Runs after every
 * Thunderbolt change and whenever links were added, removed or changed backing devices, so either
 * side may appear, change or vanish first.
 */
void tbt_update_links(Manager *m);

#define log_tbt_full_errno(o, level, error, ...) log_full_errno_prefix(level, error, (o)->sysname, __VA_ARGS__)
#define log_tbt_debug(o, ...) (void) log_tbt_full_errno(o, LOG_DEBUG, 0, __VA_ARGS__)
#define log_tbt_info(o, ...) (void) log_tbt_full_errno(o, LOG_INFO, 0, __VA_ARGS__)
#define log_tbt_warning(o, ...) (void) log_tbt_full_errno(o, LOG_WARNING, 0, __VA_ARGS__)
