/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-registry.h"
#include "bus-util.h"
#include "neighbor-bus.h"
#include "neighbor.h"
#include "shared/bus-names.h"

/* A char** of object paths as "ao"; NULL is the empty array. */
static int property_get_object_paths(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        char ***l = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "o");
        for (char **p = *l; r >= 0 && p && *p; p++)
                r = sd_bus_message_append(reply, "o", *p);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define CONST SD_BUS_VTABLE_PROPERTY_CONST

static const sd_bus_vtable neighbor_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("NodeId", "s", bus_property_get_string, offsetof(Neighbor, node_id), CONST),
        SD_BUS_PROPERTY("Hostname", "s", bus_property_get_string, offsetof(Neighbor, derived.hostname), EMITS),
        SD_BUS_PROPERTY("Authenticated", "b", bus_property_get_bool, offsetof(Neighbor, derived.authenticated), EMITS),
        SD_BUS_PROPERTY("ThunderboltHostUuids", "as", bus_property_get_strv,
                        offsetof(Neighbor, derived.thunderbolt_host_uuids), EMITS),
        SD_BUS_PROPERTY("RdmaNodeGuids", "as", bus_property_get_strv, offsetof(Neighbor, derived.rdma_node_guids), EMITS),
        SD_BUS_PROPERTY("Links", "ao", property_get_object_paths, offsetof(Neighbor, derived.links), EMITS),
        SD_BUS_PROPERTY("ThunderboltPeers", "ao", property_get_object_paths, offsetof(Neighbor, derived.thunderbolt_peers),
                        EMITS),
        SD_BUS_PROPERTY("Paths", "ao", property_get_object_paths, offsetof(Neighbor, derived.paths), EMITS),
        SD_BUS_PROPERTY("RingPath", "o", bus_property_get_object_path, offsetof(Neighbor, derived.ring_path), EMITS),
        SD_BUS_PROPERTY("CoordinatorPath", "o", bus_property_get_object_path, offsetof(Neighbor, derived.coordinator_path),
                        EMITS),
        SD_BUS_PROPERTY("AggregateUploadGbps", "d", NULL, offsetof(Neighbor, derived.aggregate_upload_gbps), EMITS),
        SD_BUS_PROPERTY("AggregateDownloadGbps", "d", NULL, offsetof(Neighbor, derived.aggregate_download_gbps), EMITS),
        SD_BUS_PROPERTY("AggregateLinks", "u", NULL, offsetof(Neighbor, derived.aggregate_links), EMITS),
        SD_BUS_PROPERTY("Problems", "as", bus_property_get_strv, offsetof(Neighbor, derived.problems), EMITS),
        SD_BUS_VTABLE_END,
};

static void *neighbor_lookup(void *collection, const char *label) {
        return neighbor_get(collection, label);
}

static const BusKind neighbor_bus_kind = {
        .prefix = NEIGHBOR_PATH_PREFIX,
        .interface = NEIGHBOR_INTERFACE,
        .vtable = neighbor_vtable,
        .bus_offset = offsetof(Neighbor, bus),
        .lookup = neighbor_lookup,
};

int neighbor_bus_register(BusRegistry *registry, Neighbors *neighbors) {
        return bus_registry_add(registry, &neighbor_bus_kind, &neighbors->table, neighbors);
}
