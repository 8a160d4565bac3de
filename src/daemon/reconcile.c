/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/if_addr.h>
#include <sys/random.h>

#include "link.h"
#include "inhibit.h"
#include "manager.h"
#include "peer-discover.h"
#include "peer.h"
#include "persist.h"
#include "reconcile.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "sysfs/infiniband.h"

/* ProbePeer/AddPeer/RemovePeer per sender: a burst for scripts, then one every 200 ms. */
#define METHOD_RATE 5
#define METHOD_BURST 20
#define METHOD_SENDERS_MAX 256
#define RDMA_LOCAL_PORTS_MAX 32

struct Reconciler {
        Manager *manager;
        bool started;
        sd_event_source *timer;
        sd_event_source *defer;
        Peer *probing[_PEER_TRANSPORT_MAX];
        uint64_t probe_started[_PEER_TRANSPORT_MAX]; /* CLOCK_REALTIME µs */
        uint64_t last_timer_pass;                    /* CLOCK_MONOTONIC µs */
        uint32_t links_signature;
        RdmaLocalPort rdma_ports[RDMA_LOCAL_PORTS_MAX];
        size_t n_rdma_ports;
        PeerDiscovery *discovery;
        RateLimit rate;
};

static uint64_t random_below(uint64_t n) {
        uint64_t v;

        if (n == 0)
                return 0;
        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t) sizeof(v))
                v = ((uint64_t) random() << 31) ^ (uint64_t) random();
        return v % n;
}

RateLimit *reconcile_rate_limit(Manager *m) {
        return m->reconciler ? &m->reconciler->rate : NULL;
}

int reconcile_new(Manager *m, Reconciler **ret) {
        Reconciler *r = new0(Reconciler, 1);

        if (!r)
                return -ENOMEM;
        r->manager = m;
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
        return mfree(r);
}

/* ---- local RDMA ports ---- */

static void refresh_rdma_ports(Reconciler *r) {
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **devices = NULL;
        int k;

        r->n_rdma_ports = 0;
        k = infiniband_enumerate(r->manager->sysfs_fd, &devices, NULL);
        if (k < 0) {
                log_debug_errno(k, "Cannot list RDMA devices: %m");
                return;
        }
        for (size_t i = 0; devices && devices[i]; i++)
                for (size_t j = 0; j < devices[i]->n_ports; j++) {
                        const InfinibandPort *port = devices[i]->ports[j];
                        if (port->status.state != RDMA_PORT_STATE_ACTIVE || r->n_rdma_ports >= RDMA_LOCAL_PORTS_MAX ||
                            strlen(devices[i]->name) >= sizeof(r->rdma_ports[0].device))
                                continue;
                        RdmaLocalPort *p = &r->rdma_ports[r->n_rdma_ports++];
                        snprintf(p->device, sizeof(p->device), "%s", devices[i]->name);
                        p->port = port->number;
                }
}

int reconcile_find_rdma_port(Manager *m, const char *device, unsigned port, RdmaLocalPort *ret) {
        Reconciler *r = m->reconciler;

        if (!r)
                return -ENODEV;
        refresh_rdma_ports(r);
        for (size_t i = 0; i < r->n_rdma_ports; i++)
                if ((!device || streq(device, r->rdma_ports[i].device)) && (port == 0 || port == r->rdma_ports[i].port)) {
                        *ret = r->rdma_ports[i];
                        return 0;
                }
        return -ENODEV;
}

/* ---- deriving paths from targets ---- */

/* The links an unscoped IPv6 link-local address may be reached through: up, not loopback, with a
 * usable link-local address of their own, and a name that can be written as a zone. */
static bool link_can_reach_link_local(const Link *l) {
        PeerAddress probe_name;
        char spec[IF_NAMESIZE + 16];

        if (!link_is_up(l) || l->kind == LINK_KIND_LOOPBACK || !l->name)
                return false;
        snprintf(spec, sizeof(spec), "fe80::1%%%s", l->name);
        if (peer_address_parse(spec, 0, &probe_name, NULL) < 0)
                return false;
        for (size_t i = 0; i < l->n_addresses; i++) {
                const LinkAddress *a = &l->addresses[i];
                if (a->family == AF_INET6 && a->address[0] == 0xfe && (a->address[1] & 0xc0) == 0x80 &&
                    !(a->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED)))
                        return true;
        }
        return false;
}

