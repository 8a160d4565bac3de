/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the PCIe tree means for the other kinds: the affinity of every pair of published devices
 * (Manager.GetAffinity()), and the joined bottleneck of a Thunderbolt hop or a measured path: the
 * narrowest of the network link, the Thunderbolt path and the PCIe path below them, with that hop
 * named. A TB4 port whose controller hangs off a Gen3 x2 link says that link limits it.
 */
#include <stdarg.h>

#include "derive-pci-limits.h"
#include "gpu.h"
#include "link.h"
#include "pci.h"
#include "peer.h"
#include "rdma.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "sysfs/infiniband-parse.h"
#include "tbt.h"

/* ---- affinity ---- */

/* An SR-IOV NIC can bring hundreds of functions; beyond this many devices the matrix is left partial. */
#define AFFINITY_MEMBERS_MAX 256

typedef struct Member {
        const char *path;
        ssize_t index; /* in the tree */
        bool gpu;
} Member;

static int member_add(Member **members, size_t *n, const char *path, ssize_t index, bool gpu) {
        if (!path || index < 0)
                return 0;
        if (*n >= AFFINITY_MEMBERS_MAX) {
                log_debug("More than %d devices with a PCI function; %s is left out of the affinity matrix.",
                          AFFINITY_MEMBERS_MAX, path);
                return 0;
        }
        Member *grown = reallocarray(*members, *n + 1, sizeof(Member));
        if (!grown)
                return -ENOMEM;
        *members = grown;
        grown[(*n)++] = (Member) { .path = path, .index = index, .gpu = gpu };
        return 0;
}

static ssize_t tree_index_of(const PciTree *tree, Pci *pci, const char *syspath) {
        PciObject *o = pci_object_for_syspath(pci, syspath);
        return o && o->published ? pci_tree_find(tree, o->address) : -1;
}

/* Every published object with a PCI function, and the GPUs only the GPU topology knows. */
static int collect_members(const DerivePciSources *src, PciObject *const *objects, const PciTree *tree,
                           Member **ret, size_t *ret_n) {
        _cleanup_(freep) Member *m = NULL;
        size_t n = 0;
        Link *l;
        RdmaPort *p;
        Gpu *g;
        TbtObject *t;
        int r = 0;

        TABLE_FOREACH(l, &src->links->table)
                if (r >= 0)
                        r = member_add(&m, &n, l->bus.path, tree_index_of(tree, src->pci, l->device_path), false);
        TABLE_FOREACH(p, &src->rdma->ports)
                if (r >= 0)
                        r = member_add(&m, &n, p->bus.path, tree_index_of(tree, src->pci, p->device_path), false);
        TABLE_FOREACH(g, &src->gpus->table)
                if (r >= 0 && g->derived.pci_device_path)
                        r = member_add(&m, &n, g->bus.path, pci_tree_find(tree, g->inventory.pci_bus_id), true);
        TABLE_FOREACH(t, &src->thunderbolt->objects)
                if (r >= 0 && t->published && t->device->kind == TBT_KIND_DOMAIN)
                        r = member_add(&m, &n, t->bus.path, tree_index_of(tree, src->pci, t->device->syspath), false);
        for (size_t i = 0; r >= 0 && i < tree->n; i++) {
                bool covered = false;

                if (!objects[i]->derived.gpu || !objects[i]->published)
                        continue;
                for (size_t k = 0; k < n && !covered; k++)
                        covered = m[k].gpu && m[k].index == (ssize_t) i;
                if (!covered)
                        r = member_add(&m, &n, objects[i]->bus.path, (ssize_t) i, true);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        *ret_n = n;
        return 0;
}

/* "NV4" or "XGMI" for two GPUs with a direct link, as nvidia-smi and rocm-smi name them. */
static bool gpu_relation(const DerivePciSources *src, const char *a, const char *b, char *buf, size_t size) {
        unsigned version, count = gpus_nvlinks_between(src->gpus, a, b, &version);

        if (count > 0) {
                snprintf(buf, size, "NV%u", count);
                return true;
        }
        for (size_t i = 0; i < src->pci->n_kfd_links; i++) {
                const KfdLink *k = &src->pci->kfd_links[i];
                if (k->type == KFD_LINK_TYPE_XGMI && streq(k->from, a) && streq(k->to, b)) {
                        snprintf(buf, size, "XGMI");
                        return true;
                }
        }
        return false;
}

int derive_pci_affinity(const DerivePciSources *src, PciObject *const *objects, const PciTree *tree) {
        _cleanup_(freep) Member *m = NULL;
        PciAffinity *rows = NULL;
        size_t n = 0, n_rows = 0;
        int r;

        r = collect_members(src, objects, tree, &m, &n);
        if (r < 0)
                return r;
        if (n > 1) {
                rows = new0(PciAffinity, n * (n - 1) / 2);
                if (!rows)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++) {
                        PciAffinity *row = &rows[n_rows++];
                        char through[PCI_ADDRESS_MAX + 16];
                        PciRelation rel = pci_tree_relation(tree, (size_t) m[i].index, (size_t) m[j].index, through,
                                                            sizeof(through));

                        row->relation = pci_relation_to_string(rel);
                        if (m[i].gpu && m[j].gpu &&
                            gpu_relation(src, objects[m[i].index]->address, objects[m[j].index]->address,
                                         row->relation_buf, sizeof(row->relation_buf))) {
                                row->relation = row->relation_buf;
                                snprintf(through, sizeof(through), "%s", "");
                        }
                        row->a = strdup(m[i].path);
                        row->b = strdup(m[j].path);
                        row->through = strdup(through);
                        if (!row->a || !row->b || !row->through) {
                                pci_affinity_free(rows, n_rows);
                                return -ENOMEM;
                        }
                }
        pci_affinity_free(src->pci->affinity, src->pci->n_affinity);
        src->pci->affinity = rows;
        src->pci->n_affinity = n_rows;
        return 0;
}

/* ---- limits ---- */

typedef struct Limit {
        double gbps; /* 0: nothing known */
        char *by;
} Limit;

static void limit_done(Limit *l) {
        free(l->by);
}

/* Takes over by (NULL: out of memory, which the caller's check finds). A tie keeps the hop named
 * first, the one nearest to the path's start. */
static int limit_offer(Limit *l, double gbps, char *by) {
        if (gbps <= 0 || (l->gbps > 0 && gbps >= l->gbps)) {
                free(by);
                return 0;
        }
        if (!by)
                return -ENOMEM;
        free(l->by);
        l->gbps = gbps;
        l->by = by;
        return 0;
}

static char *printf_or_null(const char *format, ...) _printf_(1, 2);
static char *printf_or_null(const char *format, ...) {
        char *s = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&s, format, ap) < 0)
                s = NULL;
        va_end(ap);
        return s;
}

