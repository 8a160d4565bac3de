/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The health part of the derivation pass. The sources record what the kernel's counters say on each
 * object (link.c, rdma-watch.c, pci-watch.c, tbt.c); here the facts that combine
 * kinds are put together, each object is judged once (health-judge.c), Health and HealthReason are
 * published, and every change of Health is logged once with its catalog MESSAGE_ID.
 */
#include <math.h>

#include "derive-health.h"
#include "link.h"
#include "log-object.h"
#include "pci.h"
#include "rdma.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "tbt.h"

#define NOT_WATCHED "not watched ([Watch] IntervalSec=0)"

static const char *message_id(Health h) {
        switch (h) {
        case HEALTH_OK:
                return HEALTH_MESSAGE_OK;
        case HEALTH_DEGRADED:
                return HEALTH_MESSAGE_DEGRADED;
        case HEALTH_ERRORS:
                return HEALTH_MESSAGE_ERRORS;
        case HEALTH_FLAPPING:
                return HEALTH_MESSAGE_FLAPPING;
        case HEALTH_UNKNOWN:
        case _HEALTH_MAX:
        case _HEALTH_INVALID:
                break;
        }
        return HEALTH_MESSAGE_UNKNOWN;
}

/* Who an object is, for the journal: its field (as every log line about it has) and its path. */
typedef struct Subject {
        const char *kind; /* "link", "PCI function", ... */
        const char *field;
        const char *name;
        BusObject *bus;
        HealthState *state;
        /* Whether Degraded and DegradedReason are published from the state: not for an RDMA port, whose
         * Degraded is its structural fact as rdma-remote.c records it (the judge's only degraded
         * reason, so the two are the same). */
        bool degraded;
        /* What DegradedReason says when the object is not degraded (a link's "unknown: ..."); NULL: "". */
        const char *not_degraded;
} Subject;

/* A new object's first verdict of ok, and anything while the watch is off, is not news: everything
 * else is said once, as it happens. */
static void log_transition(const Subject *s, Health from, Health to, const char *reason) {
        _cleanup_(freep) char *id = NULL, *health = NULL, *previous = NULL, *why = NULL, *kind = NULL, *path = NULL,
                              *name = NULL;
        int level = to == HEALTH_OK ? LOG_NOTICE : to == HEALTH_UNKNOWN ? LOG_INFO : LOG_WARNING;

        if (from == HEALTH_UNKNOWN && to == HEALTH_OK)
                return;
        if (asprintf(&id, "MESSAGE_ID=%s", message_id(to)) < 0 ||
            asprintf(&health, "LINKPROBE_HEALTH=%s", health_to_string(to)) < 0 ||
            asprintf(&previous, "LINKPROBE_HEALTH_PREVIOUS=%s", health_to_string(from)) < 0 ||
            asprintf(&why, "LINKPROBE_HEALTH_REASON=%s", strempty(reason)) < 0 ||
            asprintf(&kind, "LINKPROBE_OBJECT_KIND=%s", s->kind) < 0 ||
            asprintf(&path, "LINKPROBE_OBJECT=%s", s->bus->path) < 0 ||
            asprintf(&name, "LINKPROBE_OBJECT_NAME=%s", strempty(s->name)) < 0) {
                log_oom();
                return;
        }
        char *fields[] = { id, health, previous, why, kind, path, name, NULL };
        if (to == HEALTH_OK)
                (void) log_object_structured(level, s->field, s->name, fields, "health ok again (was %s)",
                                             health_to_string(from));
        else
                (void) log_object_structured(level, s->field, s->name, fields, "health %s: %s", health_to_string(to),
                                             isempty(reason) ? "no reason given" : reason);
}

static const HealthLimits *limits_of(const DeriveHealth *h) {
        return h->limits ?: &health_limits_default;
}

/* Publishes one verdict as Health, HealthReason and, where the kind has them, Degraded and
 * DegradedReason: both from the same verdict, so they cannot disagree. */
