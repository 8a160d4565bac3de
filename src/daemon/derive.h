/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive.h — the derivation pass: every fact that combines objects of several kinds, computed once */
#pragma once

#include "bus-object.h"
#include "derive-health.h"
#include "derive-neighbor.h"
#include "derive-peer.h"
#include "summary.h"

typedef struct Gpus Gpus;
typedef struct Links Links;
typedef struct Pci Pci;
typedef struct Peers Peers;
typedef struct Rdma Rdma;
typedef struct Switches Switches;
typedef struct Reconciler Reconciler;
typedef struct Thunderbolt Thunderbolt;

/*
 * Sources record what the kernel, udev, libibverbs and the probes say, each in its own kind's state,
 * and mark what moved. Once per event-loop iteration, after the sources' re-reads and before any
 * signal, the publisher runs this pass over what was marked. It alone writes the facts that combine
 * kinds, each in exactly one function:
 *
 *   link.derived         SpeedMbps (the driver's, else the Thunderbolt path's), ConnectionType (its own,
 *                        or inherited by an upper device), ThunderboltPeer, RdmaPort
 *   tbt.derived          a peer's NetInterface
 *   rdma_port.derived    NetInterface; a RoCE port is read again when its link's carrier or speed moves
 *   peer.derived         which paths exist for the wanted addresses, SourceInterface, Stale
 *   pci.derived, PciDevice of the other kinds, PathLimitGbps, GetAffinity()   (derive-pci.h)
 *   node.derived         what identifies this node on the wire (Thunderbolt hosts, RDMA GUIDs, MACs)
 *   neighbors            which neighbours exist and all they publish; each path's Neighbor
 *   health               Health and HealthReason of links, RDMA ports, PCI functions and Thunderbolt
 *                        hops; a PCI function's load; an RDMA port's IP traffic   (derive-health.h)
 *   link.derived         Switch and LldpPartnerSpeedsMbps, from the switches' ports   (derive-switch.h)
 *   summary              what an applet shows (FastestLink, ThunderboltPeers, ..., BestPeerPaths)
 *
 * The pass may ask a source to read again (a link whose backing device moved, a RoCE port); the
 * publisher then prepares those objects and runs the pass once more over them.
 */
typedef struct Derive {
        Links *links;
        Thunderbolt *thunderbolt;
        Rdma *rdma;
        DerivePeers peers; /* the peers, what they depend on, and the reconciler told when they move */
        Pci *pci;          /* NULL: no PCIe part (set by the manager after derive_init()) */
        Gpus *gpus;
        Switches *switches; /* NULL: none (set by the manager after derive_init()) */
        DeriveNeighbors neighbors; /* set by the manager: the neighbours and what names them */
        DeriveHealth health;       /* the watch's interval and flag set by the manager */
        Summary summary;
} Derive;

int derive_init(Derive *d, BusPublisher *p, Links *links, Thunderbolt *tbt, Rdma *rdma, Peers *peers);
void derive_done(Derive *d);

/* One pass over the objects the publisher queued since the last: p->dirty[from..to). */
void derive_run(Derive *d, BusPublisher *p, size_t from, size_t to);
