/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-live.h — libibverbs on the event loop: live port attributes and async port events per RDMA device */
#pragma once

#include "rdma.h"

/**
 * rdma_device_open_verbs() - use libibverbs for a device's live port state, if it can be opened
 * @dev: the device
 *
 * Only when the sysfs root is the machine's own /sys (a fixture tree describes another machine
 * than libibverbs sees). A device libibverbs does not know, or no RDMA at all, is logged at debug
 * level only; other failures (permissions on /dev/infiniband) once at info level.
 *
 * Return: 0 when open (already or now), -errno otherwise; sysfs values are published then.
 */
int rdma_device_open_verbs(RdmaDevice *dev);
void rdma_device_close_verbs(RdmaDevice *dev);

/* A uverbs device went away: whoever holds it open must let go now. For a driver that cannot
 * disassociate user contexts (rxe, siw, ...) the kernel waits for every open file before it
 * removes the RDMA device, and the "remove" of the RDMA device itself only comes after that. */
void rdma_uverbs_removed(Manager *m, const char *uverbs);

/**
 * rdma_device_verbs_status() - ask libibverbs for a port's live status
 * @dev: the device (may be NULL)
 * @sysfs: the same port as sysfs shows it, to log where the two disagree (at debug level)
 *
 * Return: the status from ibv_query_port(), valid until the next query of the device, or NULL
 * when verbs are not in use or the query failed.
 */
const RdmaPortStatus *rdma_device_verbs_status(RdmaDevice *dev, const InfinibandPort *sysfs);
