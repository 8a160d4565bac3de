/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <libudev.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <systemd/sd-bus.h>

#include "link-ethtool-ask.h"
#include "link-speed.h"
#include "link.h"
#include "shared/bus-names.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "sysfs/net.h"
#include "udev.h"

static void link_prepare(BusObject *o);

const BusObjectType link_bus_type = {
        .interface = LINK_INTERFACE,
        .prepare = link_prepare,
};

static inline Link *link_from_bus_object(BusObject *o) {
        return container_of(o, Link, bus);
}

static int link_compare(const void *key, const void *object) {
        return compare_int_key(key, ((const Link *) object)->ifindex);
}


Link *link_find(Links *links, const char *s) {
        Link *l;
        int ifindex;

        if (isempty(s))
                return NULL;
        if (parse_int(s, &ifindex) >= 0 && ifindex > 0)
                return link_get(links, ifindex);
        TABLE_FOREACH(l, &links->table)
                if (streq(l->name, s) || streq(l->name_utf8, s))
                        return l;
        return NULL;
}

int link_object_path(int ifindex, char **ret) {
        char label[16];
        snprintf(label, sizeof(label), "%d", ifindex);
        return sd_bus_path_encode(LINK_PATH_PREFIX, label, ret);
}

static Link *link_free(Link *l) {
        if (!l)
                return NULL;
        bus_object_done(&l->bus);
        free(l->name);
        free(l->name_utf8);
        free(l->info_kind);
        free(l->hw_address);
        free(l->duplex);
        free(l->driver);
        free(l->devtype);
        free(l->device_path);
        link_addresses_done(&l->addrs);
        free(l->derived.thunderbolt_peer_path);
        free(l->derived.rdma_port_path);
        free(l->derived.pci_device_path);
        health_state_done(&l->derived.health_state);
        free(l->derived.switch_path);
        free(l->lldp_warning);
        link_modes_done(&l->ethtool);
        free(l->dumped);
        link_capability_done(&l->derived.capability);
        return mfree(l);
}

/* A new link's statistics are unknown until the watch samples them. */
static void link_stats_init(Link *l) {
        l->watch = (typeof(l->watch)) {
                .now = {
                        .rx_bytes = COUNTER_UNKNOWN,
                        .tx_bytes = COUNTER_UNKNOWN,
                        .rx_errors = COUNTER_UNKNOWN,
                        .tx_errors = COUNTER_UNKNOWN,
                        .rx_crc_errors = COUNTER_UNKNOWN,
                        .rx_dropped = COUNTER_UNKNOWN,
                },
                .last_rx = COUNTER_UNKNOWN,
                .last_tx = COUNTER_UNKNOWN,
                /* A link there before the daemon has a history that is not ours to judge; one created
                 * since counted its errors and carrier changes since it exists, even before the watch's
                 * first look at it (a link that flaps as soon as it is made). */
                .last_crc = l->links->enumerated ? 0 : COUNTER_UNKNOWN,
                .last_carrier = l->links->enumerated ? 0 : COUNTER_UNKNOWN,
                .rx_gbps = NAN,
                .tx_gbps = NAN,
        };
}

static int link_new(Links *links, int ifindex, Link **ret) {
        _cleanup_(freep) char *path = NULL;
        Link *l;
        int r;

        r = link_object_path(ifindex, &path);
        if (r < 0)
                return r;

        l = new0(Link, 1);
        if (!l)
                return -ENOMEM;
        l->ifindex = ifindex;
        l->links = links;
        l->kind = LINK_KIND_OTHER;
        l->derived.connection_type = CONNECTION_UNKNOWN;
        l->sysfs_stale = true;
        l->derived.health_state = HEALTH_STATE_INIT;
        link_stats_init(l);

        r = table_put(&links->table, &l->ifindex, l);
        if (r < 0) {
                free(l);
                return r;
        }
        bus_object_init(&l->bus, links->publisher, &link_bus_type, TAKE_PTR(path));
        links->topology_changed = true;
        *ret = l;
        return 0;
}

static void link_remove(Link *l) {
        Links *links = l->links;

        log_link_debug(l, "Removed.");
        if (links->hook)
                links->hook(l, true, links->hook_userdata);
        bus_object_remove(&l->bus);
        table_remove(&links->table, &l->ifindex);
        links->topology_changed = true;
        link_free(l);
}

void links_init(Links *links, BusPublisher *p, int sysfs_fd) {
        *links = (Links) {
                .table = TABLE_INIT(link_compare),
                .publisher = p,
                .sysfs_fd = sysfs_fd,
        };
}

