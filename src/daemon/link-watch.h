/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-watch.h — the links' part of the watch (watch.h): every link's statistics in one dump */
#pragma once

#include <systemd/sd-event.h>

#include "watch.h"

typedef struct LinkWatch LinkWatch;
typedef struct Links Links;
typedef struct Netlink Netlink;

/* nl: the daemon's rtnetlink (the dump read at once, start-up and old kernels; NULL: nothing to read);
 * the sliced dumps have a socket of their own, opened at the first. */
int link_watch_new(sd_event *event, Netlink *nl, Links *links, LinkWatch **ret);
LinkWatch *link_watch_free(LinkWatch *lw);
DEFINE_TRIVIAL_CLEANUP_FUNC(LinkWatch *, link_watch_free);

/* The sampler: one rtnetlink dump of every link's statistics (netlink.c's at once, or ours in slices),
 * each link's recorded by link_record_stats() (link.c). */
WatchSampler link_watch_sampler(LinkWatch *lw);
