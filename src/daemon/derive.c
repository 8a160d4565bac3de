/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "derive-link.h"
#include "derive-pci.h"
#include "derive-switch.h"
#include "derive.h"
#include "link.h"
#include "neighbor.h"
#include "node.h"
#include "peer.h"
#include "rdma.h"
#include "switch.h"
#include "tbt.h"

int derive_init(Derive *d, BusPublisher *p, Links *links, Thunderbolt *tbt, Rdma *rdma, Peers *peers) {
        *d = (Derive) {
                .links = links,
                .thunderbolt = tbt,
                .rdma = rdma,
                .peers = {
                        .peers = peers,
                        .links = links,
                        .rdma = rdma,
                },
                .health = {
                        .links = links,
                        .rdma = rdma,
                        .thunderbolt = tbt,
                },
        };
        return summary_init(&d->summary, p);
}

void derive_done(Derive *d) {
        summary_done(&d->summary);
}

void derive_run(Derive *d, BusPublisher *p, size_t from, size_t to) {
        /* What the sources marked since the last pass; the marks are cleared first, so that a re-read
         * this pass asks for is seen by the next round. */
        bool links_changed = d->links->topology_changed, thunderbolt_changed = d->thunderbolt->changed,
             rdma_changed = d->rdma->changed;

        d->links->topology_changed = d->thunderbolt->changed = d->rdma->changed = false;

        /* Links first: a path's source interface and the summary read what they get here. The queue
         * is read by index: what this pass queues may move it. */
        if (links_changed || thunderbolt_changed || rdma_changed)
                derive_links_relink(d->links, d->thunderbolt, d->rdma, &d->summary, thunderbolt_changed);
        bool link_facts_moved = links_changed || thunderbolt_changed;
        for (size_t i = from; i < to; i++) {
                BusObject *o = p->dirty[i];
                if (o && o->type == &link_bus_type) {
                        derive_link_changed(d->links, d->rdma, &d->summary, container_of(o, Link, bus));
                        link_facts_moved = true;
                }
        }

        /* Which switch each link faces: after links came or went, or a switch's ports moved. */
        if (d->switches && (d->switches->changed || links_changed || rdma_changed)) {
                d->switches->changed = false;
                derive_links_switch(d->links, d->switches);
                derive_rdma_ports_switch(d->rdma, d->switches);
        }

        derive_peers(&d->peers, links_changed, link_facts_moved);
        for (size_t i = from; i < to; i++) {
                BusObject *o = p->dirty[i];
                if (o && o->type == &peer_bus_type)
                        derive_peer_changed(&d->peers, container_of(o, Peer, bus));
        }

        /* After the links and paths: PciDevice, path limits and affinity read what they got above. */
        bool pci_rebuilt = false;
        if (d->pci && d->gpus)
                pci_rebuilt = derive_pci(&(DerivePciSources) {
                                   .pci = d->pci,
                                   .links = d->links,
                                   .rdma = d->rdma,
                                   .gpus = d->gpus,
                                   .thunderbolt = d->thunderbolt,
                                   .peers = d->peers.peers,
                           },
                           links_changed || thunderbolt_changed || rdma_changed);

        /* After the PCIe tree and the links' cross-links: a function's load is its links' traffic. */
        d->health.pci = d->pci;
        derive_health(&d->health, p, from, to, pci_rebuilt);

        /* Who this node is on the wire, and who its neighbours are: after the paths they are named by. */
        if (d->neighbors.neighbors) {
                bool identity_moved = links_changed || thunderbolt_changed || rdma_changed || !d->neighbors.node_derived;
                for (size_t i = from; i < to && !identity_moved; i++) {
                        BusObject *o = p->dirty[i];
                        identity_moved = o && (o == &d->neighbors.node->bus || o->type == &link_bus_type);
                }
                if (identity_moved)
                        derive_node_identity(&d->neighbors);
                derive_neighbors(&d->neighbors);
        }

        /* Last: it summarizes everything above. */
        summary_update(&d->summary, d->links, d->thunderbolt, d->rdma, d->peers.peers);
        if (d->neighbors.neighbors)
                summary_update_neighbors(&d->summary, d->neighbors.neighbors);
}
