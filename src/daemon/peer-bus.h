/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peer-bus.h — org.linkprobe.LinkProbe1.Peer on peer/<key>, and the Manager's peer methods */
#pragma once

typedef struct Manager Manager;

/* Registers the Peer fallback vtable and node enumerator, and ProbePeer/AddPeer/RemovePeer on the
 * root object's Manager interface. */
int peer_bus_register(Manager *m);
/* Manager's methods that concern peers, on the root object of one connection. */
int peer_bus_attach_root(Manager *m, sd_bus *bus);
