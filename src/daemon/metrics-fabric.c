/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fabric as series: who this node is (node_id), who its neighbours are, and one series per edge,
 * every one labelled node_id and neighbor_id, so that one PromQL join over every node's scrape is the
 * cluster's edge list (linkprobed(8), "FABRIC METRICS", has the queries):
 *
 *   linkprobe_node_identity_info{node_id,nodename}                        1
 *   linkprobe_node_thunderbolt_host_info{node_id,uuid}                    1 per host router
 *   linkprobe_neighbor_info{node_id,neighbor_id,neighbor_hostname,authenticated}  1
 *   linkprobe_neighbor_problems{node_id,neighbor_id}                      how many Problems
 *   linkprobe_neighbor_aggregate_{upload,download}_bytes{node_id,neighbor_id}
 *   linkprobe_edge_{upload,download}_bytes, _rtt_seconds, _stale, _degraded, _measured_timestamp_seconds
 *           {node_id,neighbor_id,transport,interface}   the best path per transport and local link
 *   linkprobe_edge_thunderbolt_{rx,tx}_bytes, _degraded
 *           {node_id,neighbor_id,sysname,interface}     our XDomain peer whose far host is the neighbour
 */
#include "metrics-fabric.h"
#include "metrics-text.h"
#include "neighbor.h"
#include "node.h"
#include "shared/string-util.h"

#define LABELS_MAX 6

typedef MetricsLabel Label;

/* Every fabric series is a gauge. */
static void family(FILE *f, const char *name, const char *help) {
        metrics_write_family(f, name, "gauge", help);
}

static void sample(FILE *f, const char *name, double value, const Label *labels, size_t n) {
        metrics_write_sample(f, name, value, labels, n);
}

static void render_identity(const Node *node, FILE *f) {
        Label l[2] = { { "node_id", node->node_id }, { "nodename", node->derived.identity.hostname } };

        family(f, "linkprobe_node_identity_info",
               "This node's NodeId (the app-specific machine ID neighbours name it by) and hostname (always 1).");
        sample(f, "linkprobe_node_identity_info", 1, l, 2);
        if (strv_length(node->derived.thunderbolt_host_uuids) == 0)
                return;
        family(f, "linkprobe_node_thunderbolt_host_info",
               "The unique_id of one of this node's Thunderbolt host routers: what its XDomain peers see (always 1).");
        STRV_FOREACH(u, node->derived.thunderbolt_host_uuids) {
                Label t[2] = { { "node_id", node->node_id }, { "uuid", *u } };
                sample(f, "linkprobe_node_thunderbolt_host_info", 1, t, 2);
        }
}

static void render_neighbors(const Node *node, Neighbors *neighbors, FILE *f) {
        Neighbor *nb;

        family(f, "linkprobe_neighbor_info", "A node at the other end of our links, named from the wire (always 1).");
        TABLE_FOREACH(nb, &neighbors->table) {
                Label l[4] = { { "node_id", node->node_id }, { "neighbor_id", nb->node_id },
                               { "neighbor_hostname", strempty(nb->derived.hostname) },
                               { "authenticated", nb->derived.authenticated ? "true" : "false" } };
                sample(f, "linkprobe_neighbor_info", 1, l, 4);
        }
        family(f, "linkprobe_neighbor_problems", "How many problems the neighbour has (see its Problems property).");
        TABLE_FOREACH(nb, &neighbors->table) {
                Label l[2] = { { "node_id", node->node_id }, { "neighbor_id", nb->node_id } };
                sample(f, "linkprobe_neighbor_problems", (double) strv_length(nb->derived.problems), l, 2);
        }

        static const struct {
                const char *name, *help;
                size_t offset;
        } aggregates[] = {
                { "linkprobe_neighbor_aggregate_upload_bytes",
                  "Measured goodput to the neighbour over all links that reach it, bytes per second.",
                  offsetof(Neighbor, derived.aggregate_upload_gbps) },
                { "linkprobe_neighbor_aggregate_download_bytes",
                  "Measured goodput from the neighbour over all links that reach it, bytes per second.",
                  offsetof(Neighbor, derived.aggregate_download_gbps) },
        };
        for (size_t i = 0; i < ELEMENTSOF(aggregates); i++) {
                family(f, aggregates[i].name, aggregates[i].help);
                TABLE_FOREACH(nb, &neighbors->table) {
                        Label l[2] = { { "node_id", node->node_id }, { "neighbor_id", nb->node_id } };
                        double gbps = *(const double *) (const void *) ((const uint8_t *) nb + aggregates[i].offset);
                        sample(f, aggregates[i].name, gbps * 1.25e8, l, 2);
                }
        }
}

