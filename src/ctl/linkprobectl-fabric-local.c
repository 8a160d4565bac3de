/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One node's own word about its neighbours and its links, as its daemon publishes them (and as
 * `linkprobectl snapshot` saves them): the best measured path per (neighbour, transport, local
 * interface), its Thunderbolt peers, its interfaces with their addresses, speeds and RDMA devices.
 * `fabric` reads it from this node's daemon; `fabric --snapshots` from each node's snapshot.
 */
#include <inttypes.h>

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

/* ---- the switches at the far end of its cables ---- */

/* A member of a struct the schema names (an object) or that arrived as a tuple (an array). */
static json_object *struct_member(json_object *o, const char *key, size_t index) {
        return json_object_is_type(o, json_type_array) ? json_object_array_get_idx(o, index) : ctl_member(o, key);
}

static const char *struct_string(json_object *o, const char *key, size_t index) {
        json_object *v = struct_member(o, key, index);
        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static double struct_double(json_object *o, const char *key, size_t index) {
        json_object *v = struct_member(o, key, index);
        return json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int) ? json_object_get_double(v) : 0;
}

/* The switch's port this object (a Link's or an RdmaPort's path) is in, from the switch's Ports. */
static const char *switch_port_of(json_object *sw, const char *path) {
        json_object *ports = ctl_member(sw, "Ports");

        for (size_t k = 0; k < json_array_len(ports); k++) {
                json_object *p = json_object_array_get_idx(ports, k);
                if (streq_ptr(struct_string(p, "Object", 0), path))
                        return struct_string(p, "PortId", 1);
        }
        return NULL;
}

/* LinkJudgements a(ussdbs), one per Links entry in its order: (port, best width, best speed, best Gb/s,
 * degraded, reason). An entry whose port is not the link's (a snapshot edited by hand, an older daemon
 * with no judgements) judges nothing. */
static bool switch_link_judgement(json_object *sw, size_t k, double port, FabricLinkJudgement *ret) {
        json_object *judgements = ctl_member(sw, "LinkJudgements"), *j;

        if (k >= json_array_len(judgements))
                return false;
        j = json_object_array_get_idx(judgements, k);
        if (struct_double(j, "Port", 0) != port)
                return false;
        *ret = (FabricLinkJudgement) {
                .best_width = struct_string(j, "BestWidth", 1),
                .best_speed = struct_string(j, "BestSpeed", 2),
                .best = struct_double(j, "BestRateGbps", 3),
                .degraded = json_object_get_boolean(struct_member(j, "Degraded", 4)),
                .reason = struct_string(j, "DegradedReason", 5),
        };
        return true;
}

/* Links a(uosussd): (port, remote Switch object, remote NodeGuid, remote port, width, speed, Gb/s). */
static int add_switch_links(View *v, json_object *sw, const char *key, json_object *switches) {
        json_object *links = ctl_member(sw, "Links");

        for (size_t k = 0; k < json_array_len(links); k++) {
                json_object *l = json_object_array_get_idx(links, k), *far;
                FabricLinkJudgement judgement;
                bool judged = switch_link_judgement(sw, k, struct_double(l, "Port", 0), &judgement);
                const char *far_path = struct_string(l, "Switch", 1);
                char far_key[128], port[16], far_port[16];

                far = lookup(switches, far_path);
                if (fabric_switch_key(struct_string(l, "RemoteNodeGuid", 2), far ? json_string_or(far, "ChassisId", NULL) : NULL,
                                      NULL, far_key, sizeof(far_key)) < 0)
                        continue;
                if (!fabric_add_switch(v->model, far_key, far ? json_string_or(far, "Name", NULL) : NULL,
                                       far ? json_string_or(far, "Description", NULL) : NULL, "sweep"))
                        return -ENOMEM;
                snprintf(port, sizeof(port), "%.0f", struct_double(l, "Port", 0));
                snprintf(far_port, sizeof(far_port), "%.0f", struct_double(l, "RemotePort", 3));
                int r = fabric_add_switch_link(v->model, key, port, far_key, far_port, struct_string(l, "Width", 4),
                                               struct_string(l, "Speed", 5), struct_double(l, "RateGbps", 6),
                                               judged ? &judgement : NULL);
                if (r < 0 && r != -E2BIG)
                        return r;
        }
        return 0;
}

