/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-pci-limits.h — what the PCIe tree means for the other kinds: affinity and joined bottlenecks */
#pragma once

#include "derive-pci-sources.h"

/* Manager.GetAffinity(): every pair of published devices with a PCI function (objects and tree are
 * the pass's snapshot of the published functions). */
int derive_pci_affinity(const DerivePciSources *src, PciObject *const *objects, const PciTree *tree);
/* PathLimitGbps/PathLimitedBy of Thunderbolt routers and peers: the Thunderbolt path and the host
 * interface's PCIe path. */
int derive_thunderbolt_limits(const DerivePciSources *src);
/* PathLimitGbps/PathLimitedBy of measured paths: the source link, its Thunderbolt and PCIe paths. */
int derive_peer_limits(const DerivePciSources *src);
