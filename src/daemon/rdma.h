/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma.h — RDMA ports as published objects: sysfs facts, live verbs state, and their network interfaces */
#pragma once

#include "rdma-object.h"

void rdma_init(Rdma *rdma, BusPublisher *p, sd_event *event, int sysfs_fd, bool verbs_allowed);
void rdma_done(Rdma *rdma);
/* Follows the udev subsystems "infiniband" and "infiniband_verbs"; call before the monitor starts.
 * The enumeration then runs with every other udev source's. */
int rdma_watch(Rdma *rdma, UdevSource *udev);

/**
 * rdma_enumerate() - read every RDMA device again and publish the differences
 * @userdata: the Rdma
 *
 * Start-up, udev overrun and Refresh(). Ports that are gone are removed, new ones added, changed
 * ones announced. No RDMA subsystem is a normal state: no ports, nothing logged.
 *
 * Return: 0, or -errno when class/infiniband exists but cannot be listed.
 */
int rdma_enumerate(void *userdata);

/**
 * rdma_device_process() - read one device again (a udev event named it)
 * @rdma: the ports and devices
 * @name: the device's name in class/infiniband
 * @try_verbs: also try to open the device with libibverbs if it is not open yet
 *
 * A device that is gone (or never was) has its ports removed.
 */
void rdma_device_process(Rdma *rdma, const char *name, bool try_verbs);
void rdma_device_remove(Rdma *rdma, const char *name);

/* A uverbs device went away: whoever holds it open must let go now. For a driver that cannot
 * disassociate user contexts (rxe, siw, ...) the kernel waits for every open file before it
 * removes the RDMA device, and the "remove" of the RDMA device itself only comes after that. */
void rdma_uverbs_removed(Rdma *rdma, const char *uverbs);

/* The key "<device>_<port>" and the object path rdma/<key>. */
int rdma_port_object_path(const char *device, unsigned port, char **ret_key, char **ret_path);

/* Marks a port for re-reading at the next flush (a verbs event, or its network interface's carrier
 * or speed moved). */
void rdma_port_request_reread(RdmaPort *p);
RdmaPort *rdma_port_get(Rdma *rdma, const char *device, unsigned number);
/* The first active port, on device (NULL: any) with number port (0: any). */
RdmaPort *rdma_find_active_port(Rdma *rdma, const char *device, unsigned port);
bool rdma_port_is_active(const RdmaPort *p);

/* For rdma-remote.c: a device read from libibumad published like one read from sysfs. */
void rdma_device_apply(Rdma *rdma, const InfinibandDevice *d, bool try_verbs);
RdmaDevice *rdma_device_get(Rdma *rdma, const char *name);


/* Tells RDMA ports apart from others in the publisher's queue. */
extern const BusObjectType rdma_port_bus_type;