void links_done(Links *links) {
        links_dump_ethtool_end(links); /* a start that failed between the two */
        Link *l;

        /* Before the links and the sysfs root: the worker reads through the latter. */
        links->speed_reader = link_speed_reader_free(links->speed_reader);
        links_stop_ethtool(links);
        TABLE_FOREACH(l, &links->table)
                link_free(l);
        table_done(&links->table);
}

bool link_is_up(const Link *l) {
        return (l->flags & IFF_UP) && (l->flags & IFF_RUNNING);
}

bool link_has_carrier(const Link *l) {
        return l->flags & IFF_LOWER_UP;
}

const char *link_operstate_to_string(uint8_t operstate) {
        static const char *const table[] = {
                [IF_OPER_UNKNOWN] = "unknown", [IF_OPER_NOTPRESENT] = "notpresent", [IF_OPER_DOWN] = "down",
                [IF_OPER_LOWERLAYERDOWN] = "lowerlayerdown", [IF_OPER_TESTING] = "testing",
                [IF_OPER_DORMANT] = "dormant", [IF_OPER_UP] = "up",
        };
        return string_table_lookup_to_string(table, ELEMENTSOF(table), operstate) ?: "unknown";
}

static int link_set_name(Link *l, const char *name) {
        _cleanup_(freep) char *escaped = NULL;
        int r;

        if (l->name && streq(l->name, name))
                return 0;
        escaped = utf8_escape_invalid(name);
        if (!escaped)
                return -ENOMEM;
        r = free_and_strdup(&l->name, name);
        if (r < 0)
                return r;
        free_and_replace(l->name_utf8, escaped);
        bus_object_changed(&l->bus, "Name");
        bus_object_changed(&l->bus, "NameBytes");
        return 1;
}

int link_process_netlink(Links *links, struct rtnl_link *rl, bool removed) {
        char buf[128];
        struct nl_addr *addr;
        Link *l;
        int ifindex, r;

        /* No family check: netlink.c only lets interface messages (family AF_UNSPEC) through, and
         * libnl relabels some of those (a bridge becomes AF_BRIDGE, after its kind). */
        ifindex = rtnl_link_get_ifindex(rl);
        if (ifindex <= 0)
                return 0;

        l = link_get(links, ifindex);
        if (removed) {
                if (l)
                        link_remove(l);
                return 0;
        }
        if (!l) {
                r = link_new(links, ifindex, &l);
                if (r < 0)
                        return log_warning_errno(r, "Failed to add link %d: %m", ifindex);
        }
        l->seen = true;

        const char *name = rtnl_link_get_name(rl);
        if (!isempty(name)) {
                r = link_set_name(l, name);
                if (r < 0)
                        return log_oom();
                /* Other sources name their interfaces: a new name may concern one. */
                if (r > 0)
                        links->topology_changed = true;
        }

        /* Kind and ConnectionType are derived in link_prepare() and announced there if they move. */
        r = free_and_strdup(&l->info_kind, rtnl_link_get_type(rl));
        if (r < 0)
                return log_oom();
        if (r > 0 || l->arphrd != rtnl_link_get_arptype(rl))
                links->topology_changed = true;
        l->arphrd = rtnl_link_get_arptype(rl);

        unsigned flags = rtnl_link_get_flags(rl);
        if ((flags ^ l->flags) & IFF_LOWER_UP)
                bus_object_changed(&l->bus, "Carrier");
        if ((flags ^ l->flags) & IFF_UP)
                bus_object_changed(&l->bus, "AdminState");
        l->flags = flags;

        bus_object_set(&l->bus, l->operstate, rtnl_link_get_operstate(rl), "OperState");
        bus_object_set(&l->bus, l->mtu, rtnl_link_get_mtu(rl), "Mtu");

        uint32_t changes = 0;
        if (rtnl_link_get_carrier_changes(rl, &changes) >= 0)
                bus_object_set(&l->bus, l->carrier_changes, changes, "CarrierChanges");

        addr = rtnl_link_get_addr(rl);
        const char *hw = addr && nl_addr_get_len(addr) > 0 ? nl_addr2str(addr, buf, sizeof(buf)) : NULL;
        if (bus_object_set_string(&l->bus, &l->hw_address, hw, "HardwareAddress") < 0)
                return log_oom();

        /* A parent in another network namespace (veth peers, macvlan on a host NIC seen from a
         * container) is not one of our links. */
        int32_t netnsid;
        int parent = (int) rtnl_link_get_link(rl);
        if (rtnl_link_get_link_netnsid(rl, &netnsid) >= 0)
                parent = 0;
        int master = (int) rtnl_link_get_master(rl);
        if (parent != l->parent_ifindex || master != l->master_ifindex) {
                l->parent_ifindex = parent;
                l->master_ifindex = master;
                links->topology_changed = true;
        }

        /* Any RTM_NEWLINK may come with a new speed (a bond's, as its ports change) without a
         * carrier change; the reader makes asking cheap for the loop. */
        link_request_sysfs(l);
        if (links->hook)
                links->hook(l, false, links->hook_userdata);
        return 0;
}

