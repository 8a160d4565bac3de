/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PCIe tree: parents from each function's sysfs path, the role of every bridge from where it sits,
 * the physical links with their degradation, the narrowest link up to the root complex, and how two
 * functions reach each other. Pure logic: no I/O, no D-Bus; every guard reports instead of failing or
 * looping. */
#include <stdarg.h>

#include "pci-tree.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

static const char *const pci_port_type_table[_PCI_PORT_TYPE_MAX] = {
        [PCI_PORT_ROOT] = "root-port",
        [PCI_PORT_UPSTREAM] = "upstream-port",
        [PCI_PORT_DOWNSTREAM] = "downstream-port",
        [PCI_PORT_ENDPOINT] = "endpoint",
        [PCI_PORT_INTEGRATED] = "integrated",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(pci_port_type, PciPortType, pci_port_type_table)

static const char *const pci_relation_table[_PCI_RELATION_MAX] = {
        [PCI_RELATION_SELF] = "X",   [PCI_RELATION_PIX] = "PIX",   [PCI_RELATION_PXB] = "PXB",
        [PCI_RELATION_PHB] = "PHB",  [PCI_RELATION_NODE] = "NODE", [PCI_RELATION_SYS] = "SYS",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(pci_relation, PciRelation, pci_relation_table)

PciTree *pci_tree_free(PciTree *t) {
        if (!t)
                return NULL;
        free(t->nodes);
        free(t->sorted);
        strv_free(t->problems);
        return mfree(t);
}

static _printf_(3, 4) int add_problem(PciTree *t, size_t i, const char *format, ...) {
        _cleanup_(freep) char *message = NULL;
        char *line = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&message, format, ap);
        va_end(ap);
        if (r < 0 || asprintf(&line, "%s: %s", t->devices[i]->address, message) < 0)
                return -ENOMEM;
        return strv_consume(&t->problems, line);
}

static const PciTree *sort_tree; /* qsort has no userdata; the tree being sorted */

static int compare_index(const void *a, const void *b) {
        return strcmp(sort_tree->devices[*(const size_t *) a]->address, sort_tree->devices[*(const size_t *) b]->address);
}

ssize_t pci_tree_find(const PciTree *t, const char *address) {
        size_t lo = 0, hi = t ? t->n : 0;

        while (address && lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(t->devices[t->sorted[mid]]->address, address);
                if (c == 0)
                        return (ssize_t) t->sorted[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* Depths from the parents, cutting a chain that loops or runs too deep. state: 0 new, 1 on the current
 * walk, 2 done. */
static int tree_depths(PciTree *t) {
        _cleanup_(freep) uint8_t *state = new0(uint8_t, t->n);
        _cleanup_(freep) size_t *walk = new0(size_t, t->n);
        int r;

        if (!state || !walk)
                return -ENOMEM;
        for (size_t start = 0; start < t->n; start++) {
                size_t n = 0;
                ssize_t cur = (ssize_t) start;

                while (cur >= 0 && state[cur] == 0) {
                        state[cur] = 1;
                        walk[n++] = (size_t) cur;
                        cur = t->nodes[cur].parent;
                }
                if (cur >= 0 && state[cur] == 1) {
                        /* The last function walked names one on this walk as its ancestor. */
                        size_t last = walk[n - 1];
                        t->nodes[last].parent = -1;
                        t->nodes[last].type = _PCI_PORT_TYPE_INVALID;
                        r = add_problem(t, last, "its parents loop back to it; the PCIe tree is cut off here");
                        if (r < 0)
                                return r;
                }
                while (n > 0) {
                        size_t i = walk[--n];
                        ssize_t p = t->nodes[i].parent;

                        t->nodes[i].depth = p >= 0 ? t->nodes[p].depth + 1 : 0;
                        if (t->nodes[i].depth > PCI_DEPTH_MAX) {
                                t->nodes[i].parent = -1;
                                t->nodes[i].depth = 0;
                                t->nodes[i].type = _PCI_PORT_TYPE_INVALID;
                                r = add_problem(t, i, "more than %u PCI functions above it; the PCIe tree is cut off here",
                                                PCI_DEPTH_MAX);
                                if (r < 0)
                                        return r;
                        }
                        state[i] = 2;
                }
        }
        return 0;
}

static bool device_is_bridge(const PciDevice *d) {
        return d->has_class && (d->class_code >> 8) == 0x0604;
}

/* The role of function i; its parent's is known (types are set in depth order). */
static PciPortType node_type(const PciTree *t, size_t i, bool parent_missing) {
        const PciDevice *d = t->devices[i];
        ssize_t p = t->nodes[i].parent;
        bool bridge = device_is_bridge(d);

        if (parent_missing)
                return _PCI_PORT_TYPE_INVALID;
        if (p < 0 || !device_is_bridge(t->devices[p]))
                /* Below a host bridge, or below a function that is none (VMD): a new hierarchy. */
                return bridge ? PCI_PORT_ROOT : PCI_PORT_INTEGRATED;
        switch (t->nodes[p].type) {
        case PCI_PORT_ROOT:
        case PCI_PORT_DOWNSTREAM:
                return bridge ? PCI_PORT_UPSTREAM : PCI_PORT_ENDPOINT;
        case PCI_PORT_UPSTREAM:
                return bridge ? PCI_PORT_DOWNSTREAM : PCI_PORT_ENDPOINT;
        case PCI_PORT_ENDPOINT:
        case PCI_PORT_INTEGRATED:
        case _PCI_PORT_TYPE_MAX:
        case _PCI_PORT_TYPE_INVALID:
                break;
        }
        return _PCI_PORT_TYPE_INVALID;
}

char *pci_link_format(const PciLink *l, char *buf, size_t size) {
        char speed[16] = "?", width[16] = "?";

        if (l->gts > 0)
                snprintf(speed, sizeof(speed), "%.1f", l->gts);
        if (l->width > 0)
                snprintf(width, sizeof(width), "%u", l->width);
        snprintf(buf, size, "%s GT/s x%s", speed, width);
        return buf;
}

/* The link above function i, from both ends' attributes. */
static void node_link(PciTree *t, size_t i) {
        PciTreeNode *n = &t->nodes[i];
        const PciDevice *d = t->devices[i], *port;

        if (n->parent < 0 || !IN_SET(n->type, PCI_PORT_UPSTREAM, PCI_PORT_ENDPOINT))
                return;
        port = t->devices[n->parent];
        n->has_link = true;
        n->link.gts = d->current.gts > 0 ? d->current.gts : port->current.gts;
        n->link.generation = pci_speed_generation(n->link.gts);
        n->link.width = d->current.width > 0 ? d->current.width : port->current.width;
        if (d->max.gts > 0 && port->max.gts > 0)
                n->capable.gts = MIN(d->max.gts, port->max.gts);
        n->capable.generation = pci_speed_generation(n->capable.gts);
        if (d->max.width > 0 && port->max.width > 0)
                n->capable.width = MIN(d->max.width, port->max.width);
        n->link_gbps = pci_link_gbps(n->link.gts, n->link.width);
        n->tunnel = d->removable && device_is_bridge(d) && (n->link.gts == 2.5 || n->link.gts == 0);
        if (n->tunnel)
                return;
        n->trained_low = (n->link.gts > 0 && n->capable.gts > 0 && n->link.gts < n->capable.gts) ||
                         (n->link.width > 0 && n->capable.width > 0 && n->link.width < n->capable.width);
}

/* A root or downstream port is judged by the link below it too: the first that trained low. */
static void port_trained_low(PciTree *t) {
        for (size_t i = 0; i < t->n; i++)
                t->nodes[i].trained_low_below = -1;
        for (size_t i = 0; i < t->n; i++) {
                const PciTreeNode *child = &t->nodes[i];
                if (child->trained_low && t->nodes[child->parent].trained_low_below < 0)
                        t->nodes[child->parent].trained_low_below = (ssize_t) i;
        }
}

/* The narrowest link from i to the root complex; on equal rates the one nearer the root is named. */
static void node_path(PciTree *t, size_t i) {
        PciTreeNode *n = &t->nodes[i];
        const PciDevice *d = t->devices[i];
        double best = 0;

        n->path_limit = -1;
        if (IN_SET(n->type, PCI_PORT_ROOT, PCI_PORT_DOWNSTREAM) && !n->below_tunnel) {
                double own = pci_link_gbps(d->current.gts, d->current.width);
                if (own > 0) {
                        best = own;
                        n->path_limit = (ssize_t) i;
                        n->path_limit_below = true;
                }
        }
        for (ssize_t y = (ssize_t) i; y >= 0; y = t->nodes[y].parent) {
                const PciTreeNode *up = &t->nodes[y];
                if (up->tunnel)
                        n->tunnels++;
                if (!up->has_link || up->link_gbps <= 0 || up->tunnel)
                        continue;
                if (n->path_limit < 0 || up->link_gbps <= best) {
                        best = up->link_gbps;
                        n->path_limit = y;
                        n->path_limit_below = false;
                }
        }
        n->path_gbps = best;
}

int pci_tree_build(PciDevice *const *devices, size_t n, PciTree **ret) {
        _cleanup_(pci_tree_freep) PciTree *t = new0(PciTree, 1);
        _cleanup_(freep) bool *missing = NULL;
        int r;

        if (!t)
                return -ENOMEM;
        t->devices = devices;
        t->n = n;
        t->nodes = new0(PciTreeNode, n + 1);
        t->sorted = new0(size_t, n + 1);
        missing = new0(bool, n + 1);
        if (!t->nodes || !t->sorted || !missing)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                t->sorted[i] = i;
        sort_tree = t;
        qsort(t->sorted, n, sizeof(size_t), compare_index);
        sort_tree = NULL;

        for (size_t i = 0; i < n; i++) {
                t->nodes[i].parent = pci_tree_find(t, devices[i]->parent);
                /* Named but not on the bus (hidden by firmware, or gone): its link cannot be judged. */
                missing[i] = devices[i]->parent && t->nodes[i].parent < 0;
                if ((ssize_t) i == t->nodes[i].parent) {
                        t->nodes[i].parent = -1;
                        missing[i] = true;
                }
        }
        r = tree_depths(t);
        if (r < 0)
                return r;

        /* Roles top-down: a parent's is set before its children's. */
        for (unsigned depth = 0; depth <= PCI_DEPTH_MAX; depth++)
                for (size_t i = 0; i < n; i++)
                        if (t->nodes[i].depth == depth && t->nodes[i].type != _PCI_PORT_TYPE_INVALID)
                                t->nodes[i].type = node_type(t, i, missing[i]);
        for (size_t i = 0; i < n; i++) {
                if (t->nodes[i].parent >= 0 && t->nodes[t->nodes[i].parent].type == _PCI_PORT_TYPE_INVALID)
                        t->nodes[i].type = _PCI_PORT_TYPE_INVALID;
                node_link(t, i);
        }
        port_trained_low(t);
        for (size_t i = 0; i < n; i++)
                if (t->nodes[i].tunnel)
                        t->nodes[t->nodes[i].parent].below_tunnel = true;
        for (size_t i = 0; i < n; i++)
                node_path(t, i);

        *ret = TAKE_PTR(t);
        return 0;
}

/* Functions strictly between i and its ancestor a (a must be on i's chain). */
static unsigned bridges_between(const PciTree *t, size_t i, size_t a) {
        return t->nodes[i].depth > t->nodes[a].depth ? t->nodes[i].depth - t->nodes[a].depth - 1 : 0;
}

PciRelation pci_tree_relation(const PciTree *t, size_t a, size_t b, char *ret_through, size_t size) {
        const PciDevice *da = t->devices[a], *db = t->devices[b];

        ret_through[0] = '\0';
        if (a == b)
                return PCI_RELATION_SELF;

        /* The lowest common ancestor: depths are bounded, so this is a few steps. */
        ssize_t x = (ssize_t) a, y = (ssize_t) b;
        while (x >= 0 && y >= 0 && x != y) {
                if (t->nodes[x].depth >= t->nodes[y].depth)
                        x = t->nodes[x].parent;
                else
                        y = t->nodes[y].parent;
        }
        if (x >= 0 && x == y) {
                snprintf(ret_through, size, "%s", t->devices[x]->address);
                return bridges_between(t, a, (size_t) x) <= 1 && bridges_between(t, b, (size_t) x) <= 1
                               ? PCI_RELATION_PIX
                               : PCI_RELATION_PXB;
        }
        if (da->host_bridge && db->host_bridge && streq(da->host_bridge, db->host_bridge)) {
                snprintf(ret_through, size, "%s", da->host_bridge);
                return PCI_RELATION_PHB;
        }
        /* -1 on both sides is a machine without NUMA: one node. */
        if (da->numa_node == db->numa_node) {
                if (da->numa_node >= 0)
                        snprintf(ret_through, size, "%d", da->numa_node);
                return PCI_RELATION_NODE;
        }
        if (da->numa_node >= 0 && db->numa_node >= 0)
                snprintf(ret_through, size, "%d,%d", MIN(da->numa_node, db->numa_node),
                         MAX(da->numa_node, db->numa_node));
        return PCI_RELATION_SYS;
}

char *pci_tree_describe_limit(const PciTree *t, size_t i) {
        const PciTreeNode *n = &t->nodes[i];
        char link[48], *s = NULL;

        if (n->path_limit < 0)
                return NULL;
        const PciTreeNode *hop = &t->nodes[n->path_limit];
        const PciDevice *d = t->devices[n->path_limit];
        if (n->path_limit_below) {
                if (asprintf(&s, "PCIe link below %s at %s (%.1f Gb/s)", d->address,
                             pci_link_format(&d->current, link, sizeof(link)), pci_link_gbps(d->current.gts, d->current.width)) < 0)
                        return NULL;
                return s;
        }
        if (asprintf(&s, "PCIe link %s - %s at %s (%.1f Gb/s)", t->devices[hop->parent]->address, d->address,
                     pci_link_format(&hop->link, link, sizeof(link)), hop->link_gbps) < 0)
                return NULL;
        return s;
}
