/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an RDMA port does over time (the RDMA ports' part of the watch, watch.h): the sampler reads its counters (symbol errors, link error
 * recoveries, link downs, receive errors, transmit discards, data in and out) every interval and each
 * reading lands here: the counters as published, the data rates over the interval, recent errors and
 * link changes for the judgement (derive-health.c).
 */
#include <math.h>

#include "rdma-watch.h"
#include "shared/log.h"

static const char *const counter_property[_INFINIBAND_COUNTER_MAX] = {
        [INFINIBAND_SYMBOL_ERROR] = "SymbolErrors",
        [INFINIBAND_LINK_ERROR_RECOVERY] = "LinkErrorRecoveries",
        [INFINIBAND_LINK_DOWNED] = "LinkDowned",
        [INFINIBAND_PORT_RCV_ERRORS] = "RcvErrors",
        [INFINIBAND_PORT_XMIT_DISCARDS] = "XmitDiscards",
        [INFINIBAND_PORT_RCV_DATA] = NULL, /* published as a rate */
        [INFINIBAND_PORT_XMIT_DATA] = NULL,
};

static Window *counter_window(RdmaPort *p, InfinibandCounter i) {
        switch (i) {
        case INFINIBAND_SYMBOL_ERROR:
                return &p->watch.symbol_errors;
        case INFINIBAND_PORT_RCV_ERRORS:
                return &p->watch.rcv_errors;
        case INFINIBAND_LINK_DOWNED:
                return &p->watch.link_downed;
        case INFINIBAND_LINK_ERROR_RECOVERY:
                return &p->watch.link_recoveries;
        case INFINIBAND_PORT_XMIT_DISCARDS:
        case INFINIBAND_PORT_RCV_DATA:
        case INFINIBAND_PORT_XMIT_DATA:
        case _INFINIBAND_COUNTER_MAX:
        case _INFINIBAND_COUNTER_INVALID:
                break;
        }
        return NULL;
}

void rdma_port_record_counters(RdmaPort *p, const InfinibandCounters *c, int n, uint64_t now) {
        uint64_t interval = p->watch.sampled && now > p->watch.at ? now - p->watch.at : 0;
        double rate[2] = { NAN, NAN };

        for (InfinibandCounter i = 0; i < _INFINIBAND_COUNTER_MAX; i++) {
                uint64_t v = c ? c->value[i] : COUNTER_UNKNOWN, increase;
                bool data = i == INFINIBAND_PORT_RCV_DATA || i == INFINIBAND_PORT_XMIT_DATA;
                Window *w = counter_window(p, i);
                bool known;

                if (counter_property[i])
                        bus_object_set(&p->bus, p->watch.value[i], v, counter_property[i]);
                else
                        p->watch.value[i] = v;
                /* A new port's first reading counts from its appearance, whenever that was. */
                known = counter_advance(&p->watch.last[i], v,
                                        data ? counter_max_bytes(interval)
                                             : counter_max_events(interval > 0 ? interval : WINDOW_SPAN_USEC),
                                        &increase);
                if (data && known && interval > 0)
                        rate[i == INFINIBAND_PORT_XMIT_DATA] = counter_rate_gbps(increase, interval);
                if (w && known && increase > 0)
                        window_add(w, now, increase);
        }
        bus_object_set_double(&p->bus, &p->watch.rx_gbps, rate[0], "RxGbps");
        bus_object_set_double(&p->bus, &p->watch.tx_gbps, rate[1], "TxGbps");
        p->watch.any = n > 0;
        p->watch.sampled = true;
        p->watch.at = now;
        bus_object_queue(&p->bus);
}

static int sample(void *source, uint64_t now, uint64_t interval_usec, size_t *ret_n) {
        Rdma *rdma = source;
        InfinibandCounters c;
        RdmaPort *p;
        size_t n = 0;
        int r;

        TABLE_FOREACH(p, &rdma->ports) {
                r = infiniband_port_counters_read(rdma->sysfs_fd, p->device, p->number, &c);
                if (r < 0)
                        /* Gone meanwhile: its removal is on its way. Nothing is known now. */
                        log_rdma_debug(p, "Cannot read the counters: %s", strerror(-r));
                rdma_port_record_counters(p, r >= 0 ? &c : NULL, r, now);
                n++;
        }
        *ret_n = n;
        return 0;
}

WatchSampler rdma_watch_sampler(Rdma *rdma) {
        return (WatchSampler) { .objects = "RDMA ports", .sample = sample, .source = rdma };
}
