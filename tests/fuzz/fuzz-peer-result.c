/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes what the daemon takes from linkprobe-probe-tcp and linkprobe-probe-rdma (or whatever stands
 * in their place): the input is the probe's output and how it ended, judged by the probe runner and
 * applied to a TCP path and to an RDMA path (src/daemon/peer.c) as a finished probe would be. Whatever the
 * probe printed, a path must end in a known state, its figures must be finite, non-negative and
 * bounded, and every string that is published on the bus must be UTF-8 (sd-bus refuses anything
 * else, which would break GetAll and GetManagedObjects for every client). */
#include <arpa/inet.h>
#include <math.h>

#include "daemon/link.h"
#include "daemon/manager.h"
#include "daemon/peer-result.h"
#include "daemon/peer.h"
#include "shared/log.h"
#include "shared/string-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s) {
        if (s && !utf8_is_valid(s))
                abort();
}

static void check_figure(double d) {
        if (!isfinite(d) || d < 0 || d >= 1e12)
                abort();
}

static void check_peer(const Peer *p) {
        if (p->state < 0 || p->state >= _PEER_PROBE_STATE_MAX)
                abort();
        check_figure(p->m.upload_gbps);
        check_figure(p->m.download_gbps);
        check_figure(p->m.rtt_usec);
        check_figure(p->m.jitter_usec);
        check_figure(p->m.jitter_rfc3550_usec);
        check_text(p->m.source_address);
        check_text(p->m.source_interface);
        check_text(p->m.connection_type);
        check_text(p->last_error);
        check_text(p->last_error_message);
        if (p->state == PEER_PROBE_FAILED && !p->last_error)
                abort();
        if (p->state == PEER_PROBE_OK && p->last_error)
                abort();
        /* A far identity is kept only when it is one we could have decoded off the wire. */
        if (p->remote && (!node_hostname_is_valid(p->remote->hostname, strlen(p->remote->hostname)) ||
                          node_id_is_null(p->remote->node_id)))
                abort();
}

/* A link the probe may report as its source, by address or by zone. */
static void add_link(Manager *m, int ifindex, const char *name, const char *v4, const char *v6) {
        Link *l = new0(Link, 1);

        if (!l)
                abort();
        l->ifindex = ifindex;
        l->links = &m->links;
        l->name = strdup(name);
        l->name_utf8 = strdup(name);
        l->addrs.addresses = new0(LinkAddress, 2);
        if (!l->name || !l->name_utf8 || !l->addrs.addresses)
                abort();
        l->addrs.addresses[0].family = AF_INET;
        inet_pton(AF_INET, v4, l->addrs.addresses[0].address);
        l->addrs.addresses[1].family = AF_INET6;
        inet_pton(AF_INET6, v6, l->addrs.addresses[1].address);
        l->addrs.n_addresses = 2;
        if (table_put(&m->links.table, &l->ifindex, l) < 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(manager_freep) Manager *m = NULL;
        ManagerOptions options = {};
        Config config;
        PeerAddress sink;
        Peer *tcp, *rdma;
        ProbeResult r = {};

        if (size < 1 || size > PROBE_OUTPUT_MAX)
                return 0;
        log_set_max_level(LOG_CRIT);
        config_init(&config);
        if (manager_new(&config, &options, &m) < 0)
                abort();
        add_link(m, 2, "eth0", "10.0.0.1", "fe80::1");
        add_link(m, 3, "tb0", "10.1.0.1", "fe80::2");

        if (peer_address_parse("10.0.0.2:7472", 0, &sink, NULL) < 0 ||
            peer_ensure(&m->peers, PEER_TRANSPORT_TCP, NULL, 0, &sink, NULL, &tcp) < 0)
                abort();
        if (peer_address_parse("[fe80::9%tb0]:7471", 0, &sink, NULL) < 0 ||
            peer_ensure(&m->peers, PEER_TRANSPORT_RDMA, "mlx5_0", 1, &sink, "fe80::9%tb0", &rdma) < 0)
                abort();

        /* The first byte picks how the child ended, as in fuzz-probe-output; the rest is its stdout. */
        bool exited = data[0] & 1;
        int status = (data[0] >> 1) % 4;
        probe_result_from_output(&r, (const char *) data + 1, size - 1, exited, exited ? status : 9);
        r.duration_usec = 1234567;
        check_text(r.error_name);
        check_text(r.error_message);

        peer_apply_result(tcp, &r, 1700000000000000);
        peer_apply_result(rdma, &r, 1700000000000000);
        /* What the derivation pass makes of it (the source interface, Stale), as the flush would. */
        bus_publisher_flush(&m->publisher);
        check_peer(tcp);
        check_peer(rdma);
        /* The same result again changes nothing but the failure count. */
        peer_apply_result(tcp, &r, 1700000000000000);
        bus_publisher_flush(&m->publisher);
        check_peer(tcp);
        probe_result_done(&r);
        return 0;
}