static void want_path(Reconciler *r, const PeerTarget *t, PeerTransport transport, const char *device, unsigned port,
                      const PeerAddress *sink) {
        Peer *p;
        int k;

        k = peer_ensure(r->manager, transport, device, port, sink, t->address, &p);
        if (k < 0) {
                log_warning_errno(k, "Cannot add a path to %s: %m", t->address);
                return;
        }
        p->seen = true;
        p->wanted |= t->origins & PEER_ORIGINS_WANTED;
}

static void expand_target(Reconciler *r, const PeerTarget *t) {
        Manager *m = r->manager;
        const PeerAddress *a = &t->parsed;

        if (!(t->origins & PEER_ORIGINS_WANTED))
                return;
        if (peer_address_is_link_local(a) && !a->scope[0]) {
                /* Every link that can reach it is a path of its own. */
                Link *l;
                TABLE_FOREACH(l, &m->links) {
                        PeerAddress scoped = *a;
                        if (!link_can_reach_link_local(l))
                                continue;
                        snprintf(scoped.scope, sizeof(scoped.scope), "%s", l->name);
                        want_path(r, t, PEER_TRANSPORT_TCP, NULL, 0, &scoped);
                }
                return;
        }
        want_path(r, t, PEER_TRANSPORT_TCP, NULL, 0, a);
        for (size_t i = 0; i < r->n_rdma_ports; i++)
                want_path(r, t, PEER_TRANSPORT_RDMA, r->rdma_ports[i].device, r->rdma_ports[i].port, a);
}

static void expand(Reconciler *r) {
        Manager *m = r->manager;
        PeerTarget *t;
        Peer *p;

        TABLE_FOREACH(p, &m->peers) {
                p->seen = false;
                p->wanted = 0;
        }
        if (table_size(&m->peer_targets) > 0)
                refresh_rdma_ports(r);
        else
                r->n_rdma_ports = 0;
        TABLE_FOREACH(t, &m->peer_targets)
                expand_target(r, t);

        TABLE_FOREACH_SAFE(p, &m->peers) {
                if (!p->wanted && !p->adhoc) {
                        peer_remove(p);
                        continue;
                }
                peer_update_origins(p);
        }
}

/* ---- scheduling ---- */

static uint64_t tick_usec(Reconciler *r) {
        return r->manager->config.peers.tick_usec;
}

/* When a path is due again after an attempt: a fresh result lives for its TTL, minus the time a
 * probe takes and a random tenth, so that a cluster does not probe in lockstep; a failure backs off
 * from one tick, doubling up to the TTL. */
static uint64_t next_probe_after(Reconciler *r, const Peer *p, uint64_t now) {
        uint64_t ttl = peer_ttl_usec(p);

        if (p->state == PEER_PROBE_FAILED) {
                uint64_t backoff = tick_usec(r) << MIN(p->n_failures > 0 ? p->n_failures - 1 : 0, 20U);
                backoff = MIN(backoff, ttl);
                return now + backoff + random_below(backoff / 4 + 1);
        }
        uint64_t base = p->state == PEER_PROBE_OK ? p->m.measured_at : p->last_attempt_at;
        if (base == 0 || base > now)
                base = now;
        /* Early enough that the next result (it takes as long as the last one did) is in before this
         * one goes stale, but never in the first half of its life. */
        uint64_t early = MIN(p->m.probe_duration_usec + random_below(ttl / 10 + 1), ttl / 2);
        return base + ttl - early;
}

static void set_next_probe(Peer *p, uint64_t at) {
        bus_object_set(&p->bus, p->next_probe_at, at, "NextProbeAt");
}

static void on_probe_done(ProbeRun *run, const ProbeResult *result, void *userdata);