static void publish(const DeriveHealth *h, const Subject *s, HealthVerdict *v, uint64_t at) {
        _cleanup_(freep) char *reason = NULL, *degraded_reason = NULL;
        HealthState *state = s->state;
        Health was = state->health, now;
        bool watched = h->interval_usec > 0;

        if (watched)
                health_escalate(&state->events, limits_of(h), at, v);
        else {
                health_verdict_keep_degraded(v);
                health_verdict_add(v, HEALTH_UNKNOWN, NOT_WATCHED);
        }
        now = health_verdict_health(v);
        /* Most objects have nothing to say, every sample: no string is made for them. */
        bool any = v->n > 0, oom = v->oom, degraded = health_verdict_degraded(v);
        reason = any ? health_verdict_reason(v) : NULL;
        degraded_reason = degraded && s->degraded ? health_verdict_degraded_reason(v) : NULL;
        health_verdict_done(v);
        if (oom || (any && !reason) || (degraded && s->degraded && !degraded_reason)) {
                log_oom();
                return;
        }
        bus_object_set(s->bus, state->health, now, "Health");
        if (bus_object_set_string(s->bus, &state->health_reason, reason ?: "", "HealthReason") < 0)
                log_oom();
        if (s->degraded) {
                bus_object_set(s->bus, state->degraded, degraded, "Degraded");
                if (bus_object_set_string(s->bus, &state->degraded_reason, degraded ? degraded_reason : s->not_degraded,
                                          "DegradedReason") < 0)
                        log_oom();
        }
        if (was != now && watched)
                log_transition(s, was, now, reason);
}

/* ---- network links ---- */

static void judge_link(DeriveHealth *h, Link *l, uint64_t now) {
        const HealthLimits *limits = limits_of(h);
        LinkHealthFacts f = {
                .limits = limits,
                .trained_low = l->derived.capability.trained_low,
                .trained_low_reason = l->derived.capability.trained_low_reason,
                .sampled = l->watch.sampled,
                .crc_errors = l->watch.now.rx_crc_errors == COUNTER_UNKNOWN
                                      ? COUNTER_UNKNOWN
                                      : window_sum(&l->watch.crc_errors, now, limits->errors_window_usec),
                .carrier_changes = window_sum(&l->watch.carrier_changes, now, limits->flap_window_usec),
        };
        HealthVerdict v = {};

        health_judge_link(&f, &v);
        publish(h, &(Subject) { "link", "INTERFACE", l->name_utf8, &l->bus, &l->derived.health_state, true,
                             l->derived.capability.note },
                &v, now);
}

/* ---- RDMA ports ---- */

/* What went over the IP stack of the port's own interface, gathered for the fallback rule
 * (health_rdma_fallback(), which judges it). */
static RdmaTraffic rdma_traffic(DeriveHealth *h, RdmaPort *p) {
        Link *l = p->derived.net_ifindex > 0 ? link_get(h->links, p->derived.net_ifindex) : NULL;
        RdmaTraffic t = {
                .port_rx_gbps = p->watch.rx_gbps,
                .port_tx_gbps = p->watch.tx_gbps,
                .ip_rx_gbps = l ? l->watch.rx_gbps : NAN,
                .ip_tx_gbps = l ? l->watch.tx_gbps : NAN,
                .infiniband = p->status.link_layer == RDMA_LINK_LAYER_INFINIBAND,
        };

        p->derived.ip_rx_gbps = t.ip_rx_gbps;
        p->derived.ip_tx_gbps = t.ip_tx_gbps;
        return t;
}

static void judge_rdma(DeriveHealth *h, RdmaPort *p, uint64_t now) {
        const HealthLimits *limits = limits_of(h);
        uint64_t *v = p->watch.value;
        RdmaHealthFacts f = {
                .limits = limits,
                .rate_gbps = (double) p->status.rate.mgbps / 1000.0,
                .sampled = p->watch.sampled,
                .any_counter = p->watch.any,
                .symbol_errors = v[INFINIBAND_SYMBOL_ERROR] == COUNTER_UNKNOWN
                                         ? COUNTER_UNKNOWN
                                         : window_sum(&p->watch.symbol_errors, now, limits->errors_window_usec),
                .rcv_errors = v[INFINIBAND_PORT_RCV_ERRORS] == COUNTER_UNKNOWN
                                      ? COUNTER_UNKNOWN
                                      : window_sum(&p->watch.rcv_errors, now, limits->errors_window_usec),
                .link_downed = window_sum(&p->watch.link_downed, now, limits->flap_window_usec),
                .link_recoveries = window_sum(&p->watch.link_recoveries, now, limits->flap_window_usec),
                /* Structural, from the neighbour's PortInfo (rdma-remote.c): published as it is, like a
                 * Thunderbolt link's, and the judge makes it the degraded verdict. */
                .degraded = p->remote.degraded,
                .degraded_reason = p->remote.degraded_reason,
                .device = p->device,
                .port = p->number,
        };
        HealthVerdict v_ = {};

        RdmaTraffic traffic = rdma_traffic(h, p);
        /* Sustained means sample after sample: only samples move it. */
        if (h->sampled)
                health_rdma_fallback(&p->derived.fallback, &traffic, limits, now, h->interval_usec);
        f.fallback = p->derived.fallback.suspected;
        f.ip_gbps = health_rdma_ip_gbps(&traffic);
        health_judge_rdma(&f, &v_);
        publish(h, &(Subject) { "RDMA port", "RDMA_PORT", p->key, &p->bus, &p->derived.health_state, false }, &v_, now);
}

