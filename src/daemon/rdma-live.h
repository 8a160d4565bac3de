/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-live.h — libibverbs on the event loop: live port attributes and async port events of one device */
#pragma once

#include <systemd/sd-event.h>

#include "rdma-verbs.h"

typedef struct RdmaLive RdmaLive;

/* A port's state may have moved (port 1..n), or verbs were dropped and every port should be read
 * from sysfs again (port 0). */
typedef void (*rdma_live_port_event_t)(RdmaLive *live, unsigned port, void *userdata);

/* libibverbs' view of one device, embedded in the daemon's record of it. */
struct RdmaLive {
        const char *name; /* the device's name, owned by whoever embeds this */
        RdmaVerbsDevice *verbs;
        char *uverbs; /* its class/infiniband_verbs entry ("uverbs0"), while verbs is open */
        sd_event_source *source;
        int error; /* why verbs are not used (negative errno), logged once per value */
        rdma_live_port_event_t port_event;
        void *userdata;
};

/**
 * rdma_live_open() - use libibverbs for a device's live port state, if it can be opened
 * @live: the device's record
 * @event: the loop that watches its async events
 * @sysfs_fd: the sysfs root, to find the device's uverbs entry
 *
 * The caller opens only when the sysfs root is the machine's own /sys (a fixture tree describes
 * another machine than libibverbs sees). A device libibverbs does not know, or no RDMA at all, is
 * logged at debug level only; other failures (permissions on /dev/infiniband) once at info level.
 *
 * Return: 0 when open (already or now), -errno otherwise; sysfs values are published then.
 */
int rdma_live_open(RdmaLive *live, sd_event *event, int sysfs_fd);
void rdma_live_close(RdmaLive *live);

/**
 * rdma_live_port_status() - ask libibverbs for a port's live status
 * @live: the device's record
 * @sysfs: the same port as sysfs shows it, to log where the two disagree (at debug level)
 *
 * Return: the status from ibv_query_port(), valid until the next query of the device, or NULL
 * when verbs are not in use or the query failed.
 */
const RdmaPortStatus *rdma_live_port_status(RdmaLive *live, const InfinibandPort *sysfs);
