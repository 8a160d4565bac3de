/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "config-peers.h"
#include "peer.h"
#include "shared/bus-names.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

static const char *const peer_transport_table[_PEER_TRANSPORT_MAX] = {
        [PEER_TRANSPORT_TCP] = "tcp",
        [PEER_TRANSPORT_RDMA] = "rdma",
};

static const char *const peer_probe_state_table[_PEER_PROBE_STATE_MAX] = {
        [PEER_PROBE_PENDING] = "pending",
        [PEER_PROBE_QUEUED] = "queued",
        [PEER_PROBE_PROBING] = "probing",
        [PEER_PROBE_OK] = "ok",
        [PEER_PROBE_FAILED] = "failed",
        [PEER_PROBE_UNSUPPORTED] = "unsupported",
        [PEER_PROBE_SKIPPED_INHIBITED] = "skipped-inhibited",
};

DEFINE_STRING_TABLE_LOOKUP(peer_transport, PeerTransport, peer_transport_table)
DEFINE_STRING_TABLE_LOOKUP(peer_probe_state, PeerProbeState, peer_probe_state_table)

const BusObjectType peer_bus_type = {
        .interface = PEER_INTERFACE,
};

char *peer_make_key(PeerTransport t, const char *device, unsigned port, const PeerAddress *sink) {
        char address[PEER_ADDRESS_STRING_MAX];
        char *key = NULL;

        peer_address_format(sink, address);
        if (t == PEER_TRANSPORT_RDMA) {
                if (asprintf(&key, "rdma:%s/%u:%s", strempty(device), port, address) < 0)
                        return NULL;
        } else if (asprintf(&key, "tcp:%s", address) < 0)
                return NULL;
        return key;
}

static int peer_compare_key(const void *key, const void *object) {
        return strcmp(key, ((const Peer *) object)->key);
}

static int peer_target_compare_key(const void *key, const void *object) {
        return strcmp(key, ((const PeerTarget *) object)->address);
}

Peer *peer_get(Peers *peers, const char *key) {
        return table_get(&peers->paths, key);
}

void peer_measurement_done(PeerMeasurement *m) {
        m->source_address = mfree(m->source_address);
        m->source_interface = mfree(m->source_interface);
        m->connection_type = mfree(m->connection_type);
        m->warnings = strv_free(m->warnings);
}

static Peer *peer_free(Peer *p) {
        if (!p)
                return NULL;
        p->run = probe_run_free(p->run);
        bus_object_done(&p->bus);
        free(p->key);
        free(p->address);
        free(p->peer_address);
        free(p->source_device);
        free(p->remote);
        free(p->derived.neighbor_path);
        peer_measurement_done(&p->m);
        free(p->last_error);
        free(p->last_error_message);
        free(p->derived.stale_reason);
        free(p->derived.disturbed);
        free(p->derived.path_limited_by);
        return mfree(p);
}

int peer_ensure(Peers *peers, PeerTransport t, const char *device, unsigned port, const PeerAddress *sink,
                const char *peer_address, Peer **ret) {
        _cleanup_(freep) char *key = NULL, *path = NULL;
        char address[PEER_ADDRESS_STRING_MAX];
        Peer *p;
        int r;

        key = peer_make_key(t, device, port, sink);
        if (!key)
                return -ENOMEM;
        p = peer_get(peers, key);
        if (p) {
                *ret = p;
                return 0;
        }
        if (table_size(&peers->paths) >= PEER_PATHS_MAX)
                return -E2BIG;
        r = sd_bus_path_encode(PEER_PATH_PREFIX, key, &path);
        if (r < 0)
                return r;

        p = new0(Peer, 1);
        if (!p)
                return -ENOMEM;
        p->owner = peers;
        p->transport = t;
        p->sink = *sink;
        p->source_port = port;
        p->derived.stale = true;
        p->request_streams = -1; /* [Reconciler] TcpStreams= unless ProbePeer() says */
        p->source_pending = true; /* a zone names the interface before any measurement */
        p->key = TAKE_PTR(key);
        p->address = strdup(peer_address_format(sink, address));
        p->peer_address = strdup(peer_address ?: address);
        p->source_device = device ? strdup(device) : NULL;
        if (!p->address || !p->peer_address || (device && !p->source_device)) {
                peer_free(p);
                return -ENOMEM;
        }
        r = table_put(&peers->paths, p->key, p);
        if (r < 0) {
                peer_free(p);
                return r;
        }
        bus_object_init(&p->bus, peers->publisher, &peer_bus_type, TAKE_PTR(path));
        log_peer_debug(p, "Added.");
        *ret = p;
        return 1;
}

void peer_remove(Peer *p) {
        Peers *peers = p->owner;

        log_peer_debug(p, "Removed.");
        /* A running probe is cancelled with the path (peer_free()); the reconciler finds its
         * transport idle again at its next pass. */
        bus_object_remove(&p->bus);
        table_remove(&peers->paths, p->key);
        peer_free(p);
}

static PeerTarget *peer_target_free(PeerTarget *t);

void peers_init(Peers *peers, BusPublisher *p, const PeersConfig *config) {
        *peers = (Peers) {
                .paths = TABLE_INIT(peer_compare_key),
                .targets = TABLE_INIT(peer_target_compare_key),
                .publisher = p,
                .config = config,
        };
}

void peers_done(Peers *peers) {
        Peer *p;
        PeerTarget *t;

        TABLE_FOREACH(p, &peers->paths)
                peer_free(p);
        table_done(&peers->paths);
        TABLE_FOREACH(t, &peers->targets)
                peer_target_free(t);
        table_done(&peers->targets);
}

