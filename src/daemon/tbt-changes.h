/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt-changes.h — a Thunderbolt link's changes over time, and the routers that left, by UniqueId */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "counter.h"

/*
 * Pure logic. A Thunderbolt link changes when its rate or lanes move (the driver sends a change
 * uevent then) or when a router or peer of the same UniqueId comes back after it was unplugged (a
 * cable that does not hold). Routers that left are remembered, the most recent TBT_DEPARTED_MAX of
 * them, so that a replugged dock keeps counting where it was.
 */

typedef struct TbtLinkChanges {
        uint32_t count;  /* LinkChanges */
        Window window;   /* for the judgement of flapping */
} TbtLinkChanges;

typedef struct TbtDeparted {
        char *unique_id;
        TbtLinkChanges changes;
} TbtDeparted;

#define TBT_DEPARTED_MAX 32

typedef struct TbtDepartures {
        TbtDeparted list[TBT_DEPARTED_MAX]; /* most recent first */
        size_t n;
} TbtDepartures;

/* One change at now (CLOCK_MONOTONIC usec). */
void tbt_link_changes_add(TbtLinkChanges *c, uint64_t now);
/* Whether a link that went from (rx, tx) to (new_rx, new_tx) Gb/s changed: both known, and different. */
bool tbt_rate_changed(unsigned rx, unsigned tx, unsigned new_rx, unsigned new_tx) _const_;

/* Remembers a router that left (an older entry of the same UniqueId is replaced); -ENOMEM. */
int tbt_departures_remember(TbtDepartures *d, const char *unique_id, const TbtLinkChanges *c);
/* Whether unique_id left before; if so its changes are handed back and forgotten here. */
bool tbt_departures_take(TbtDepartures *d, const char *unique_id, TbtLinkChanges *ret);
void tbt_departures_done(TbtDepartures *d);
