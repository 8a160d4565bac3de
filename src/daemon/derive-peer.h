/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-peer.h — which measured paths exist, where each leaves from, and whether its result is stale */
#pragma once

#include "shared/macros.h"

typedef struct Links Links;
typedef struct Peer Peer;
typedef struct Peers Peers;
typedef struct Rdma Rdma;
typedef struct Reconciler Reconciler;

/* What the paths are made of, and who is told when they move. */
typedef struct DerivePeers {
        Peers *peers;
        Links *links;
        Rdma *rdma;
        Reconciler *reconciler;
        uint32_t dependencies; /* the signature of what the paths depend on, see derive-peer.c */
} DerivePeers;

/* Expands the wanted addresses into paths when they or what they run over moved, and tells the
 * reconciler; links_changed: links came, went or were renamed, so every path's source is looked up
 * again; link_facts_moved: besides that, a link or the Thunderbolt tree changed in this pass, so
 * every measured path is held against what it runs over now. */
void derive_peers(DerivePeers *d, bool links_changed, bool link_facts_moved);
/* One path the sources marked: SourceInterface (and what it was when measured), Stale. */
void derive_peer_changed(DerivePeers *d, Peer *p);

/* Stale: never measured, or measured longer than its transport's TTL ago (now: CLOCK_REALTIME µs). */
bool peer_is_stale(const Peer *p, uint64_t now);
