/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/if_addr.h>
#include <sys/random.h>

#include "config-peers.h"
#include "inhibit.h"
#include "peer-discover.h"
#include "peer-result.h"
#include "peer.h"
#include "persist.h"
#include "reconcile.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/tcp-ramp.h"
#include "shared/time-util.h"

/* ProbePeer/AddPeer/RemovePeer per sender: a burst for scripts, then one every 200 ms. */
#define METHOD_RATE 5
#define METHOD_BURST 20
#define METHOD_SENDERS_MAX 256

struct Reconciler {
        ReconcilerContext c;
        bool started;
        sd_event_source *timer;
        sd_event_source *defer;
        uint64_t last_timer_pass; /* CLOCK_MONOTONIC µs */
        PeerDiscovery *discovery;
        RateLimit rate;
        char *measure_lock;
};

static uint64_t random_below(uint64_t n) {
        uint64_t v;

        if (n == 0)
                return 0;
        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t) sizeof(v))
                v = ((uint64_t) random() << 31) ^ (uint64_t) random();
        return v % n;
}

RateLimit *reconcile_rate_limit(Reconciler *r) {
        return &r->rate;
}

bool reconcile_discovers(const Reconciler *r) {
        return r->discovery;
}

int reconcile_new(const ReconcilerContext *c, Reconciler **ret) {
        Reconciler *r = new0(Reconciler, 1);

        if (!r)
                return -ENOMEM;
        r->c = *c;
        ratelimit_init(&r->rate, METHOD_RATE, METHOD_BURST, METHOD_SENDERS_MAX);
        *ret = r;
        return 0;
}

Reconciler *reconcile_free(Reconciler *r) {
        if (!r)
                return NULL;
        sd_event_source_disable_unref(r->timer);
        sd_event_source_disable_unref(r->defer);
        r->discovery = peer_discovery_free(r->discovery);
        ratelimit_done(&r->rate);
        free(r->measure_lock);
        return mfree(r);
}

void reconcile_set_measure_lock(Reconciler *r, const char *path) {
        char *copy = path ? strdup(path) : NULL;

        if (path && !copy) {
                log_oom();
                return;
        }
        free_and_replace(r->measure_lock, copy);
}

/* ---- scheduling ---- */

/* A result disturbed by cross traffic is measured again after RemeasureIntervalSec=, this many times in
 * a row at most: a link that is always busy keeps its (flagged) figures until their TTL instead. */
#define CROSS_REMEASURE_MAX 2

/* New paths are first probed within this (or a tick, if shorter). */
#define FIRST_PROBE_SPREAD_USEC (1 * USEC_PER_SEC)

static uint64_t tick_usec(Reconciler *r) {
        return r->c.config->tick_usec;
}

/* When a path is due again after an attempt (peer_renew_at(): the arithmetic, unit-tested). */
static uint64_t next_probe_after(Reconciler *r, const Peer *p, uint64_t now) {
        return peer_renew_at(p, now, tick_usec(r), random_below);
}

static void set_next_probe(Peer *p, uint64_t at) {
        bus_object_set(&p->bus, p->next_probe_at, at, "NextProbeAt");
}

static void on_probe_done(ProbeRun *run, const ProbeResult *result, void *userdata);

/* The transport's probe slot is taken while one of its paths runs a probe. */
static bool transport_busy(Reconciler *r, PeerTransport transport) {
        Peer *p;

        TABLE_FOREACH(p, &r->c.peers->paths)
                if (p->transport == transport && p->run)
                        return true;
        return false;
}

