/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* watch.h — the one timer that samples what the kernel does not announce (link statistics, PCIe links
 * retraining, AER and RDMA port counters), and the one shape every kind's part of it has */
#pragma once

#include <systemd/sd-event.h>

#include "bus-object.h"
#include "shared/macros.h"

typedef struct Watch Watch;

/* The watch's timer and its slices run below bus calls, netlink events and the flush: a sample at
 * 2001 links is milliseconds of work, and what a client asks or the kernel announces comes first. */
#define WATCH_PRIORITY BUS_PUBLISHER_SLICE_PRIORITY

/* How a sliced sample ends: n objects read, r < 0 when the kind's source could not be read. */
typedef void (*WatchSampleDone)(void *userdata, size_t n, int r);

/*
 * One kind's part of the watch, in <kind>-watch.c: the sampler reads what the kernel counts of every
 * object of the kind, and the recorder beside it records each reading on its object (counters as
 * published, rates over the interval, windows of recent events for the health judge) and queues the
 * object. The timer knows nothing else of the kinds.
 */
typedef struct WatchSampler {
        const char *objects; /* what one object is called in the debug line: "links" */
        /* Reads and records every object at now (CLOCK_MONOTONIC usec), interval_usec after the last
         * sample; how many objects were read in *ret_n. A negative errno when the kind's source could not
         * be read at all: said once (failed), until it can again (recovered). */
        int (*sample)(void *source, uint64_t now, uint64_t interval_usec, size_t *ret_n);
        /* Optional: the same read, spread over the loop's iterations in pieces of a millisecond or less
         * at WATCH_PRIORITY, each reading recorded at the time it was taken; done() once it is over,
         * never from within start(). -EOPNOTSUPP: not this time, sample() reads at once. cancel() stops
         * one under way (done() is then not called). */
        int (*start)(void *source, uint64_t interval_usec, WatchSampleDone done, void *userdata);
        void (*cancel)(void *source);
        void *source;
        const char *failed;    /* "Cannot read link statistics, ..."; NULL: never fails as a whole */
        const char *recovered; /* "Link statistics can be read again." */
} WatchSampler;

#define WATCH_SAMPLERS_MAX 4

typedef struct WatchContext {
        sd_event *event;
        uint64_t interval_usec; /* [Watch] IntervalSec=; 0: no watch at all, no timer */
        WatchSampler samplers[WATCH_SAMPLERS_MAX]; /* in the order they sample */
        size_t n_samplers;
        BusPublisher *publisher;
        /* Set after every sample: the derivation pass then judges every object (derive-health.c). */
        bool *sampled;
} WatchContext;

/* Creates the watch; with an interval of 0 returns NULL in *ret and arms nothing. */
int watch_new(const WatchContext *c, Watch **ret);
Watch *watch_free(Watch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(Watch *, watch_free);

/* Samples now, at once, and arms the timer for the next interval (start-up: a first sample before
 * READY=1, so every object has its counters, and its health, from the start). The timer's samples are
 * sliced where the sampler can (start()). */
void watch_start(Watch *w);
