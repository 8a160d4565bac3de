/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kfd.h — reader of AMD's KFD topology (class/kfd/kfd/topology): the links between GPUs the kernel shows */
#pragma once

#include <stdint.h>

#include "pci.h"
#include "shared/macros.h"

/* io_link "type" values (CRAT_IOLINK_TYPE_* in drivers/gpu/drm/amd/amdkfd/kfd_crat.h). */
#define KFD_LINK_TYPE_PCIE 2u
#define KFD_LINK_TYPE_XGMI 11u
/* A topology with more nodes or links than this is not a machine. */
#define KFD_NODES_MAX 256u
#define KFD_LINKS_PER_NODE_MAX 256u

/* One io_link from a GPU node to another GPU node, as the kernel lists it (one per direction). */
typedef struct KfdLink {
        char from[PCI_ADDRESS_MAX]; /* the GPUs' PCI functions, "0000:c1:00.0" */
        char to[PCI_ADDRESS_MAX];
        unsigned type;              /* KFD_LINK_TYPE_*, or another CRAT type */
        uint32_t weight;            /* the kernel's relative cost of the link */
        uint32_t min_bandwidth_mbs; /* MB/s; 0 unknown */
        uint32_t max_bandwidth_mbs;
} KfdLink;

/**
 * kfd_read_links() - the GPU-to-GPU links of the KFD topology
 * @root_fd: the sysfs root directory
 * @ret: the links, in node order, owned by the caller (free())
 * @ret_n: their number
 * @ret_problems: what could not be read or made sense of ("nodes/2/io_links/1: ..."), may be NULL
 *
 * A node is a GPU when its gpu_id is not 0; its PCI function comes from the "domain" and "location_id"
 * properties. Links from or to CPU nodes are left out. No KFD (no amdgpu, or an older kernel) is no
 * links, not an error.
 *
 * Returns 0 or -ENOMEM.
 */
int kfd_read_links(int root_fd, KfdLink **ret, size_t *ret_n, char ***ret_problems);

/* "key value" lines of a KFD properties file: the value of key. -ENOENT when it is not there, -EINVAL
 * when the value is not a number. */
int kfd_properties_get(const char *text, const char *key, uint64_t *ret);

/* "XGMI", "PCIe", ... for a CRAT io_link type; NULL for one without a name. */
const char *kfd_link_type_to_string(unsigned type) _const_;