int link_set_lldp_warning(Link *l, const char *warning) {
        return bus_object_set_string(&l->bus, &l->lldp_warning, warning, "LldpWarning");
}

void link_request_sysfs(Link *l) {
        /* The facts are compared when read at the flush; only those that differ are announced. */
        l->sysfs_stale = true;
        bus_object_queue(&l->bus);
}

void links_request_sysfs(Links *links) {
        Link *l;
        TABLE_FOREACH(l, &links->table)
                link_request_sysfs(l);
}

/* Interfaces whose kind netlink already settles (veth, bridge, ...) have no bus device to look at,
 * so a burst of a thousand of them costs no sysfs walk. */
static bool link_needs_device_facts(const Link *l) {
        LinkFacts f = { .arphrd = l->arphrd, .info_kind = l->info_kind };
        switch (link_kind_from_facts(&f)) {
        case LINK_KIND_LOOPBACK:
        case LINK_KIND_BRIDGE:
        case LINK_KIND_BOND:
        case LINK_KIND_VLAN:
        case LINK_KIND_VETH:
        case LINK_KIND_TUN:
        case LINK_KIND_MACVLAN:
                return false;
        case LINK_KIND_IFB: /* decided only after the bus facts (link_kind_from_facts) */
        case LINK_KIND_ETHERNET:
        case LINK_KIND_WIFI:
        case LINK_KIND_THUNDERBOLT:
        case LINK_KIND_INFINIBAND:
        case LINK_KIND_OTHER:
        case _LINK_KIND_MAX:
        case _LINK_KIND_INVALID:
                break;
        }
        return true;
}

LinkFacts link_facts(const Link *l) {
        return (LinkFacts) {
                .arphrd = l->arphrd,
                .info_kind = l->info_kind,
                .devtype = l->devtype,
                .driver = l->driver,
                .wireless = l->wireless,
                .has_device = l->device_path != NULL,
                .on_thunderbolt = l->on_thunderbolt,
        };
}

/* Renamed or gone since netlink spoke: nothing read is this link's, and the event that says so is
 * queued. */
static bool link_sysfs_lags(const Link *l, int error) {
        if (error != -ESTALE && !errno_is_absent(error))
                return false;
        log_link_debug_errno(l, error, "sysfs does not match netlink yet: %m");
        return true;
}

static void link_apply_speed(Link *l, int error, int speed_mbps, const char *duplex) {
        if (link_sysfs_lags(l, error))
                return;
        if (error < 0) {
                log_link_debug_errno(l, error, "Failed to read the speed: %m");
                speed_mbps = -1;
                duplex = NULL;
        }
        /* SpeedMbps itself is derived (a Thunderbolt path may stand in): the pass announces it. */
        if (l->driver_speed_mbps != (speed_mbps > 0 ? (uint32_t) speed_mbps : 0)) {
                l->driver_speed_mbps = speed_mbps > 0 ? (uint32_t) speed_mbps : 0;
                bus_object_queue(&l->bus);
        }
        if (bus_object_set_string(&l->bus, &l->duplex, duplex, "Duplex") < 0)
                log_oom();
}

static void on_speed_answer(void *userdata, int ifindex, uint64_t seq, int error, int speed_mbps,
                            const char *duplex) {
        Link *l = link_get(userdata, ifindex);

        if (!l || l->speed_request != seq)
                return; /* gone, or a newer request (or the link going down) superseded it */
        l->speed_request = 0;
        link_apply_speed(l, error, speed_mbps, duplex);
}

int links_start_speed_reader(Links *links, sd_event *event) {
        return link_speed_reader_new(event, links->sysfs_fd, on_speed_answer, links, &links->speed_reader);
}

