/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PCIe part of the derivation pass: which functions are published (those behind a published
 * link, RDMA port, GPU or Thunderbolt domain, the GPUs the kernel's or NVML's GPU topology names, and
 * every bridge above them), what the tree says about each (Parent, PathGbps, Degraded), every
 * PciDevice cross-link, and the GPU-to-GPU links. The affinity matrix and the joined bottlenecks
 * (derive-pci-limits.c) follow from the same tree. Everything is recomputed from the tables whenever
 * any of them moved: a few hundred functions, a pass that costs microseconds, and only then.
 */
#include "derive-pci-limits.h"
#include "derive-pci.h"
#include "gpu.h"
#include "link.h"
#include "pci.h"
#include "rdma.h"
#include "shared/string-util.h"
#include "tbt.h"

/* The tree of the whole table and the objects in its order. */
typedef struct PciSnapshot {
        PciObject **objects;
        PciDevice **devices;
        size_t n;
        PciTree *tree;
} PciSnapshot;

static void snapshot_done(PciSnapshot *s) {
        free(s->objects);
        free(s->devices);
        pci_tree_free(s->tree);
        *s = (PciSnapshot) {};
}

static int snapshot_take(Pci *pci, PciSnapshot *ret) {
        _cleanup_(snapshot_done) PciSnapshot s = {};
        PciObject *o;
        size_t i = 0;
        int r;

        s.n = table_size(&pci->functions);
        s.objects = new0(PciObject *, s.n + 1);
        s.devices = new0(PciDevice *, s.n + 1);
        if (!s.objects || !s.devices)
                return -ENOMEM;
        TABLE_FOREACH(o, &pci->functions) {
                s.objects[i] = o;
                s.devices[i++] = o->device;
        }
        r = pci_tree_build(s.devices, s.n, &s.tree);
        if (r < 0)
                return r;
        *ret = s;
        s = (PciSnapshot) {};
        return 0;
}

/* The table is sorted by address, and so is the snapshot. */
static ssize_t snapshot_find(const PciSnapshot *s, const char *address) {
        return pci_tree_find(s->tree, address);
}

static void want(PciSnapshot *s, ssize_t i) {
        /* Up to the root: depths are bounded by the tree's cut-off. */
        for (; i >= 0 && !s->objects[i]->derived.wanted; i = s->tree->nodes[i].parent)
                s->objects[i]->derived.wanted = true;
}

static ssize_t want_syspath(PciSnapshot *s, const char *syspath) {
        _cleanup_(freep) char *address = NULL;
        ssize_t i;

        if (!syspath || pci_syspath_split(syspath, &address, NULL, NULL, NULL) < 0)
                return -1;
        i = snapshot_find(s, address);
        want(s, i);
        return i;
}

static void want_gpu(PciSnapshot *s, const char *address) {
        ssize_t i = snapshot_find(s, address);
        if (i < 0)
                return;
        s->objects[i]->derived.gpu = true;
        want(s, i);
}

static void mark_wanted(PciSnapshot *s, const DerivePciSources *src) {
        Link *l;
        RdmaPort *p;
        Gpu *g;
        TbtObject *t;

        for (size_t i = 0; i < s->n; i++)
                s->objects[i]->derived.wanted = s->objects[i]->derived.gpu = false;
        TABLE_FOREACH(l, &src->links->table)
                (void) want_syspath(s, l->device_path);
        TABLE_FOREACH(p, &src->rdma->ports)
                (void) want_syspath(s, p->device_path);
        TABLE_FOREACH(g, &src->gpus->table)
                want(s, snapshot_find(s, g->inventory.pci_bus_id));
        TABLE_FOREACH(t, &src->thunderbolt->objects)
                if (t->published && t->device->kind == TBT_KIND_DOMAIN)
                        (void) want_syspath(s, t->device->syspath);
        for (size_t i = 0; i < src->pci->n_kfd_links; i++) {
                want_gpu(s, src->pci->kfd_links[i].from);
                want_gpu(s, src->pci->kfd_links[i].to);
        }
        for (size_t i = 0; i < src->gpus->n_nvlinks; i++) {
                want_gpu(s, src->gpus->nvlinks[i].local);
                if (!src->gpus->nvlinks[i].remote_is_switch)
                        want_gpu(s, src->gpus->nvlinks[i].remote);
        }
}

