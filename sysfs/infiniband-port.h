/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infiniband-port.h — one port of an RDMA device in class/infiniband: status, GID table, network interfaces */
#pragma once

#include <stdint.h>

#include "infiniband-parse.h"
#include "shared/macros.h"

typedef enum InfinibandNetdevSource {
        INFINIBAND_NETDEV_GID_TABLE,  /* gid_attrs/ndevs/N: RoCE and iWARP ports, VLANs on them */
        INFINIBAND_NETDEV_PARENT,     /* the "parent" attribute of soft devices (rxe) */
        INFINIBAND_NETDEV_DEVICE_NET, /* device/net/IF whose dev_port is the port's: IPoIB, old kernels */
        _INFINIBAND_NETDEV_SOURCE_MAX,
        _INFINIBAND_NETDEV_SOURCE_INVALID = -EINVAL,
} InfinibandNetdevSource;

typedef struct InfinibandNetdev {
        char *name;
        InfinibandNetdevSource source;
} InfinibandNetdev;

/* One non-zero entry of a port's GID table. */
typedef struct InfinibandGid {
        unsigned index;
        uint8_t gid[16];  /* network byte order; an IPv6 address, or ::ffff:a.b.c.d for RoCE on IPv4 */
        RdmaGidType type; /* _UNKNOWN when the kernel has no gid_attrs (before 4.9) */
        char *netdev;     /* NULL for InfiniBand ports and entries without an interface */
} InfinibandGid;

typedef struct InfinibandPort {
        unsigned number;
        RdmaPortStatus status;
        /* The attributes exactly as the kernel wrote them, NULL when unreadable: an unknown value
         * can still be shown to a person. */
        char *state_text;
        char *phys_state_text;
        char *link_layer_text;
        char *rate_text;
        InfinibandGid *gids;
        size_t n_gids;
        /* The network interfaces that carry this port, the port's own interface first; GID-table
         * entries before "parent" before device/net, each name once. */
        InfinibandNetdev *netdevs;
        size_t n_netdevs;
        char **warnings; /* NULL-terminated, NULL when there are none */
} InfinibandPort;

const char *infiniband_netdev_source_to_string(InfinibandNetdevSource s) _const_;

InfinibandPort *infiniband_port_free(InfinibandPort *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(InfinibandPort *, infiniband_port_free);

/* What every port read needs to know about its device (infiniband.c fills it in). */
typedef struct InfinibandDeviceContext {
        char *dir;     /* "class/infiniband/NAME" */
        char *parent;  /* rxe's "parent" attribute */
        char **net;    /* entries of device/net/ */
        int *net_port; /* their dev_port + 1 (0 = unknown) */
        size_t n_ports;
} InfinibandDeviceContext;

/**
 * infiniband_port_read_in() - read ports/<number> of the device that @c describes
 * @root_fd: the sysfs root
 * @c: the device's directory and the interfaces of its function
 * @number: the port number
 * @ret: the port, to be freed with infiniband_port_free()
 *
 * What cannot be read or parsed becomes one of the port's warnings.
 *
 * Return: 0, -ENOENT if there is no such port, -ENOMEM, or -errno when the port's directory
 * cannot be looked at.
 */
int infiniband_port_read_in(int root_fd, const InfinibandDeviceContext *c, unsigned number, InfinibandPort **ret);

/* The readers' shared bookkeeping: appends one formatted line to a NULL-terminated list (0 or -ENOMEM). */
_printf_(2, 3) int infiniband_add_warning(char ***warnings, const char *format, ...);
/* Reads an attribute that every port or device has: a missing file is a warning too (0 or -ENOMEM). */
int infiniband_read_required(int root_fd, const char *dir, const char *attr, char **ret, char ***warnings);
