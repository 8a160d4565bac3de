/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "derive-internal.h"
#include "link.h"
#include "peer.h"
#include "rdma.h"
#include "tbt.h"

int derive_init(Derive *d, BusPublisher *p, Links *links, Thunderbolt *tbt, Rdma *rdma, Peers *peers) {
        *d = (Derive) {
                .links = links,
                .thunderbolt = tbt,
                .rdma = rdma,
                .peers = peers,
        };
        return summary_init(&d->summary, p);
}

void derive_done(Derive *d) {
        summary_done(&d->summary);
}

void derive_run(Derive *d, BusPublisher *p, size_t from, size_t to) {
        DeriveChanges changes = {
                .links = d->links->topology_changed,
                .thunderbolt = d->thunderbolt->changed,
                .rdma = d->rdma->changed,
        };

        d->links->topology_changed = d->thunderbolt->changed = d->rdma->changed = false;

        /* Links first: a path's source interface and the summary read what they get here. The queue
         * is read by index: what this pass queues may move it. */
        if (changes.links || changes.thunderbolt || changes.rdma)
                derive_links_relink(d, &changes);
        for (size_t i = from; i < to; i++) {
                BusObject *o = p->dirty[i];
                if (o && o->type == &link_bus_type)
                        derive_link_changed(d, container_of(o, Link, bus));
        }

        derive_peers(d, &changes);
        for (size_t i = from; i < to; i++) {
                BusObject *o = p->dirty[i];
                if (o && o->type == &peer_bus_type)
                        derive_peer_changed(d, container_of(o, Peer, bus));
        }

        /* Last: it summarizes everything above. */
        summary_update(&d->summary, d->links, d->thunderbolt, d->rdma, d->peers);
}