/* ---- GPU-to-GPU links ---- */

/* Per-direction GB/s of one NVLink by version (NVIDIA's figures: 20 for NVLink 1, 25 for 2 to 4, 50
 * for 5); 0 unknown. */
static double nvlink_gbytes(unsigned version) {
        return version == 1 ? 20 : version >= 2 && version <= 4 ? 25 : version == 5 ? 50 : 0;
}

static int gpu_link_add(PciGpuLink **links, size_t *n, const PciGpuLink *l) {
        PciGpuLink *grown = reallocarray(*links, *n + 1, sizeof(PciGpuLink));
        if (!grown)
                return -ENOMEM;
        *links = grown;
        grown[*n] = *l;
        grown[*n].peer_address = strdup(l->peer_address);
        if (!grown[*n].peer_address)
                return -ENOMEM;
        (*n)++;
        return 0;
}

static int gpu_links_of(const PciSnapshot *s, const DerivePciSources *src, const PciObject *o, PciGpuLink **ret,
                        size_t *ret_n) {
        PciGpuLink *links = NULL;
        size_t n = 0;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < src->pci->n_kfd_links; i++) {
                const KfdLink *k = &src->pci->kfd_links[i];
                if (!streq(k->from, o->address))
                        continue;
                r = gpu_link_add(&links, &n,
                                 &(PciGpuLink) {
                                         .peer_address = (char *) k->to,
                                         .type = kfd_link_type_to_string(k->type) ?: "Other",
                                         .count = 1,
                                         .weight = k->weight,
                                         .min_gbytes = k->min_bandwidth_mbs / 1000.0,
                                         .max_gbytes = k->max_bandwidth_mbs / 1000.0,
                                 });
        }
        for (size_t i = 0; r >= 0 && o->derived.gpu && i < s->n; i++) {
                const PciObject *peer = s->objects[i];
                unsigned version, count;

                if (peer == o || !peer->derived.gpu)
                        continue;
                count = gpus_nvlinks_between(src->gpus, o->address, peer->address, &version);
                if (count == 0)
                        continue;
                r = gpu_link_add(&links, &n,
                                 &(PciGpuLink) {
                                         .peer_address = peer->address,
                                         .type = "NVLink",
                                         .count = count,
                                         .max_gbytes = count * nvlink_gbytes(version),
                                 });
        }
        if (r < 0) {
                pci_gpu_links_free(links, n);
                return r;
        }
        *ret = links;
        *ret_n = n;
        return 0;
}

static bool gpu_links_equal(const PciGpuLink *a, size_t n_a, const PciGpuLink *b, size_t n_b) {
        if (n_a != n_b)
                return false;
        for (size_t i = 0; i < n_a; i++)
                if (!streq(a[i].peer_address, b[i].peer_address) || !streq_ptr(a[i].peer_path, b[i].peer_path) ||
                    !streq(a[i].type, b[i].type) || a[i].count != b[i].count || a[i].weight != b[i].weight ||
                    a[i].min_gbytes != b[i].min_gbytes || a[i].max_gbytes != b[i].max_gbytes)
                        return false;
        return true;
}

/* ---- one function ---- */