/* ---- PCI functions ---- */

static void load_add_traffic(HealthLoad *l, double gbps) {
        if (!isnan(gbps))
                l->traffic_gbps = isnan(l->traffic_gbps) ? gbps : l->traffic_gbps + gbps;
}

/* Every published function's load: what its network links and RDMA ports move (an InfiniBand port's
 * counters include its IPoIB interface's traffic, so that interface is not added again), how busy it
 * is if it is a GPU; a bridge carries everything below it. */
static void pci_loads(DeriveHealth *h) {
        PciObject *o;
        Link *l;
        RdmaPort *p;

        TABLE_FOREACH(o, &h->pci->functions) {
                bool gpu = pci_object_is_gpu(o);
                o->derived.load = (HealthLoad) {
                        .traffic_gbps = NAN,
                        .gpu_busy_percent = gpu ? o->watch.gpu_busy_percent : -1,
                        .gpu = gpu && o->watch.gpu_busy_percent < 0,
                };
        }
        TABLE_FOREACH(l, &h->links->table) {
                if (!l->derived.pci_device_path || !l->watch.sampled)
                        continue;
                if (l->derived.rdma_port_path && !l->derived.rdma_roce)
                        continue; /* IPoIB: counted by its port */
                o = pci_object_for_syspath(h->pci, l->device_path);
                if (o)
                        load_add_traffic(&o->derived.load, health_busier(l->watch.rx_gbps, l->watch.tx_gbps));
        }
        TABLE_FOREACH(p, &h->rdma->ports) {
                if (!p->derived.pci_device_path || !p->watch.sampled)
                        continue;
                o = pci_object_for_syspath(h->pci, p->device_path);
                if (o)
                        load_add_traffic(&o->derived.load, health_busier(p->watch.rx_gbps, p->watch.tx_gbps));
        }
        /* Up the tree: a port's link carries what is below it. Depth is bounded by the tree's cut-off. */
        TABLE_FOREACH(o, &h->pci->functions) {
                const HealthLoad *own = &o->derived.load;
                PciObject *up = o;

                if (!o->published || (isnan(own->traffic_gbps) && own->gpu_busy_percent < 0 && !own->gpu))
                        continue;
                for (unsigned depth = 0; depth < PCI_DEPTH_MAX; depth++) {
                        up = pci_object_get(h->pci, up->device->parent);
                        if (!up)
                                break;
                        load_add_traffic(&up->derived.load, own->traffic_gbps);
                        up->derived.load.gpu_busy_percent = MAX(up->derived.load.gpu_busy_percent, own->gpu_busy_percent);
                        up->derived.load.gpu |= own->gpu;
                }
        }
}