static void start_probe(Reconciler *r, Peer *p) {
        const PeersConfig *c = r->c.config;
        char sink[PEER_ADDRESS_STRING_MAX], duration[32], samples[16], streams[16], deadline[32], port[16];
        const char *args[24], *program;
        size_t n = 0;
        uint64_t d, deadline_usec;
        int k;

        peer_address_format_with_port(&p->sink, sink);
        args[n++] = "--sink";
        args[n++] = sink;
        if (p->transport == PEER_TRANSPORT_RDMA) {
                d = p->request_duration_usec ?: c->rdma_duration_usec;
                /* Connect, set up the queue pair, two bulk phases and the latency test. */
                deadline_usec = 3 * d + 7 * USEC_PER_SEC;
                snprintf(port, sizeof(port), "%u", p->source_port);
                args[n++] = "--device";
                args[n++] = p->source_device;
                args[n++] = "--port";
                args[n++] = port;
        } else {
                d = p->request_duration_usec ?: c->tcp_duration_usec;
                unsigned n_streams = p->request_streams >= 0 ? (unsigned) p->request_streams : c->tcp_streams;
                /* Connect (1 s at most), the RTT samples, then the two bulk phases, each after a ramp
                 * of short steps when the streams are to be found. */
                deadline_usec = 2 * d + 3 * USEC_PER_SEC + (n_streams == 0 ? 2 * tcp_ramp_max_usec(d) : 0);
                /* With the node's lock, the probe may first wait for the responder to serve another
                 * node's measurement, which takes as long as ours. */
                if (r->measure_lock)
                        deadline_usec *= 2;
                snprintf(samples, sizeof(samples), "%u", p->request_samples ?: c->tcp_samples);
                snprintf(streams, sizeof(streams), "%u", n_streams);
                args[n++] = "--samples";
                args[n++] = samples;
                args[n++] = "--streams";
                args[n++] = streams;
        }
        snprintf(duration, sizeof(duration), "%" PRIu64 "ms", MAX(d / USEC_PER_MSEC, (uint64_t) 1));
        snprintf(deadline, sizeof(deadline), "%" PRIu64 "ms", deadline_usec / USEC_PER_MSEC);
        args[n++] = "--duration";
        args[n++] = duration;
        args[n++] = "--deadline";
        args[n++] = deadline;
        if (c->psk_file) {
                args[n++] = "--psk-file";
                args[n++] = c->psk_file;
        }
        if (p->transport == PEER_TRANSPORT_TCP && r->measure_lock) {
                args[n++] = "--lock-file";
                args[n++] = r->measure_lock;
        }
        args[n] = NULL;

        p->requested = false;
        p->request_duration_usec = 0;
        p->request_samples = 0;
        p->request_streams = -1;
        p->probe_started_at = now_usec(CLOCK_REALTIME);
        p->scheduler = r;
        if (p->remeasure_pending) {
                p->remeasure_pending = false;
                p->last_remeasure_at = p->probe_started_at;
        }
        program = p->transport == PEER_TRANSPORT_RDMA ? "linkprobe-probe-rdma" : "linkprobe-probe-tcp";
        k = probe_run_start(r->c.event, probe_directory(), program, (char *const *) args, deadline_usec,
                            on_probe_done, p, &p->run);
        if (k < 0) {
                _cleanup_(freep) char *message = NULL;
                ProbeResult failed = {
                        .outcome = PROBE_OUTCOME_ERROR,
                        .error_name = (char *) "spawn",
                };

                /* Said where the caller looks (LastErrorMessage), not only in the daemon's log. */
                if (asprintf(&message, "cannot run %s/%s: %s", probe_directory(), program, strerror(-k)) >= 0)
                        failed.error_message = message;
                p->run = NULL;
                peer_apply_result(p, &failed, p->probe_started_at);
                set_next_probe(p, p->wanted ? next_probe_after(r, p, now_usec(CLOCK_REALTIME)) : 0);
                return;
        }
        set_next_probe(p, 0);
        peer_set_state(p, PEER_PROBE_PROBING);
        log_peer_debug(p, "Probing.");
}

