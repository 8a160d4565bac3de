/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-speed.h — speed and duplex read off the event loop: those sysfs reads wait for the RTNL lock */
#pragma once

#include "shared/macros.h"

typedef struct Link Link;
typedef struct Manager Manager;
typedef struct LinkSpeedReader LinkSpeedReader;

/*
 * The kernel answers /sys/class/net/<if>/speed and duplex under the RTNL lock, which it holds while
 * it brings links up and down (milliseconds, around synchronize_net()). Read on the event loop,
 * every flap of one link would hold up every event of all the others. One worker thread does those
 * reads; the loop sends it requests and applies the answers through link_apply_speed().
 */
int link_speed_reader_new(Manager *m, LinkSpeedReader **ret);
LinkSpeedReader *link_speed_reader_free(LinkSpeedReader *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(LinkSpeedReader *, link_speed_reader_free);

/* Queues a read for the link; a newer request for it supersedes an older one's answer. -EAGAIN when
 * the queue is full (the caller reads in place). */
int link_speed_reader_request(LinkSpeedReader *r, Link *l);
