/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-health.h — the series of links over time: counters, rates, health (linkprobed(8) METRICS) */
#pragma once

#include <stdio.h>

typedef struct MetricsSources MetricsSources;

void metrics_render_health(const MetricsSources *m, FILE *f);
