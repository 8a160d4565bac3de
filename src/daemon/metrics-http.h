/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-http.h — a deliberately small HTTP/1.1 endpoint: GET and HEAD of /metrics, bounded */
#pragma once

#include <systemd/sd-event.h>

#include "shared/macros.h"

typedef struct MetricsHttp MetricsHttp;

/* Renders the exposition for one scrape into a new string. */
typedef int (*metrics_render_t)(void *userdata, char **ret, size_t *ret_size);

#define METRICS_HTTP_REQUEST_MAX 4096
#define METRICS_HTTP_CONNECTIONS_MAX 16
#define METRICS_HTTP_TIMEOUT_USEC (10 * USEC_PER_SEC)

/* listen is "ADDRESS:PORT", "[IPV6]:PORT" or "PORT" (all addresses). */
int metrics_http_start(sd_event *event, const char *listen, metrics_render_t render, void *userdata,
                       MetricsHttp **ret);
MetricsHttp *metrics_http_free(MetricsHttp *h);

typedef enum MetricsRequest {
        METRICS_REQUEST_INCOMPLETE,
        METRICS_REQUEST_GET_METRICS,
        METRICS_REQUEST_HEAD_METRICS,
        METRICS_REQUEST_GET_INDEX,
        METRICS_REQUEST_HEAD_INDEX,
        METRICS_REQUEST_NOT_FOUND,
        METRICS_REQUEST_BAD_METHOD,
        METRICS_REQUEST_BAD,
} MetricsRequest;

/* Judges the bytes received so far; exported for tests and fuzzing. */
MetricsRequest metrics_parse_request(const char *buf, size_t size);
