/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-remote.h — the port at the far end of each InfiniBand cable, and the CAs only libibumad knows: the subnet management worker (rdma-mad.c) owned here, its answers recorded on the RdmaPorts */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shared/macros.h"

typedef struct Rdma Rdma;
typedef struct RdmaMad RdmaMad;

/*
 * Sits above rdma.c: rdma.c only raises flags (a port read again after an event wants its neighbour
 * asked; libibumad's CAs want listing) and calls nothing here; the manager calls rdma_remote_sync() at
 * the end of each pass, which sends what the flags ask for, and the answers, which come back on the
 * loop, are recorded on the ports through rdma.h.
 */
typedef struct RdmaRemote {
        Rdma *rdma;
        RdmaMad *mad;  /* NULL where verbs are not allowed, or the worker could not start */
        uint64_t seq;  /* of the last query sent */
} RdmaRemote;

/* Starts the worker where the sysfs root is the machine's own (a test's tree has no umad devices). */
int rdma_remote_new(Rdma *rdma, RdmaRemote **ret);
/* Stops the worker; before rdma_done(): its answers name ports. */
RdmaRemote *rdma_remote_free(RdmaRemote *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RdmaRemote *, rdma_remote_free);

/* Sends what rdma.c's flags ask for. Returns how many InfiniBand ports were asked (a port event: the
 * subnet sweep follows). */
unsigned rdma_remote_sync(RdmaRemote *r);
