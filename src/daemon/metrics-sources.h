/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-sources.h — what the exposition is made of: the collections every metrics-*.c renders from
 * (metrics.c, metrics-health.c), without the exporter that serves them */
#pragma once

#include <stdint.h>

typedef struct DaemonStatus DaemonStatus;
typedef struct Gpus Gpus;
typedef struct Links Links;
typedef struct Memory Memory;
typedef struct Neighbors Neighbors;
typedef struct Node Node;
typedef struct Peers Peers;
typedef struct Pci Pci;
typedef struct Rdma Rdma;
typedef struct Switches Switches;
typedef struct Thunderbolt Thunderbolt;

/* Everything the exposition is made of. */
typedef struct MetricsSources {
        const DaemonStatus *status;
        const Node *node;
        const Memory *memory;
        Links *links;
        Thunderbolt *thunderbolt;
        Rdma *rdma;
        Gpus *gpus;
        Peers *peers;
        Pci *pci; /* may be NULL */
        Neighbors *neighbors; /* may be NULL */
        Switches *switches;   /* may be NULL */
        uint64_t netlink_overruns;
        uint64_t udev_overruns;
} MetricsSources;
