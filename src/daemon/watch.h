/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* watch.h — the one timer that samples what the kernel does not announce: link statistics, PCIe links
 * retraining, AER and RDMA port counters */
#pragma once

#include <systemd/sd-event.h>

#include "bus-object.h"
#include "shared/macros.h"

typedef struct Netlink Netlink;
typedef struct Pci Pci;
typedef struct Rdma Rdma;
typedef struct Watch Watch;

typedef struct WatchContext {
        sd_event *event;
        uint64_t interval_usec; /* [Watch] IntervalSec=; 0: no watch at all, no timer */
        Netlink *netlink;
        Pci *pci;
        Rdma *rdma;
        BusPublisher *publisher;
        /* Set after every sample: the derivation pass then judges every object (derive-health.c). */
        bool *sampled;
} WatchContext;

/* Creates the watch; with an interval of 0 returns NULL in *ret and arms nothing. */
int watch_new(const WatchContext *c, Watch **ret);
Watch *watch_free(Watch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(Watch *, watch_free);

/* Samples now and arms the timer for the next interval (start-up: a first sample before READY=1, so
 * every object has its counters, and its health, from the start). */
void watch_start(Watch *w);
