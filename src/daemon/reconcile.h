/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reconcile.h — keeps every wanted peer path measured: derives paths, schedules probes, runs them */
#pragma once

#include "shared/ratelimit.h"

typedef struct Manager Manager;
typedef struct Peer Peer;
typedef struct Reconciler Reconciler;

/* Local RDMA ports a path can start from. */
typedef struct RdmaLocalPort {
        char device[64];
        unsigned port;
} RdmaLocalPort;

int reconcile_new(Manager *m, Reconciler **ret);
Reconciler *reconcile_free(Reconciler *r);

/* After READY=1: takes the configured peers, restores persisted results, starts discovery and
 * runs the first pass. */
int reconcile_start(Manager *m);

/* One pass, now: derive paths from the targets (creating and removing objects), update Stale, start
 * what is due on every idle transport, arm the timer for the next thing to do (or turn it off). */
void reconcile_run(Manager *m);
/* A pass at the next event-loop iteration (events, probe completions). */
void reconcile_schedule(Manager *m);

/* ProbePeer(): p goes first on its transport. duration_usec/samples 0 = configured defaults. */
void reconcile_request(Manager *m, Peer *p, uint64_t duration_usec, unsigned samples);
/* p is going away: cancels its probe (without a result). */
void reconcile_forget(Manager *m, Peer *p);

/* Called from the bus flush: when the links that peers depend on changed, a pass follows. */
void reconcile_links_changed(Manager *m);

/* The active local RDMA port to probe from: device (NULL = the first), port (0 = the first active).
 * Returns 0, or -ENODEV when there is none. */
int reconcile_find_rdma_port(Manager *m, const char *device, unsigned port, RdmaLocalPort *ret);

/* The per-sender limit for ProbePeer, AddPeer and RemovePeer. */
RateLimit *reconcile_rate_limit(Manager *m);
