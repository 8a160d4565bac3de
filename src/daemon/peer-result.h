/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peer-result.h — a path takes in what a probe or the state file says about it */
#pragma once

#include <json-c/json.h>

#include "peer.h"

/* Takes in a finished probe: measurements on success, the error otherwise. */
void peer_apply_result(Peer *p, const ProbeResult *result, uint64_t started_realtime);
/* Records which node the path reached (NULL: none said); marks RemoteNodeId and the rest. */
void peer_set_remote(Peer *p, const NodeIdentity *id, bool authenticated);
/* Restores what a state file held (m's warnings are taken); the path is then republished, Stale
 * as the pass finds it. */
void peer_restore(Peer *p, PeerMeasurement *m, PeerProbeState state, const char *error, const char *message,
                  uint64_t last_attempt_at);

/* The figures of a measurement as the probes and the state file write them (the same member names):
 * finite and non-negative, else 0; streams 1..PEER_STREAMS_MAX, else 0; the warnings bounded and
 * made valid UTF-8 without control characters. */
void peer_measurement_read_figures(PeerMeasurement *m, json_object *o);
