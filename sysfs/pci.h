/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci.h — reader of bus/pci/devices: identity, NUMA locality and PCIe link attributes of PCI functions */
#pragma once

#include <sched.h>
#include <stdint.h>

#include "shared/macros.h"

/*
 * What the kernel says about one PCI function (Documentation/ABI/testing/sysfs-bus-pci). Every field
 * the kernel did not provide, or provided in a form the ABI does not allow, is "unknown": NULL for
 * strings, 0 for rates and widths, -1 for the NUMA node, has_* false for ids. A malformed or unreadable
 * attribute also leaves a line in problems; one that is simply absent (a conventional PCI device has no
 * link attributes, a kernel without NUMA no numa_node) does not, and neither does the kernel's own
 * "Unknown" speed.
 */

/* "ffffffff:ff:1f.7" and its NUL. The kernel prints "%04x:%02x:%02x.%d". */
#define PCI_ADDRESS_MAX 17
/* Nothing real nests PCI functions this deep; a tree that does is cut off there. */
#define PCI_DEPTH_MAX 32u
/* numa_node beyond this is not a node the kernel can have (MAX_NUMNODES is at most 1024). */
#define PCI_NUMA_NODE_MAX 1023

typedef struct PciLink {
        double gts;          /* transfer rate per lane, GT/s: 2.5, 5, 8, 16, 32, 64; 0 unknown */
        unsigned generation; /* 1..6 for the rates above; 0 unknown */
        unsigned width;      /* lanes: 1, 2, 4, 8, 12, 16, 32; 0 unknown or link down */
} PciLink;

typedef struct PciDevice {
        char *address;     /* "0000:41:00.0": its name in bus/pci/devices */
        char *syspath;     /* canonical, relative to the root: "devices/pci0000:40/0000:40:01.1/0000:41:00.0" */
        char *parent;      /* the nearest PCI function above it in syspath; NULL right below a host bridge */
        char *host_bridge; /* the root bus its path starts at ("pci0000:40"); NULL when the path has none */
        unsigned depth;    /* PCI functions above it in syspath */

        bool has_vendor_id, has_device_id, has_class;
        uint32_t vendor_id, device_id; /* 16 bits each */
        uint32_t class_code;           /* 24 bits: base class, subclass, programming interface */
        bool has_subsystem;
        uint32_t subsystem_vendor_id, subsystem_device_id;
        char *driver;     /* the bound driver's name; NULL when none */
        int numa_node;    /* -1: none or unknown */
        char *local_cpus; /* local_cpulist as the kernel prints it ("0-15,32-47"); NULL unknown */

        bool is_pcie;    /* it has link attributes at all */
        /* The kernel's "removable" attribute says so: since Linux 6.12 that is every function tunnelled
         * through USB4/Thunderbolt below an external-facing port (before, also a discrete Thunderbolt
         * controller right below one). */
        bool removable;
        PciLink current; /* current_link_speed / current_link_width */
        PciLink max;     /* max_link_speed / max_link_width */

        char **problems; /* "attribute: why", NULL when there are none */
} PciDevice;

/**
 * pci_device_read() - read one function of bus/pci/devices
 * @root_fd: the sysfs root directory
 * @address: its name, "0000:41:00.0"
 * @ret: the function, owned by the caller (pci_device_free())
 *
 * Used for enumeration and for udev events alike. Attributes that are missing or malformed leave their
 * field unknown.
 *
 * Returns 0, -ENODEV when the function is not (or no longer) there, -EINVAL for a name that is not a PCI
 * address, -ENOMEM.
 */
int pci_device_read(int root_fd, const char *address, PciDevice **ret);
PciDevice *pci_device_free(PciDevice *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(PciDevice *, pci_device_free);

/**
 * pci_enumerate() - read every function of bus/pci/devices
 * @root_fd: the sysfs root directory
 * @ret: array of functions in address order, owned by the caller (pci_device_array_free())
 * @ret_n: number of functions
 *
 * Functions that vanish between listing and reading, and entries whose names are not PCI addresses,
 * are skipped. A system without a PCI bus yields an empty array.
 *
 * Returns 0, -ENOMEM, or the error listing the bus failed with.
 */
int pci_enumerate(int root_fd, PciDevice ***ret, size_t *ret_n);
PciDevice **pci_device_array_free(PciDevice **devices, size_t n);

/* Parsers (pci-parse.c); each returns 0 or -EINVAL/-ERANGE and writes its output only on success. */

/* "0000:41:00.0": a domain of 4 to 8 hex digits, 2-digit bus, device 00-1f, function 0-7. */
int pci_address_parse(const char *s, uint32_t *ret_domain, unsigned *ret_bus, unsigned *ret_device,
                      unsigned *ret_function);
bool pci_address_is_valid(const char *s);
/* "pci0000:40": the directory of a host bridge's root bus. */
bool pci_host_bridge_is_valid(const char *s);
/* "16.0 GT/s PCIe", "8 GT/s" (kernels before 5.5), "2.5 GT/s": the rate and its generation.
 * "Unknown" and "Unknown speed" are the kernel saying it does not know: 0 and generation 0. */
int pci_parse_link_speed(const char *s, double *ret_gts, unsigned *ret_generation);
/* "16": a width the PCIe specification allows, or 0 (link down). */
int pci_parse_link_width(const char *s, unsigned *ret);
/* "-1" or a node number. */
int pci_parse_numa_node(const char *s, int *ret);
/* "0-15,32-47", or "" (a node without CPUs). Validates; nothing to return. */
int pci_parse_cpulist(const char *s);
/* The same, filling ret (may be NULL) with the CPUs listed below CPU_SETSIZE. */
int pci_parse_cpulist_set(const char *s, cpu_set_t *ret);
/* The generation of a rate, 0 when it is not one. */
unsigned pci_speed_generation(double gts) _const_;
/* What a link carries after its line encoding, in Gb/s: 8b/10b up to 5 GT/s, 128b/130b up to 32 GT/s,
 * 242B/256B flits (payload and link layer of each flit) from 64 GT/s. 0 when either is unknown. */
double pci_link_gbps(double gts, unsigned width) _const_;

/**
 * pci_syspath_split() - the PCI ancestry in a canonical device path
 * @syspath: "devices/pci0000:40/0000:40:01.1/0000:41:00.0/net/eth0"
 * @ret_function: the last PCI function in the path ("0000:41:00.0"), or NULL when there is none
 * @ret_parent: the PCI function before that one, or NULL (may be NULL)
 * @ret_host_bridge: the first host bridge in the path ("pci0000:40"), or NULL (may be NULL)
 * @ret_depth: PCI functions before the last one (may be NULL)
 *
 * Any device's path works: a network interface's leads to its NIC's function, a Thunderbolt
 * domain's to its host interface, a USB device's to its USB controller.
 *
 * Returns 0 (also when there is no PCI function: all outputs NULL), -ENOMEM.
 */
int pci_syspath_split(const char *syspath, char **ret_function, char **ret_parent, char **ret_host_bridge,
                      unsigned *ret_depth);
