/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link.h — a network interface as we publish it: netlink state, sysfs facts, addresses */
#pragma once

#include <netinet/in.h>

#include "bus-object.h"
#include "classify.h"
#include "shared/log.h"

typedef struct Manager Manager;
struct rtnl_link;
struct rtnl_addr;

typedef struct LinkAddress {
        int family;
        uint8_t address[16];
        uint8_t prefixlen;
        uint8_t scope;
        uint32_t flags; /* IFA_F_* */
} LinkAddress;

typedef struct Link {
        int ifindex; /* first: the table's key */
        Manager *manager;
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

        /* From sysfs, re-read once per flush after any event (see link_prepare); speed and duplex
         * by the speed reader once the daemon runs. */
        bool sysfs_stale;
        uint64_t speed_request; /* the speed reader's answer we wait for; 0: none */
        uint32_t speed_mbps;
        char *duplex;
        char *driver;
        char *devtype;
        char *device_path; /* canonical sysfs path of the backing device, for other sources */
        bool wireless;
        bool has_device;
        bool on_thunderbolt;

        LinkKind kind;
        ConnectionType connection_type;

        LinkAddress *addresses; /* sorted: IPv4 first, then by address and prefix length */
        size_t n_addresses;

        /* Mark and sweep state of a full dump (start-up, overrun, Refresh). */
        bool seen;
        LinkAddress *synced;
        size_t n_synced;

        /* Set by the Thunderbolt and RDMA sources. */
        char *thunderbolt_peer_path;
        unsigned thunderbolt_generation;
        uint32_t thunderbolt_speed_mbps;
        char *rdma_port_path;
        bool rdma_roce;
} Link;

Link *link_get(Manager *m, int ifindex);
/* Finds by kernel name or, if s is a number, by index. */
Link *link_find(Manager *m, const char *s);

/* The netlink handlers: one path for the initial dump, live events and resyncs. */
int link_process_netlink(Manager *m, struct rtnl_link *rl, bool removed);
int link_process_address(Manager *m, struct rtnl_addr *ra, bool removed);
/* An answer of the speed reader (error: sysfs_net_read()'s). */
void link_apply_speed(Link *l, int error, int speed_mbps, const char *duplex);

/* A full dump: mark every link, feed every link and address, then sweep what was not seen and
 * publish only the differences. */
void links_mark(Manager *m);
void links_sweep(Manager *m);
int link_sync_address(Manager *m, struct rtnl_addr *ra);
void links_sweep_addresses(Manager *m);

/* Marks the link's sysfs facts for re-reading at the next flush (udev events, Refresh). */
void link_request_sysfs(Link *l);
void links_request_sysfs(Manager *m);

/* Recomputes the connection types that upper devices inherit from their lowers. */
void links_update_connection_types(Manager *m);

void links_free(Manager *m);

const char *link_operstate_to_string(uint8_t operstate) _const_;
const char *link_scope_to_string(uint8_t scope, char buf[static 4]);
bool link_is_up(const Link *l);

#define log_link_full_errno(link, level, error, ...) \
        log_full_errno_prefix(level, error, (link)->name_utf8, __VA_ARGS__)
#define log_link_debug(link, ...) (void) log_link_full_errno(link, LOG_DEBUG, 0, __VA_ARGS__)
#define log_link_info(link, ...) (void) log_link_full_errno(link, LOG_INFO, 0, __VA_ARGS__)
#define log_link_warning(link, ...) (void) log_link_full_errno(link, LOG_WARNING, 0, __VA_ARGS__)
#define log_link_debug_errno(link, error, ...) log_link_full_errno(link, LOG_DEBUG, error, __VA_ARGS__)
#define log_link_warning_errno(link, error, ...) log_link_full_errno(link, LOG_WARNING, error, __VA_ARGS__)
