/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "neighbor.h"
#include "shared/bus-names.h"
#include "shared/string-util.h"

const BusObjectType neighbor_bus_type = {
        .interface = NEIGHBOR_INTERFACE,
};

static int neighbor_compare_key(const void *key, const void *object) {
        return strcmp(key, ((const Neighbor *) object)->node_id);
}

void neighbors_init(Neighbors *n, BusPublisher *p) {
        *n = (Neighbors) {
                .table = TABLE_INIT(neighbor_compare_key),
                .publisher = p,
        };
}

void neighbor_edges_free(NeighborEdge *e, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(e[i].interface);
                free(e[i].path);
        }
        free(e);
}

void neighbor_thunderbolt_free(NeighborThunderbolt *t, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(t[i].sysname);
                free(t[i].interface);
        }
        free(t);
}

static Neighbor *neighbor_free(Neighbor *nb) {
        if (!nb)
                return NULL;
        bus_object_done(&nb->bus);
        free(nb->node_id);
        free(nb->derived.hostname);
        strv_free(nb->derived.thunderbolt_host_uuids);
        strv_free(nb->derived.rdma_node_guids);
        strv_free(nb->derived.links);
        strv_free(nb->derived.thunderbolt_peers);
        strv_free(nb->derived.paths);
        free(nb->derived.ring_path);
        free(nb->derived.coordinator_path);
        strv_free(nb->derived.problems);
        neighbor_edges_free(nb->derived.edges, nb->derived.n_edges);
        neighbor_thunderbolt_free(nb->derived.tbt, nb->derived.n_tbt);
        return mfree(nb);
}

void neighbors_done(Neighbors *n) {
        Neighbor *nb;

        TABLE_FOREACH(nb, &n->table)
                neighbor_free(nb);
        table_done(&n->table);
}

Neighbor *neighbor_get(Neighbors *n, const char *node_id) {
        return table_get(&n->table, node_id);
}

int neighbor_object_path(const char *node_id, char **ret) {
        return sd_bus_path_encode(NEIGHBOR_PATH_PREFIX, node_id, ret);
}

int neighbor_ensure(Neighbors *n, const char *node_id, Neighbor **ret) {
        _cleanup_(freep) char *path = NULL;
        Neighbor *nb = neighbor_get(n, node_id);
        int r;

        if (nb) {
                *ret = nb;
                return 0;
        }
        if (table_size(&n->table) >= NEIGHBORS_MAX)
                return -E2BIG;
        r = neighbor_object_path(node_id, &path);
        if (r < 0)
                return r;
        nb = new0(Neighbor, 1);
        if (!nb)
                return -ENOMEM;
        nb->owner = n;
        nb->node_id = strdup(node_id);
        if (!nb->node_id) {
                neighbor_free(nb);
                return -ENOMEM;
        }
        r = table_put(&n->table, nb->node_id, nb);
        if (r < 0) {
                neighbor_free(nb);
                return r;
        }
        bus_object_init(&nb->bus, n->publisher, &neighbor_bus_type, TAKE_PTR(path));
        *ret = nb;
        return 1;
}

void neighbor_remove(Neighbor *nb) {
        Neighbors *n = nb->owner;

        /* InterfacesRemoved needs the object still findable. */
        bus_object_remove(&nb->bus);
        table_remove(&n->table, nb->node_id);
        neighbor_free(nb);
}