static void link_read_sysfs(Link *l) {
        Links *links = l->links;
        SysfsNetWhat what = 0;
        _cleanup_(sysfs_net_facts_done) SysfsNetFacts f = { .speed_mbps = -1 };
        bool speed_wanted, speed_async = false;
        /* The start's dump: the same driver call as the files (get_link_ksettings), parsed the same way
         * (SPEED_UNKNOWN and 0 both unknown; a duplex neither full nor half none). */
        bool dumped = l->dumped && l->dumped->modes_error == 0;
        int r;

        /* Without a carrier nothing is negotiated: most drivers answer "unknown", and the read would
         * wait for the RTNL lock for nothing. Down, the kernel answers EINVAL. */
        speed_wanted = (l->flags & (IFF_UP | IFF_LOWER_UP)) == (IFF_UP | IFF_LOWER_UP);
        /* A pending answer describes the link before this change. */
        l->speed_request = 0;
        /* Before the name is ours the picture is made in one go, in place; afterwards the reader
         * keeps the loop free of the RTNL lock. */
        if (speed_wanted && links->speed_reader && links->publisher->name_acquired)
                speed_async = link_speed_reader_request(links->speed_reader, l->ifindex, l->name,
                                                        &l->speed_request) >= 0;
        if (speed_wanted && !speed_async && !dumped)
                what |= SYSFS_NET_SPEED;
        if (link_needs_device_facts(l))
                what |= SYSFS_NET_DEVICE;

        if (what != 0) {
                r = sysfs_net_read(links->sysfs_fd, l->name, l->ifindex, what, &f);
                if (link_sysfs_lags(l, r))
                        return;
                if (r < 0) {
                        log_link_debug_errno(l, r, "Failed to read sysfs: %m");
                        f = (SysfsNetFacts) { .speed_mbps = -1 };
                }
        }

        if (speed_wanted && !speed_async && dumped)
                link_apply_speed(l, 0, l->dumped->modes.speed_mbps > 0 ? (int) l->dumped->modes.speed_mbps : -1,
                                 l->dumped->modes.duplex == 1   ? "full"
                                 : l->dumped->modes.duplex == 0 ? "half"
                                                                : NULL);
        else if (!speed_async)
                link_apply_speed(l, 0, f.speed_mbps, f.duplex);
        if (what & SYSFS_NET_DEVICE) {
                bool on_thunderbolt = f.device_subsystem && streq(f.device_subsystem, "thunderbolt");
                bool changed = false;

                /* A module's name is bytes like an interface's: one that is not UTF-8 is kept escaped,
                 * or the bus would refuse every reply that holds it. */
                _cleanup_(freep) char *driver = f.driver ? utf8_escape_invalid(f.driver) : NULL;
                if (f.driver && !driver) {
                        log_oom();
                        return;
                }
                changed |= bus_object_set_string(&l->bus, &l->driver, driver, "Driver") > 0;
                changed |= free_and_strdup(&l->devtype, f.devtype) > 0;
                changed |= free_and_strdup(&l->device_path, f.device_path) > 0;
                changed |= l->wireless != f.wireless || l->on_thunderbolt != on_thunderbolt;
                l->wireless = f.wireless;
                l->on_thunderbolt = on_thunderbolt;
                if (changed)
                        links->topology_changed = true;
        }
}

static void link_prepare(BusObject *o) {
        Link *l = link_from_bus_object(o);

        if (l->sysfs_stale) {
                l->sysfs_stale = false;
                link_read_sysfs(l);

                /* Judged even when sysfs had nothing to say (renamed meanwhile, or a test's sysfs root
                 * without this link): netlink's facts alone still tell a loopback, a bridge or a veth. */
                LinkFacts facts = link_facts(l);
                if (bus_object_set(&l->bus, l->kind, link_kind_from_facts(&facts), "Kind"))
                        l->links->topology_changed = true;

                /* Whatever moved (carrier, a new partner, a driver rebinding), both ends' modes may have;
                 * at the start the dumps have answered already. */
                if (!link_apply_dumped_ethtool(l))
                        link_request_ethtool(l);
                l->dumped = mfree(l->dumped);
        }
}

/* ---- over time: the watch's statistics ---- */

/* What a link does over time: the watch dumps every link's statistics from rtnetlink once per interval
 * (netlink.c) and each lands here: the counters as the kernel says them, the rates over the interval,
 * and the CRC errors and carrier changes of the last minutes for the judgement (derive-health.c). */

static double rate(uint64_t *last, uint64_t value, uint64_t interval) {
        uint64_t bytes;

        if (!counter_advance(last, value, counter_max_bytes(interval), &bytes) || interval == 0)
                return NAN;
        return counter_rate_gbps(bytes, interval);
}