/* This function's lines of the tree's problems, after what sysfs said. */
static int node_problems(const PciTree *t, const PciObject *o, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        size_t len = strlen(o->address);
        int r;

        STRV_FOREACH(p, o->device->problems) {
                r = strv_consume(&l, strdup(*p));
                if (r < 0)
                        return r;
        }
        STRV_FOREACH(p, t->problems) {
                if (!strneq(*p, o->address, len) || !startswith(*p + len, ": "))
                        continue;
                r = strv_consume(&l, strdup(*p + len + 2));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* The Thunderbolt router whose PCIe adapter a tunnelled function sits behind: one at the depth of its
 * tunnels (each tunnel is one hop of the Thunderbolt tree), in a domain whose host interface shares the
 * function's host bridge when one does. sysfs links no PCIe tunnel to its router: where several could be
 * it, the slowest stands for them. */
static TbtObject *tunnel_router(const DerivePciSources *src, const PciObject *o, unsigned tunnels) {
        TbtObject *t, *best = NULL;
        bool best_same_bridge = false;

        TABLE_FOREACH(t, &src->thunderbolt->objects) {
                char domain[32];
                TbtObject *d;
                PciObject *nhi;
                bool same_bridge;

                if (!t->published || !t->has_link || t->depth != (int) tunnels ||
                    !IN_SET(t->type, TBT_NODE_HUB, TBT_NODE_DEVICE))
                        continue;
                snprintf(domain, sizeof(domain), "domain%d", t->device->domain_index);
                d = t->device->domain_index >= 0 ? tbt_object_get(src->thunderbolt, domain) : NULL;
                nhi = d ? pci_object_for_syspath(src->pci, d->device->syspath) : NULL;
                same_bridge = nhi && streq_ptr(nhi->device->host_bridge, o->device->host_bridge);
                if (best && best_same_bridge && !same_bridge)
                        continue;
                if (!best || (same_bridge && !best_same_bridge) ||
                    MIN(t->path_rx_gbps, t->path_tx_gbps) < MIN(best->path_rx_gbps, best->path_tx_gbps)) {
                        best = t;
                        best_same_bridge = same_bridge;
                }
        }
        return best;
}

/* Behind a tunnel, the Thunderbolt path stands where the tunnel's 2.5 GT/s would. */
static int tunnel_limit(const DerivePciSources *src, const PciObject *o, const PciTreeNode *n, double *gbps, char **limit) {
        TbtObject *t;
        unsigned rate;

        if (n->tunnels == 0)
                return 0;
        t = tunnel_router(src, o, n->tunnels);
        if (!t)
                return 0;
        rate = t->path_rx_gbps > 0 && t->path_tx_gbps > 0 ? MIN(t->path_rx_gbps, t->path_tx_gbps)
                                                          : MAX(t->path_rx_gbps, t->path_tx_gbps);
        if (rate == 0 || (*gbps > 0 && *gbps <= rate))
                return 0;
        *gbps = rate;
        free(*limit);
        if (asprintf(limit, "Thunderbolt path to %s at %u/%u Gb/s (PCIe tunnel)", t->sysname_utf8, t->path_rx_gbps,
                     t->path_tx_gbps) < 0) {
                *limit = NULL;
                return -ENOMEM;
        }
        return 0;
}

static int apply_node(PciSnapshot *s, const DerivePciSources *src, size_t i) {
        _cleanup_(strv_freep) char **problems = NULL;
        _cleanup_(freep) char *limit = NULL;
        PciObject *o = s->objects[i];
        const PciTreeNode *n = &s->tree->nodes[i];
        const PciObject *parent = n->parent >= 0 ? s->objects[n->parent] : NULL;
        PciGpuLink *links = NULL;
        size_t n_links = 0;
        int r;

        r = bus_object_set_string(&o->bus, &o->derived.parent_path, parent && parent->published ? parent->bus.path : NULL,
                                  "Parent");
        if (r < 0)
                return r;
        bus_object_set(&o->bus, o->derived.type, n->type, "PortType");
        bus_object_set(&o->bus, o->derived.gbps, pci_link_gbps(o->device->current.gts, o->device->current.width),
                       "Gbps");
        limit = pci_tree_describe_limit(s->tree, i);
        if (n->path_limit >= 0 && !limit)
                return -ENOMEM;
        double path_gbps = n->path_gbps;
        r = tunnel_limit(src, o, n, &path_gbps, &limit);
        if (r < 0)
                return r;
        bus_object_set(&o->bus, o->derived.path_gbps, path_gbps, "PathGbps");
        r = bus_object_set_string(&o->bus, &o->derived.path_limit, limit, "PathLimitedBy");
        if (r < 0)
                return r;
        o->derived.has_link = n->has_link;
        o->derived.tunnel = n->tunnel;
        o->derived.link = n->link;
        o->derived.capable = n->capable;
        o->derived.link_gbps = n->link_gbps;
        o->derived.trained_low = n->trained_low;
        /* Degraded and its reason are the health judge's: derive-health.c qualifies these facts. */
        r = free_and_strdup(&o->derived.trained_low_below,
                            n->trained_low_below >= 0 ? s->objects[n->trained_low_below]->address : NULL);
        if (r < 0)
                return r;

        r = node_problems(s->tree, o, &problems);
        if (r < 0)
                return r;
        STRV_FOREACH(p, problems)
                if (!strv_contains(o->derived.problems, *p))
                        log_pci_warning(o, "%s", *p);
        (void) bus_object_set_strv(&o->bus, &o->derived.problems, &problems, "Problems");

        r = gpu_links_of(s, src, o, &links, &n_links);
        if (r < 0)
                return r;
        for (size_t k = 0; k < n_links; k++) {
                PciObject *peer = pci_object_get(src->pci, links[k].peer_address);
                if (peer && peer->published) {
                        links[k].peer_path = strdup(peer->bus.path);
                        if (!links[k].peer_path) {
                                pci_gpu_links_free(links, n_links);
                                return -ENOMEM;
                        }
                }
        }
        if (gpu_links_equal(links, n_links, o->derived.gpu_links, o->derived.n_gpu_links)) {
                pci_gpu_links_free(links, n_links);
                return 0;
        }
        pci_gpu_links_free(o->derived.gpu_links, o->derived.n_gpu_links);
        o->derived.gpu_links = links;
        o->derived.n_gpu_links = n_links;
        bus_object_changed(&o->bus, "GpuLinks");
        return 0;
}

/* ---- the other kinds' PciDevice ---- */

static const char *published_path(Pci *pci, const char *syspath) {
        PciObject *o = pci_object_for_syspath(pci, syspath);
        return o && o->published ? o->bus.path : NULL;
}

static int relink_kinds(const DerivePciSources *src) {
        Link *l;
        RdmaPort *p;
        Gpu *g;
        TbtObject *t;
        int r = 0;

        TABLE_FOREACH(l, &src->links->table)
                if (r >= 0)
                        r = bus_object_set_string(&l->bus, &l->derived.pci_device_path,
                                                  published_path(src->pci, l->device_path), "PciDevice");
        TABLE_FOREACH(p, &src->rdma->ports)
                if (r >= 0)
                        r = bus_object_set_string(&p->bus, &p->derived.pci_device_path,
                                                  published_path(src->pci, p->device_path), "PciDevice");
        TABLE_FOREACH(g, &src->gpus->table) {
                PciObject *o = pci_object_get(src->pci, g->inventory.pci_bus_id);
                if (o && !o->published)
                        o = NULL;
                if (r >= 0)
                        r = bus_object_set_string(&g->bus, &g->derived.pci_device_path, o ? o->bus.path : NULL,
                                                  "PciDevice");
                bus_object_set(&g->bus, g->derived.pci_path_gbytes, o ? o->derived.path_gbps / 8 : 0, "PciPathGBps");
        }
        TABLE_FOREACH(t, &src->thunderbolt->objects)
                if (r >= 0 && t->published)
                        r = bus_object_set_string(&t->bus, &t->derived.pci_device_path,
                                                  t->device->kind == TBT_KIND_DOMAIN
                                                          ? published_path(src->pci, t->device->syspath)
                                                          : NULL,
                                                  "PciDevice");
        return r;
}

static int derive_pci_tree(const DerivePciSources *src) {
        _cleanup_(snapshot_done) PciSnapshot s = {};
        int r;

        r = snapshot_take(src->pci, &s);
        if (r < 0)
                return r;
        mark_wanted(&s, src);

        /* Parents before children, so a child's Parent names a published object. */
        for (unsigned depth = 0; depth <= PCI_DEPTH_MAX; depth++)
                for (size_t i = 0; i < s.n; i++)
                        if (s.tree->nodes[i].depth == depth) {
                                r = pci_object_set_published(s.objects[i], s.objects[i]->derived.wanted);
                                if (r < 0)
                                        return r;
                        }
        for (size_t i = 0; i < s.n; i++) {
                if (!s.objects[i]->published)
                        continue;
                r = apply_node(&s, src, i);
                if (r < 0)
                        return r;
        }
        r = relink_kinds(src);
        if (r >= 0)
                r = derive_pci_affinity(src, s.objects, s.tree);
        pci_names_release(src->pci);
        return r;
}

bool derive_pci(const DerivePciSources *src, bool others_changed) {
        bool relink = others_changed || src->pci->changed || src->gpus->changed;
        int r;

        src->pci->changed = src->gpus->changed = false;
        if (relink) {
                r = derive_pci_tree(src);
                if (r >= 0)
                        r = derive_thunderbolt_limits(src);
                if (r < 0)
                        log_oom();
        }
        /* Every pass: a path's limit follows its source link's speed, which moves without a relink. */
        if (derive_peer_limits(src) < 0)
                log_oom();
        return relink;
}