uint64_t peer_ttl_usec(const Peer *p) {
        const PeersConfig *c = p->owner->config;

        return p->transport == PEER_TRANSPORT_RDMA ? c->rdma_ttl_usec : c->tcp_ttl_usec;
}

uint64_t peer_expires_at(const Peer *p) {
        return p->m.measured_at > 0 ? p->m.measured_at + peer_ttl_usec(p) : 0;
}

uint64_t peer_renew_at(const Peer *p, uint64_t now, uint64_t tick_usec, uint64_t (*random_below)(uint64_t n)) {
        uint64_t ttl = peer_ttl_usec(p);

        if (p->state == PEER_PROBE_FAILED) {
                uint64_t backoff = tick_usec << MIN(p->n_failures > 0 ? p->n_failures - 1 : 0, 20U);
                backoff = MIN(backoff, ttl);
                return now + backoff + random_below(backoff / 4 + 1);
        }
        uint64_t base = p->state == PEER_PROBE_OK ? p->m.measured_at : p->last_attempt_at;
        if (base == 0 || base > now)
                base = now;
        /* Early enough that the next result (it takes as long as the last one did) is in before this
         * one goes stale, but never in the first half of its life. The random tenth is drawn once, not
         * inside MIN(), which evaluates the argument it returns a second time: two draws let the
         * comparison see one and the result take another, up to a tenth of the TTL past the half. */
        uint64_t spread = random_below(ttl / 10 + 1);
        uint64_t early = MIN(p->m.probe_duration_usec + spread, ttl / 2);
        return base + ttl - early;
}

void peer_set_state(Peer *p, PeerProbeState s) {
        bus_object_set(&p->bus, p->state, s, "ProbeState");
}

void peer_set_adhoc(Peer *p, bool adhoc) {
        if (p->adhoc == adhoc)
                return;
        p->adhoc = adhoc;
        peer_update_origins(p);
        /* Whether nobody wants it any more is the expansion's to say. */
        p->owner->targets_changed = true;
        bus_publisher_schedule(p->owner->publisher);
}

void peer_update_origins(Peer *p) {
        bus_object_set(&p->bus, p->origins, p->wanted | (p->adhoc ? PEER_ORIGIN_PROBED : 0u), "Origins");
}

/* ---- targets ---- */

PeerTarget *peer_target_get(Peers *peers, const char *address) {
        return table_get(&peers->targets, address);
}

static PeerTarget *peer_target_free(PeerTarget *t) {
        if (!t)
                return NULL;
        free(t->address);
        return mfree(t);
}

int peer_target_add(Peers *peers, const PeerAddress *a, PeerOrigin origin, PeerTarget **ret) {
        char address[PEER_ADDRESS_STRING_MAX];
        PeerTarget *t;
        int r;

        peer_address_format(a, address);
        t = peer_target_get(peers, address);
        if (!t) {
                if (table_size(&peers->targets) >= PEER_TARGETS_MAX)
                        return -E2BIG;
                t = new0(PeerTarget, 1);
                if (!t)
                        return -ENOMEM;
                t->parsed = *a;
                t->address = strdup(address);
                if (!t->address) {
                        peer_target_free(t);
                        return -ENOMEM;
                }
                r = table_put(&peers->targets, t->address, t);
                if (r < 0) {
                        peer_target_free(t);
                        return r;
                }
        }
        if ((t->origins | origin) != t->origins) {
                t->origins |= origin;
                peers->targets_changed = true;
                bus_publisher_schedule(peers->publisher);
        }
        if (ret)
                *ret = t;
        return 0;
}

bool peer_target_drop(Peers *peers, PeerTarget *t, PeerOrigin origin) {
        if ((t->origins & ~origin) != t->origins) {
                t->origins &= ~origin;
                peers->targets_changed = true;
                bus_publisher_schedule(peers->publisher);
        }
        if (t->origins != 0)
                return false;
        table_remove(&peers->targets, t->address);
        peer_target_free(t);
        return true;
}

/* ---- the best path to each peer ---- */

static double peer_bandwidth(const Peer *p) {
        return MIN(p->m.upload_gbps, p->m.download_gbps);
}

/* Negative when a is the better path. */
static int peer_compare_paths(const Peer *a, const Peer *b) {
        if (a->derived.stale != b->derived.stale)
                return a->derived.stale ? 1 : -1;
        if (peer_bandwidth(a) != peer_bandwidth(b))
                return peer_bandwidth(a) > peer_bandwidth(b) ? -1 : 1;
        if (a->m.rtt_usec != b->m.rtt_usec)
                return a->m.rtt_usec < b->m.rtt_usec ? -1 : 1;
        return strcmp(a->key, b->key);
}

static int compare_by_peer_address(const void *x, const void *y) {
        const Peer *a = *(Peer *const *) x, *b = *(Peer *const *) y;
        return strcmp(a->peer_address, b->peer_address);
}

int peer_best_paths(Peers *peers, Peer ***ret, size_t *ret_n) {
        _cleanup_(freep) Peer **best = NULL;
        size_t n = 0;
        Peer *p;

        best = new0(Peer *, MAX(table_size(&peers->paths), (size_t) 1));
        if (!best)
                return -ENOMEM;
        TABLE_FOREACH(p, &peers->paths) {
                size_t i;

                if (p->m.measured_at == 0)
                        continue;
                for (i = 0; i < n; i++)
                        if (streq(best[i]->peer_address, p->peer_address))
                                break;
                if (i == n)
                        best[n++] = p;
                else if (peer_compare_paths(p, best[i]) < 0)
                        best[i] = p;
        }
        if (n > 1)
                qsort(best, n, sizeof(Peer *), compare_by_peer_address);
        *ret = TAKE_PTR(best);
        *ret_n = n;
        return 0;
}
