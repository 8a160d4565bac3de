/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link.h — network interfaces as netlink and sysfs describe them (link/<ifindex> objects) */
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
                uint64_t at;           /* CLOCK_MONOTONIC of the last sample */
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

/* Tells link objects apart from others in the publisher's queue (the derivation pass). */
extern const BusObjectType link_bus_type;

void links_init(Links *links, BusPublisher *p, int sysfs_fd);
void links_done(Links *links);
/* From now on speed and duplex are read off the loop (after READY=1: until then the picture is made
 * in one go, in place). A failure leaves them read in place. */
int links_start_speed_reader(Links *links, sd_event *event);
/* Before the name is taken: every link's link modes, speed, duplex and link state from two ethtool dumps
 * (link_ethtool_dump()), for the first flush, instead of a sysfs read and two requests a link, answered
 * after READY=1. Only where the sysfs root is the kernel's own. _begin() starts them on a thread of their
 * own (before the netlink dumps), _end() waits for them and hands each link its replies (after). */
void links_dump_ethtool_begin(Links *links);
void links_dump_ethtool_end(Links *links);
/* At a link's first link_prepare(): applies what the dumps said as the worker's answer would be, and
 * answers true; false when they did not describe it all (it is then asked). */
bool link_apply_dumped_ethtool(Link *l);
/* From now on Ethernet and veth links' link modes are asked of ethtool's netlink family, on every link event
 * and every notification of its monitor group. A failure leaves them unknown. */
int links_start_ethtool(Links *links, sd_event *event);
void links_stop_ethtool(Links *links);
/* Whether the link's kind is asked for link modes (Ethernet, veth): the one predicate for link.c, which
 * asks, and the derivation pass, which says "not an Ethernet link" for the others. */
bool link_asks_ethtool(const Link *l) _pure_;
/* Asks the link's modes and state again (a no-op for a link of another kind, or without the worker). */
void link_request_ethtool(Link *l);
/* Follows the udev subsystem "net": an event re-reads that link's sysfs facts. */
int links_watch(Links *links, UdevSource *udev);

Link *link_get(Links *links, int ifindex);
/* Finds by kernel name or, if s is a number, by index. */
Link *link_find(Links *links, const char *s);
/* The object path of link/<ifindex>. */
int link_object_path(int ifindex, char **ret);

/* The netlink handlers: one path for the initial dump, live events and resyncs. */
int link_process_netlink(Links *links, struct rtnl_link *rl, bool removed);
int link_process_address(Links *links, struct rtnl_addr *ra, bool removed);

/* A full dump: mark every link, feed every link and address, then sweep what was not seen and
 * publish only the differences. Each mark starts the collection afresh (a dump tried again after an
 * interruption). An incomplete dump (interrupted every time) is swept with complete=false: what it saw
 * is applied, nothing is removed on its word. */
void links_mark(Links *links);
void links_sweep(Links *links);
void links_mark_addresses(Links *links);
int link_sync_address(Links *links, struct rtnl_addr *ra);
void links_sweep_addresses(Links *links, bool complete);

/* The watch's sample of one link (now: CLOCK_MONOTONIC usec); a link that is not in the table is
 * ignored (its removal or addition is on its way). */
void link_record_stats(Links *links, const LinkStats *s, uint64_t now);

/* Marks the link's sysfs facts for re-reading at the next flush (udev events, Refresh, another
 * source that saw sysfs move under it). */
void link_request_sysfs(Link *l);
void links_request_sysfs(Links *links);

const char *link_operstate_to_string(uint8_t operstate) _const_;
bool link_is_up(const Link *l);
/* What the classifiers judge the link by (classify.h). */
LinkFacts link_facts(const Link *l);
bool link_has_carrier(const Link *l);
/* Records the LLDP receiver's word on the link (NULL: none). */
int link_set_lldp_warning(Link *l, const char *warning);

#define log_link_full_errno(link, level, error, ...) \
        log_object_full_errno(level, error, "INTERFACE", (link)->name_utf8, __VA_ARGS__)
#define log_link_debug(link, ...) (void) log_link_full_errno(link, LOG_DEBUG, 0, __VA_ARGS__)
#define log_link_info(link, ...) (void) log_link_full_errno(link, LOG_INFO, 0, __VA_ARGS__)
#define log_link_warning(link, ...) (void) log_link_full_errno(link, LOG_WARNING, 0, __VA_ARGS__)
#define log_link_debug_errno(link, error, ...) log_link_full_errno(link, LOG_DEBUG, error, __VA_ARGS__)
#define log_link_warning_errno(link, error, ...) log_link_full_errno(link, LOG_WARNING, error, __VA_ARGS__)
