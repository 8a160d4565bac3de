/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* summary.h — the Summary interface: what an applet shows, derived once here so no client needs the graph */
#pragma once

#include "shared/macros.h"

typedef struct Manager Manager;

typedef struct SummaryFastestLink {
        char *path; /* NULL: none */
        char *name;
        const char *connection_type;
        uint32_t speed_mbps;
} SummaryFastestLink;

typedef struct SummaryTbtPeer {
        char *path;
        char *name;
        double path_rx_gbps, path_tx_gbps;
        const char *link_class;
        char *net_interface; /* the thunderbolt-net interface's name, "" when none */
} SummaryTbtPeer;

typedef struct SummaryDegraded {
        char *path;
        char *name;
        char *reason;
} SummaryDegraded;

typedef struct SummaryPeerPath {
        char *peer_address;
        char *path;
        double upload_gbps, download_gbps, rtt_usec;
        bool stale;
} SummaryPeerPath;

typedef struct Summary {
        SummaryFastestLink fastest;
        SummaryTbtPeer *tbt_peers;
        size_t n_tbt_peers;
        uint32_t rdma_ports_active;
        SummaryDegraded *degraded;
        size_t n_degraded;
        SummaryPeerPath *best_paths;
        size_t n_best_paths;
} Summary;

/* Recomputes the summary from the published objects and marks what changed. Cheap: a pass over the
 * tables, run by the flush whenever any object changed. */
void summary_update(Manager *m);
void summary_done(Summary *s);

int summary_bus_register(Manager *m);
