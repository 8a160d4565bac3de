/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-watch.h — the links' part of the watch (watch.h): every link's statistics in one dump */
#pragma once

#include "watch.h"

typedef struct Netlink Netlink;

/* The sampler: one rtnetlink dump of every link's statistics (netlink.c), each link's recorded by
 * link_record_stats() (link.c). */
WatchSampler link_watch_sampler(Netlink *nl);
