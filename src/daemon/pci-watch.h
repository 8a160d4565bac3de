/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci-watch.h — the PCI functions' part of the watch (watch.h): trained links, AER, a GPU's load */
#pragma once

#include "pci.h"
#include "watch.h"

/* The recorder: the watch's readings of one function. now: CLOCK_MONOTONIC, realtime: CLOCK_REALTIME,
 * interval: since the last sample, in usec. */
void pci_object_record_link(PciObject *o, const PciLink *current, uint64_t now, uint64_t realtime);
void pci_object_record_aer(PciObject *o, PciAerSeverity s, const PciAerCounters *c, uint64_t now, uint64_t interval);
void pci_object_record_gpu_busy(PciObject *o, int percent);

/* The sampler: every published function's readings, each recorded on its function. */
WatchSampler pci_watch_sampler(Pci *pci);