static void on_probe_done(ProbeRun *run, const ProbeResult *result, void *userdata) {
        Peer *p = userdata;
        Reconciler *r = p->scheduler;

        p->run = NULL; /* the runner frees it after we return */
        peer_apply_result(p, result, p->probe_started_at);
        set_next_probe(p, p->wanted ? next_probe_after(r, p, now_usec(CLOCK_REALTIME)) : 0);
        if (p->state == PEER_PROBE_OK && p->m.cross_traffic_gbps > 0 && p->wanted &&
            p->n_cross_remeasures < CROSS_REMEASURE_MAX) {
                /* Figures taken while other traffic shared the link may be low: again, later. */
                uint64_t at = now_usec(CLOCK_REALTIME) + r->c.config->remeasure_interval_usec;
                p->n_cross_remeasures++;
                if (at < p->next_probe_at) {
                        log_peer_info(p, "Measuring again in %" PRIu64 " s: %.2f Gbit/s of cross traffic.",
                                      r->c.config->remeasure_interval_usec / USEC_PER_SEC, p->m.cross_traffic_gbps);
                        set_next_probe(p, at);
                }
        } else if (p->state == PEER_PROBE_OK && p->m.cross_traffic_gbps == 0)
                p->n_cross_remeasures = 0;
        /* The path moved while the probe ran: the result stays stale, and it is measured again. */
        if (p->probe_disturbed)
                reconcile_path_disturbed(r, p);
        (void) persist_save(r->c.persist);
        reconcile_schedule(r);
}

/* A responder serves one test at a time: a path waits while a probe of the other transport runs to the
 * same responder (address and port), and starts when that one ends, rather than meet "busy" there and
 * count as failed. At most one probe per transport runs, so there are few responders to compare with. */
typedef struct BusySinks {
        char sink[_PEER_TRANSPORT_MAX][PEER_ADDRESS_STRING_MAX];
        size_t n;
} BusySinks;

static void busy_sinks(Reconciler *r, BusySinks *ret) {
        Peer *p;

        ret->n = 0;
        TABLE_FOREACH(p, &r->c.peers->paths)
                if (p->run && ret->n < ELEMENTSOF(ret->sink))
                        peer_address_format_with_port(&p->sink, ret->sink[ret->n++]);
}

static bool sink_busy(const BusySinks *busy, const Peer *p) {
        char sink[PEER_ADDRESS_STRING_MAX];

        if (busy->n == 0)
                return false;
        peer_address_format_with_port(&p->sink, sink);
        for (size_t i = 0; i < busy->n; i++)
                if (streq(busy->sink[i], sink))
                        return true;
        return false;
}

static Peer *pick_next(Reconciler *r, PeerTransport transport, uint64_t now) {
        Peer *p, *best = NULL;
        BusySinks busy;

        busy_sinks(r, &busy);
        TABLE_FOREACH(p, &r->c.peers->paths) {
                if (p->transport != transport || p->run || sink_busy(&busy, p))
                        continue;
                if (p->requested)
                        return p;
                if (!p->wanted || p->next_probe_at == 0 || p->next_probe_at > now)
                        continue;
                if (!best || p->next_probe_at < best->next_probe_at)
                        best = p;
        }
        return best;
}

static void arm_timer(Reconciler *r, uint64_t wake_realtime, uint64_t now_realtime) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        uint64_t accuracy = MIN(tick_usec(r) / 20, 500 * USEC_PER_MSEC);
        int k;

        if (wake_realtime == UINT64_MAX) {
                (void) sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
                return;
        }
        uint64_t at = now + (wake_realtime > now_realtime ? wake_realtime - now_realtime : 0);
        k = sd_event_source_set_time(r->timer, at);
        if (k >= 0)
                k = sd_event_source_set_time_accuracy(r->timer, MAX(accuracy, (uint64_t) 1));
        if (k >= 0)
                k = sd_event_source_set_enabled(r->timer, SD_EVENT_ONESHOT);
        if (k < 0)
                log_warning_errno(k, "Cannot arm the reconciler's timer: %m");
}

