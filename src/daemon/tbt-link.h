/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt-link.h — one Thunderbolt/USB4 link: its rate per direction, its class, whether it runs below what
 * both ends can do, and how often it changed (pure logic; the tree of links: tbt-topology.h) */
#pragma once

#include "counter.h"
#include "sysfs/thunderbolt.h"

/*
 * LinkClass: what a person calls the link, from the negotiated per-lane rate, the lane counts and both
 * ends' generations. Per-lane 40 is Thunderbolt 5 (USB4 v2): 2x2 symmetric (80/80), 3+1 asymmetric
 * (120/40; the direction with three lanes is named, rx and tx as the device's rx_/tx_ attributes
 * report them), or one lane. Per-lane 20 on two lanes is Thunderbolt 3 when either end is generation
 * 3 (or the USB4 port says "tbt"), Thunderbolt 4 (= USB4 40G) when both are USB4, and "Thunderbolt
 * 3/4" when the far end is a peer whose generation nothing tells. Lower USB4 rates are "USB4 20G"
 * (20x1, 10x2) and "USB4 10G" (10x1); generation 1 and 2 links are Thunderbolt 1 and 2. Anything else
 * with known rates is "Other"; unknown rates or lanes give "Unknown".
 */
typedef enum TbtLinkClass {
        TBT_LINK_CLASS_UNKNOWN,
        TBT_LINK_CLASS_TB5,
        TBT_LINK_CLASS_TB5_ASYMMETRIC_RX, /* rx 3 lanes (120), tx 1 lane (40) */
        TBT_LINK_CLASS_TB5_ASYMMETRIC_TX, /* tx 3 lanes (120), rx 1 lane (40) */
        TBT_LINK_CLASS_TB5_SINGLE_LANE,
        TBT_LINK_CLASS_TB4,
        TBT_LINK_CLASS_TB3,
        TBT_LINK_CLASS_TB3_OR_TB4,
        TBT_LINK_CLASS_TB3_SINGLE_LANE,
        TBT_LINK_CLASS_TB3_OR_TB4_SINGLE_LANE,
        TBT_LINK_CLASS_USB4_20G,
        TBT_LINK_CLASS_USB4_10G,
        TBT_LINK_CLASS_TB2,
        TBT_LINK_CLASS_TB1,
        TBT_LINK_CLASS_TB1_OR_TB2, /* a Thunderbolt 3 port at 10 per lane: the far end is generation 1 or 2 */
        TBT_LINK_CLASS_OTHER,
        _TBT_LINK_CLASS_MAX,
        _TBT_LINK_CLASS_INVALID = -EINVAL,
} TbtLinkClass;

/* The facts about one link that decide its rates and class. "near" is the parent router, "far" the
 * device or peer whose upstream link this is. */
typedef struct TbtLinkFacts {
        TbtLinkDirection rx, tx;                      /* the far end's rx_/tx_ attributes */
        unsigned near_generation, far_generation;     /* 0 unknown (always so for a peer) */
        unsigned near_usb4_version, far_usb4_version; /* 0 not USB4 or unknown; 2 also when any link
                                                       * of that router runs 40 Gb/s per lane */
        TbtPortLink port_link;                        /* the near end's usb4_portN/link, if any */
} TbtLinkFacts;

typedef struct TbtLinkInfo {
        unsigned rx_gbps, tx_gbps; /* lanes x per-lane rate; 0 unknown */
        TbtLinkClass link_class;
        bool degraded;
        char *degraded_reason; /* owned; NULL unless degraded */
} TbtLinkInfo;

/**
 * tbt_link_evaluate() - rates, class and degradation of one link
 * @facts: what is known about the link
 * @ret: filled in; ret->degraded_reason is owned by the caller
 *
 * Returns 0 or -ENOMEM.
 */
int tbt_link_evaluate(const TbtLinkFacts *facts, TbtLinkInfo *ret);

/* The generation a link class stands for (as above), 0 if none. */
unsigned tbt_link_class_generation(TbtLinkClass c) _const_;

const char *tbt_link_class_to_string(TbtLinkClass c) _const_;
TbtLinkClass tbt_link_class_from_string(const char *s) _pure_;

/* ---- a link over time (tbt-link.c) ---- */

/*
 * A Thunderbolt link changes when its rate or lanes move (the driver sends a change
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
