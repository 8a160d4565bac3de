/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shared/bus-names.h"
#include "summary-bus.h"
#include "summary.h"

static int property_get_fastest(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const SummaryFastestLink *f = userdata;
        return sd_bus_message_append(reply, "(ossu)", f->path ?: "/", strempty(f->name),
                                     strempty(f->connection_type), f->speed_mbps);
}

static int property_get_tbt_peers(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Summary *s = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(osddss)");
        for (size_t i = 0; r >= 0 && i < s->n_tbt_peers; i++) {
                const SummaryTbtPeer *p = &s->tbt_peers[i];
                r = sd_bus_message_append(reply, "(osddss)", p->path, p->name, p->path_rx_gbps, p->path_tx_gbps,
                                          p->link_class, p->net_interface);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int property_get_degraded(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Summary *s = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(oss)");
        for (size_t i = 0; r >= 0 && i < s->n_degraded; i++)
                r = sd_bus_message_append(reply, "(oss)", s->degraded[i].path, s->degraded[i].name,
                                          s->degraded[i].reason);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int property_get_best_paths(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Summary *s = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sodddb)");
        for (size_t i = 0; r >= 0 && i < s->n_best_paths; i++) {
                const SummaryPeerPath *b = &s->best_paths[i];
                r = sd_bus_message_append(reply, "(sodddb)", b->peer_address, b->path, b->upload_gbps,
                                          b->download_gbps, b->rtt_usec, (int) b->stale);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int property_get_neighbor_paths(sd_bus *bus, const char *path, const char *interface, const char *property,
                                       sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Summary *s = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ssooddd)");
        for (size_t i = 0; r >= 0 && i < s->n_neighbor_paths; i++) {
                const SummaryNeighborPath *b = &s->neighbor_paths[i];
                r = sd_bus_message_append(reply, "(ssooddd)", b->node_id, b->hostname, b->neighbor, b->path,
                                          b->upload_gbps, b->download_gbps, b->rtt_usec);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static const sd_bus_vtable summary_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("FastestLink", "(ossu)", property_get_fastest, offsetof(Summary, fastest),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ThunderboltPeers", "a(osddss)", property_get_tbt_peers, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RdmaPortsActive", "u", NULL, offsetof(Summary, rdma_ports_active),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("DegradedLinks", "a(oss)", property_get_degraded, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("BestPeerPaths", "a(sodddb)", property_get_best_paths, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Neighbors", "u", NULL, offsetof(Summary, n_neighbors), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("BestNeighborPaths", "a(ssooddd)", property_get_neighbor_paths, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END,
};

int summary_bus_register(sd_bus *bus, Summary *s) {
        return sd_bus_add_object_vtable(bus, NULL, BUS_PATH, SUMMARY_INTERFACE, summary_vtable, s);
}