void reconcile_run(Reconciler *r) {
        Peers *peers = r->c.peers;
        uint64_t now, wake = UINT64_MAX, due = UINT64_MAX, due_first = UINT64_MAX;
        bool rdma_inhibited;
        Peer *p;

        if (!r->started)
                return;
        if (r->defer)
                (void) sd_event_source_set_enabled(r->defer, SD_EVENT_OFF);

        if (r->discovery) {
                uint64_t mono = now_usec(CLOCK_MONOTONIC);
                uint64_t at = peer_discovery_update(r->discovery, mono);
                if (at != UINT64_MAX)
                        wake = now_usec(CLOCK_REALTIME) + (at > mono ? at - mono : 0);
        }

        now = now_usec(CLOCK_REALTIME);
        rdma_inhibited = inhibitors_cover(r->c.inhibitors, "rdma");
        TABLE_FOREACH(p, &peers->paths) {
                uint64_t expires = peer_expires_at(p);

                /* A result that just aged past its TTL: the derivation pass says Stale. */
                if (expires > 0 && now >= expires && !p->derived.stale)
                        bus_object_queue(&p->bus);
                else if (expires > now)
                        wake = MIN(wake, expires);

                if (!p->wanted) {
                        if (!p->run && !p->requested)
                                set_next_probe(p, 0);
                        continue;
                }
                if (p->next_probe_at == 0 && !p->run) {
                        if (p->state == PEER_PROBE_PENDING || p->state == PEER_PROBE_QUEUED)
                                /* New: within a second (a neighbour is named only once a path to it
                                 * is measured), spread so that a rebooted cluster does not probe in
                                 * lockstep. */
                                set_next_probe(p, now + random_below(MIN(tick_usec(r), FIRST_PROBE_SPREAD_USEC)));
                        else
                                set_next_probe(p, next_probe_after(r, p, now));
                }
        }

        for (int t = 0; t < _PEER_TRANSPORT_MAX; t++) {
                if (t == PEER_TRANSPORT_RDMA && rdma_inhibited)
                        continue;
                if (!transport_busy(r, (PeerTransport) t)) {
                        p = pick_next(r, (PeerTransport) t, now);
                        if (p)
                                start_probe(r, p);
                }
                if (transport_busy(r, (PeerTransport) t))
                        continue; /* its completion runs the next pass */
                BusySinks busy;
                busy_sinks(r, &busy);
                TABLE_FOREACH(p, &peers->paths) {
                        /* One that waits for its responder starts when the probe holding it ends. */
                        if ((int) p->transport != t || !p->wanted || p->next_probe_at == 0 || p->run ||
                            sink_busy(&busy, p))
                                continue;
                        if (IN_SET(p->state, PEER_PROBE_PENDING, PEER_PROBE_QUEUED))
                                due_first = MIN(due_first, p->next_probe_at);
                        else
                                due = MIN(due, p->next_probe_at);
                }
        }
        /* Scheduled work is looked at no more often than once a tick; Stale flips on time. */
        if (due != UINT64_MAX) {
                uint64_t earliest = r->last_timer_pass + tick_usec(r);
                uint64_t mono = now_usec(CLOCK_MONOTONIC);
                if (r->last_timer_pass > 0 && earliest > mono)
                        due = MAX(due, now + (earliest - mono));
                wake = MIN(wake, due);
        }
        /* A path never measured is not held to the tick: it has no figures at all yet. */
        wake = MIN(wake, due_first);
        arm_timer(r, wake, now);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Reconciler *r = userdata;

        r->last_timer_pass = now_usec(CLOCK_MONOTONIC);
        reconcile_run(r);
        return 0;
}

static int on_defer(sd_event_source *s, void *userdata) {
        reconcile_run(userdata);
        return 0;
}

void reconcile_schedule(Reconciler *r) {
        int k;

        if (!r || !r->started)
                return;
        if (!r->defer) {
                k = sd_event_add_defer(r->c.event, &r->defer, on_defer, r);
                if (k < 0) {
                        log_warning_errno(k, "Cannot schedule the reconciler: %m");
                        return;
                }
                (void) sd_event_source_set_description(r->defer, "peer-reconciler-now");
        }
        (void) sd_event_source_set_enabled(r->defer, SD_EVENT_ONESHOT);
}

