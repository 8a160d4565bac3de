/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peer-discover.h — peers found as IPv6 link-local neighbours on links of chosen kinds (Thunderbolt) */
#pragma once

#include <systemd/sd-event.h>

#include "shared/macros.h"

typedef struct Links Links;
typedef struct PeerDiscovery PeerDiscovery;
typedef struct Peers Peers;
typedef struct PeersConfig PeersConfig;

/* The neighbour table moved in a way that may add or remove a discovered peer: run an update. */
typedef void (*peer_discovery_changed_t)(void *userdata);

/*
 * Watches the kernel's IPv6 neighbour table (rtnetlink, libnl's cache manager). A neighbour with a
 * link-local address on a link whose Kind is in [Peers] Discover= (thunderbolt: a thunderbolt-net
 * cable to another host has exactly one) becomes a peer address "fe80::…%ifname" with origin
 * "discovered", and goes again with the neighbour entry (unplugged, link down, entry failed).
 * A neighbour the kernel has not met yet is coaxed out with one ICMPv6 echo to all nodes
 * (ff02::1) on the link, repeated with back-off a few times while nothing answers.
 */
int peer_discovery_new(sd_event *event, Links *links, Peers *peers, const PeersConfig *config,
                       peer_discovery_changed_t changed, void *userdata, PeerDiscovery **ret);
PeerDiscovery *peer_discovery_free(PeerDiscovery *d);

/* Brings the discovered targets in line with the neighbour table and sends the pings that are due.
 * Returns the CLOCK_MONOTONIC time it next wants to run (a ping retry), or UINT64_MAX. */
uint64_t peer_discovery_update(PeerDiscovery *d, uint64_t now);