bool link_record_stats(Links *links, const LinkStats *s, uint64_t sample, uint64_t now) {
        Link *l = link_get(links, s->ifindex);
        uint64_t interval, n;
        bool changed = false;

        if (!l || (l->watch.sampled && sample == l->watch.sample))
                return false; /* gone, or seen twice by one interrupted dump */
        /* Each link's rate over its own two readings: a sliced dump reads links milliseconds apart. */
        interval = l->watch.sampled && now > l->watch.at ? now - l->watch.at : 0;

        changed |= bus_object_set_double(&l->bus, &l->watch.rx_gbps, rate(&l->watch.last_rx, s->rx_bytes, interval),
                                         "RxGbps");
        changed |= bus_object_set_double(&l->bus, &l->watch.tx_gbps, rate(&l->watch.last_tx, s->tx_bytes, interval),
                                         "TxGbps");
        changed |= bus_object_set(&l->bus, l->watch.now.rx_errors, s->rx_errors, "RxErrors");
        changed |= bus_object_set(&l->bus, l->watch.now.tx_errors, s->tx_errors, "TxErrors");
        changed |= bus_object_set(&l->bus, l->watch.now.rx_crc_errors, s->rx_crc_errors, "RxCrcErrors");
        changed |= bus_object_set(&l->bus, l->watch.now.rx_dropped, s->rx_dropped, "RxDropped");
        l->watch.now.rx_bytes = s->rx_bytes;
        l->watch.now.tx_bytes = s->tx_bytes;

        /* A new link's first reading counts from its creation, whenever that was. */
        uint64_t events = counter_max_events(interval > 0 ? interval : WINDOW_SPAN_USEC);
        if (counter_advance(&l->watch.last_crc, s->rx_crc_errors, events, &n) && n > 0)
                window_add(&l->watch.crc_errors, now, n);
        /* Carrier changes come with every RTM_NEWLINK (CarrierChanges): what they say at the sample. */
        if (counter_advance(&l->watch.last_carrier, l->carrier_changes, events, &n) && n > 0)
                window_add(&l->watch.carrier_changes, now, n);

        l->watch.sampled = true;
        l->watch.sample = sample;
        l->watch.at = now;
        return changed;
}

/* ---- addresses (link-address.c keeps each link's set) ---- */

int link_process_address(Links *links, struct rtnl_addr *ra, bool removed) {
        Link *l = link_get(links, rtnl_addr_get_ifindex(ra));
        LinkAddress a;
        int r;

        if (!l)
                return 0; /* the link's removal is already processed, or its addition is queued */
        if (link_address_from_netlink(ra, &a) < 0)
                return 0;
        r = link_addresses_apply(&l->addrs, &a, removed);
        if (r < 0)
                return log_oom();
        if (r > 0)
                bus_object_changed(&l->bus, "Addresses");
        return 0;
}

/* ---- mark and sweep, for the initial dump and every resync ---- */

void links_mark(Links *links) {
        Link *l;
        TABLE_FOREACH(l, &links->table)
                l->seen = false;
}

void links_sweep(Links *links) {
        Link *l;
        TABLE_FOREACH_SAFE(l, &links->table)
                if (!l->seen)
                        link_remove(l);
}

void links_mark_addresses(Links *links) {
        Link *l;
        TABLE_FOREACH(l, &links->table)
                link_addresses_restart_sync(&l->addrs);
}

int link_sync_address(Links *links, struct rtnl_addr *ra) {
        Link *l = link_get(links, rtnl_addr_get_ifindex(ra));
        LinkAddress a;

        if (!l || link_address_from_netlink(ra, &a) < 0)
                return 0;
        if (link_addresses_sync(&l->addrs, &a) < 0)
                return log_oom();
        return 0;
}

void links_sweep_addresses(Links *links, bool complete) {
        Link *l;
        TABLE_FOREACH(l, &links->table)
                if (link_addresses_sweep(&l->addrs, complete))
                        bus_object_changed(&l->bus, "Addresses");
}

/* ---- udev ---- */

static void link_udev_event(void *userdata, struct udev_device *d, const char *action) {
        const char *s = udev_device_get_property_value(d, "IFINDEX");
        int ifindex;
        Link *l;

        /* Netlink owns a link's existence; udev only tells us that sysfs facts (driver binding,
         * DEVTYPE from rules) may have changed. */
        if (!s || parse_int(s, &ifindex) < 0)
                return;
        l = link_get(userdata, ifindex);
        if (l)
                link_request_sysfs(l);
}

static int links_udev_enumerate(void *userdata) {
        links_request_sysfs(userdata);
        return 0;
}

int links_watch(Links *links, UdevSource *udev) {
        int r;

        r = udev_source_add_subsystem(udev, "net", link_udev_event, links_udev_enumerate, links);
        if (r < 0)
                return log_error_errno(r, "Failed to watch udev's net subsystem: %m");
        return 0;
}
