/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <libudev.h>
#include <linux/if.h>

#include "link.h"
#include "manager.h"
#include "rdma-bus.h"
#include "rdma-live.h"
#include "rdma.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "sysfs/net.h"
#include "udev.h"

static void rdma_port_prepare(BusObject *o);

static const BusObjectType rdma_port_bus_type = {
        .interface = RDMA_PORT_INTERFACE,
        .prepare = rdma_port_prepare,
};

static inline RdmaPort *rdma_port_from_bus_object(BusObject *o) {
        return container_of(o, RdmaPort, bus);
}

int rdma_port_compare(const void *key, const void *object) {
        return strcmp(key, ((const RdmaPort *) object)->key);
}

int rdma_device_compare(const void *key, const void *object) {
        return strcmp(key, ((const RdmaDevice *) object)->name);
}

/* ---- devices (the libibverbs handle lives there) ---- */

static RdmaDevice *rdma_device_free(RdmaDevice *dev) {
        if (!dev)
                return NULL;
        rdma_device_close_verbs(dev);
        free(dev->name);
        return mfree(dev);
}

static RdmaDevice *rdma_device_get(Manager *m, const char *name) {
        return table_get(&m->rdma_devices, name);
}

static RdmaDevice *rdma_device_get_or_new(Manager *m, const char *name) {
        RdmaDevice *dev = rdma_device_get(m, name);

        if (dev)
                return dev;
        dev = new0(RdmaDevice, 1);
        if (!dev)
                return NULL;
        dev->manager = m;
        dev->name = strdup(name);
        if (!dev->name || table_put(&m->rdma_devices, dev->name, dev) < 0)
                return rdma_device_free(dev);
        return dev;
}

/* ---- ports ---- */

RdmaPort *rdma_port_get(Manager *m, const char *device, unsigned number) {
        char key[128];

        if (snprintf(key, sizeof(key), "%s_%u", device, number) >= (int) sizeof(key))
                return NULL;
        return table_get(&m->rdma_ports, key);
}

static void rdma_port_gids_free(RdmaPortGid *gids, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(gids[i].netdev);
        free(gids);
}

static RdmaPort *rdma_port_free(RdmaPort *p) {
        if (!p)
                return NULL;
        bus_object_done(&p->bus);
        free(p->key);
        free(p->device);
        free(p->fw_ver);
        free(p->hca_type);
        free(p->board_id);
        rdma_port_gids_free(p->gids, p->n_gids);
        strv_free(p->netdevs);
        free(p->net_interface_path);
        return mfree(p);
}

void rdma_free(Manager *m) {
        RdmaPort *p;
        RdmaDevice *dev;

        TABLE_FOREACH(p, &m->rdma_ports)
                rdma_port_free(p);
        table_done(&m->rdma_ports);
        TABLE_FOREACH(dev, &m->rdma_devices)
                rdma_device_free(dev);
        table_done(&m->rdma_devices);
}

static int rdma_port_new(Manager *m, const InfinibandDevice *d, unsigned number, RdmaPort **ret) {
        _cleanup_(freep) char *key = NULL, *path = NULL;
        RdmaPort *p;
        int r;

        r = rdma_port_object_path(d->name, number, &key, &path);
        if (r < 0)
                return r;

        p = new0(RdmaPort, 1);
        if (!p)
                return -ENOMEM;
        *p = (RdmaPort) {
                .manager = m,
                .number = number,
                .node_type = d->node_type,
                .node_guid = d->node_guid,
                .sys_image_guid = d->sys_image_guid,
                .device = strdup(d->name),
                .fw_ver = strdup_or_null(d->fw_ver),
                .hca_type = strdup_or_null(d->hca_type),
                .board_id = strdup_or_null(d->board_id),
        };
        p->key = TAKE_PTR(key);
        if (!p->device || (d->fw_ver && !p->fw_ver) || (d->hca_type && !p->hca_type) ||
            (d->board_id && !p->board_id)) {
                rdma_port_free(p);
                return -ENOMEM;
        }
        r = table_put(&m->rdma_ports, p->key, p);
        if (r < 0) {
                rdma_port_free(p);
                return r;
        }
        bus_object_init(&p->bus, m, &rdma_port_bus_type, TAKE_PTR(path));
        log_debug("RDMA port %s: added.", p->key);
        *ret = p;
        return 0;
}

static bool rdma_port_identity_matches(const RdmaPort *p, const InfinibandDevice *d) {
        return p->node_type == d->node_type && p->node_guid == d->node_guid &&
               p->sys_image_guid == d->sys_image_guid && streq_ptr(p->fw_ver, d->fw_ver) &&
               streq_ptr(p->hca_type, d->hca_type) && streq_ptr(p->board_id, d->board_id);
}

