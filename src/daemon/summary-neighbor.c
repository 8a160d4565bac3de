/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Summary's view of the neighbours: how many, and the best path to each (its RingPath). */
#include "neighbor.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "summary.h"

static void neighbor_paths_free(SummaryNeighborPath *p, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(p[i].node_id);
                free(p[i].hostname);
                free(p[i].neighbor);
                free(p[i].path);
        }
        free(p);
}

void summary_neighbors_done(Summary *s) {
        neighbor_paths_free(s->neighbor_paths, s->n_neighbor_paths);
        s->neighbor_paths = NULL;
        s->n_neighbor_paths = 0;
        s->n_neighbors = 0;
}

static bool neighbor_paths_equal(const SummaryNeighborPath *a, size_t na, const SummaryNeighborPath *b, size_t nb) {
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (!streq(a[i].node_id, b[i].node_id) || !streq(a[i].hostname, b[i].hostname) ||
                    !streq(a[i].neighbor, b[i].neighbor) || !streq(a[i].path, b[i].path) ||
                    a[i].upload_gbps != b[i].upload_gbps || a[i].download_gbps != b[i].download_gbps ||
                    a[i].rtt_usec != b[i].rtt_usec)
                        return false;
        return true;
}

void summary_update_neighbors(Summary *s, Neighbors *neighbors) {
        size_t n = table_size(&neighbors->table), i = 0;
        SummaryNeighborPath *paths = new0(SummaryNeighborPath, MAX(n, (size_t) 1));
        Neighbor *nb;

        if (!paths) {
                log_oom();
                return;
        }
        /* The table is sorted by NodeId, and so is the list. */
        TABLE_FOREACH(nb, &neighbors->table) {
                SummaryNeighborPath *p = &paths[i++];
                *p = (SummaryNeighborPath) {
                        .node_id = strdup(nb->node_id),
                        .hostname = strdup(strempty(nb->derived.hostname)),
                        .neighbor = strdup(nb->bus.path),
                        .path = strdup(nb->derived.ring_path ?: "/"),
                        .upload_gbps = nb->derived.ring_upload_gbps,
                        .download_gbps = nb->derived.ring_download_gbps,
                        .rtt_usec = nb->derived.ring_rtt_usec,
                };
                if (!p->node_id || !p->hostname || !p->neighbor || !p->path) {
                        neighbor_paths_free(paths, i);
                        log_oom();
                        return;
                }
        }
        if (s->n_neighbors != n)
                bus_object_changed(&s->bus, "Neighbors");
        if (!neighbor_paths_equal(s->neighbor_paths, s->n_neighbor_paths, paths, n))
                bus_object_changed(&s->bus, "BestNeighborPaths");
        neighbor_paths_free(s->neighbor_paths, s->n_neighbor_paths);
        s->neighbor_paths = paths;
        s->n_neighbor_paths = n;
        s->n_neighbors = (uint32_t) n;
}