static void judge_pci(DeriveHealth *h, PciObject *o, uint64_t now) {
        const HealthLimits *limits = limits_of(h);
        uint64_t *aer = o->watch.aer;
        PciObject *below = o->derived.trained_low_below ? pci_object_get(h->pci, o->derived.trained_low_below) : NULL;
        PciHealthFacts f = {
                .limits = limits,
                .sampled = o->watch.sampled,
                .watched = h->interval_usec > 0,
                .has_link = o->derived.has_link,
                .tunnel = o->derived.tunnel,
                .trained_low = o->derived.trained_low,
                .link = o->derived.link,
                .capable = o->derived.capable,
                .link_gbps = o->derived.link_gbps,
                .load = o->derived.load,
                .speed_changes = window_sum(&o->watch.speed_changes, now, limits->flap_window_usec),
                .width_changes = window_sum(&o->watch.width_changes, now, limits->flap_window_usec),
                .correctable_kinds = o->watch.correctable_kinds,
        };
        uint64_t *window[] = { &f.correctable, &f.nonfatal, &f.fatal };
        HealthVerdict v = {};

        for (PciAerSeverity s = 0; s < _PCI_AER_SEVERITY_MAX; s++)
                *window[s] = aer[s] == COUNTER_UNKNOWN ? COUNTER_UNKNOWN
                                                       : window_sum(&o->watch.aer_window[s], now, limits->errors_window_usec);
        if (below) {
                f.below_address = below->address;
                f.below = (PciLinkFacts) { below->derived.link, below->derived.capable, below->derived.link_gbps,
                                           below->derived.load };
        }
        health_judge_pci(&f, &v);
        publish(h, &(Subject) { "PCI function", "PCI_DEVICE", o->address, &o->bus, &o->derived.health_state, true }, &v,
                now);
}

/* ---- Thunderbolt ---- */

static void judge_thunderbolt(DeriveHealth *h, TbtObject *t, uint64_t now) {
        const HealthLimits *limits = limits_of(h);
        TbtHealthFacts f = {
                .limits = limits,
                .has_link = t->has_link,
                .degraded = t->degraded,
                .degraded_reason = t->degraded_reason,
                .changes = window_sum(&t->link_changes.window, now, limits->flap_window_usec),
        };
        HealthVerdict v = {};

        health_judge_thunderbolt(&f, &v);
        publish(h, &(Subject) { "Thunderbolt device", "THUNDERBOLT_DEVICE", t->sysname_utf8, &t->bus,
                             &t->derived.health_state, true },
                &v, now);
}

/* ---- the pass ---- */

void derive_health(DeriveHealth *h, BusPublisher *p, size_t from, size_t to, bool pci_changed) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool all = h->sampled;
        Link *l;
        RdmaPort *port;
        PciObject *o;
        TbtObject *t;

        if (h->pci && (all || pci_changed))
                pci_loads(h);
        if (all) {
                TABLE_FOREACH(l, &h->links->table)
                        judge_link(h, l, now);
                TABLE_FOREACH(port, &h->rdma->ports)
                        judge_rdma(h, port, now);
                TABLE_FOREACH(t, &h->thunderbolt->objects)
                        if (t->published)
                                judge_thunderbolt(h, t, now);
        } else
                for (size_t i = from; i < to; i++) {
                        BusObject *b = p->dirty[i];
                        if (!b)
                                continue;
                        if (b->type == &link_bus_type)
                                judge_link(h, container_of(b, Link, bus), now);
                        else if (b->type == &rdma_port_bus_type)
                                judge_rdma(h, container_of(b, RdmaPort, bus), now);
                        else if (b->type == &tbt_bus_type)
                                judge_thunderbolt(h, container_of(b, TbtObject, bus), now);
                        else if (b->type == &pci_bus_type && !pci_changed && h->pci)
                                judge_pci(h, container_of(b, PciObject, bus), now);
                }
        if (h->pci && (all || pci_changed))
                TABLE_FOREACH(o, &h->pci->functions)
                        if (o->published)
                                judge_pci(h, o, now);
        h->sampled = false;
}

void derive_health_tally(const DeriveHealth *h, unsigned counts[static _HEALTH_MAX]) {
        Link *l;
        RdmaPort *p;
        PciObject *o;
        TbtObject *t;

        memset(counts, 0, sizeof(unsigned) * _HEALTH_MAX);
        TABLE_FOREACH(l, &h->links->table)
                counts[l->derived.health_state.health]++;
        TABLE_FOREACH(p, &h->rdma->ports)
                counts[p->derived.health_state.health]++;
        if (h->pci)
                TABLE_FOREACH(o, &h->pci->functions)
                        if (o->published)
                                counts[o->derived.health_state.health]++;
        TABLE_FOREACH(t, &h->thunderbolt->objects)
                if (t->published)
                        counts[t->derived.health_state.health]++;
}