static void start_probe(Reconciler *r, Peer *p) {
        Manager *m = r->manager;
        const PeersConfig *c = &m->config.peers;
        char sink[PEER_ADDRESS_STRING_MAX], duration[32], samples[16], deadline[32], port[16];
        const char *args[20];
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
                /* Connect (1 s at most), the RTT samples, then the two bulk phases. */
                deadline_usec = 2 * d + 3 * USEC_PER_SEC;
                snprintf(samples, sizeof(samples), "%u", p->request_samples ?: c->tcp_samples);
                args[n++] = "--samples";
                args[n++] = samples;
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
        args[n] = NULL;

        p->requested = false;
        p->request_duration_usec = 0;
        p->request_samples = 0;
        r->probe_started[p->transport] = now_usec(CLOCK_REALTIME);

        k = probe_run_start(m->event, probe_directory(),
                            p->transport == PEER_TRANSPORT_RDMA ? "linkprobe-probe-rdma" : "linkprobe-probe-tcp",
                            (char *const *) args, deadline_usec, on_probe_done, r, &p->run);
        if (k < 0) {
                ProbeResult failed = {
                        .outcome = PROBE_OUTCOME_ERROR,
                        .error_name = (char *) "spawn",
                        .error_message = (char *) "cannot run the probe program (see the daemon's log)",
                };
                p->run = NULL;
                peer_apply_result(p, &failed, r->probe_started[p->transport]);
                set_next_probe(p, p->wanted ? next_probe_after(r, p, now_usec(CLOCK_REALTIME)) : 0);
                return;
        }
        r->probing[p->transport] = p;
        set_next_probe(p, 0);
        peer_set_state(p, PEER_PROBE_PROBING);
        log_debug("Probing %s.", p->key);
}

static void on_probe_done(ProbeRun *run, const ProbeResult *result, void *userdata) {
        Reconciler *r = userdata;
        Manager *m = r->manager;
        Peer *p = NULL;

        for (int t = 0; t < _PEER_TRANSPORT_MAX; t++)
                if (r->probing[t] && r->probing[t]->run == run) {
                        p = r->probing[t];
                        r->probing[t] = NULL;
                        break;
                }
        if (!p)
                return;
        p->run = NULL; /* the runner frees it after we return */

        peer_apply_result(p, result, r->probe_started[p->transport]);
        set_next_probe(p, p->wanted ? next_probe_after(r, p, now_usec(CLOCK_REALTIME)) : 0);
        (void) persist_save(m);
        reconcile_schedule(m);
}

void reconcile_forget(Manager *m, Peer *p) {
        Reconciler *r = m->reconciler;

        if (r && p->transport >= 0 && p->transport < _PEER_TRANSPORT_MAX && r->probing[p->transport] == p) {
                r->probing[p->transport] = NULL;
                reconcile_schedule(m);
        }
        p->run = probe_run_free(p->run);
}

