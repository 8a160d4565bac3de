/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Links over time: the watch's sampler for network links. The kernel hands every link's statistics in
 * one dump (netlink_sample_stats()), and each answer is recorded on its link by link_record_stats():
 * the counters as published, the rates over the interval, the CRC errors and carrier changes of the
 * last minutes for the health judge. The recorder still sits in link.c beside the link's other state.
 */
#include "link-watch.h"
#include "netlink.h"

static int sample(void *source, uint64_t now, uint64_t interval_usec, size_t *ret_n) {
        if (!source) /* no rtnetlink socket: nothing to read, and nothing to say */
                return 0;
        return netlink_sample_stats(source, now, ret_n);
}

WatchSampler link_watch_sampler(Netlink *nl) {
        return (WatchSampler) {
                .objects = "links",
                .sample = sample,
                .source = nl,
                .failed = "Cannot read link statistics, rates and link health stay unknown",
                .recovered = "Link statistics can be read again.",
        };
}
