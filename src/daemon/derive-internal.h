/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-internal.h — the parts of the derivation pass, as derive.c runs them in order */
#pragma once

#include "derive.h"

typedef struct Link Link;
typedef struct Peer Peer;

/* What moved since the last pass, as the sources marked it (the pass clears the marks first, so a
 * re-read it asks for is seen by the next round). */
typedef struct DeriveChanges {
        bool links;       /* links came or went, or changed kind, lowers, name or backing device */
        bool thunderbolt; /* the Thunderbolt tree was rebuilt */
        bool rdma;        /* RDMA ports came or went, or changed interfaces or transport */
} DeriveChanges;

/* derive-link.c: cross-links of links with Thunderbolt peers and RDMA ports, and the facts that
 * follow from them. The whole table when anything moved, else just the links marked. */
void derive_links_relink(Derive *d, const DeriveChanges *changes);
void derive_link_changed(Derive *d, Link *l);

/* derive-peer.c: which paths exist, and each one's source interface and staleness. */
void derive_peers(Derive *d, const DeriveChanges *changes);
void derive_peer_changed(Derive *d, Peer *p);