static int limit_offer_pci(Limit *l, PciObject *o) {
        if (!o || !o->published || o->derived.path_gbps <= 0)
                return 0;
        return limit_offer(l, o->derived.path_gbps, strdup(strempty(o->derived.path_limit)));
}

int derive_thunderbolt_limits(const DerivePciSources *src) {
        TbtObject *t;
        int r = 0;

        TABLE_FOREACH(t, &src->thunderbolt->objects) {
                _cleanup_(limit_done) Limit l = {};
                char domain[32];
                TbtObject *d;

                if (!t->published)
                        continue;
                if (t->has_link) {
                        unsigned gbps = t->path_rx_gbps > 0 && t->path_tx_gbps > 0 ? MIN(t->path_rx_gbps, t->path_tx_gbps)
                                                                                   : MAX(t->path_rx_gbps, t->path_tx_gbps);
                        r = limit_offer(&l, gbps,
                                        printf_or_null("Thunderbolt path to %s at %u/%u Gb/s", t->sysname_utf8,
                                                       t->path_rx_gbps, t->path_tx_gbps));
                        /* Data to and from the far end crosses the host interface's PCIe link. */
                        snprintf(domain, sizeof(domain), "domain%d", t->device->domain_index);
                        d = t->device->domain_index >= 0 ? tbt_object_get(src->thunderbolt, domain) : NULL;
                        if (r >= 0 && d)
                                r = limit_offer_pci(&l, pci_object_for_syspath(src->pci, d->device->syspath));
                        if (r < 0)
                                return r;
                }
                bus_object_set(&t->bus, t->derived.path_limit_gbps, l.gbps, "PathLimitGbps");
                r = bus_object_set_string(&t->bus, &t->derived.path_limited_by, l.by, "PathLimitedBy");
                if (r < 0)
                        return r;
        }
        return 0;
}

static TbtObject *tbt_object_by_path(Thunderbolt *tbt, const char *path) {
        TbtObject *t;

        TABLE_FOREACH(t, &tbt->objects)
                if (t->published && path && streq(t->bus.path, path))
                        return t;
        return NULL;
}

static int peer_limit(const DerivePciSources *src, const Peer *p, Limit *l) {
        Link *link = p->derived.source_ifindex > 0 ? link_get(src->links, p->derived.source_ifindex) : NULL;
        int r = 0;

        if (p->transport == PEER_TRANSPORT_RDMA) {
                RdmaPort *port = p->source_device ? rdma_port_get(src->rdma, p->source_device, p->source_port) : NULL;
                if (port)
                        r = limit_offer(l, rdma_rate_gbps(&port->status.rate),
                                        printf_or_null("RDMA port %s at %g Gb/s", port->key, rdma_rate_gbps(&port->status.rate)));
                if (r >= 0 && port)
                        r = limit_offer_pci(l, pci_object_for_syspath(src->pci, port->device_path));
                return r;
        }
        if (!link)
                return 0;
        r = limit_offer(l, link->derived.speed_mbps / 1000.0,
                        printf_or_null("link %s at %u Mb/s", link->name_utf8, link->derived.speed_mbps));
        if (r >= 0) {
                TbtObject *peer = tbt_object_by_path(src->thunderbolt, link->derived.thunderbolt_peer_path);
                if (peer && peer->derived.path_limit_gbps > 0)
                        r = limit_offer(l, peer->derived.path_limit_gbps, strdup(strempty(peer->derived.path_limited_by)));
        }
        if (r >= 0)
                r = limit_offer_pci(l, pci_object_for_syspath(src->pci, link->device_path));
        return r;
}

int derive_peer_limits(const DerivePciSources *src) {
        Peer *p;
        int r;

        TABLE_FOREACH(p, &src->peers->paths) {
                _cleanup_(limit_done) Limit l = {};

                r = peer_limit(src, p, &l);
                if (r < 0)
                        return r;
                bus_object_set(&p->bus, p->derived.path_limit_gbps, l.gbps, "PathLimitGbps");
                r = bus_object_set_string(&p->bus, &p->derived.path_limited_by, l.by, "PathLimitedBy");
                if (r < 0)
                        return r;
        }
        return 0;
}
