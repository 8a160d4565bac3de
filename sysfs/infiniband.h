/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infiniband.h — reader of class/infiniband: RDMA devices, their ports, GID tables and network interfaces */
#pragma once

#include <stdint.h>

#include "infiniband-parse.h"
#include "infiniband-port.h"
#include "shared/macros.h"

/*
 * Everything is read relative to a sysfs root fd (see sysfs.h). A device that is there is always
 * returned: what cannot be read or parsed is left unknown (0, _UNKNOWN, NULL) and described in the
 * device's or port's warnings, so one odd attribute never hides the rest. Only a missing device
 * (-ENOENT: it went away), an invalid name (-EINVAL) and -ENOMEM fail a read.
 *
 * No class/infiniband at all is the normal state of a machine without RDMA: enumeration then
 * succeeds with zero devices.
 */

typedef struct InfinibandDevice {
        char *name;    /* "mlx5_0": the entry in class/infiniband */
        char *syspath; /* canonical, relative to the root: "devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0" */
        RdmaNodeType node_type;
        char *node_type_text;
        uint64_t node_guid;      /* host order, 0 = unknown */
        uint64_t sys_image_guid; /* host order, 0 = unknown */
        /* Driver-specific strings, NULL when the driver has none or leaves them empty. node_desc is
         * set by the administrator or the SM and may hold any bytes but NUL: escape before
         * publishing. */
        char *fw_ver;
        char *hca_type;
        char *board_id;
        char *hw_rev;
        char *node_desc;
        char *parent; /* soft RoCE (rxe): the network interface it runs on */
        InfinibandPort **ports;
        size_t n_ports;
        char **warnings;
} InfinibandDevice;

/**
 * infiniband_device_read() - read one device, all its ports and GID tables
 * @root_fd: the sysfs root
 * @name: the device's name in class/infiniband (a udev event's sysname)
 * @ret: the device, to be freed with infiniband_device_free()
 *
 * Return: 0, -ENOENT if there is no such device, -EINVAL for a name that is not a single path
 * component, -ENOMEM.
 */
int infiniband_device_read(int root_fd, const char *name, InfinibandDevice **ret);
InfinibandDevice *infiniband_device_free(InfinibandDevice *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(InfinibandDevice *, infiniband_device_free);

/**
 * infiniband_port_read() - read one port of a device again
 * @root_fd: the sysfs root
 * @device: the device's name in class/infiniband
 * @port: the port number (ports/<port>)
 * @ret: the port, to be freed with infiniband_port_free()
 *
 * For a RoCE port whose network interface changed carrier or speed: cheaper than the whole device.
 *
 * Return: 0, -ENOENT if the device or port does not exist, -EINVAL for a bad name, -ENOMEM.
 */
int infiniband_port_read(int root_fd, const char *device, unsigned port, InfinibandPort **ret);

/**
 * infiniband_enumerate() - read every device in class/infiniband, sorted by name
 * @root_fd: the sysfs root
 * @ret: a NULL-terminated array, to be freed with infiniband_device_list_free()
 * @ret_n: the number of devices (may be NULL)
 *
 * A device that disappears while being read is left out.
 *
 * Return: 0 (also when there is no RDMA subsystem: zero devices), -ENOMEM, or -errno when
 * class/infiniband exists but cannot be listed.
 */
int infiniband_enumerate(int root_fd, InfinibandDevice ***ret, size_t *ret_n);
InfinibandDevice **infiniband_device_list_free(InfinibandDevice **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(InfinibandDevice **, infiniband_device_list_free);

/* 1 when class/infiniband exists (the kernel has the RDMA core loaded), 0 when not, -errno. */
int infiniband_subsystem_present(int root_fd);

/* The port with that number, or NULL. */
InfinibandPort *infiniband_device_get_port(const InfinibandDevice *d, unsigned number) _pure_;

/* InfiniBand, RoCE or iWARP for one port of a device. */
RdmaTransport infiniband_port_transport(const InfinibandDevice *d, const InfinibandPort *p) _pure_;

/**
 * infiniband_find_netdev() - the RDMA port a network interface belongs to
 * @devices: NULL-terminated, as from infiniband_enumerate()
 * @ifname: the interface name
 * @ret_device: the device (may be NULL)
 *
 * A GID-table match anywhere wins over a "parent" match, which wins over a device/net match, so a
 * RoCE VLAN or a bond maps to the port whose GIDs it carries rather than to whatever shares its
 * PCI function.
 *
 * Return: the port, or NULL if no RDMA port uses the interface.
 */
InfinibandPort *infiniband_find_netdev(InfinibandDevice *const *devices, const char *ifname,
                                       InfinibandDevice **ret_device);

/**
 * infiniband_lookup_netdev() - enumerate, then infiniband_find_netdev()
 * @root_fd: the sysfs root
 * @ifname: the interface name
 * @ret_device: the device name (may be NULL), to be freed
 * @ret_port: the port number (may be NULL)
 *
 * Return: 1 and the outputs when found, 0 when no RDMA port uses the interface, -errno.
 */
int infiniband_lookup_netdev(int root_fd, const char *ifname, char **ret_device, unsigned *ret_port);
