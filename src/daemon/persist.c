/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "peer-result.h"
#include "peer.h"
#include "persist.h"
#include "shared/json-util.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "state-file.h"

#define PERSIST_VERSION 1
#define PERSIST_RETRY_USEC (60 * USEC_PER_SEC)

static const StateFile persist_file = {
        .name = PERSIST_FILE,
        .bad_suffix = ".corrupt",
        .size_max = PERSIST_FILE_MAX,
        .what = "peer results",
};

static int open_state_directory(Persist *store) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int fd;

        /* state_directory_open() logs each failure; do not ask it on every probe. */
        if (store->retry_after > now)
                return -EAGAIN;
        fd = state_directory_open(store->directory);
        if (fd < 0)
                store->retry_after = now + PERSIST_RETRY_USEC;
        return fd;
}

/* ---- save ---- */

static json_object *path_to_json(const Peer *p) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "transport", json_object_new_string(peer_transport_to_string(p->transport)));
        json_object_object_add(o, "address", json_object_new_string(p->address));
        json_object_object_add(o, "peer", json_object_new_string(p->peer_address));
        if (p->transport == PEER_TRANSPORT_RDMA) {
                json_object_object_add(o, "source_device", json_object_new_string(p->source_device));
                json_object_object_add(o, "source_port", json_object_new_uint64(p->source_port));
        }
        json_object_object_add(o, "adhoc", json_object_new_boolean(p->adhoc));
        json_object_object_add(o, "state", json_object_new_string(peer_probe_state_to_string(p->state)));
        json_object_object_add(o, "error", json_string_or_null(p->last_error));
        json_object_object_add(o, "error_message", json_string_or_null(p->last_error_message));
        json_object_object_add(o, "last_attempt_at", json_object_new_uint64(p->last_attempt_at));
        json_object_object_add(o, "measured_at", json_object_new_uint64(p->m.measured_at));
        json_object_object_add(o, "upload_gbps", json_object_new_double(p->m.upload_gbps));
        json_object_object_add(o, "download_gbps", json_object_new_double(p->m.download_gbps));
        json_object_object_add(o, "rtt_usec", json_object_new_double(p->m.rtt_usec));
        json_object_object_add(o, "jitter_usec", json_object_new_double(p->m.jitter_usec));
        json_object_object_add(o, "jitter_rfc3550_usec", json_object_new_double(p->m.jitter_rfc3550_usec));
        json_object_object_add(o, "cross_traffic_gbps", json_object_new_double(p->m.cross_traffic_gbps));
        json_object_object_add(o, "probe_duration_usec", json_object_new_uint64(p->m.probe_duration_usec));
        json_object_object_add(o, "source_address", json_string_or_null(p->m.source_address));
        json_object_object_add(o, "source_interface", json_string_or_null(p->m.source_interface));
        json_object_object_add(o, "connection_type", json_string_or_null(p->m.connection_type));
        if (p->m.upload_streams > 0)
                json_object_object_add(o, "upload_streams", json_object_new_int((int) p->m.upload_streams));
        if (p->m.download_streams > 0)
                json_object_object_add(o, "download_streams", json_object_new_int((int) p->m.download_streams));
        if (p->m.warnings) {
                json_object *w = json_object_new_array();
                STRV_FOREACH(s, p->m.warnings)
                        json_object_array_add(w, json_object_new_string(*s));
                json_object_object_add(o, "warnings", w);
        }
        if (p->remote) {
                json_object *id = node_identity_to_json(p->remote);
                if (!id) {
                        json_object_put(o);
                        return NULL;
                }
                json_object_object_add(id, "authenticated", json_object_new_boolean(p->remote_authenticated));
                json_object_object_add(o, "peer_identity", id);
        }
        return o;
}

int persist_save(Persist *store) {
        _cleanup_(json_object_putp) json_object *doc = NULL;
        json_object *added, *paths;
        PeerTarget *t;
        Peer *p;
        int fd, r;

        doc = json_object_new_object();
        added = json_object_new_array();
        paths = json_object_new_array();
        if (!doc || !added || !paths) {
                json_object_put(added);
                json_object_put(paths);
                return log_oom();
        }
        json_object_object_add(doc, "version", json_object_new_int(PERSIST_VERSION));
        json_object_object_add(doc, "added", added);
        json_object_object_add(doc, "paths", paths);
        TABLE_FOREACH(t, &store->peers->targets)
                if (t->origins & PEER_ORIGIN_ADDED)
                        json_object_array_add(added, json_object_new_string(t->address));
        TABLE_FOREACH(p, &store->peers->paths) {
                json_object *o = path_to_json(p);
                if (!o)
                        return log_oom();
                json_object_array_add(paths, o);
        }

        fd = open_state_directory(store);
        if (fd < 0) {
                log_debug_errno(fd, "Keeping peer results in memory only: %m");
                return fd;
        }
        r = state_file_write(fd, &persist_file, doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (r < 0) {
                if (!store->failing)
                        log_warning_errno(r, "Cannot save peer results to %s in the state directory, keeping them "
                                             "in memory: %m", PERSIST_FILE);
                store->failing = true;
                store->retry_after = now_usec(CLOCK_MONOTONIC) + PERSIST_RETRY_USEC;
                return r;
        }
        if (store->failing)
                log_info("Saving peer results works again.");
        store->failing = false;
        return 0;
}

/* ---- load ---- */

static uint64_t get_u64(json_object *o, const char *key) {
        int64_t i = json_int_or(o, key, 0);
        return i > 0 ? (uint64_t) i : 0;
}

/* A bounded, printable copy of a stored string, or NULL. */
static const char *sane(const char *s, size_t max) {
        if (!s || strlen(s) > max || !utf8_is_valid(s))
                return NULL;
        for (const char *c = s; *c; c++)
                if ((unsigned char) *c < ' ')
                        return NULL;
        return s;
}

static bool is_device_name(const char *s) {
        if (isempty(s) || strlen(s) >= 64)
                return false;
        for (const char *c = s; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                      *c == '-' || *c == '.'))
                        return false;
        return true;
}