void rdma_port_request_reread(RdmaPort *p) {
        p->reread = true;
        bus_object_queue(&p->bus);
}

/* ---- cross-links with Link objects ---- */

/* Whether the interface sysfs knows as name is the link l. The same name can belong to an interface
 * in another network namespace (RDMA devices in shared mode list those), and netlink may be ahead of
 * sysfs during a rename; the index settles both. */
static bool rdma_netdev_is_link(Manager *m, const char *name, const Link *l) {
        _cleanup_(freep) char *dir = NULL;
        int ifindex;

        if (!l->name || !streq(l->name, name) || !sysfs_net_name_is_valid(name))
                return false;
        if (sysfs_path_join("class/net", name, &dir) < 0)
                return false;
        return sysfs_read_int(m->sysfs_fd, dir, "ifindex", &ifindex) >= 0 && ifindex == l->ifindex;
}

static Link *rdma_find_link(Manager *m, const char *name, const Link *exclude) {
        Link *l;

        TABLE_FOREACH(l, &m->links)
                if (l != exclude && l->name && streq(l->name, name))
                        return rdma_netdev_is_link(m, name, l) ? l : NULL;
        return NULL;
}

/* The port a link carries: one that names it first (its own interface) wins over one that merely
 * lists it (a bond over two ports, a VLAN). */
static RdmaPort *rdma_port_for_link(Manager *m, const Link *l) {
        RdmaPort *p, *found = NULL;

        if (isempty(l->name))
                return NULL;
        TABLE_FOREACH(p, &m->rdma_ports) {
                size_t i = 0;

                while (p->netdevs && p->netdevs[i] && !streq(p->netdevs[i], l->name))
                        i++;
                if (!p->netdevs || !p->netdevs[i])
                        continue;
                if (i == 0) {
                        found = p;
                        break;
                }
                if (!found)
                        found = p;
        }
        if (found && !rdma_netdev_is_link(m, l->name, l))
                return NULL;
        return found;
}

static void rdma_link_set_port(Link *l, const RdmaPort *p) {
        Manager *m = l->manager;
        bool roce = p && p->transport == RDMA_TRANSPORT_ROCE;

        if (bus_object_set_string(&l->bus, &l->rdma_port_path, p ? p->bus.path : NULL, "RdmaPort") < 0)
                log_oom();
        if (l->rdma_roce != roce) {
                /* An input of the link's ConnectionType: recomputed at the flush. */
                l->rdma_roce = roce;
                m->links_topology_changed = true;
                bus_object_queue(&l->bus);
        }
}

static void rdma_port_set_net_interface(RdmaPort *p, const Link *exclude) {
        Link *l = NULL;

        STRV_FOREACH(name, p->netdevs) {
                l = rdma_find_link(p->manager, *name, exclude);
                if (l)
                        break;
        }
        if ((l ? l->ifindex : 0) != p->net_ifindex) {
                p->net_ifindex = l ? l->ifindex : 0;
                p->netdev_seen = false;
        }
        if (bus_object_set_string(&p->bus, &p->net_interface_path, l ? l->bus.path : NULL, "NetInterface") < 0)
                log_oom();
}

/* After a port was added or its interfaces or transport changed: every link it names or named. */
static void rdma_port_update_links(RdmaPort *p) {
        Manager *m = p->manager;
        Link *l;

        TABLE_FOREACH(l, &m->links) {
                bool named = false;
                STRV_FOREACH(name, p->netdevs)
                        if (l->name && streq(*name, l->name)) {
                                named = true;
                                break;
                        }
                if (named || streq_ptr(l->rdma_port_path, p->bus.path))
                        rdma_link_set_port(l, rdma_port_for_link(m, l));
        }
        rdma_port_set_net_interface(p, NULL);
}

static void rdma_port_remove(RdmaPort *p) {
        Manager *m = p->manager;
        Link *l;

        log_debug("RDMA port %s: removed.", p->key);
        bus_object_remove(&p->bus);
        table_remove(&m->rdma_ports, p->key);
        /* Another port may carry the same interface (a bond); otherwise the link has none now. */
        TABLE_FOREACH(l, &m->links)
                if (streq_ptr(l->rdma_port_path, p->bus.path))
                        rdma_link_set_port(l, rdma_port_for_link(m, l));
        rdma_port_free(p);
}

