/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-pci.h — the PCIe part of the derivation pass: published functions, cross-links, affinity, limits */
#pragma once

#include <stdbool.h>

#include "derive-pci-sources.h"

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
/* Returns whether the tree was rebuilt. */
bool derive_pci(const DerivePciSources *src, bool others_changed);

