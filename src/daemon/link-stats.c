/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a link does over time: the watch dumps every link's statistics from rtnetlink once per interval
 * (netlink.c) and each lands here: the counters as the kernel says them, the rates over the interval,
 * and the CRC errors and carrier changes of the last minutes for the judgement (derive-health.c).
 */
#include <math.h>

#include "link.h"

static double rate(uint64_t *last, uint64_t value, uint64_t interval) {
        uint64_t bytes;

        if (!counter_advance(last, value, counter_max_bytes(interval), &bytes) || interval == 0)
                return NAN;
        return counter_rate_gbps(bytes, interval);
}

void link_record_stats(Links *links, const LinkStats *s, uint64_t now) {
        Link *l = link_get(links, s->ifindex);
        uint64_t interval, n;

        if (!l)
                return;
        interval = l->watch.sampled && now > l->watch.at ? now - l->watch.at : 0;

        bus_object_set_double(&l->bus, &l->watch.rx_gbps, rate(&l->watch.last_rx, s->rx_bytes, interval), "RxGbps");
        bus_object_set_double(&l->bus, &l->watch.tx_gbps, rate(&l->watch.last_tx, s->tx_bytes, interval), "TxGbps");
        bus_object_set(&l->bus, l->watch.now.rx_errors, s->rx_errors, "RxErrors");
        bus_object_set(&l->bus, l->watch.now.tx_errors, s->tx_errors, "TxErrors");
        bus_object_set(&l->bus, l->watch.now.rx_crc_errors, s->rx_crc_errors, "RxCrcErrors");
        bus_object_set(&l->bus, l->watch.now.rx_dropped, s->rx_dropped, "RxDropped");
        l->watch.now.rx_bytes = s->rx_bytes;
        l->watch.now.tx_bytes = s->tx_bytes;

        /* A new link's first reading counts from its creation, whenever that was. */
        uint64_t events = counter_max_events(interval > 0 ? interval : WINDOW_SPAN_USEC);
        if (counter_advance(&l->watch.last_crc, s->rx_crc_errors, events, &n) && n > 0)
                window_add(&l->watch.crc_errors, now, n);
        /* Carrier changes come with every RTM_NEWLINK (CarrierChanges): what they say at the sample. */
        if (counter_advance(&l->watch.last_carrier, l->carrier_changes, events, &n) && n > 0)
                window_add(&l->watch.carrier_changes, now, n);

        l->watch.sampled = true;
        l->watch.at = now;
}
