/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt.h — Thunderbolt/USB4 domains, routers, peers and retimers as we publish them, kept live from udev */
#pragma once

#include "bus-object.h"
#include "counter.h"
#include "health.h"
#include "log-object.h"
#include "shared/table.h"
#include "sysfs/thunderbolt.h"
#include "tbt-topology.h"

typedef struct UdevSource UdevSource;
struct udev_device;

/*
 * Every device of bus/thunderbolt. Every kind is kept, so the tree can be built, but XDomain services
 * are not published: a service is a protocol the peer offers (thunderbolt-net, a DMA test), with no
 * link and no rate of its own, so it is folded into its peer (Services, NetInterface). Published
 * objects are in objects (which GetManagedObjects walks), services in services. Names are unique
 * across both (one bus directory).
 */
typedef struct Thunderbolt {
        Table objects;  /* TbtObject* by sysname: what is published */
        Table services; /* TbtObject* by sysname: XDomain services, folded into peers */
        BusPublisher *publisher;
        int sysfs_fd;
        /* The tree was rebuilt: the derivation pass redoes the network links' cross-links. */
        bool changed;
        TbtDepartures departed; /* routers and peers that left, by UniqueId (tbt-topology.h) */
} Thunderbolt;

typedef struct TbtObject {
        char *sysname; /* the table's key: "domain0", "0-301", "0-301.0", "0-0:1.1" */
        char *sysname_utf8; /* what D-Bus can carry: the kernel's bytes, invalid UTF-8 escaped */
        Thunderbolt *owner;
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
        bool degraded; /* the link's structural fact (tbt-topology.c); published as derived.health_state */
        char *degraded_reason;
        char **problems;
        unsigned path_generation; /* peers: 3, 4, 5 for the network link's ConnectionType; 0 unknown */
        char **services;          /* peers: the keys of their XDomain services */
        /* Over time: the link's rate or lanes changed, or the same UniqueId came back. */
        TbtLinkChanges link_changes;

        /* Derived (derive-link.c writes these): the thunderbolt-net interface that reaches a peer. */
        struct {
                char *net_interface_path;
                int net_ifindex;
                char *pci_device_path; /* domains: PciDevice, the host interface (derive-pci.c) */
                double path_limit_gbps; /* routers and peers: PathLimitGbps (derive-pci.c) */
                char *path_limited_by;
                HealthState health_state; /* derive-health.c: Health, Degraded and their reasons, one verdict */
        } derived;
} TbtObject;

void thunderbolt_init(Thunderbolt *tbt, BusPublisher *p, int sysfs_fd);
void thunderbolt_done(Thunderbolt *tbt);
/* Follows the udev subsystem "thunderbolt"; call before the monitor starts. */
int thunderbolt_watch(Thunderbolt *tbt, UdevSource *udev);

TbtObject *tbt_object_get(Thunderbolt *tbt, const char *sysname);
/* thunderbolt/<sysname>, the sysname encoded with sd_bus_path_encode(). */
int tbt_object_path(const char *sysname, char **ret);
/* Whether any domain, router, peer or retimer is published. */
bool tbt_any_published(Thunderbolt *t);

/* The udev handlers: add, change and the rest re-read the device; remove drops it and every device
 * below it. The enumeration re-reads everything, marks and sweeps, and publishes the differences. */
void tbt_udev_event(void *userdata, struct udev_device *device, const char *action);
int tbt_enumerate_all(void *userdata);

/* Tells Thunderbolt objects apart from others in the publisher's queue. */
extern const BusObjectType tbt_bus_type;

#define log_tbt_full_errno(o, level, error, ...) \
        log_object_full_errno(level, error, "THUNDERBOLT_DEVICE", (o)->sysname_utf8, __VA_ARGS__)
#define log_tbt_debug(o, ...) (void) log_tbt_full_errno(o, LOG_DEBUG, 0, __VA_ARGS__)
#define log_tbt_info(o, ...) (void) log_tbt_full_errno(o, LOG_INFO, 0, __VA_ARGS__)
#define log_tbt_warning(o, ...) (void) log_tbt_full_errno(o, LOG_WARNING, 0, __VA_ARGS__)
