/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics.h — everything we publish as Prometheus text: for scrapes, a textfile, and linkprobectl */
#pragma once

#include <stdio.h>
#include <systemd/sd-event.h>

#include "metrics-http.h"
#include "metrics-sources.h"
#include "shared/macros.h"

typedef struct Config Config;
typedef struct MetricsExporter MetricsExporter;

/*
 * Writes the exposition (Prometheus text format 0.0.4, which node_exporter's textfile collector
 * and every scraper read) of the daemon's current state to f. Names carry the linkprobe_ prefix and
 * base units (bytes, seconds); strings are labels of *_info gauges; a link's label is "device", as
 * in node_exporter's node_network_* series, so the two join.
 */
int metrics_render(const MetricsSources *src, FILE *f);
/* The same into a new string. */
int metrics_render_string(const MetricsSources *src, char **ret, size_t *ret_size);

/* Starts what linkprobed.conf [Metrics] asks for: the textfile (rewritten when what we publish
 * changed, at most once per TextfileIntervalSec) and the HTTP listener; render makes the text. */
int metrics_exporter_start(sd_event *event, const Config *config, metrics_render_t render, void *userdata,
                           MetricsExporter **ret);
MetricsExporter *metrics_exporter_free(MetricsExporter *e);
/* Tells the exporter that published state changed (called by every bus flush that emitted). */
void metrics_exporter_changed(MetricsExporter *e);
