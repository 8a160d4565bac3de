/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu-topology.h — the CPU packages (sockets) and NUMA nodes, from devices/system/cpu/cpuN/topology and
 * devices/system/node/nodeN/cpulist (Documentation/ABI/stable/sysfs-devices-system-cpu,
 * Documentation/ABI/stable/sysfs-devices-node) */
#pragma once

#include <stddef.h>

#include "sysfs.h"

typedef struct SysfsNumaNode {
        uint32_t id;  /* N of nodeN */
        char *cpus;   /* its cpulist as the kernel wrote it: "0-9,20-29", "" for a node without CPUs */
} SysfsNumaNode;

typedef struct SysfsCpuPackage {
        uint32_t id;           /* physical_package_id */
        char *cpus;            /* its online CPUs in the kernel's list format ("0,4,8-11") */
        unsigned n_cpus;       /* how many */
        unsigned cores;        /* its cores: the distinct sets of CPUs that share one (core_cpus_list) */
        uint32_t *numa_nodes;  /* the NUMA nodes any of its CPUs is in, ascending */
        size_t n_numa_nodes;
} SysfsCpuPackage;

typedef struct SysfsCpuTopology {
        SysfsCpuPackage *packages; /* ascending by id */
        size_t n_packages;
        SysfsNumaNode *numa_nodes; /* ascending by id; empty on a kernel without NUMA (no devices/system/node) */
        size_t n_numa_nodes;
        unsigned unplaced_cpus;    /* CPUs listed but in no package: offline (online "0", no topology/), or undescribed */
} SysfsCpuTopology;

/*
 * Reads the packages and NUMA nodes below root_fd. A CPU counts when it is online and says its package:
 * an offline CPU has no topology directory on current kernels (older ones print physical_package_id -1).
 * A core is told apart by core_cpus_list (5.x), else thread_siblings_list (its older name), else by
 * die_id and core_id. -ENOENT when there is no devices/system/cpu, -EINVAL (or -ERANGE) for a value
 * that is not the kernel's; t is left empty then. Free with sysfs_cpu_topology_done().
 */
int sysfs_cpu_topology_read(int root_fd, SysfsCpuTopology *ret);
void sysfs_cpu_topology_done(SysfsCpuTopology *t);

/* Whether cpu is in a list in the kernel's format ("0-3,8"); a list that is not one holds nothing. */
bool sysfs_cpulist_contains(const char *list, unsigned cpu);
/* Ascending CPU numbers in the kernel's list format ("0-3,8"; "" for none). NULL when out of memory. */
char *sysfs_cpulist_format(const unsigned *cpus, size_t n);
