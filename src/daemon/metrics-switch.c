/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The InfiniBand fabric past this node's cables: the port at the far end of each RDMA port and the
 * best rate both ends support (the neighbour queries, rdma-remote.c), and the switch-to-switch links of
 * the subnet sweep ([Fabric] Sweep=yes). Labels: an RDMA port's device and port as everywhere; a
 * switch by its node GUID (the Switch object's NodeGuid), so the topology writers join them.
 */
#include "metrics-switch.h"
#include "metrics-text.h"
#include "metrics-sources.h"
#include "rdma-names.h"
#include "rdma.h"
#include "switch.h"

#define BYTES_PER_GBIT 1.25e8

static void rdma_port_labels(const RdmaPort *p, char port[static 16]) {
        snprintf(port, 16, "%u", p->number);
}

void metrics_render_rdma_remote(const MetricsSources *m, FILE *f) {
        RdmaPort *p;

        if (table_size(&m->rdma->ports) == 0)
                return;
        metrics_write_family(f, "linkprobe_rdma_port_remote_info", "gauge",
                             "The port at the far end of an InfiniBand port, as its subnet management agent "
                             "answers (always 1).");
        TABLE_FOREACH(p, &m->rdma->ports) {
                char port[16], remote_port[16], guid[RDMA_GUID_STRING_MAX];
                const Switch *sw = NULL;

                if (!p->remote.known)
                        continue;
                rdma_port_labels(p, port);
                snprintf(remote_port, sizeof(remote_port), "%u", p->remote.port);
                if (m->switches && p->remote.switch_key)
                        sw = switch_get(m->switches, p->remote.switch_key);
                MetricsLabel l[] = {
                        { "device", p->device },
                        { "port", port },
                        { "remote_guid", rdma_format_guid(p->remote.node_guid, guid) },
                        { "remote_type", rdma_node_type_to_bus(p->remote.node_type) },
                        { "remote_description", strempty(p->remote.description) },
                        { "remote_port", remote_port },
                        { "switch_name", sw ? strempty(sw->name) : "" },
                };
                metrics_write_sample(f, "linkprobe_rdma_port_remote_info", 1, l, ELEMENTSOF(l));
        }
        metrics_write_family(f, "linkprobe_rdma_port_best_rate_bytes", "gauge",
                             "The best rate both ends of an InfiniBand link support, bytes per second (compare "
                             "linkprobe_rdma_port_rate_bytes).");
        TABLE_FOREACH(p, &m->rdma->ports) {
                char port[16];

                if (!p->remote.known || p->remote.best_gbps <= 0)
                        continue;
                rdma_port_labels(p, port);
                MetricsLabel l[] = { { "device", p->device }, { "port", port } };
                metrics_write_sample(f, "linkprobe_rdma_port_best_rate_bytes", p->remote.best_gbps * BYTES_PER_GBIT, l,
                                     ELEMENTSOF(l));
        }
        metrics_write_family(f, "linkprobe_rdma_port_degraded", "gauge",
                             "1 when the InfiniBand link trained below the best both ends support.");
        TABLE_FOREACH(p, &m->rdma->ports) {
                char port[16];

                if (!p->remote.known)
                        continue;
                rdma_port_labels(p, port);
                MetricsLabel l[] = { { "device", p->device }, { "port", port } };
                metrics_write_sample(f, "linkprobe_rdma_port_degraded", p->remote.degraded, l, ELEMENTSOF(l));
        }
}

void metrics_render_switch_links(const MetricsSources *m, FILE *f) {
        const Switch *sw;

        metrics_write_family(f, "linkprobe_switch_link_info", "gauge",
                             "A switch-to-switch link the subnet sweep found (always 1).");
        if (m->switches)
                TABLE_FOREACH(sw, &m->switches->table)
                        for (size_t i = 0; i < sw->n_links; i++) {
                                const SwitchLink *k = &sw->links[i];
                                const Switch *remote = switch_get(m->switches, k->remote_guid);
                                char port[16], remote_port[16];

                                snprintf(port, sizeof(port), "%u", k->port);
                                snprintf(remote_port, sizeof(remote_port), "%u", k->remote_port);
                                MetricsLabel l[] = {
                                        { "switch_guid", strempty(sw->node_guid) },
                                        { "switch_name", strempty(sw->name) },
                                        { "port", port },
                                        { "remote_guid", k->remote_guid },
                                        { "remote_name", remote ? strempty(remote->name) : "" },
                                        { "remote_port", remote_port },
                                        { "width", k->width },
                                        { "speed", k->speed },
                                };
                                metrics_write_sample(f, "linkprobe_switch_link_info", 1, l, ELEMENTSOF(l));
                        }
        metrics_write_family(f, "linkprobe_switch_link_rate_gbps", "gauge",
                             "The active rate of a switch-to-switch link the subnet sweep found, Gb/s.");
        if (m->switches)
                TABLE_FOREACH(sw, &m->switches->table)
                        for (size_t i = 0; i < sw->n_links; i++) {
                                char port[16];

                                snprintf(port, sizeof(port), "%u", sw->links[i].port);
                                MetricsLabel l[] = { { "switch_guid", strempty(sw->node_guid) }, { "port", port } };
                                metrics_write_sample(f, "linkprobe_switch_link_rate_gbps", sw->links[i].rate_gbps, l,
                                                     ELEMENTSOF(l));
                        }
        metrics_write_family(f, "linkprobe_switch_link_best_rate_gbps", "gauge",
                             "The best rate both ends of a switch-to-switch link support, Gb/s (compare "
                             "linkprobe_switch_link_rate_gbps; absent when the far end was not swept).");
        if (m->switches)
                TABLE_FOREACH(sw, &m->switches->table)
                        for (size_t i = 0; i < sw->n_links; i++) {
                                char port[16];

                                if (sw->links[i].best_rate_gbps <= 0)
                                        continue;
                                snprintf(port, sizeof(port), "%u", sw->links[i].port);
                                MetricsLabel l[] = { { "switch_guid", strempty(sw->node_guid) }, { "port", port } };
                                metrics_write_sample(f, "linkprobe_switch_link_best_rate_gbps",
                                                     sw->links[i].best_rate_gbps, l, ELEMENTSOF(l));
                        }
        metrics_write_family(f, "linkprobe_switch_link_degraded", "gauge",
                             "1 when a switch-to-switch link trained below the best both ends support.");
        if (m->switches)
                TABLE_FOREACH(sw, &m->switches->table)
                        for (size_t i = 0; i < sw->n_links; i++) {
                                const SwitchLink *k = &sw->links[i];
                                char port[16];

                                if (k->best_rate_gbps <= 0)
                                        continue;
                                snprintf(port, sizeof(port), "%u", k->port);
                                MetricsLabel l[] = { { "switch_guid", strempty(sw->node_guid) },
                                                     { "switch_name", strempty(sw->name) },
                                                     { "port", port },
                                                     { "reason", k->degraded_reason } };
                                metrics_write_sample(f, "linkprobe_switch_link_degraded", k->degraded, l,
                                                     ELEMENTSOF(l));
                        }
}
