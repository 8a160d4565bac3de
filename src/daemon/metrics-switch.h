/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-switch.h — the far end of each InfiniBand port, the best rate both ends support, and the sweep's switch-to-switch links */
#pragma once

#include <stdio.h>

typedef struct MetricsSources MetricsSources;

/* linkprobe_rdma_port_remote_info, linkprobe_rdma_port_best_rate_bytes, linkprobe_rdma_port_degraded. */
void metrics_render_rdma_remote(const MetricsSources *m, FILE *f);
/* linkprobe_switch_link_info, linkprobe_switch_link_rate_gbps (names the topology writers read). */
void metrics_render_switch_links(const MetricsSources *m, FILE *f);
