/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "probe-util.h"
#include "proto-bulk.h"
#include "tcp-report.h"

/* Whether an end used every CPU it could use: each thread runs on one CPU at a time. */
static bool cpu_bound(uint64_t cpu_usec, uint64_t wall_usec, unsigned threads, unsigned cpus, unsigned *ret_usable) {
        unsigned usable = MAX(MIN(threads, cpus), 1U);

        *ret_usable = usable;
        return wall_usec > 0 && (double) cpu_usec >= TCP_REPORT_CPU_FULL * (double) usable * (double) wall_usec;
}

static double rate_gbps(uint64_t bytes, uint64_t usec) {
        return usec > 0 ? (double) bytes * 8.0 / (double) usec / 1e3 : 0;
}

double tcp_report_direction(json_object *o, json_object *warnings, bool upload, const NetTransfer *t,
                            const NetHost *host) {
        const char *direction = upload ? "upload" : "download";
        const ProtoTestResult *rs = &t->remote;
        json_object *cpu = json_object_new_object();
        unsigned usable, remote_usable = 0;
        bool local_full, remote_full = false;

        json_object_object_add(cpu, "probe_usec", json_object_new_uint64(t->cpu_usec));
        json_object_object_add(cpu, "probe_threads", json_object_new_int((int) t->threads));
        json_object_object_add(cpu, "probe_cpus", json_object_new_int((int) host->n_cpus));
        local_full = cpu_bound(t->cpu_usec, t->wall_usec, t->threads, host->n_cpus, &usable);
        if (rs->have_stats) {
                json_object_object_add(cpu, "responder_usec", json_object_new_uint64(rs->cpu_usec));
                json_object_object_add(cpu, "responder_threads", json_object_new_int((int) rs->threads));
                json_object_object_add(cpu, "responder_cpus", json_object_new_int((int) rs->cpus));
                /* The responder's clock ran from the test's start to this result. */
                remote_full = cpu_bound(rs->cpu_usec, rs->usec, rs->threads, rs->cpus, &remote_usable);
        }
        json_object_object_add(o, "cpu", cpu);

        /* Which end sends: the probe uploading, the responder downloading. */
        bool sender_full = upload ? local_full : remote_full, receiver_full = upload ? remote_full : local_full;
        unsigned sender_used = upload ? usable : remote_usable, receiver_used = upload ? remote_usable : usable;
        unsigned sender_cpus = upload ? host->n_cpus : rs->cpus, receiver_cpus = upload ? rs->cpus : host->n_cpus;
        if (sender_full)
                probe_warn(warnings, "%s: the sender used %u of %u CPUs fully: the link may carry more", direction,
                                sender_used, sender_cpus);
        if (receiver_full)
                probe_warn(warnings, "%s: the receiver used %u of %u CPUs fully: the link may carry more",
                                direction, receiver_used, receiver_cpus);
        json_object_object_add(o, "cpu_limited", sender_full && receiver_full ? json_object_new_string("both")
                                                 : sender_full               ? json_object_new_string("sender")
                                                 : receiver_full             ? json_object_new_string("receiver")
                                                                             : NULL);

        /* Cross traffic: what either end's interface carried in the test's direction beyond the test. */
        /* What the sender sent twice crossed both interfaces twice: not cross traffic. */
        uint64_t retrans = upload ? t->retrans_bytes : rs->have_stats ? rs->retrans_bytes : UINT64_MAX;
        uint64_t local = 0, remote = 0;
        if (t->counters_valid)
                local = upload ? net_host_cross_bytes(t->if_tx_bytes, t->if_tx_packets, t->bytes, retrans)
                               : net_host_cross_bytes(t->if_rx_bytes, t->if_rx_packets, t->bytes, retrans);
        if (rs->have_stats) {
                uint64_t b = upload ? rs->if_rx_bytes : rs->if_tx_bytes, n = upload ? rs->if_rx_packets : rs->if_tx_packets;
                if (b != PROTO_COUNTER_UNKNOWN && n != PROTO_COUNTER_UNKNOWN)
                        remote = net_host_cross_bytes(b, n, t->bytes, retrans);
        }
        double local_gbps = rate_gbps(local, t->wall_usec), remote_gbps = rate_gbps(remote, rs->usec);
        double cross = MAX(local_gbps, remote_gbps);
        json_object_object_add(o, "cross_traffic_gbps", json_object_new_double(cross));
        if (local_gbps > 0 && local_gbps >= remote_gbps)
                probe_warn(warnings, "%s: %s carried %.2f Gbit/s of other traffic during the test: the figure may "
                                          "be low", direction, host->ifname, local_gbps);
        else if (remote_gbps > 0)
                probe_warn(warnings, "%s: the responder's interface carried %.2f Gbit/s of other traffic during "
                                          "the test: the figure may be low", direction, remote_gbps);
        return cross;
}