static void render_edges(const Node *node, Neighbors *neighbors, FILE *f) {
        static const struct {
                const char *name, *help;
        } families[] = {
                { "linkprobe_edge_upload_bytes", "Measured goodput to the neighbour on this edge, bytes per second." },
                { "linkprobe_edge_download_bytes", "Measured goodput from the neighbour on this edge, bytes per second." },
                { "linkprobe_edge_rtt_seconds", "Median round-trip time to the neighbour on this edge." },
                { "linkprobe_edge_stale", "1 when the edge's measurement is stale or its link is down." },
                { "linkprobe_edge_degraded", "1 when a Thunderbolt hop under the edge runs below what both its ends can." },
                { "linkprobe_edge_measured_timestamp_seconds", "When the edge's path was last measured (Unix time)." },
        };
        Neighbor *nb;

        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                family(f, families[i].name, families[i].help);
                TABLE_FOREACH(nb, &neighbors->table)
                        for (size_t k = 0; k < nb->derived.n_edges; k++) {
                                const NeighborEdge *e = &nb->derived.edges[k];
                                Label l[4] = { { "node_id", node->node_id }, { "neighbor_id", nb->node_id },
                                               { "transport", e->transport }, { "interface", e->interface } };
                                double v[] = { e->upload_gbps * 1.25e8, e->download_gbps * 1.25e8, e->rtt_usec / 1e6,
                                               e->stale, e->degraded, (double) e->measured_at / 1e6 };
                                _Static_assert(ELEMENTSOF(v) == ELEMENTSOF(families), "one value per family");
                                sample(f, families[i].name, v[i], l, 4);
                        }
        }
}

static void render_thunderbolt_edges(const Node *node, Neighbors *neighbors, FILE *f) {
        static const struct {
                const char *name, *help;
        } families[] = {
                { "linkprobe_edge_thunderbolt_rx_bytes",
                  "The slowest Thunderbolt hop from this node's host router to the neighbour's, towards it, bytes per second." },
                { "linkprobe_edge_thunderbolt_tx_bytes",
                  "The slowest Thunderbolt hop from the neighbour's host router to this node's, bytes per second." },
                { "linkprobe_edge_thunderbolt_degraded",
                  "1 when a Thunderbolt hop to the neighbour runs below what both its ends can." },
        };
        Neighbor *nb;
        bool any = false;

        TABLE_FOREACH(nb, &neighbors->table)
                any |= nb->derived.n_tbt > 0;
        if (!any)
                return;
        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                family(f, families[i].name, families[i].help);
                TABLE_FOREACH(nb, &neighbors->table)
                        for (size_t k = 0; k < nb->derived.n_tbt; k++) {
                                const NeighborThunderbolt *t = &nb->derived.tbt[k];
                                Label l[4] = { { "node_id", node->node_id }, { "neighbor_id", nb->node_id },
                                               { "sysname", t->sysname }, { "interface", t->interface } };
                                double v[] = { t->rx_gbps * 1.25e8, t->tx_gbps * 1.25e8, t->degraded };
                                _Static_assert(ELEMENTSOF(v) == ELEMENTSOF(families), "one value per family");
                                sample(f, families[i].name, v[i], l, 4);
                        }
        }
}

void metrics_render_fabric(const Node *node, Neighbors *neighbors, FILE *f) {
        /* Without a NodeId nobody can join our series with anyone's. */
        if (!node || !node->node_id || !node->derived.has_identity || !neighbors)
                return;
        render_identity(node, f);
        render_neighbors(node, neighbors, f);
        render_edges(node, neighbors, f);
        render_thunderbolt_edges(node, neighbors, f);
}
