/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-watch.h — the RDMA ports' part of the watch (watch.h): their counters over time */
#pragma once

#include "rdma.h"
#include "watch.h"

/* The recorder: a port's counters as read (n: how many were readable; now: CLOCK_MONOTONIC usec). */
void rdma_port_record_counters(RdmaPort *p, const InfinibandCounters *c, int n, uint64_t now);

/* The sampler: every port's counters from sysfs, each recorded on its port. */
WatchSampler rdma_watch_sampler(Rdma *rdma);
