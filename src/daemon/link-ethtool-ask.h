/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-ethtool-ask.h — which links are asked of ethtool's netlink family and when; the start's dumps */
#pragma once

#include "link-object.h"

/* Before the name is taken: every link's link modes, speed, duplex and link state from two ethtool dumps
 * (link_ethtool_dump()), for the first flush, instead of a sysfs read and two requests a link, answered
 * after READY=1. Only where the sysfs root is the kernel's own. _begin() starts them on a thread of their
 * own (before the netlink dumps), _end() waits for them and hands each link its replies (after). */
void links_dump_ethtool_begin(Links *links);
void links_dump_ethtool_end(Links *links);
/* At a link's first link_prepare(): applies what the dumps said as the worker's answer would be, and
 * answers true; false when they did not describe it all (it is then asked). */
bool link_apply_dumped_ethtool(Link *l);
/* From now on Ethernet and veth links' link modes are asked of ethtool's netlink family, on every link event
 * and every notification of its monitor group. A failure leaves them unknown. */
int links_start_ethtool(Links *links, sd_event *event);
void links_stop_ethtool(Links *links);
/* Whether the link's kind is asked for link modes (Ethernet, veth): the one predicate for link.c, which
 * asks, and the derivation pass, which says "not an Ethernet link" for the others. */
bool link_asks_ethtool(const Link *l) _pure_;
/* Asks the link's modes and state again (a no-op for a link of another kind, or without the worker). */
void link_request_ethtool(Link *l);
