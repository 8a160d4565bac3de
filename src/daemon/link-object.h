/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-object.h — what a link/<ifindex> object holds, for the files that make up the link kind: link.c
 * (netlink and sysfs), link-ethtool-ask.c (ethtool's answers), the watch and the derivation pass. The
 * functions are in link.h and link-ethtool-ask.h. */
#pragma once

#include <netinet/in.h>
#include <systemd/sd-event.h>

#include "bus-object.h"
#include "classify.h"
#include "counter.h"
#include "link-address.h"
#include "link-capability.h"
#include "link-modes.h"
#include "health.h"
#include "log-object.h"
#include "shared/table.h"

typedef struct Link Link;
typedef struct LinkSpeedReader LinkSpeedReader;
typedef struct UdevSource UdevSource;
struct rtnl_link;
struct rtnl_addr;

/* What rtnetlink's statistics say about one link at one moment (struct rtnl_link_stats64). */
typedef struct LinkStats {
        int ifindex;
        uint64_t rx_bytes, tx_bytes;
        uint64_t rx_errors, tx_errors;
        uint64_t rx_crc_errors;
        uint64_t rx_dropped;
} LinkStats;

/* Told of a link netlink added or changed (after the change), or of one about to go (removed): the
 * sources that follow links themselves (lldp.c opens and closes its receive path with them). */
typedef struct LinksEthtoolDumps LinksEthtoolDumps;
typedef void (*LinkHook)(Link *l, bool removed, void *userdata);

/* Every link, and what the derivation pass needs to know about them as a whole. */
typedef struct Links {
        Table table; /* Link* by ifindex */
        BusPublisher *publisher;
        int sysfs_fd;
        LinkSpeedReader *speed_reader; /* NULL: speeds are read in place */
        LinkModesAsker modes;          /* asks ethtool for every Ethernet and veth link */
        LinksEthtoolDumps *start_dumps; /* between links_dump_ethtool_begin() and _end() */
        size_t modes_cursor;           /* where the walk for waiting requests goes on (a hint: links come and go) */
        /* Links came or went, or one changed what others derive from it (kind, lower devices, its
         * backing device): the derivation pass redoes the cross-links and inherited types. */
        bool topology_changed;
        /* The first dump is done: a link that appears now is new, and what its counters say happened
         * since it was created (the watch counts its carrier changes and CRC errors from zero). */
        bool enumerated;
        LinkHook hook;
        void *hook_userdata;
} Links;

struct Link {
        int ifindex; /* first: the table's key */
        Links *links;
        BusObject bus;

        /* From netlink. The name is the kernel's bytes; name_utf8 is what D-Bus can carry. */
        char *name;
        char *name_utf8;
        char *info_kind;
        unsigned arphrd;
        unsigned flags;
        uint8_t operstate;
        uint32_t carrier_changes;
        uint32_t mtu;
        char *hw_address;
        int master_ifindex;
        int parent_ifindex;
        LinkAddresses addrs;

        /* From sysfs, re-read once per flush after any event (link_prepare); speed and duplex by the
         * speed reader once the daemon runs. */
        bool sysfs_stale;
        uint64_t speed_request; /* the speed reader's answer we wait for; 0: none */
        /* At the start, what ethtool's dumps said of the link (links_dump_ethtool()), taken by its first
         * link_prepare(): speed and duplex instead of the sysfs files, the answer instead of a request.
         * An error -ENODATA: not in that dump. */
        LinkEthtoolAnswer *dumped;
        uint32_t driver_speed_mbps; /* what the driver reports; 0 unknown */
        char *duplex;
        char *driver;
        char *devtype;
        char *device_path; /* canonical sysfs path of the backing device, for other sources */
        bool wireless;
        bool on_thunderbolt;
        LinkKind kind; /* judged from the facts above */

        /* From the LLDP receiver (lldp.c): why this link shows no switch though it could. */
        char *lldp_warning;
        /* From ethtool's netlink family (link-ethtool.c, recorded by link-modes.c), asked on every link
         * event of an Ethernet or veth link and on the monitor group's notifications: both ends' link
         * modes, the link-down reason. */
        LinkModes ethtool;

        /* Over time: the statistics at the watch's last sample, the rates over its last
         * interval, and recent errors and carrier changes. */
        struct {
                bool sampled;
                uint64_t sample;       /* the dump that read it last (its start, CLOCK_MONOTONIC) */
                uint64_t at;           /* CLOCK_MONOTONIC of the last reading */
                LinkStats now;         /* as the kernel said it; counters unknown until sampled */
                uint64_t last_rx, last_tx, last_crc, last_carrier;
                double rx_gbps, tx_gbps; /* NaN until two samples, or after a reading that made no sense */
                Window crc_errors, carrier_changes;
        } watch;

        /* Mark and sweep state of a full dump of links (start-up, overrun, Refresh). */
        bool seen;

        /* Facts that combine this link with other objects: derive-link.c writes them, nothing else. */
        struct {
                uint32_t speed_mbps; /* SpeedMbps: the driver's, else the Thunderbolt path's */
                ConnectionType connection_type;
                char *thunderbolt_peer_path;
                unsigned thunderbolt_generation; /* of the path to that peer; 0 unknown */
                uint32_t thunderbolt_speed_mbps; /* the slower direction of that path */
                uint64_t thunderbolt_hops;       /* a hash of every hop's lanes, rates and class on that
                                                  * path: any change under the link moves it */
                char *rdma_port_path;
                bool rdma_roce; /* that port is RoCE */
                char *pci_device_path; /* PciDevice: the PCI function below device_path (derive-pci.c) */
                LinkCapability capability; /* derive-link.c: both ends' speeds, trained low, LinkDownReason */
                /* derive-health.c: Health, Degraded and their reasons, from one verdict; a link that is not
                 * Degraded says in DegradedReason why nothing was judged (its capability's note). */
                HealthState health_state;
                char *switch_path;     /* Switch: the switch at the far end (derive-switch.c) */
                uint32_t lldp_partner_speeds_mbps[4]; /* what that switch's port says it can do */
                size_t n_lldp_partner_speeds;
        } derived;
};

static inline Link *link_get(Links *links, int ifindex) {
        return table_get(&links->table, &ifindex);
}

#define log_link_full_errno(link, level, error, ...) \
        log_object_full_errno(level, error, "INTERFACE", (link)->name_utf8, __VA_ARGS__)
#define log_link_debug(link, ...) (void) log_link_full_errno(link, LOG_DEBUG, 0, __VA_ARGS__)
#define log_link_info(link, ...) (void) log_link_full_errno(link, LOG_INFO, 0, __VA_ARGS__)
#define log_link_warning(link, ...) (void) log_link_full_errno(link, LOG_WARNING, 0, __VA_ARGS__)
#define log_link_debug_errno(link, error, ...) log_link_full_errno(link, LOG_DEBUG, error, __VA_ARGS__)
#define log_link_warning_errno(link, error, ...) log_link_full_errno(link, LOG_WARNING, error, __VA_ARGS__)
