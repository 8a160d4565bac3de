/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci-names.h — vendor and device names from the PCI ID database, through libpci */
#pragma once

#include <stdint.h>

#include "shared/macros.h"

typedef struct PciNames PciNames;

PciNames *pci_names_new(void);
PciNames *pci_names_free(PciNames *n);
DEFINE_TRIVIAL_CLEANUP_FUNC(PciNames *, pci_names_free);

/* "NVIDIA Corporation GH100 [H100 SXM5 80GB]", or the vendor's name alone when the database does not
 * know the device. Returns 1 and the name, 0 and NULL when the database does not know the vendor (or
 * is not installed), -ENOMEM. */
int pci_names_lookup(PciNames *n, uint32_t vendor_id, uint32_t device_id, char **ret);