static int restore_path(Peers *peers, json_object *o) {
        const char *address = json_string_or(o, "address", NULL), *peer = json_string_or(o, "peer", NULL);
        const char *device = json_string_or(o, "source_device", NULL);
        PeerTransport transport = peer_transport_from_string(json_string_or(o, "transport", NULL));
        PeerProbeState state = peer_probe_state_from_string(json_string_or(o, "state", NULL));
        uint64_t port = get_u64(o, "source_port");
        PeerAddress sink, group;
        Peer *p;
        int r;

        if (!json_object_is_type(o, json_type_object) || transport < 0 || state < 0)
                return -EINVAL;
        if (!address || peer_address_parse(address, 0, &sink, NULL) < 0)
                return -EINVAL;
        if (!peer || peer_address_parse(peer, 0, &group, NULL) < 0)
                return -EINVAL;
        if (transport == PEER_TRANSPORT_RDMA && (!is_device_name(device) || port == 0 || port > 255))
                return -EINVAL;

        /* A port belongs to RDMA paths only: a TCP path restored with one would publish a SourcePort
         * that no probe gives it. */
        r = peer_ensure(peers, transport, transport == PEER_TRANSPORT_RDMA ? device : NULL,
                        transport == PEER_TRANSPORT_RDMA ? (unsigned) port : 0, &sink, peer, &p);
        if (r < 0)
                return r;
        p->adhoc = json_bool_or(o, "adhoc", false);
        PeerMeasurement measured = {
                .measured_at = get_u64(o, "measured_at"),
                .probe_duration_usec = get_u64(o, "probe_duration_usec"),
                .source_address = (char *) sane(json_string_or(o, "source_address", NULL), PEER_ADDRESS_STRING_MAX),
                .source_interface = (char *) sane(json_string_or(o, "source_interface", NULL), 64),
                .connection_type = (char *) sane(json_string_or(o, "connection_type", NULL), 64),
        };
        peer_measurement_read_figures(&measured, o);
        peer_restore(p, &measured, state, sane(json_string_or(o, "error", NULL), 64),
                     sane(json_string_or(o, "error_message", NULL), 512), get_u64(o, "last_attempt_at"));
        /* Which node it reached, held to the same rules as a probe's word. */
        json_object *remote;
        NodeIdentity id;
        if (json_object_object_get_ex(o, "peer_identity", &remote) && node_identity_from_json(remote, &id) >= 0)
                peer_set_remote(p, &id, json_bool_or(remote, "authenticated", false));
        return 0;
}

int persist_load(Persist *store) {
        _cleanup_(json_object_putp) json_object *doc = NULL;
        _cleanup_(freep) char *text = NULL;
        json_object *v, *added = NULL, *paths = NULL;
        enum json_tokener_error jerr;
        size_t size, n_bad = 0;
        int fd, r;

        fd = open_state_directory(store);
        if (fd < 0)
                return fd;
        r = state_file_read(fd, &persist_file, &text, &size);
        if (r <= 0)
                return r;

        doc = json_tokener_parse_verbose(text, &jerr);
        if (!doc || strlen(text) != size || !json_object_is_type(doc, json_type_object)) {
                state_file_set_aside(fd, &persist_file, doc ? "not a JSON object" : json_tokener_error_desc(jerr));
                return -EBADMSG;
        }
        if (!json_object_object_get_ex(doc, "version", &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int(v) != PERSIST_VERSION) {
                state_file_set_aside(fd, &persist_file, "unknown version");
                return -EBADMSG;
        }
        (void) json_object_object_get_ex(doc, "added", &added);
        (void) json_object_object_get_ex(doc, "paths", &paths);
        /* Either may be missing (a hand-written file), but never something other than a list. */
        if ((added && !json_object_is_type(added, json_type_array)) ||
            (paths && !json_object_is_type(paths, json_type_array))) {
                state_file_set_aside(fd, &persist_file, "\"added\" and \"paths\" must be lists");
                return -EBADMSG;
        }

        for (size_t i = 0; json_object_is_type(added, json_type_array) && i < json_object_array_length(added); i++) {
                json_object *e = json_object_array_get_idx(added, i);
                PeerAddress a;
                if (!json_object_is_type(e, json_type_string) ||
                    peer_address_parse(json_object_get_string(e), 0, &a, NULL) < 0 ||
                    peer_target_add(store->peers, &a, PEER_ORIGIN_ADDED, NULL) < 0)
                        n_bad++;
        }
        for (size_t i = 0; json_object_is_type(paths, json_type_array) && i < json_object_array_length(paths); i++)
                if (restore_path(store->peers, json_object_array_get_idx(paths, i)) < 0)
                        n_bad++;
        if (n_bad > 0)
                log_warning("%s: ignored %zu entries that are not valid.", PERSIST_FILE, n_bad);
        /* What was restored is held against what is wanted now, at the next derivation pass. */
        store->peers->targets_changed = true;
        bus_publisher_schedule(store->peers->publisher);
        log_debug("Restored %zu peer paths from %s.", table_size(&store->peers->paths), PERSIST_FILE);
        return 0;
}
