/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peer-result.c — what a finished probe, or the state file, writes into a path: its measured figures,
 * the far node's identity, the error and the probe state. peer.c keeps the paths themselves. */
#include "peer-result.h"
#include "shared/json-util.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

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
