/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "link.h"
#include "manager.h"
#include "peer-bus.h"
#include "peer.h"
#include "reconcile.h"
#include "shared/json-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

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
};

DEFINE_STRING_TABLE_LOOKUP(peer_transport, PeerTransport, peer_transport_table)
DEFINE_STRING_TABLE_LOOKUP(peer_probe_state, PeerProbeState, peer_probe_state_table)

static const BusObjectType peer_bus_type = {
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

int peer_compare_key(const void *key, const void *object) {
        return strcmp(key, ((const Peer *) object)->key);
}

int peer_target_compare_key(const void *key, const void *object) {
        return strcmp(key, ((const PeerTarget *) object)->address);
}

Peer *peer_get(Manager *m, const char *key) {
        return table_get(&m->peers, key);
}

size_t peers_count(Manager *m) {
        return table_size(&m->peers);
}

void peer_measurement_done(PeerMeasurement *m) {
        m->source_address = mfree(m->source_address);
        m->source_interface = mfree(m->source_interface);
        m->connection_type = mfree(m->connection_type);
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
        peer_measurement_done(&p->m);
        free(p->last_error);
        free(p->last_error_message);
        return mfree(p);
}

int peer_ensure(Manager *m, PeerTransport t, const char *device, unsigned port, const PeerAddress *sink,
                const char *peer_address, Peer **ret) {
        _cleanup_(freep) char *key = NULL, *path = NULL;
        char address[PEER_ADDRESS_STRING_MAX];
        Peer *p;
        int r;

        key = peer_make_key(t, device, port, sink);
        if (!key)
                return -ENOMEM;
        p = peer_get(m, key);
        if (p) {
                *ret = p;
                return 0;
        }
        if (table_size(&m->peers) >= PEER_PATHS_MAX)
                return -E2BIG;
        r = sd_bus_path_encode(PEER_PATH_PREFIX, key, &path);
        if (r < 0)
                return r;

        p = new0(Peer, 1);
        if (!p)
                return -ENOMEM;
        p->manager = m;
        p->transport = t;
        p->sink = *sink;
        p->source_port = port;
        p->stale = true;
        p->key = TAKE_PTR(key);
        p->address = strdup(peer_address_format(sink, address));
        p->peer_address = strdup(peer_address ?: address);
        p->source_device = device ? strdup(device) : NULL;
        if (!p->address || !p->peer_address || (device && !p->source_device)) {
                peer_free(p);
                return -ENOMEM;
        }
        /* A link-local sink names the interface it is reached through. */
        if (sink->scope[0]) {
                Link *l = link_find(m, sink->scope);
                p->source_ifindex = l ? l->ifindex : 0;
                /* Known before any measurement; the first result confirms it. */
                if (l && (free_and_strdup(&p->m.source_interface, l->name_utf8) < 0 ||
                          free_and_strdup(&p->m.connection_type, connection_type_to_string(l->connection_type)) < 0)) {
                        peer_free(p);
                        return -ENOMEM;
                }
        }

        r = table_put(&m->peers, p->key, p);
        if (r < 0) {
                peer_free(p);
                return r;
        }
        bus_object_init(&p->bus, m, &peer_bus_type, TAKE_PTR(path));
        log_debug("Peer path %s added.", p->key);
        *ret = p;
        return 1;
}

void peer_remove(Peer *p) {
        Manager *m = p->manager;

        log_debug("Peer path %s removed.", p->key);
        reconcile_forget(m, p);
        bus_object_remove(&p->bus);
        table_remove(&m->peers, p->key);
        peer_free(p);
}

void peers_free(Manager *m) {
        Peer *p;

        TABLE_FOREACH(p, &m->peers)
                peer_free(p);
        table_done(&m->peers);
        peer_targets_free(m);
}

uint64_t peer_ttl_usec(const Peer *p) {
        const PeersConfig *c = &p->manager->config.peers;
        return p->transport == PEER_TRANSPORT_RDMA ? c->rdma_ttl_usec : c->tcp_ttl_usec;
}

uint64_t peer_update_stale(Peer *p, uint64_t now) {
        uint64_t expires = p->m.measured_at > 0 ? p->m.measured_at + peer_ttl_usec(p) : 0;
        bool stale = p->m.measured_at == 0 || now >= expires;

        bus_object_set(&p->bus, p->stale, stale, "Stale");
        return stale ? UINT64_MAX : expires;
}

void peer_set_state(Peer *p, PeerProbeState s) {
        bus_object_set(&p->bus, p->state, s, "ProbeState");
}

void peer_set_source_ifindex(Peer *p, int ifindex) {
        bus_object_set(&p->bus, p->source_ifindex, ifindex, "SourceInterface");
}

void peer_update_origins(Peer *p) {
        bus_object_set(&p->bus, p->origins, p->wanted | (p->adhoc ? PEER_ORIGIN_PROBED : 0u), "Origins");
}

static bool link_has_address(const Link *l, const PeerAddress *a) {
        size_t len = a->family == AF_INET ? 4 : 16;
        for (size_t i = 0; i < l->n_addresses; i++)
                if (l->addresses[i].family == a->family && memcmp(l->addresses[i].address, a->bytes, len) == 0)
                        return true;
        return false;
}

/* The link a probe left through: the sink's zone, else the link that owns the local address the
 * probe reports. */
static Link *peer_find_source_link(Peer *p, const char *source) {
        Manager *m = p->manager;
        PeerAddress a;
        Link *l;

        if (p->sink.scope[0])
                return link_find(m, p->sink.scope);
        if (!source || peer_address_parse_host(source, &a) < 0)
                return NULL;
        if (a.scope[0])
                return link_find(m, a.scope);
        TABLE_FOREACH(l, &m->links)
                if (link_has_address(l, &a))
                        return l;
        return NULL;
}

static void peer_set_measurement(Peer *p, const PeerMeasurement *n) {
        BusObject *o = &p->bus;

        bus_object_set(o, p->m.upload_gbps, n->upload_gbps, "UploadGbps");
        bus_object_set(o, p->m.download_gbps, n->download_gbps, "DownloadGbps");
        bus_object_set(o, p->m.rtt_usec, n->rtt_usec, "RttUsec");
        bus_object_set(o, p->m.jitter_usec, n->jitter_usec, "JitterUsec");
        bus_object_set(o, p->m.jitter_rfc3550_usec, n->jitter_rfc3550_usec, "JitterRfc3550Usec");
        bus_object_set(o, p->m.measured_at, n->measured_at, "MeasuredAt");
        bus_object_set(o, p->m.probe_duration_usec, n->probe_duration_usec, "ProbeDurationUsec");
        (void) bus_object_set_string(o, &p->m.source_address, n->source_address, "SourceAddress");
        (void) bus_object_set_string(o, &p->m.source_interface, n->source_interface, "SourceInterfaceName");
        (void) bus_object_set_string(o, &p->m.connection_type, n->connection_type, "ConnectionType");
}

static void peer_set_error(Peer *p, const char *name, const char *message) {
        (void) bus_object_set_string(&p->bus, &p->last_error, name, "LastError");
        (void) bus_object_set_string(&p->bus, &p->last_error_message, message, "LastErrorMessage");
}

void peer_apply_result(Peer *p, const ProbeResult *result, uint64_t started_realtime) {
        bus_object_set(&p->bus, p->last_attempt_at, started_realtime, "LastAttemptAt");

        switch (result->outcome) {
        case PROBE_OUTCOME_OK: {
                json_object *doc = result->document;
                const char *source = json_string_or(doc, "source", NULL);
                Link *l = peer_find_source_link(p, source);
                _cleanup_(freep) char *escaped = source ? utf8_escape_invalid(source) : NULL;
                PeerMeasurement n = {
                        .upload_gbps = json_figure(doc, "upload_gbps"),
                        .download_gbps = json_figure(doc, "download_gbps"),
                        .rtt_usec = json_figure(doc, "rtt_usec"),
                        .jitter_usec = json_figure(doc, "jitter_usec"),
                        .jitter_rfc3550_usec = json_figure(doc, "jitter_rfc3550_usec"),
                        .measured_at = started_realtime,
                        .probe_duration_usec = result->duration_usec,
                        .source_address = escaped,
                        .source_interface = l ? l->name_utf8 : NULL,
                        .connection_type = l ? (char *) connection_type_to_string(l->connection_type) : NULL,
                };
                peer_set_measurement(p, &n);
                peer_set_source_ifindex(p, l ? l->ifindex : 0);
                peer_set_error(p, NULL, NULL);
                peer_set_state(p, PEER_PROBE_OK);
                p->n_failures = 0;
                log_info("%s: up %.2f Gbit/s, down %.2f Gbit/s, RTT %.0f us (%.1f s).", p->key, n.upload_gbps,
                         n.download_gbps, n.rtt_usec, (double) result->duration_usec / USEC_PER_SEC);
                break;
        }
        case PROBE_OUTCOME_UNSUPPORTED:
                peer_set_error(p, "unsupported", result->error_message);
                peer_set_state(p, PEER_PROBE_UNSUPPORTED);
                p->n_failures = 0;
                log_info("%s: not supported: %s", p->key, strna(result->error_message));
                break;
        case PROBE_OUTCOME_ERROR:
        case PROBE_OUTCOME_TIMEOUT:
        case PROBE_OUTCOME_CRASHED:
        case _PROBE_OUTCOME_MAX:
        case _PROBE_OUTCOME_INVALID:
                peer_set_error(p, result->error_name ?: "error", result->error_message);
                peer_set_state(p, PEER_PROBE_FAILED);
                p->n_failures++;
                log_info("%s: probe failed: %s: %s", p->key, strna(result->error_name), strna(result->error_message));
                break;
        }
        (void) peer_update_stale(p, now_usec(CLOCK_REALTIME));
}

void peer_restore(Peer *p, const PeerMeasurement *m, PeerProbeState state, const char *error, const char *message,
                  uint64_t last_attempt_at) {
        Link *l = m->source_interface ? link_find(p->manager, m->source_interface) : NULL;
        PeerMeasurement restored = *m;

        /* What a zone already told about the source stays when the file knows nothing better. */
        if (!restored.source_interface)
                restored.source_interface = p->m.source_interface;
        if (!restored.connection_type)
                restored.connection_type = p->m.connection_type;
        peer_set_measurement(p, &restored);
        if (!p->sink.scope[0])
                peer_set_source_ifindex(p, l ? l->ifindex : 0);
        peer_set_error(p, error, message);
        /* A probe that was running when the daemon went away has no result. */
        if (IN_SET(state, PEER_PROBE_OK, PEER_PROBE_FAILED, PEER_PROBE_UNSUPPORTED))
                peer_set_state(p, state);
        bus_object_set(&p->bus, p->last_attempt_at, last_attempt_at, "LastAttemptAt");
        (void) peer_update_stale(p, now_usec(CLOCK_REALTIME));
}

/* ---- targets ---- */

PeerTarget *peer_target_get(Manager *m, const char *address) {
        return table_get(&m->peer_targets, address);
}

static PeerTarget *peer_target_free(PeerTarget *t) {
        if (!t)
                return NULL;
        free(t->address);
        return mfree(t);
}

int peer_target_add(Manager *m, const PeerAddress *a, PeerOrigin origin, PeerTarget **ret) {
        char address[PEER_ADDRESS_STRING_MAX];
        PeerTarget *t;
        int r;

        peer_address_format(a, address);
        t = peer_target_get(m, address);
        if (!t) {
                if (table_size(&m->peer_targets) >= PEER_TARGETS_MAX)
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
                r = table_put(&m->peer_targets, t->address, t);
                if (r < 0) {
                        peer_target_free(t);
                        return r;
                }
        }
        t->origins |= origin;
        if (ret)
                *ret = t;
        return 0;
}

bool peer_target_drop(Manager *m, PeerTarget *t, PeerOrigin origin) {
        t->origins &= ~origin;
        if (t->origins != 0)
                return false;
        table_remove(&m->peer_targets, t->address);
        peer_target_free(t);
        return true;
}

void peer_targets_free(Manager *m) {
        PeerTarget *t;

        TABLE_FOREACH(t, &m->peer_targets)
                peer_target_free(t);
        table_done(&m->peer_targets);
}

/* ---- the best path to each peer ---- */

static double peer_bandwidth(const Peer *p) {
        return MIN(p->m.upload_gbps, p->m.download_gbps);
}

/* Negative when a is the better path. */
static int peer_compare_paths(const Peer *a, const Peer *b) {
        if (a->stale != b->stale)
                return a->stale ? 1 : -1;
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

int peer_best_paths(Manager *m, Peer ***ret, size_t *ret_n) {
        _cleanup_(freep) Peer **best = NULL;
        size_t n = 0;
        Peer *p;

        best = new0(Peer *, MAX(table_size(&m->peers), (size_t) 1));
        if (!best)
                return -ENOMEM;
        TABLE_FOREACH(p, &m->peers) {
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