void reconcile_inhibited(Reconciler *r, unsigned what) {
        uint64_t now = now_usec(CLOCK_REALTIME);
        Peer *p;

        if (!r || !(what & INHIBIT_RDMA))
                return;
        /* "Inhibit" means now: a running RDMA probe is killed and nothing of it is published or saved;
         * the path is due again once the last inhibitor goes. */
        bool stopped = false;
        TABLE_FOREACH(p, &r->c.peers->paths) {
                if (p->transport != PEER_TRANSPORT_RDMA || !p->run)
                        continue;
                log_peer_info(p, "Stopping the probe: RDMA probes are inhibited.");
                p->run = probe_run_free(p->run);
                peer_set_state(p, PEER_PROBE_SKIPPED_INHIBITED);
                /* A path somebody wants is due at once; one ProbePeer() asked for keeps its turn. */
                if (p->wanted)
                        set_next_probe(p, now);
                else
                        p->requested = true;
                stopped = true;
        }
        /* A TCP path waiting for the responder the killed probe held is not on the timer: it starts when
         * that probe ends, and it ended here, not in on_probe_done(). */
        if (stopped)
                reconcile_schedule(r);
}

void reconcile_path_disturbed(Reconciler *r, Peer *p) {
        const PeersConfig *c;
        uint64_t at;

        /* Paths nobody keeps measured (ProbePeer() once) just say they are stale. */
        if (!r || !r->started || !p->wanted)
                return;
        c = r->c.config;
        at = now_usec(CLOCK_REALTIME) + c->remeasure_settle_usec;
        if (p->last_remeasure_at > 0)
                at = MAX(at, p->last_remeasure_at + c->remeasure_interval_usec);
        /* Each change starts the quiet time over: the probe runs once the link has settled. */
        p->remeasure_pending = true;
        set_next_probe(p, at);
        reconcile_schedule(r);
}

void reconcile_request(Reconciler *r, Peer *p, uint64_t duration_usec, unsigned samples, int streams) {
        if (p->run)
                return; /* already measuring: the result is on its way */
        p->requested = true;
        p->request_duration_usec = duration_usec;
        p->request_samples = samples;
        p->request_streams = streams;
        peer_set_state(p, PEER_PROBE_QUEUED);
        reconcile_run(r);
}

static void on_discovery_changed(void *userdata) {
        reconcile_schedule(userdata);
}

int reconcile_start(Reconciler *r) {
        const PeersConfig *c = r->c.config;
        int k;

        STRV_FOREACH(a, c->addresses) {
                PeerAddress parsed;
                if (peer_address_parse(*a, 0, &parsed, NULL) < 0)
                        continue; /* config.c checked them */
                k = peer_target_add(r->c.peers, &parsed, PEER_ORIGIN_CONFIG, NULL);
                if (k < 0)
                        log_warning_errno(k, "Cannot watch peer %s: %m", *a);
        }
        (void) persist_load(r->c.persist);

        if (strv_length(c->discover_kinds) > 0) {
                k = peer_discovery_new(r->c.event, r->c.links, r->c.peers, c, on_discovery_changed, r,
                                       &r->discovery);
                if (k < 0)
                        log_warning_errno(k, "Cannot discover peers, continuing without: %m");
        }

        k = sd_event_add_time(r->c.event, &r->timer, CLOCK_MONOTONIC, UINT64_MAX, 0, on_timer, r);
        if (k < 0)
                return log_error_errno(k, "Cannot create the reconciler's timer: %m");
        (void) sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(r->timer, "peer-reconciler");

        r->started = true;
        reconcile_run(r);
        log_debug("Reconciler: %zu peer addresses, %zu paths.", table_size(&r->c.peers->targets),
                  table_size(&r->c.peers->paths));
        return 0;
}