void rdma_link_changed(Link *l) {
        Manager *m = l->manager;
        RdmaPort *p;

        /* The common case, a machine without RDMA, costs nothing per link event. */
        if (table_size(&m->rdma_ports) == 0 && !l->rdma_port_path)
                return;

        rdma_link_set_port(l, rdma_port_for_link(m, l));

        TABLE_FOREACH(p, &m->rdma_ports) {
                bool named = false;
                STRV_FOREACH(name, p->netdevs)
                        if (l->name && streq(*name, l->name)) {
                                named = true;
                                break;
                        }
                if (!named && p->net_ifindex != l->ifindex)
                        continue;
                rdma_port_set_net_interface(p, NULL);
                if (p->net_ifindex != l->ifindex)
                        continue;

                /* The kernel announces no port state change for RoCE ports; their state follows the
                 * Ethernet link, which netlink just told us about. */
                bool carrier = l->flags & IFF_LOWER_UP;
                if (!p->netdev_seen || p->netdev_carrier != carrier || p->netdev_speed_mbps != l->speed_mbps) {
                        p->netdev_seen = true;
                        p->netdev_carrier = carrier;
                        p->netdev_speed_mbps = l->speed_mbps;
                        rdma_port_request_reread(p);
                }
        }
}

void rdma_link_removed(Link *l) {
        Manager *m = l->manager;
        RdmaPort *p;

        TABLE_FOREACH(p, &m->rdma_ports)
                if (p->net_ifindex == l->ifindex)
                        rdma_port_set_net_interface(p, l);
}

/* ---- applying what was read ---- */

void rdma_port_status_merge(const RdmaPortStatus *sysfs, const RdmaPortStatus *verbs, RdmaPortStatus *ret) {
        RdmaPortStatus s = *sysfs;

        if (verbs) {
                unsigned k = verbs->known;

                if (k & RDMA_PORT_FIELD_STATE)
                        s.state = verbs->state;
                if (k & RDMA_PORT_FIELD_PHYS_STATE)
                        s.phys_state = verbs->phys_state;
                if (k & RDMA_PORT_FIELD_LINK_LAYER)
                        s.link_layer = verbs->link_layer;
                if (k & RDMA_PORT_FIELD_RATE)
                        s.rate.mgbps = verbs->rate.mgbps;
                if (k & RDMA_PORT_FIELD_WIDTH)
                        s.rate.width = verbs->rate.width;
                if (k & RDMA_PORT_FIELD_SPEED)
                        s.rate.speed = verbs->rate.speed;
                if (k & RDMA_PORT_FIELD_LID)
                        s.lid = verbs->lid;
                if (k & RDMA_PORT_FIELD_SM_LID)
                        s.sm_lid = verbs->sm_lid;
                if (k & RDMA_PORT_FIELD_LMC)
                        s.lmc = verbs->lmc;
                if (k & RDMA_PORT_FIELD_SM_SL)
                        s.sm_sl = verbs->sm_sl;
                if (k & RDMA_PORT_FIELD_CAP_MASK)
                        s.cap_mask = verbs->cap_mask;
                s.known |= k;
        }
        *ret = s;
}

static bool rdma_port_gids_equal(const RdmaPort *p, const InfinibandPort *ip) {
        if (p->n_gids != ip->n_gids)
                return false;
        for (size_t i = 0; i < p->n_gids; i++)
                if (p->gids[i].index != ip->gids[i].index || memcmp(p->gids[i].gid, ip->gids[i].gid, 16) != 0 ||
                    p->gids[i].type != ip->gids[i].type || !streq_ptr(p->gids[i].netdev, ip->gids[i].netdev))
                        return false;
        return true;
}

static int rdma_port_set_gids(RdmaPort *p, const InfinibandPort *ip) {
        RdmaPortGid *gids = NULL;

        if (rdma_port_gids_equal(p, ip))
                return 0;
        if (ip->n_gids > 0) {
                gids = new0(RdmaPortGid, ip->n_gids);
                if (!gids)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < ip->n_gids; i++) {
                gids[i] = (RdmaPortGid) { .index = ip->gids[i].index, .type = ip->gids[i].type };
                memcpy(gids[i].gid, ip->gids[i].gid, 16);
                if (ip->gids[i].netdev && !(gids[i].netdev = strdup(ip->gids[i].netdev))) {
                        rdma_port_gids_free(gids, i);
                        return -ENOMEM;
                }
        }
        rdma_port_gids_free(p->gids, p->n_gids);
        p->gids = gids;
        p->n_gids = ip->n_gids;
        bus_object_changed(&p->bus, "Gids");
        return 1;
}

