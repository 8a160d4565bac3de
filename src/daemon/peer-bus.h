/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peer-bus.h — org.linkprobe.LinkProbe1.Peer on peer/<key>, and the Manager's peer methods */
#pragma once

#include <systemd/sd-bus.h>

#define PEER_INTERFACE "org.linkprobe.LinkProbe1.Peer"
#define PEER_PATH_PREFIX "/org/linkprobe/LinkProbe1/peer"

typedef struct Manager Manager;

/* Registers the Peer fallback vtable and node enumerator, and ProbePeer/AddPeer/RemovePeer on the
 * root object's Manager interface. */
int peer_bus_register(Manager *m);
