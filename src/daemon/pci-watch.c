/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PCI functions over time (the PCI functions' part of the watch, watch.h): the sampler reads each
 * published function's trained link, its AER counters and, for a GPU, how busy it is; the recorder
 * beside it records the readings: a link that retrained (the PCIe bandwidth controller sends no uevent),
 * the AER totals as published, their recent increases and the kinds that rose, for the health judge.
 */
#include "pci-watch.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

void pci_object_record_link(PciObject *o, const PciLink *current, uint64_t now, uint64_t realtime) {
        PciLink *old = &o->device->current;

        pci_object_count_link_change_at(o, old, current, now, realtime);
        if (old->gts == current->gts && old->width == current->width)
                return;
        if (old->gts != current->gts) {
                bus_object_changed(&o->bus, "CurrentLinkSpeed");
                bus_object_changed(&o->bus, "CurrentLinkGeneration");
        }
        if (old->width != current->width)
                bus_object_changed(&o->bus, "CurrentLinkWidth");
        *old = *current;
        /* The tree's facts (Degraded, path rates) follow the link: the pass rebuilds it. */
        o->owner->changed = true;
        bus_publisher_schedule(o->owner->publisher);
}

/* "Receiver Error, Bad TLP": the kinds that rose since the last reading, most first. */
static void note_kinds(PciObject *o, const PciAerCounters *now) {
        const PciAerCounters *was = &o->watch.correctable;
        uint64_t rise[PCI_AER_KINDS_MAX] = {};
        size_t len = 0;

        for (size_t i = 0; i < now->n_kinds; i++)
                for (size_t k = 0; k < was->n_kinds; k++)
                        if (streq(now->kinds[i].name, was->kinds[k].name) && now->kinds[i].count > was->kinds[k].count)
                                rise[i] = now->kinds[i].count - was->kinds[k].count;
        o->watch.correctable_kinds[0] = '\0';
        for (;;) {
                size_t best = SIZE_MAX;
                for (size_t i = 0; i < now->n_kinds; i++)
                        if (rise[i] > 0 && (best == SIZE_MAX || rise[i] > rise[best]))
                                best = i;
                if (best == SIZE_MAX)
                        break;
                int n = snprintf(o->watch.correctable_kinds + len, sizeof(o->watch.correctable_kinds) - len, "%s%s",
                                 len > 0 ? ", " : "", now->kinds[best].name);
                if (n < 0 || (size_t) n >= sizeof(o->watch.correctable_kinds) - len) {
                        o->watch.correctable_kinds[len] = '\0';
                        break;
                }
                len += (size_t) n;
                rise[best] = 0;
        }
}

void pci_object_record_aer(PciObject *o, PciAerSeverity s, const PciAerCounters *c, uint64_t now, uint64_t interval) {
        static const char *const property[_PCI_AER_SEVERITY_MAX] = {
                [PCI_AER_CORRECTABLE] = "AerCorrectable",
                [PCI_AER_NONFATAL] = "AerNonFatal",
                [PCI_AER_FATAL] = "AerFatal",
        };
        uint64_t total = c ? c->total : COUNTER_UNKNOWN, increase;

        bus_object_set(&o->bus, o->watch.aer[s], total, property[s]);
        if (counter_advance(&o->watch.aer_last[s], total, counter_max_events(interval), &increase) && increase > 0) {
                window_add(&o->watch.aer_window[s], now, increase);
                if (s == PCI_AER_CORRECTABLE && c)
                        note_kinds(o, c);
        }
        if (s == PCI_AER_CORRECTABLE)
                o->watch.correctable = c ? *c : (PciAerCounters) { .total = COUNTER_UNKNOWN };
}

void pci_object_record_gpu_busy(PciObject *o, int percent) {
        o->watch.gpu_busy_percent = percent;
}

static void sample_one(Pci *pci, PciObject *o, uint64_t now, uint64_t realtime, uint64_t interval) {
        const char *dir = o->device->syspath;
        PciAerCounters aer;
        PciLink current;
        int r, busy;

        r = pci_read_current_link(pci->sysfs_fd, dir, &current);
        if (r >= 0)
                pci_object_record_link(o, &current, now, realtime);
        else if (r != -ENOENT)
                log_pci_debug(o, "Cannot read the current link: %s", strerror(-r));

        for (PciAerSeverity s = 0; s < _PCI_AER_SEVERITY_MAX; s++) {
                r = pci_aer_read(pci->sysfs_fd, dir, s, &aer);
                if (r < 0 && r != -ENOENT)
                        log_pci_debug(o, "Cannot read %s: %s", pci_aer_severity_to_attribute(s), strerror(-r));
                pci_object_record_aer(o, s, r >= 0 ? &aer : NULL, now, interval);
        }

        /* Only GPUs say how busy they are; everything else is judged by its traffic. */
        if (pci_object_is_gpu(o)) {
                r = pci_read_gpu_busy(pci->sysfs_fd, dir, &busy);
                pci_object_record_gpu_busy(o, r >= 0 ? busy : -1);
        }
        o->watch.sampled = true;
        bus_object_queue(&o->bus);
}

static int sample(void *source, uint64_t now, uint64_t interval, size_t *ret_n) {
        Pci *pci = source;
        uint64_t realtime = now_usec(CLOCK_REALTIME);
        size_t n = 0;
        PciObject *o;

        TABLE_FOREACH(o, &pci->functions)
                if (o->published) {
                        sample_one(pci, o, now, realtime, interval);
                        n++;
                }
        *ret_n = n;
        return 0;
}

WatchSampler pci_watch_sampler(Pci *pci) {
        return (WatchSampler) { .objects = "PCI functions", .sample = sample, .source = pci };
}
