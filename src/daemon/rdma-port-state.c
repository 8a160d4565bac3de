/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-port-state.c — what a read of an RDMA port (sysfs, libibverbs, a PortInfo) changes in its
 * published object: live status, GID table, network interfaces. */
#include "rdma-port-state.h"
#include "shared/string-util.h"
#include "sysfs/net.h"

void rdma_port_gids_free(RdmaPortGid *gids, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(gids[i].netdev);
        free(gids);
}

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

/* The index class/net gives the interface of that name now, 0 when there is none. */
static int netdev_ifindex(int sysfs_fd, const char *name) {
        _cleanup_(freep) char *dir = NULL;
        int ifindex;

        if (!sysfs_net_name_is_valid(name) || sysfs_path_join("class/net", name, &dir) < 0)
                return 0;
        return sysfs_read_int(sysfs_fd, dir, "ifindex", &ifindex) >= 0 && ifindex > 0 ? ifindex : 0;
}

/* The port's interfaces and their indexes now. The same name can belong to an interface in another
 * network namespace (RDMA devices in shared mode list those), and netlink may be ahead of sysfs during
 * a rename: a link is the port's only when name and index both match. Returns 1 if either changed, 0
 * if not, -ENOMEM. */
static int rdma_port_set_netdevs(RdmaPort *p, const InfinibandPort *ip) {
        _cleanup_(strv_freep) char **l = new0(char *, ip->n_netdevs + 1);
        _cleanup_(freep) int *ifindexes = new0(int, ip->n_netdevs + 1);
        bool same_names, same_indexes;

        if (!l || !ifindexes)
                return -ENOMEM;
        for (size_t i = 0; i < ip->n_netdevs; i++) {
                l[i] = strdup(ip->netdevs[i].name);
                if (!l[i])
                        return -ENOMEM;
                ifindexes[i] = netdev_ifindex(p->owner->sysfs_fd, l[i]);
        }
        same_names = strv_equal(l, p->netdevs);
        same_indexes = same_names &&
                       (ip->n_netdevs == 0 || memcmp(ifindexes, p->netdev_ifindexes, ip->n_netdevs * sizeof(int)) == 0);
        if (same_indexes)
                return 0;
        if (!same_names)
                bus_object_changed(&p->bus, "NetDevices");
        strv_free(p->netdevs);
        p->netdevs = TAKE_PTR(l);
        free(p->netdev_ifindexes);
        p->netdev_ifindexes = TAKE_PTR(ifindexes);
        return 1;
}

void rdma_port_set_status(RdmaPort *p, const RdmaPortStatus *s) {
        bus_object_set(&p->bus, p->status.state, s->state, "State");
        bus_object_set(&p->bus, p->status.phys_state, s->phys_state, "PhysState");
        bus_object_set(&p->bus, p->status.link_layer, s->link_layer, "LinkLayer");
        bus_object_set(&p->bus, p->status.rate.mgbps, s->rate.mgbps, "RateGbps");
        bus_object_set(&p->bus, p->status.rate.width, s->rate.width, "Width");
        bus_object_set(&p->bus, p->status.rate.speed, s->rate.speed, "Speed");
        bus_object_set(&p->bus, p->status.lid, s->lid, "Lid");
        bus_object_set(&p->bus, p->status.sm_lid, s->sm_lid, "SmLid");
        p->status = *s;
}

int rdma_port_apply_read(RdmaPort *p, const InfinibandPort *ip, const RdmaPortStatus *live) {
        RdmaPortStatus s;
        bool relink;
        int r;

        rdma_port_status_merge(&ip->status, live, &s);
        rdma_port_set_status(p, &s);
        relink = bus_object_set(&p->bus, p->transport, rdma_transport_from(p->node_type, s.link_layer), "Transport");
        r = rdma_port_set_gids(p, ip);
        if (r < 0)
                return r;
        r = rdma_port_set_netdevs(p, ip);
        if (r < 0)
                return r;
        if (relink || r > 0)
                p->owner->changed = true;
        return 0;
}
