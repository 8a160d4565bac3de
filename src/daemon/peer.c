/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "config-peers.h"
#include "peer.h"
#include "shared/bus-names.h"
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

static unsigned read_streams(json_object *o, const char *key) {
        int64_t v = json_int_or(o, key, 0);
        return v >= 1 && v <= PEER_STREAMS_MAX ? (unsigned) v : 0;
}

/* A probe's words reach D-Bus, the journal and terminals: valid UTF-8, no control characters. */
static char **read_warnings(json_object *o) {
        json_object *a;
        char **l = NULL;

        if (!json_object_object_get_ex(o, "warnings", &a) || !json_object_is_type(a, json_type_array))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(a) && strv_length(l) < PEER_WARNINGS_MAX; i++) {
                json_object *w = json_object_array_get_idx(a, i);
                if (!json_object_is_type(w, json_type_string))
                        continue;
                _cleanup_(freep) char *text = strndup(json_object_get_string(w), PEER_WARNING_MAX);
                _cleanup_(freep) char *escaped = text ? escape_for_terminal(text) : NULL;
                if (!escaped || strv_extend_unique(&l, escaped) < 0) {
                        log_oom();
                        break;
                }
        }
        return l;
}

void peer_measurement_read_figures(PeerMeasurement *m, json_object *o) {
        m->upload_gbps = json_figure(o, "upload_gbps");
        m->download_gbps = json_figure(o, "download_gbps");
        m->rtt_usec = json_figure(o, "rtt_usec");
        m->jitter_usec = json_figure(o, "jitter_usec");
        m->jitter_rfc3550_usec = json_figure(o, "jitter_rfc3550_usec");
        m->cross_traffic_gbps = json_figure(o, "cross_traffic_gbps");
        m->upload_streams = read_streams(o, "upload_streams");
        m->download_streams = read_streams(o, "download_streams");
        m->warnings = read_warnings(o);
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

/* Publishes n's figures; its warnings are taken. */
static void peer_set_measurement(Peer *p, PeerMeasurement *n) {
        BusObject *o = &p->bus;

        if (p->m.upload_streams != n->upload_streams || p->m.download_streams != n->download_streams) {
                p->m.upload_streams = n->upload_streams;
                p->m.download_streams = n->download_streams;
                bus_object_changed(o, "Streams");
        }
        (void) bus_object_set_strv(o, &p->m.warnings, &n->warnings, "Warnings");

        bus_object_set(o, p->m.upload_gbps, n->upload_gbps, "UploadGbps");
        bus_object_set(o, p->m.download_gbps, n->download_gbps, "DownloadGbps");
        bus_object_set(o, p->m.rtt_usec, n->rtt_usec, "RttUsec");
        bus_object_set(o, p->m.jitter_usec, n->jitter_usec, "JitterUsec");
        bus_object_set(o, p->m.jitter_rfc3550_usec, n->jitter_rfc3550_usec, "JitterRfc3550Usec");
        bus_object_set(o, p->m.cross_traffic_gbps, n->cross_traffic_gbps, "CrossTrafficGbps");
        bus_object_set(o, p->m.measured_at, n->measured_at, "MeasuredAt");
        bus_object_set(o, p->m.probe_duration_usec, n->probe_duration_usec, "ProbeDurationUsec");
        (void) bus_object_set_string(o, &p->m.source_address, n->source_address, "SourceAddress");
        (void) bus_object_set_string(o, &p->m.source_interface, n->source_interface, "SourceInterfaceName");
        (void) bus_object_set_string(o, &p->m.connection_type, n->connection_type, "ConnectionType");
}

void peer_set_remote(Peer *p, const NodeIdentity *id, bool authenticated) {
        if (!id) {
                if (p->remote) {
                        p->remote = mfree(p->remote);
                        bus_object_changed(&p->bus, "RemoteNodeId");
                        bus_object_changed(&p->bus, "RemoteHostname");
                }
                bus_object_set(&p->bus, p->remote_authenticated, false, "RemoteAuthenticated");
                return;
        }
        if (!p->remote || !node_identity_equal(p->remote, id)) {
                NodeIdentity *copy = p->remote ?: new0(NodeIdentity, 1);
                if (!copy) {
                        log_oom();
                        return;
                }
                *copy = *id;
                p->remote = copy;
                bus_object_changed(&p->bus, "RemoteNodeId");
                bus_object_changed(&p->bus, "RemoteHostname");
        }
        bus_object_set(&p->bus, p->remote_authenticated, authenticated, "RemoteAuthenticated");
}

/* The identity of the far node in a probe's document: absent, or valid, or ignored with a note. */
static void peer_take_remote(Peer *p, json_object *doc) {
        json_object *o;
        NodeIdentity id;

        if (!json_object_object_get_ex(doc, "peer_identity", &o) || !json_object_is_type(o, json_type_object)) {
                peer_set_remote(p, NULL, false);
                return;
        }
        if (node_identity_from_json(o, &id) < 0) {
                log_peer_info(p, "The probe reported a far identity that is not valid; ignoring it.");
                peer_set_remote(p, NULL, false);
                return;
        }
        peer_set_remote(p, &id, json_bool_or(o, "authenticated", false));
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
                _cleanup_(freep) char *escaped = source ? utf8_escape_invalid(source) : NULL;
                PeerMeasurement n = {
                        .measured_at = started_realtime,
                        .probe_duration_usec = result->duration_usec,
                        .source_address = escaped,
                        /* Which interface that is, and what it is now: the derivation pass. */
                        .source_interface = p->m.source_interface,
                        .connection_type = p->m.connection_type,
                };
                peer_measurement_read_figures(&n, doc);
                peer_set_measurement(p, &n);
                strv_free(n.warnings);
                peer_take_remote(p, doc);
                p->source_pending = true;
                bus_object_queue(&p->bus);
                peer_set_error(p, NULL, NULL);
                peer_set_state(p, PEER_PROBE_OK);
                p->n_failures = 0;
                log_peer_info(p, "Up %.2f Gbit/s, down %.2f Gbit/s, RTT %.0f us (%.1f s)%s.", n.upload_gbps,
                              n.download_gbps, n.rtt_usec, (double) result->duration_usec / USEC_PER_SEC,
                              n.cross_traffic_gbps > 0 ? ", disturbed by cross traffic" : "");
                /* The node's measure lock made the probe wait: where the time went, for the journal. */
                double waited = json_figure(doc, "lock_wait_usec");
                if (waited >= USEC_PER_MSEC)
                        log_peer_info(p, "Waited %.2f s for this node's responder to finish serving another node.",
                                      waited / USEC_PER_SEC);
                break;
        }
        case PROBE_OUTCOME_UNSUPPORTED:
                peer_set_error(p, "unsupported", result->error_message);
                peer_set_state(p, PEER_PROBE_UNSUPPORTED);
                p->n_failures = 0;
                log_peer_info(p, "Not supported: %s", strna(result->error_message));
                break;
        case PROBE_OUTCOME_ERROR:
        case PROBE_OUTCOME_TIMEOUT:
        case PROBE_OUTCOME_CRASHED:
        case _PROBE_OUTCOME_MAX:
        case _PROBE_OUTCOME_INVALID:
                peer_set_error(p, result->error_name ?: "error", result->error_message);
                peer_set_state(p, PEER_PROBE_FAILED);
                p->n_failures++;
                log_peer_info(p, "Probe failed: %s: %s", strna(result->error_name), strna(result->error_message));
                break;
        }
}

void peer_restore(Peer *p, PeerMeasurement *m, PeerProbeState state, const char *error, const char *message,
                  uint64_t last_attempt_at) {
        PeerMeasurement restored = *m;

        m->warnings = NULL; /* taken with restored */
        /* What a zone already told about the source stays when the file knows nothing better. */
        if (!restored.source_interface)
                restored.source_interface = p->m.source_interface;
        if (!restored.connection_type)
                restored.connection_type = p->m.connection_type;
        peer_set_measurement(p, &restored);
        strv_free(restored.warnings);
        /* The file says what the interface was when measured; the pass finds which link it is now. */
        p->source_pending = !restored.source_interface;
        bus_object_queue(&p->bus);
        peer_set_error(p, error, message);
        /* A probe that was running when the daemon went away has no result. */
        if (IN_SET(state, PEER_PROBE_OK, PEER_PROBE_FAILED, PEER_PROBE_UNSUPPORTED))
                peer_set_state(p, state);
        bus_object_set(&p->bus, p->last_attempt_at, last_attempt_at, "LastAttemptAt");
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