static int add_switches(View *v, json_object *switches, json_object *links, json_object *rdma) {
        json_object *keys = json_object_new_object();
        int r = 0;

        if (!keys)
                return -ENOMEM;
        json_object_object_foreach(switches, path, sw) {
                json_object *sources = ctl_member(sw, "Source");
                char key[128];

                if (fabric_switch_key(json_string_or(sw, "NodeGuid", NULL), json_string_or(sw, "ChassisId", NULL),
                                      json_string_or(sw, "Name", NULL), key, sizeof(key)) < 0)
                        continue;
                for (size_t k = 0; k <= json_array_len(sources); k++)
                        if ((k < json_array_len(sources) || k == 0) &&
                            !fabric_add_switch(v->model, key, json_string_or(sw, "Name", NULL), json_string_or(sw, "Description", NULL),
                                               k < json_array_len(sources) ? json_object_get_string(json_object_array_get_idx(sources, k)) : NULL)) {
                                r = -ENOMEM;
                                goto finish;
                        }
                json_object_object_add(keys, path, json_object_new_string(key));
                r = add_switch_links(v, sw, key, switches);
                if (r < 0)
                        goto finish;
        }
        json_object_object_foreach(links, lpath, l) {
                json_object *lsw = lookup(switches, json_string_or(l, "Switch", NULL)), *key = lookup(keys, json_string_or(l, "Switch", NULL));
                if (!lsw || !key)
                        continue;
                r = fabric_add_attachment(v->model, v->self, json_string_or(l, "Name", NULL), "ethernet", json_object_get_string(key),
                                          switch_port_of(lsw, lpath), json_figure(l, "SpeedMbps") / 1000,
                                          json_figure(l, "BestCommonSpeedMbps") / 1000, json_bool_or(l, "Degraded", false));
                if (r < 0 && r != -E2BIG)
                        goto finish;
        }
        json_object_object_foreach(rdma, ppath, p) {
                json_object *psw = lookup(switches, json_string_or(p, "Switch", NULL)), *key = lookup(keys, json_string_or(p, "Switch", NULL));
                char name[128];
                if (!psw || !key)
                        continue;
                snprintf(name, sizeof(name), "%s/%" PRId64, json_string_or(p, "Device", "?"), json_int_or(p, "Port", 1));
                r = fabric_add_attachment(v->model, v->self, name, "infiniband", json_object_get_string(key), switch_port_of(psw, ppath),
                                          json_figure(p, "RateGbps"), json_figure(p, "BestRateGbps"), json_bool_or(p, "Degraded", false));
                if (r < 0 && r != -E2BIG)
                        goto finish;
        }
        r = 0;
finish:
        json_object_put(keys);
        return r;
}

int fabric_add_local_view(json_object *model, FabricSides *sides, json_object *node, json_object *kinds, bool self) {
        _cleanup_(json_object_putp) json_object *links = NULL, *peers = NULL, *tbt = NULL, *rdma = NULL, *switches = NULL;
        json_object *neighbors = ctl_member(kinds, "Neighbor");
        View v = { .model = model, .sides = sides, .self = json_string_or(node, "NodeId", NULL) };
        int r;

        if (isempty(v.self))
                return -EADDRNOTAVAIL;
        v.links = links = by_path_map(ctl_member(kinds, "Link"));
        v.peers = peers = by_path_map(ctl_member(kinds, "Peer"));
        v.tbt = tbt = by_path_map(ctl_member(kinds, "Thunderbolt"));
        v.rdma = rdma = by_path_map(ctl_member(kinds, "RdmaPort"));
        switches = by_path_map(ctl_member(kinds, "Switch"));
        if (!links || !peers || !tbt || !rdma || !switches)
                return -ENOMEM;
        r = fabric_add_node(model, v.self, json_string_or(node, "Hostname", NULL), self);
        if (r < 0)
                return r;
        r = add_switches(&v, switches, links, rdma);
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
