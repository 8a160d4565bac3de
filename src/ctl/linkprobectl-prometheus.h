/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-prometheus.h — the cluster's graph from a Prometheus server's HTTP API (fabric --prometheus=) */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

#include "linkprobectl-http.h"

/* The model of the whole cluster from a Prometheus server's HTTP API, or of the nodes named in only
 * (comma-separated hostnames or NodeIds, NULL for all; a few are read alone, with their edges): 0, or
 * an exit code after saying why. auth: how to reach the server beside its URL. */
int fabric_from_prometheus(const char *url, const HttpAuth *auth, uint64_t timeout_usec, const char *only,
                           json_object **ret);
