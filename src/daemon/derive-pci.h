/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-pci.h — the PCIe part of the derivation pass: published functions, cross-links, affinity, limits */
#pragma once

#include <stdbool.h>

typedef struct Gpus Gpus;
typedef struct Links Links;
typedef struct Pci Pci;
typedef struct PciObject PciObject;
typedef struct PciTree PciTree;
typedef struct Peers Peers;
typedef struct Rdma Rdma;
typedef struct Thunderbolt Thunderbolt;

/* What the PCIe facts combine with. */
typedef struct DerivePciSources {
        Pci *pci;
        Links *links;
        Rdma *rdma;
        Gpus *gpus;
        Thunderbolt *thunderbolt;
        Peers *peers;
} DerivePciSources;

/*
 * One pass. others_changed: links, RDMA ports or the Thunderbolt tree moved (the pass's flags). When
 * anything moved, the tree is rebuilt and every fact below recomputed; otherwise only the peers'
 * limits, which follow their source links' speeds:
 *
 *   pci.derived          which functions are published, Parent, PortType, Gbps, PathGbps,
 *                        PathLimitedBy, Degraded, Problems, GpuLinks
 *   link, rdma_port, gpu, tbt (domains): PciDevice; gpu: PciPathGBps
 *   pci->affinity        Manager.GetAffinity()
 *   tbt (routers, peers) PathLimitGbps/PathLimitedBy: the Thunderbolt path and the host interface's PCIe path
 *   peer                 PathLimitGbps/PathLimitedBy: the source link, its Thunderbolt and PCIe paths
 */
void derive_pci(const DerivePciSources *src, bool others_changed);

/* The active NVLinks between two GPUs (direct, or through NVSwitches), and their version. */
unsigned nvlinks_between(const Gpus *gpus, const char *a, const char *b, unsigned *ret_version);

/* derive-pci-limits.c */
int derive_pci_affinity(const DerivePciSources *src, PciObject *const *objects, const PciTree *tree);
int derive_thunderbolt_limits(const DerivePciSources *src);
int derive_peer_limits(const DerivePciSources *src);