/* Returns 1 if the list changed, 0 if not, -ENOMEM. */
static int rdma_port_set_netdevs(RdmaPort *p, const InfinibandPort *ip) {
        _cleanup_(strv_freep) char **l = new0(char *, ip->n_netdevs + 1);

        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < ip->n_netdevs; i++)
                if (!(l[i] = strdup(ip->netdevs[i].name)))
                        return -ENOMEM;
        if (strv_equal(l, p->netdevs))
                return 0;
        strv_free(p->netdevs);
        p->netdevs = TAKE_PTR(l);
        bus_object_changed(&p->bus, "NetDevices");
        return 1;
}

static void rdma_port_log_warnings(const char *what, char **warnings) {
        STRV_FOREACH(w, warnings)
                log_debug("%s: %s", what, *w);
}

/* Publishes the live facts of a port: from sysfs, with libibverbs' answers where it has any. */
static int rdma_port_apply_state(RdmaPort *p, const InfinibandPort *ip) {
        RdmaDevice *dev = rdma_device_get(p->manager, p->device);
        RdmaPortStatus s;
        bool relink;
        int r;

        rdma_port_log_warnings(p->key, ip->warnings);
        rdma_port_status_merge(&ip->status, rdma_device_verbs_status(dev, ip), &s);

        bus_object_set(&p->bus, p->status.state, s.state, "State");
        bus_object_set(&p->bus, p->status.phys_state, s.phys_state, "PhysState");
        bus_object_set(&p->bus, p->status.link_layer, s.link_layer, "LinkLayer");
        bus_object_set(&p->bus, p->status.rate.mgbps, s.rate.mgbps, "RateGbps");
        bus_object_set(&p->bus, p->status.rate.width, s.rate.width, "Width");
        bus_object_set(&p->bus, p->status.rate.speed, s.rate.speed, "Speed");
        bus_object_set(&p->bus, p->status.lid, s.lid, "Lid");
        bus_object_set(&p->bus, p->status.sm_lid, s.sm_lid, "SmLid");
        p->status = s;

        relink = bus_object_set(&p->bus, p->transport, rdma_transport_from(p->node_type, s.link_layer), "Transport");
        r = rdma_port_set_gids(p, ip);
        if (r < 0)
                return r;
        r = rdma_port_set_netdevs(p, ip);
        if (r < 0)
                return r;
        if (relink || r > 0)
                rdma_port_update_links(p);
        return 0;
}

static int rdma_port_apply(Manager *m, const InfinibandDevice *d, const InfinibandPort *ip) {
        RdmaPort *p = rdma_port_get(m, d->name, ip->number);
        int r;

        if (p && !rdma_port_identity_matches(p, d)) {
                /* Identity properties are const: a different device under the same name is a new
                 * object. */
                log_debug("RDMA port %s: the device's identity changed, replacing the object.", p->key);
                rdma_port_remove(p);
                p = NULL;
        }
        if (!p) {
                r = rdma_port_new(m, d, ip->number, &p);
                if (r < 0)
                        return r;
        }
        p->seen = true;
        p->reread = false;
        return rdma_port_apply_state(p, ip);
}

static void rdma_device_apply(Manager *m, const InfinibandDevice *d, bool try_verbs) {
        RdmaDevice *dev = rdma_device_get_or_new(m, d->name);
        RdmaPort *p;
        int r;

        if (!dev) {
                log_oom();
                return;
        }
        dev->seen = true;
        if (try_verbs)
                (void) rdma_device_open_verbs(dev);
        rdma_port_log_warnings(d->name, d->warnings);

        TABLE_FOREACH(p, &m->rdma_ports)
                if (streq(p->device, d->name))
                        p->seen = false;
        for (size_t i = 0; i < d->n_ports; i++) {
                r = rdma_port_apply(m, d, d->ports[i]);
                if (r < 0)
                        log_warning_errno(r, "RDMA device %s port %u: cannot publish: %m", d->name, d->ports[i]->number);
        }
        TABLE_FOREACH_SAFE(p, &m->rdma_ports)
                if (streq(p->device, d->name) && !p->seen)
                        rdma_port_remove(p);
}

void rdma_device_remove(Manager *m, const char *name) {
        _cleanup_(freep) char *copy = strdup(name); /* name may belong to what is freed below */
        RdmaDevice *dev;
        RdmaPort *p;

        if (!copy) {
                log_oom();
                return;
        }
        TABLE_FOREACH_SAFE(p, &m->rdma_ports)
                if (streq(p->device, copy))
                        rdma_port_remove(p);
        dev = table_remove(&m->rdma_devices, copy);
        rdma_device_free(dev);
}

