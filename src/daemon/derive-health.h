/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-health.h — the health part of the derivation pass: one judgement per link, RDMA port, PCI
 * function and Thunderbolt hop, and the transitions logged once */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bus-object.h"
#include "health.h"

typedef struct Gpus Gpus;
typedef struct Links Links;
typedef struct Pci Pci;
typedef struct Rdma Rdma;
typedef struct Thunderbolt Thunderbolt;

typedef struct DeriveHealth {
        Links *links;
        Rdma *rdma;
        Pci *pci; /* NULL: no PCIe part */
        Thunderbolt *thunderbolt;
        uint64_t interval_usec; /* the watch's; 0: off, every Health is unknown */
        const HealthLimits *limits; /* [Health]; NULL: health_limits_default */
        /* The watch sampled: every object is judged again (windows move with time, not only with
         * events). Otherwise only the objects the sources queued are. */
        bool sampled;
} DeriveHealth;

/*
 * One pass: Health and HealthReason of what was queued since the last (p->dirty[from..to)), of every
 * PCI function when the tree was rebuilt (pci_changed), of everything after a sample. Also the facts
 * the judgements need that combine kinds: a PCI function's load (its links' and ports' traffic, a
 * GPU's), an RDMA port's traffic through its interface's IP stack and the suspected fallback to
 * sockets. Each change of Health is logged once, with a MESSAGE_ID of the journal catalog.
 */
void derive_health(DeriveHealth *h, BusPublisher *p, size_t from, size_t to, bool pci_changed);

/* How many published objects are in each health (for the unit's STATUS= line). */
void derive_health_tally(const DeriveHealth *h, unsigned counts[static _HEALTH_MAX]);

/* The journal catalog's message IDs (linkprobe.catalog), one per health an object moves to. */
#define HEALTH_MESSAGE_OK "f31b32450f31483e972084c2aadb042c"
#define HEALTH_MESSAGE_DEGRADED "4800354174f94d10bb72d744c6941b11"
#define HEALTH_MESSAGE_ERRORS "1a7d07662f164c12b2df693edba8e260"
#define HEALTH_MESSAGE_FLAPPING "5816a6651808448ab364d8289ca7d957"
#define HEALTH_MESSAGE_UNKNOWN "d5b19b7e2366492dbfd6a03913f76bac"
