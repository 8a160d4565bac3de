/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-pci-sources.h — what the PCIe part of the derivation pass reads (derive-pci.c and
 * derive-pci-limits.c both; a header of its own so that neither file needs the other's) */
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
