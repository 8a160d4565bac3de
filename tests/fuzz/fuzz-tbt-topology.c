/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the Thunderbolt topology: the input describes up to 64 devices with arbitrary kinds, names,
 * parents (itself, a later device, a missing one), rates and generations. Building, walking and the
 * path generation must terminate, and no path may be faster than a link on it. */
#include <inttypes.h>

#include "daemon/tbt-topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RECORD 8
#define DEVICES_MAX 64

typedef struct Walk {
        const TbtTopology *t;
        size_t visits;
} Walk;

static int count_visit(const TbtTopology *t, size_t index, unsigned level, void *userdata) {
        Walk *w = userdata;
        if (t->nodes[index].problems & TBT_PROBLEM_LOOP || level > TBT_TOPOLOGY_DEPTH_MAX)
                abort();
        w->visits++;
        return 0;
}

static TbtDevice *device_from(const uint8_t *r, size_t i) {
        static const unsigned speeds[] = { 0, 10, 20, 40, 80, 1000 };
        static const TbtRouterType router_types[] = { TBT_ROUTER_HOST, TBT_ROUTER_HUB, TBT_ROUTER_DEVICE,
                                                      _TBT_ROUTER_TYPE_INVALID };
        static const TbtPortLink port_links[] = { TBT_PORT_LINK_NONE, TBT_PORT_LINK_USB4, TBT_PORT_LINK_TBT,
                                                  _TBT_PORT_LINK_INVALID };
        TbtDevice *d = calloc(1, sizeof(TbtDevice));
        char name[48];
        unsigned domain;

        if (!d)
                return NULL;
        d->kind = (TbtKind) (r[0] % _TBT_KIND_MAX);
        /* Names that parse as routes (with the route from two bytes) and names that do not. */
        if (r[1] & 0x80)
                snprintf(name, sizeof(name), "x%zu", i);
        else
                snprintf(name, sizeof(name), "%u-%x", r[1] & 1, (unsigned) (r[2] | (r[3] << 8)));
        d->sysname = strdup(name);
        d->router_type = router_types[(r[4] >> 6) & 3];
        d->rx.lanes = r[5] & 3;
        d->tx.lanes = (r[5] >> 2) & 3;
        d->rx.lane_gbps = speeds[(r[5] >> 4) % 6];
        d->tx.lane_gbps = (r[5] & 0x80) ? speeds[(r[6] >> 4) % 6] : d->rx.lane_gbps;
        d->generation = r[6] & 7;
        d->usb4_version = (r[6] >> 3) & 3;
        d->authorized = _TBT_AUTHORIZED_INVALID;
        d->security = _TBT_SECURITY_INVALID;
        d->domain_index = -1;
        if (tbt_parse_router_name(name, &domain, &d->route) >= 0)
                d->has_route = true;
        if (d->kind == TBT_KIND_ROUTER && (r[4] & 1)) {
                d->ports = calloc(1, sizeof(TbtPort));
                if (d->ports) {
                        d->ports[0] = (TbtPort) { r[7] & 63, port_links[(r[4] >> 1) & 3] };
                        d->n_ports = 1;
                }
        }
        return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        TbtDevice *devices[DEVICES_MAX] = {};
        size_t n = MIN(size / RECORD, (size_t) DEVICES_MAX);
        TbtTopology *t = NULL;
        Walk w = {};

        for (size_t i = 0; i < n; i++) {
                devices[i] = device_from(data + i * RECORD, i);
                if (!devices[i] || !devices[i]->sysname)
                        goto finish;
        }
        /* Parents by name, possibly the device itself, possibly none, possibly a missing name. */
        for (size_t i = 0; i < n; i++) {
                uint8_t p = data[i * RECORD + 7];
                if (p == 0xff)
                        continue;
                devices[i]->parent = strdup(p >= n ? "missing" : devices[p % n]->sysname);
        }

        if (tbt_topology_build(devices, n, &t) < 0)
                goto finish;
        if (tbt_topology_walk(t, count_visit, &w) < 0 || w.visits > n)
                abort();
        for (size_t i = 0; i < n; i++) {
                const TbtNode *node = &t->nodes[i];
                unsigned g = tbt_topology_path_generation(t, i);

                if (g != 0 && (g < 3 || g > 5))
                        abort();
                if (!node->has_link)
                        continue;
                if ((node->path_rx_gbps && node->path_rx_gbps > node->link.rx_gbps) ||
                    (node->path_tx_gbps && node->path_tx_gbps > node->link.tx_gbps))
                        abort();
                if (node->link.degraded != (node->link.degraded_reason != NULL))
                        abort();
        }

finish:
        tbt_topology_free(t);
        for (size_t i = 0; i < n; i++)
                tbt_device_free(devices[i]);
        return 0;
}