void rdma_device_process(Manager *m, const char *name, bool try_verbs) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        int r;

        r = infiniband_device_read(m->sysfs_fd, name, &d);
        if (r == -ENOENT || r == -EINVAL) {
                /* Gone since the event was sent (or a name no device can have). */
                log_debug_errno(r, "RDMA device %s: not there (%m), removing its ports.", name);
                rdma_device_remove(m, name);
                return;
        }
        if (r < 0) {
                log_warning_errno(r, "RDMA device %s: cannot read: %m", name);
                return;
        }
        rdma_device_apply(m, d, try_verbs);
}

int rdma_enumerate(Manager *m) {
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **devices = NULL;
        RdmaDevice *dev;
        RdmaPort *p;
        int r;

        r = infiniband_enumerate(m->sysfs_fd, &devices, NULL);
        if (r < 0)
                return log_warning_errno(r, "Cannot list the RDMA devices in class/infiniband: %m");

        TABLE_FOREACH(p, &m->rdma_ports)
                p->seen = false;
        TABLE_FOREACH(dev, &m->rdma_devices)
                dev->seen = false;

        for (size_t i = 0; devices[i]; i++)
                rdma_device_apply(m, devices[i], true);

        TABLE_FOREACH_SAFE(p, &m->rdma_ports)
                if (!p->seen)
                        rdma_port_remove(p);
        TABLE_FOREACH_SAFE(dev, &m->rdma_devices)
                if (!dev->seen) {
                        table_remove(&m->rdma_devices, dev->name);
                        rdma_device_free(dev);
                }
        return 0;
}

/* A port whose network interface changed, or that libibverbs reported an event for: only the port
 * is read again, once per flush however many events arrived. */
static void rdma_port_prepare(BusObject *o) {
        _cleanup_(infiniband_port_freep) InfinibandPort *ip = NULL;
        RdmaPort *p = rdma_port_from_bus_object(o);
        Manager *m = p->manager;
        int r;

        if (!p->reread)
                return;
        p->reread = false;

        r = infiniband_port_read(m->sysfs_fd, p->device, p->number, &ip);
        if (r == -ENOENT || r == -EINVAL) {
                _cleanup_(freep) char *device = strdup(p->device);
                /* The port or its device is gone: read the whole device (which may free p). */
                if (device)
                        rdma_device_process(m, device, false);
                return;
        }
        if (r < 0) {
                log_warning_errno(r, "RDMA port %s: cannot read: %m", p->key);
                return;
        }
        r = rdma_port_apply_state(p, ip);
        if (r < 0)
                log_warning_errno(r, "RDMA port %s: cannot publish: %m", p->key);
}

/* ---- udev ---- */

static void rdma_udev_event(Manager *m, struct udev_device *d, const char *action) {
        const char *name = udev_device_get_sysname(d);

        if (isempty(name))
                return;
        if (streq(action, "remove"))
                rdma_device_remove(m, name);
        else if (streq(action, "move"))
                /* Renamed ("rdma dev set NAME name NEW"): the ports' keys change; start over. */
                (void) rdma_enumerate(m);
        else
                rdma_device_process(m, name, streq(action, "add"));
}

/* A uverbs device appears after its RDMA device ("modprobe mlx5_ib" registers both, verbs last):
 * that is when libibverbs can open the device. It goes before the RDMA device does. */
static void rdma_verbs_udev_event(Manager *m, struct udev_device *d, const char *action) {
        _cleanup_(freep) char *dir = NULL, *ibdev = NULL;
        const char *name = udev_device_get_sysname(d);

        if (isempty(name) || !sysfs_net_name_is_valid(name))
                return;
        if (streq(action, "remove")) {
                rdma_uverbs_removed(m, name);
                return;
        }
        if (!streq(action, "add"))
                return;
        if (sysfs_path_join("class/infiniband_verbs", name, &dir) < 0 ||
            sysfs_read_string(m->sysfs_fd, dir, "ibdev", &ibdev) < 0)
                return;
        if (rdma_device_get(m, ibdev))
                rdma_device_process(m, ibdev, true);
}

int rdma_start(Manager *m) {
        int r;

        r = rdma_bus_register(m);
        if (r < 0)
                return log_error_errno(r, "Failed to register RDMA port objects: %m");
        r = udev_source_add_subsystem(m->udev, "infiniband", rdma_udev_event, rdma_enumerate);
        if (r >= 0)
                r = udev_source_add_subsystem(m->udev, "infiniband_verbs", rdma_verbs_udev_event, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to watch udev's infiniband subsystem: %m");
        return 0;
}
