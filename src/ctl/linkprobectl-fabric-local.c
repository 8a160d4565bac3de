/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One node's own word about its neighbours and its links, as its daemon publishes them (and as
 * `linkprobectl snapshot` saves them): the best measured path per (neighbour, transport, local
 * interface), its Thunderbolt peers, its interfaces with their addresses, speeds and RDMA devices.
 * `fabric` reads it from this node's daemon; `fabric --snapshots` from each node's snapshot.
 */
#include "linkprobectl-fabric-local.h"
#include "fabric/fabric-model.h"
#include "linkprobectl.h"

/* {Path: object} of one kind's list. */
static json_object *by_path_map(json_object *list) {
        json_object *map = json_object_new_object();

        for (size_t i = 0; map && i < json_array_len(list); i++) {
                json_object *o = json_object_array_get_idx(list, i);
                const char *path = json_string_or(o, "Path", NULL);
                if (path)
                        json_object_object_add(map, path, json_object_get(o));
        }
        return map;
}

static json_object *lookup(json_object *map, const char *path) {
        json_object *o;
        return path && json_object_object_get_ex(map, path, &o) ? o : NULL;
}

/* Whether a Thunderbolt hop from the host down to o negotiated less than both its ends can. */
static bool tbt_degraded(json_object *tbt, json_object *o) {
        for (unsigned steps = 0; o && steps < 64; steps++) {
                if (json_bool_or(o, "Degraded", false))
                        return true;
                o = lookup(tbt, json_string_or(o, "Parent", NULL));
        }
        return false;
}

typedef struct View {
        json_object *model;
        FabricSides *sides;
        const char *self;
        json_object *links, *peers, *tbt, *rdma; /* by path */
} View;

