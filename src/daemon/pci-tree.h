/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci-tree.h — the PCIe tree from the functions sysfs lists: links, degradation, path rates, affinity */
#pragma once

#include <sys/types.h>

#include "shared/macros.h"
#include "sysfs/pci.h"

/*
 * Pure logic, like tbt-topology: no bus, no sysfs. The daemon builds a tree from every function it
 * knows after each change (a few hundred at most: cheap) and the derivation pass reads it.
 *
 * The kernel's semantics: a root or downstream port's current_link_* describe the link below it, the
 * same physical link its child reports; an upstream port's and an endpoint's describe the link above
 * them. The link between a switch's upstream and downstream ports is internal and has no rate. Which
 * port a bridge is follows from where it sits: right below a host bridge (or a non-bridge, as behind
 * Intel VMD) a root port, below a root or downstream port an upstream port, below that a downstream
 * port.
 */

typedef enum PciPortType {
        PCI_PORT_ROOT,       /* a bridge right below a host bridge: its link is below it */
        PCI_PORT_UPSTREAM,   /* a switch's upstream port: its link is above it */
        PCI_PORT_DOWNSTREAM, /* a switch's downstream port: its link is below it */
        PCI_PORT_ENDPOINT,   /* a function that is no bridge, below a port: its link is above it */
        PCI_PORT_INTEGRATED, /* a function that is no bridge, right below a host bridge: no link */
        _PCI_PORT_TYPE_MAX,
        _PCI_PORT_TYPE_INVALID = -EINVAL, /* its parent is not on the bus, or it was cut off */
} PciPortType;

/* How two functions reach each other, in the words of `nvidia-smi topo -m`. */
typedef enum PciRelation {
        PCI_RELATION_SELF, /* "X": the same function */
        PCI_RELATION_PIX,  /* through at most one bridge or switch */
        PCI_RELATION_PXB,  /* through several switches, not the host bridge */
        PCI_RELATION_PHB,  /* through a host bridge (the root complex) */
        PCI_RELATION_NODE, /* between host bridges of one NUMA node */
        PCI_RELATION_SYS,  /* between NUMA nodes (the SMP interconnect), or nothing known */
        _PCI_RELATION_MAX,
        _PCI_RELATION_INVALID = -EINVAL,
} PciRelation;

typedef struct PciTreeNode {
        ssize_t parent; /* index of the parent function; -1 below a host bridge, missing or cut off */
        unsigned depth; /* functions above it in this tree */
        PciPortType type;

        /* The physical link above this function (it is an upstream port or an endpoint below a root or
         * downstream port). */
        bool has_link;
        PciLink link;    /* as trained: this function's current_link_*, else its port's */
        PciLink capable; /* the lower of both ends' max_link_*; fields 0 where either end is unknown */
        double link_gbps;
        /* Trained below what both ends support: the structural fact, computed here once. Whether that is
         * degraded or power saving is the health judge's to say (health-judge.c), which sets Degraded. */
        bool trained_low;
        /* The link is a PCIe tunnel through USB4/Thunderbolt: its lower end is a bridge the kernel marks
         * removable (tunnelled below an external-facing port), at the fixed 2.5 GT/s tunnels report or
         * an unknown speed. Its rate says nothing: it is neither degraded nor on the path. */
        bool tunnel;
        bool below_tunnel; /* a root or downstream port whose link below is a tunnel */
        unsigned tunnels;  /* tunnels between this function and the root complex: the depth of the
                            * Thunderbolt router whose PCIe adapter it sits behind */

        /* A root or downstream port: the first function below it whose link trained low (-1 none); the
         * port is judged by that link too. */
        ssize_t trained_low_below;

        /* The narrowest link between this function and the root complex, counting a port's own link
         * below it; each physical link once, tunnels left out (derive-pci.c offers the Thunderbolt
         * path in their place). */
        double path_gbps; /* 0: no link with a known rate */
        ssize_t path_limit; /* the function whose link that is (-1 none) ... */
        bool path_limit_below; /* ... the link below that port rather than above that function */
} PciTreeNode;

typedef struct PciTree {
        PciDevice *const *devices; /* borrowed: the input */
        size_t n;
        PciTreeNode *nodes;
        size_t *sorted; /* indexes in address order, for lookups */
        char **problems; /* "<address>: ...": parents that loop, trees too deep */
} PciTree;

/**
 * pci_tree_build() - the tree of a set of functions
 * @devices: what sysfs said, in any order; borrowed for the tree's life
 * @n: their number
 * @ret: the tree
 *
 * Parents come from each function's path. A chain of parents that loops or is deeper than
 * PCI_DEPTH_MAX is cut off (the function then hangs below nothing) and named in problems.
 *
 * Returns 0 or -ENOMEM.
 */
int pci_tree_build(PciDevice *const *devices, size_t n, PciTree **ret);
PciTree *pci_tree_free(PciTree *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(PciTree *, pci_tree_free);

/* The index of the function with that address, or -1. */
ssize_t pci_tree_find(const PciTree *t, const char *address);

/**
 * pci_tree_relation() - how two functions reach each other
 * @t: the tree
 * @a: index of one function
 * @b: index of the other
 * @ret_through: where they meet: the common bridge's address (PIX, PXB), the host bridge (PHB), the
 *               NUMA node(s) ("0", "0,1"); "" when unknown. At least PCI_ADDRESS_MAX + 8 bytes.
 *
 * Within one tree: PIX when neither function is more than one bridge below the lowest common one
 * (a switch's two ports count as one), PXB otherwise. In different trees: PHB below the same host
 * bridge; NODE when both functions are on the same NUMA node (or on a machine without NUMA); SYS
 * otherwise.
 */
PciRelation pci_tree_relation(const PciTree *t, size_t a, size_t b, char *ret_through, size_t size);

/* "PCIe link 0000:00:1c.4 - 0000:05:00.0 at 8.0 GT/s x2 (15.8 Gb/s)": the hop that limits node i's
 * path. NULL when the path has no link with a known rate. */
char *pci_tree_describe_limit(const PciTree *t, size_t i);

const char *pci_port_type_to_string(PciPortType t) _const_;
const char *pci_relation_to_string(PciRelation r) _const_;
/* "16.0 GT/s x8": a link as people write it; "unknown" parts as "?". */
char *pci_link_format(const PciLink *l, char *buf, size_t size);