static Peer *pick_next(Reconciler *r, PeerTransport transport, uint64_t now) {
        Peer *p, *best = NULL;

        TABLE_FOREACH(p, &r->manager->peers) {
                if (p->transport != transport || p->run)
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

void reconcile_run(Manager *m) {
        Reconciler *r = m->reconciler;
        uint64_t now, wake = UINT64_MAX, due = UINT64_MAX;
        bool rdma_inhibited;
        Peer *p;

        if (!r || !r->started)
                return;
        if (r->defer)
                (void) sd_event_source_set_enabled(r->defer, SD_EVENT_OFF);

        if (r->discovery) {
                uint64_t at = peer_discovery_update(r->discovery, now_usec(CLOCK_MONOTONIC));
                if (at != UINT64_MAX)
                        wake = now_usec(CLOCK_REALTIME) + (at > now_usec(CLOCK_MONOTONIC) ? at - now_usec(CLOCK_MONOTONIC) : 0);
        }
        expand(r);

        now = now_usec(CLOCK_REALTIME);
        rdma_inhibited = manager_is_inhibited(m, "rdma");
        TABLE_FOREACH(p, &m->peers) {
                wake = MIN(wake, peer_update_stale(p, now));
                if (!p->wanted) {
                        if (!p->run && !p->requested)
                                set_next_probe(p, 0);
                        continue;
                }
                if (p->next_probe_at == 0 && !p->run) {
                        if (p->state == PEER_PROBE_PENDING || p->state == PEER_PROBE_QUEUED)
                                /* New: soon, but spread over a tick so a rebooted cluster does not
                                 * probe in lockstep. */
                                set_next_probe(p, now + random_below(tick_usec(r)));
                        else
                                set_next_probe(p, next_probe_after(r, p, now));
                }
        }

        for (int t = 0; t < _PEER_TRANSPORT_MAX; t++) {
                if (t == PEER_TRANSPORT_RDMA && rdma_inhibited)
                        continue;
                if (!r->probing[t]) {
                        p = pick_next(r, (PeerTransport) t, now);
                        if (p)
                                start_probe(r, p);
                }
                if (r->probing[t])
                        continue; /* its completion runs the next pass */
                TABLE_FOREACH(p, &m->peers)
                        if ((int) p->transport == t && p->wanted && p->next_probe_at > 0 && !p->run)
                                due = MIN(due, p->next_probe_at);
        }
        /* Scheduled work is looked at no more often than once a tick; Stale flips on time. */
        if (due != UINT64_MAX) {
                uint64_t earliest = r->last_timer_pass + tick_usec(r);
                uint64_t mono = now_usec(CLOCK_MONOTONIC);
                if (r->last_timer_pass > 0 && earliest > mono)
                        due = MAX(due, now + (earliest - mono));
                wake = MIN(wake, due);
        }
        arm_timer(r, wake, now);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Reconciler *r = userdata;
        r->last_timer_pass = now_usec(CLOCK_MONOTONIC);
        reconcile_run(r->manager);
        return 0;
}

static int on_defer(sd_event_source *s, void *userdata) {
        Reconciler *r = userdata;
        reconcile_run(r->manager);
        return 0;
}

void reconcile_schedule(Manager *m) {
        Reconciler *r = m->reconciler;
        int k;

        if (!r || !r->started)
                return;
        if (!r->defer) {
                k = sd_event_add_defer(m->event, &r->defer, on_defer, r);
                if (k < 0) {
                        log_warning_errno(k, "Cannot schedule the reconciler: %m");
                        return;
                }
                (void) sd_event_source_set_description(r->defer, "peer-reconciler-now");
        }
        (void) sd_event_source_set_enabled(r->defer, SD_EVENT_ONESHOT);
}

void reconcile_request(Manager *m, Peer *p, uint64_t duration_usec, unsigned samples) {
        if (p->run)
                return; /* already measuring: the result is on its way */
        p->requested = true;
        p->request_duration_usec = duration_usec;
        p->request_samples = samples;
        peer_set_state(p, PEER_PROBE_QUEUED);
        reconcile_run(m);
}

/* A hash of what paths depend on: which links are up, their kinds, and whether they can carry
 * link-local traffic. Recomputed on every flush; a pass follows only when it moved. */
void reconcile_links_changed(Manager *m) {
        Reconciler *r = m->reconciler;
        uint32_t h = 2166136261u;
        Link *l;

        if (!r || !r->started || (table_size(&m->peer_targets) == 0 && !r->discovery))
                return;
        TABLE_FOREACH(l, &m->links) {
                uint32_t v[3] = { (uint32_t) l->ifindex, (uint32_t) l->kind,
                                  (uint32_t) link_is_up(l) | (uint32_t) link_can_reach_link_local(l) << 1 };
                for (size_t i = 0; i < sizeof(v); i++)
                        h = (h ^ ((const uint8_t *) v)[i]) * 16777619u;
        }
        if (h != r->links_signature) {
                r->links_signature = h;
                reconcile_schedule(m);
        }
}

int reconcile_start(Manager *m) {
        Reconciler *r = m->reconciler;
        const PeersConfig *c = &m->config.peers;
        int k;

        if (!r)
                return -EINVAL;
        STRV_FOREACH(a, c->addresses) {
                PeerAddress parsed;
                if (peer_address_parse(*a, 0, &parsed, NULL) < 0)
                        continue; /* config.c checked them */
                k = peer_target_add(m, &parsed, PEER_ORIGIN_CONFIG, NULL);
                if (k < 0)
                        log_warning_errno(k, "Cannot watch peer %s: %m", *a);
        }
        (void) persist_load(m);

        if (strv_length(c->discover_kinds) > 0) {
                k = peer_discovery_new(m, &r->discovery);
                if (k < 0)
                        log_warning_errno(k, "Cannot discover peers, continuing without: %m");
        }

        k = sd_event_add_time(m->event, &r->timer, CLOCK_MONOTONIC, UINT64_MAX, 0, on_timer, r);
        if (k < 0)
                return log_error_errno(k, "Cannot create the reconciler's timer: %m");
        (void) sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(r->timer, "peer-reconciler");

        r->started = true;
        reconcile_run(m);
        log_debug("Reconciler: %zu peer addresses, %zu paths.", table_size(&m->peer_targets), table_size(&m->peers));
        return 0;
}