static int add_interfaces(View *v, json_object *links, json_object *rdma) {
        for (size_t i = 0; i < json_array_len(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *addresses = ctl_member(l, "Addresses"), *iface;
                const char *name = json_string_or(l, "Name", NULL);
                double mbps = json_figure(l, "SpeedMbps");

                if (isempty(name))
                        continue;
                iface = fabric_add_interface(v->model, v->self, name);
                if (!iface)
                        return -ENOMEM;
                if (mbps > 0)
                        json_object_object_add(iface, "SpeedGbps", json_object_new_double(mbps / 1000));
                for (size_t k = 0; k < json_array_len(addresses); k++) {
                        json_object *a = json_object_array_get_idx(addresses, k);
                        const char *address = json_string_or(a, "Address", NULL);
                        if (address && fabric_interface_add_address(iface, address, json_int_or(a, "PrefixLength", 0),
                                                                    json_string_or(a, "Class", NULL)) < 0)
                                return -ENOMEM;
                }
        }
        for (size_t i = 0; i < json_array_len(rdma); i++) {
                json_object *p = json_object_array_get_idx(rdma, i);
                json_object *link = lookup(v->links, json_string_or(p, "NetInterface", NULL));
                json_object *iface = link ? fabric_interface(v->model, v->self, json_string_or(link, "Name", "")) : NULL;
                const char *device = json_string_or(p, "Device", NULL);

                if (iface && device && fabric_interface_add_rdma(iface, device, json_figure(p, "RateGbps")) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int add_path(View *v, const char *neighbor, json_object *p) {
        json_object *link = lookup(v->links, json_string_or(p, "SourceInterface", NULL));
        json_object *peer = link ? lookup(v->tbt, json_string_or(link, "ThunderboltPeer", NULL)) : NULL;
        const char *interface = json_string_or(p, "SourceInterfaceName", NULL) ?: json_string_or(link, "Name", NULL);
        FabricSide *s;

        if (ctl_timestamp_usec(p, "MeasuredAt") == 0)
                return 0;
        s = fabric_sides_add(v->sides, v->self, neighbor, json_string_or(p, "Transport", "tcp"), interface);
        if (!s)
                return -ENOMEM;
        s->up = json_figure(p, "UploadGbps");
        s->down = json_figure(p, "DownloadGbps");
        s->rtt_usec = json_figure(p, "RttUsec");
        s->measured_at = ctl_timestamp_usec(p, "MeasuredAt");
        s->address = json_string_or(p, "Address", NULL);
        /* A failed probe's figures are the last success's: as good as stale. */
        s->stale = json_bool_or(p, "Stale", false) || streq(json_string_or(p, "ProbeState", ""), "failed");
        s->degraded = peer && tbt_degraded(v->tbt, peer);
        s->fields = SIDE_UP | SIDE_DOWN | SIDE_RTT | SIDE_STALE | SIDE_DEGRADED | SIDE_MEASURED_AT | SIDE_ADDRESS;
        return 0;
}

static int add_thunderbolt(View *v, const char *neighbor, json_object *o) {
        json_object *link = lookup(v->links, json_string_or(o, "NetInterface", NULL));
        FabricSide *s = fabric_sides_add(v->sides, v->self, neighbor, "thunderbolt",
                                         link ? json_string_or(link, "Name", NULL) : json_string_or(o, "SysfsName", NULL));

        if (!s)
                return -ENOMEM;
        /* Rx is towards the device: from us to the neighbour. */
        s->up = json_figure(o, "PathRxGbps");
        s->down = json_figure(o, "PathTxGbps");
        s->measured = false;
        s->degraded = tbt_degraded(v->tbt, o);
        s->fields = SIDE_UP | SIDE_DOWN | SIDE_DEGRADED | SIDE_STALE;
        return 0;
}

int fabric_add_local_view(json_object *model, FabricSides *sides, json_object *node, json_object *kinds, bool self) {
        _cleanup_(json_object_putp) json_object *links = NULL, *peers = NULL, *tbt = NULL, *rdma = NULL;
        json_object *neighbors = ctl_member(kinds, "Neighbor");
        View v = { .model = model, .sides = sides, .self = json_string_or(node, "NodeId", NULL) };
        int r;

        if (isempty(v.self))
                return -EADDRNOTAVAIL;
        v.links = links = by_path_map(ctl_member(kinds, "Link"));
        v.peers = peers = by_path_map(ctl_member(kinds, "Peer"));
        v.tbt = tbt = by_path_map(ctl_member(kinds, "Thunderbolt"));
        v.rdma = rdma = by_path_map(ctl_member(kinds, "RdmaPort"));
        if (!links || !peers || !tbt || !rdma)
                return -ENOMEM;
        r = fabric_add_node(model, v.self, json_string_or(node, "Hostname", NULL), self);
        if (r < 0)
                return r;
        r = add_interfaces(&v, ctl_member(kinds, "Link"), ctl_member(kinds, "RdmaPort"));
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_array_len(neighbors); i++) {
                json_object *nb = json_object_array_get_idx(neighbors, i), *l;
                const char *id = json_string_or(nb, "NodeId", "");

                r = fabric_add_node(model, id, json_string_or(nb, "Hostname", NULL), false);
                if (r < 0)
                        return r;
                l = ctl_member(nb, "Paths");
                for (size_t k = 0; k < json_array_len(l); k++) {
                        json_object *p = lookup(peers, json_object_get_string(json_object_array_get_idx(l, k)));
                        r = p ? add_path(&v, id, p) : 0;
                        if (r < 0)
                                return r;
                }
                l = ctl_member(nb, "ThunderboltPeers");
                for (size_t k = 0; k < json_array_len(l); k++) {
                        json_object *o = lookup(tbt, json_object_get_string(json_object_array_get_idx(l, k)));
                        r = o ? add_thunderbolt(&v, id, o) : 0;
                        if (r < 0)
                                return r;
                }
                l = ctl_member(nb, "Problems");
                for (size_t k = 0; k < json_array_len(l); k++) {
                        const char *problem = json_object_get_string(json_object_array_get_idx(l, k));
                        r = self ? fabric_add_problem(model, "%s: %s", fabric_hostname(model, id), problem)
                                 : fabric_add_problem(model, "%s, as %s sees it: %s", fabric_hostname(model, id),
                                                      fabric_hostname(model, v.self), problem);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}
