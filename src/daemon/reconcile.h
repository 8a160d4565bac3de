/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reconcile.h — keeps every wanted peer path measured: schedules probes, runs them, keeps results */
#pragma once

#include <systemd/sd-event.h>

#include "shared/ratelimit.h"

typedef struct Inhibitors Inhibitors;
typedef struct Links Links;
typedef struct Peer Peer;
typedef struct Peers Peers;
typedef struct PeersConfig PeersConfig;
typedef struct Persist Persist;
typedef struct Reconciler Reconciler;

/* What the reconciler works with. Which paths exist is the derivation pass's business (it expands
 * targets into paths); the reconciler decides when each is measured. */
typedef struct ReconcilerContext {
        Peers *peers;
        Links *links; /* for discovery: which links neighbours are found on */
        sd_event *event;
        const PeersConfig *config;
        Inhibitors *inhibitors;
        Persist *persist;
} ReconcilerContext;

int reconcile_new(const ReconcilerContext *c, Reconciler **ret);
Reconciler *reconcile_free(Reconciler *r);

/* The node's measure lock, in the state directory: its TCP probes hold it while they measure and its
 * responder while it serves (--lock-file=), so they take turns. */
#define MEASURE_LOCK_FILE_NAME "measure.lock"
/* Before reconcile_start(): the lock's path (copied) for the probes; NULL: none (no responder). */
void reconcile_set_measure_lock(Reconciler *r, const char *path);

/* After READY=1: takes the configured peers, restores persisted results, starts discovery and
 * runs the first pass. */
int reconcile_start(Reconciler *r);

/* One pass, now: discovery, time-outs of results (Stale), start what is due on every idle
 * transport, arm the timer for the next thing to do (or turn it off). */
void reconcile_run(Reconciler *r);
/* A pass at the next event-loop iteration (paths or links changed, probes ended, inhibitors went). */
void reconcile_schedule(Reconciler *r);
/* ProbePeer(): p goes first on its transport. duration_usec/samples 0 = configured defaults. */
void reconcile_request(Reconciler *r, Peer *p, uint64_t duration_usec, unsigned samples, int streams);
/* Inhibitors of what (InhibitWhat bits) came: running RDMA probes are killed, their paths say
 * skipped-inhibited and are measured once the inhibitors go. */
void reconcile_inhibited(Reconciler *r, unsigned what);
/* What a path runs over changed under its result (the derivation pass saw it, and made the result
 * stale): a wanted path is measured again once its link has been quiet for RemeasureSettleSec=, and
 * no sooner than RemeasureIntervalSec= after the last time a change did so, so that a flapping link
 * cannot become a storm of probes. */
void reconcile_path_disturbed(Reconciler *r, Peer *p);
/* Whether discovery runs (its targets depend on the links, like the link-local expansion). */
bool reconcile_discovers(const Reconciler *r);

/* The per-sender limit for ProbePeer, AddPeer and RemovePeer. */
RateLimit *reconcile_rate_limit(Reconciler *r);
