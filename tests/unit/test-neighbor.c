/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the neighbours part of the derivation pass, without a bus: who is a neighbour, which
 * claims are merged, the problems (spoofing, clones, ourselves), Thunderbolt-only neighbours, bounds,
 * and this node's own identity. */
#include <net/if.h>

#include "unit-test.h"
#include "daemon/config.h"
#include "daemon/derive-neighbor.h"
#include "daemon/link.h"
#include "daemon/neighbor.h"
#include "daemon/node.h"
#include "daemon/peer-result.h"
#include "daemon/peer.h"
#include "daemon/rdma.h"
#include "daemon/tbt.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

/* Everything the pass reads, published nowhere: a publisher without a bus only queues. */
typedef struct Fixture {
        BusPublisher publisher;
        Config config;
        Peers peers;
        Links links;
        Thunderbolt tbt;
        Rdma rdma;
        Node node;
        Neighbors neighbors;
        DeriveNeighbors d;
} Fixture;

static const char *const B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
static const char *const SELF = "11111111111111111111111111111111";

static Fixture *fixture_new(void) {
        Fixture *f = new0(Fixture, 1);

        assert_non_null(f);
        log_set_max_level(LOG_CRIT);
        config_init(&f->config);
        peers_init(&f->peers, &f->publisher, &f->config.peers);
        links_init(&f->links, &f->publisher, -EBADF);
        thunderbolt_init(&f->tbt, &f->publisher, -EBADF);
        rdma_init(&f->rdma, &f->publisher, NULL, -EBADF, false);
        neighbors_init(&f->neighbors, &f->publisher);
        f->node.node_id = strdup(SELF);
        f->node.hostname = strdup("self");
        assert_int_equal(node_id_from_string(SELF, f->node.node_id_bytes), 0);
        memset(f->node.boot_id_bytes, 0x55, NODE_ID_SIZE);
        f->d = (DeriveNeighbors) { .neighbors = &f->neighbors, .node = &f->node, .peers = &f->peers,
                                   .links = &f->links, .thunderbolt = &f->tbt, .rdma = &f->rdma };
        return f;
}

static void fixture_free(Fixture *f) {
        Peer *p;

        neighbors_done(&f->neighbors);
        TABLE_FOREACH_SAFE(p, &f->peers.paths)
                peer_remove(p);
        peers_done(&f->peers);
        thunderbolt_done(&f->tbt);
        rdma_done(&f->rdma);
        links_done(&f->links);
        free(f->node.node_id);
        free(f->node.hostname);
        strv_free(f->node.derived.thunderbolt_host_uuids);
        strv_free(f->node.derived.rdma_node_guids);
        strv_free(f->node.derived.hardware_addresses);
        bus_publisher_done(&f->publisher);
        config_done(&f->config);
        free(f);
}

static NodeIdentity identity(const char *node_id, const char *hostname, uint8_t boot) {
        NodeIdentity id = { .n_thunderbolt = 1 };

        assert_int_equal(node_id_from_string(node_id, id.node_id), 0);
        memset(id.boot_id, boot, NODE_ID_SIZE);
        snprintf(id.hostname, sizeof(id.hostname), "%s", hostname);
        memset(id.thunderbolt[0], boot, 16);
        return id;
}

/* A measured path to address that reached id (NULL: said nothing). */
static Peer *path(Fixture *f, const char *address, const NodeIdentity *id, bool authenticated, double gbps) {
        PeerAddress a;
        Peer *p;

        assert_int_equal(peer_address_parse(address, 0, &a, NULL), 0);
        assert_true(peer_ensure(&f->peers, PEER_TRANSPORT_TCP, NULL, 0, &a, NULL, &p) >= 0);
        p->m.measured_at = now_usec(CLOCK_REALTIME);
        p->m.upload_gbps = p->m.download_gbps = gbps;
        p->m.rtt_usec = 100 / gbps;
        p->state = PEER_PROBE_OK;
        p->derived.stale = false;
        peer_set_remote(p, id, authenticated);
        return p;
}

/* One of our XDomain peers whose far host router is uuid_byte repeated. */
static TbtObject *tbt_peer(Fixture *f, const char *sysname, uint8_t uuid_byte) {
        TbtObject *o = new0(TbtObject, 1);
        uint8_t uuid[16];
        char text[NODE_UUID_STRING_MAX];

        assert_non_null(o);
        memset(uuid, uuid_byte, sizeof(uuid));
        o->sysname = strdup(sysname);
        o->sysname_utf8 = strdup(sysname);
        o->owner = &f->tbt;
        o->published = true;
        o->type = TBT_NODE_PEER;
        o->device = new0(TbtDevice, 1);
        o->device->kind = TBT_KIND_PEER;
        o->device->sysname = strdup(sysname);
        o->device->unique_id = strdup(node_uuid_to_string(uuid, text));
        assert_int_equal(tbt_object_path(sysname, &o->bus.path), 0);
        assert_int_equal(table_put(&f->tbt.objects, o->sysname, o), 0);
        return o;
}

/* A link as netlink would have made it, up. */
static Link *fake_link(Fixture *f, int ifindex, const char *name, LinkKind kind, int master) {
        Link *l = new0(Link, 1);

        assert_non_null(l);
        l->ifindex = ifindex;
        l->links = &f->links;
        l->name = strdup(name);
        l->name_utf8 = strdup(name);
        l->kind = kind;
        l->master_ifindex = master;
        l->flags = IFF_UP | IFF_RUNNING | 0x10000; /* IFF_LOWER_UP */
        assert_int_equal(link_object_path(ifindex, &l->bus.path), 0);
        assert_int_equal(table_put(&f->links.table, &l->ifindex, l), 0);
        return l;
}

static void test_merged_and_best(void **state) {
        Fixture *f = fixture_new();
        NodeIdentity b = identity(B, "node-b", 2);
        Peer *slow = path(f, "10.0.0.2", &b, true, 1), *fast = path(f, "10.0.1.2", &b, true, 10);
        Neighbor *nb;

        path(f, "10.0.2.2", NULL, false, 5); /* said nothing: nobody */
        derive_neighbors(&f->d);
        assert_int_equal(table_size(&f->neighbors.table), 1);
        nb = neighbor_get(&f->neighbors, B);
        assert_non_null(nb);
        assert_string_equal(nb->derived.hostname, "node-b");
        assert_true(nb->derived.authenticated);
        assert_int_equal(strv_length(nb->derived.paths), 2);
        assert_string_equal(nb->derived.ring_path, fast->bus.path);
        assert_string_equal(nb->derived.coordinator_path, fast->bus.path);
        assert_null(nb->derived.problems);
        assert_string_equal(slow->derived.neighbor_path, nb->bus.path);
        /* Two paths, no known links: one edge, the faster path's. */
        assert_int_equal(nb->derived.n_edges, 1);
        assert_string_equal(nb->derived.edges[0].path, fast->bus.path);

        /* The fast path fails: the slow one carries on; then it goes stale too, and so does the neighbour. */
        fast->state = PEER_PROBE_FAILED;
        derive_neighbors(&f->d);
        assert_string_equal(neighbor_get(&f->neighbors, B)->derived.ring_path, slow->bus.path);
        slow->derived.stale = true;
        derive_neighbors(&f->d);
        assert_null(neighbor_get(&f->neighbors, B));
        assert_null(slow->derived.neighbor_path);
        fixture_free(f);
}

static void test_spoofed_claim_is_not_merged(void **state) {
        Fixture *f = fixture_new();
        NodeIdentity b = identity(B, "node-b", 2), liar = identity(B, "evil", 9);
        Peer *real = path(f, "10.0.0.2", &b, true, 1), *rogue = path(f, "10.0.9.9", &liar, false, 50);
        Neighbor *nb;

        derive_neighbors(&f->d);
        nb = neighbor_get(&f->neighbors, B);
        assert_non_null(nb);
        assert_string_equal(nb->derived.hostname, "node-b");
        assert_int_equal(strv_length(nb->derived.paths), 1);
        assert_string_equal(nb->derived.paths[0], real->bus.path);
        assert_string_equal(nb->derived.ring_path, real->bus.path);
        assert_null(rogue->derived.neighbor_path);
        assert_int_equal(strv_length(nb->derived.problems), 1);
        assert_non_null(strstr(nb->derived.problems[0], "10.0.9.9"));
        assert_non_null(strstr(nb->derived.problems[0], "not merged"));
        /* Its Thunderbolt UUID names nothing either: only proved claims count. */
        tbt_peer(f, "0-1", 9);
        derive_neighbors(&f->d);
        assert_null(neighbor_get(&f->neighbors, B)->derived.thunderbolt_peers);

        /* With nobody proving anything, both are taken at their word: one neighbour, two boots, flagged. */
        peer_set_remote(real, &b, false);
        f->d.authenticate = true;
        derive_neighbors(&f->d);
        nb = neighbor_get(&f->neighbors, B);
        assert_false(nb->derived.authenticated);
        assert_int_equal(strv_length(nb->derived.paths), 2);
        assert_true(strv_length(nb->derived.problems) == 2);
        assert_non_null(strstr(nb->derived.problems[0], "Two nodes answer") ?: strstr(nb->derived.problems[1], "Two nodes"));
        fixture_free(f);
}

static void test_clone_or_reboot(void **state) {
        Fixture *f = fixture_new();
        NodeIdentity old = identity(B, "node-b", 2), rebooted = identity(B, "node-b", 3);
        Peer *p1 = path(f, "10.0.0.2", &old, true, 1);
        Peer *p2 = path(f, "10.0.1.2", &rebooted, true, 1);

        /* The second boot began after the first path was measured: a reboot, not a clone. */
        p1->m.measured_at -= 10 * USEC_PER_SEC;
        rebooted.booted_at = p1->m.measured_at + USEC_PER_SEC;
        peer_set_remote(p2, &rebooted, true);
        derive_neighbors(&f->d);
        assert_null(neighbor_get(&f->neighbors, B)->derived.problems);
        /* Both boots alive at once: two machines with one machine ID. */
        rebooted.booted_at = p1->m.measured_at - USEC_PER_SEC;
        peer_set_remote(p2, &rebooted, true);
        derive_neighbors(&f->d);
        assert_int_equal(strv_length(neighbor_get(&f->neighbors, B)->derived.problems), 1);
        assert_non_null(strstr(neighbor_get(&f->neighbors, B)->derived.problems[0], "machine-id"));
        fixture_free(f);
}

static void test_ourselves(void **state) {
        Fixture *f = fixture_new();
        NodeIdentity me = identity(SELF, "self", 0x55), clone = identity(SELF, "self", 0x66);
        Peer *p = path(f, "127.0.0.1", &me, true, 1);

        /* Our own responder, this boot: not a neighbour. */
        derive_neighbors(&f->d);
        assert_int_equal(table_size(&f->neighbors.table), 0);
        /* Another boot answering with our NodeId: a clone of this machine, shown with its problem. */
        peer_set_remote(p, &clone, true);
        derive_neighbors(&f->d);
        Neighbor *nb = neighbor_get(&f->neighbors, SELF);
        assert_non_null(nb);
        assert_non_null(strstr(nb->derived.problems[0], "own NodeId"));
        fixture_free(f);
}

static void test_thunderbolt_names_it(void **state) {
        Fixture *f = fixture_new();
        NodeIdentity b = identity(B, "node-b", 2);
        Peer *p = path(f, "10.0.0.2", &b, true, 1);
        TbtObject *o;
        Neighbor *nb;

        o = tbt_peer(f, "0-1", 2);
        o->path_rx_gbps = o->path_tx_gbps = 40;
        tbt_peer(f, "0-3", 7); /* someone we never heard from */
        derive_neighbors(&f->d);
        nb = neighbor_get(&f->neighbors, B);
        assert_int_equal(strv_length(nb->derived.thunderbolt_peers), 1);
        assert_string_equal(nb->derived.thunderbolt_peers[0], o->bus.path);
        assert_int_equal(nb->derived.n_tbt, 1);
        assert_int_equal(nb->derived.tbt[0].rx_gbps, 40);
        /* The path goes stale, the cable is still in: Thunderbolt alone keeps it named. */
        p->derived.stale = true;
        derive_neighbors(&f->d);
        nb = neighbor_get(&f->neighbors, B);
        assert_non_null(nb);
        assert_null(nb->derived.ring_path);
        assert_string_equal(nb->derived.hostname, "node-b");
        assert_int_equal(table_size(&f->neighbors.table), 1);
        fixture_free(f);
}

static void test_links_and_bridge_loop(void **state) {
        Fixture *f = fixture_new();
        NodeIdentity b = identity(B, "node-b", 2);
        Link *br = fake_link(f, 10, "br0", LINK_KIND_BRIDGE, 0);
        Peer *p;
        Neighbor *nb;

        fake_link(f, 11, "tb0", LINK_KIND_THUNDERBOLT, 10);
        fake_link(f, 12, "tb1", LINK_KIND_THUNDERBOLT, 10);
        p = path(f, "fe80::2%br0", &b, true, 10);
        p->derived.source_ifindex = 10;
        p->m.source_interface = strdup("br0");
        derive_neighbors(&f->d);
        nb = neighbor_get(&f->neighbors, B);
        assert_int_equal(strv_length(nb->derived.links), 1);
        assert_string_equal(nb->derived.links[0], br->bus.path);
        assert_int_equal(strv_length(nb->derived.problems), 1);
        assert_non_null(strstr(nb->derived.problems[0], "bridge br0"));
        assert_non_null(strstr(nb->derived.problems[0], "tb0 and tb1"));
        assert_string_equal(nb->derived.edges[0].interface, "br0");

        /* The bridge goes down: the path is not live, and nothing else names B. */
        br->flags = 0;
        derive_neighbors(&f->d);
        assert_null(neighbor_get(&f->neighbors, B));
        fixture_free(f);
}

static void test_bounded(void **state) {
        Fixture *f = fixture_new();

        /* More NodeIds than neighbours are kept: the rest wait, nothing breaks. */
        for (unsigned i = 0; i < NEIGHBORS_MAX + 20; i++) {
                char id[NODE_ID_STRING_MAX], address[32];
                snprintf(id, sizeof(id), "%032x", i + 0x100);
                snprintf(address, sizeof(address), "10.1.%u.%u", i / 200, i % 200 + 1);
                NodeIdentity n = identity(id, "many", 1);
                path(f, address, &n, false, 1);
        }
        derive_neighbors(&f->d);
        assert_int_equal(table_size(&f->neighbors.table), NEIGHBORS_MAX);
        fixture_free(f);
}

static void test_own_identity(void **state) {
        Fixture *f = fixture_new();
        TbtObject *host = tbt_peer(f, "0-0", 0xab);

        host->type = TBT_NODE_HOST;
        free(host->device->unique_id);
        host->device->unique_id = strdup("ABABABAB-ABAB-ABAB-ABAB-ABABABABABAB");
        derive_node_identity(&f->d);
        assert_true(f->node.derived.has_identity);
        assert_int_equal(f->node.derived.identity_generation, 1);
        assert_string_equal(f->node.derived.thunderbolt_host_uuids[0], "abababab-abab-abab-abab-abababababab");
        assert_int_equal(f->node.derived.identity.n_thunderbolt, 1);
        assert_string_equal(f->node.derived.identity.hostname, "self");
        /* Nothing moved: no new generation, no rewrite of the responder's file. */
        derive_node_identity(&f->d);
        assert_int_equal(f->node.derived.identity_generation, 1);
        /* A hostname with an escape sequence is made safe before it goes on the wire. */
        free(f->node.hostname);
        f->node.hostname = strdup("bad\x1b[2Jname");
        derive_node_identity(&f->d);
        assert_int_equal(f->node.derived.identity_generation, 2);
        assert_string_equal(f->node.derived.identity.hostname, "bad?[2Jname");
        fixture_free(f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_merged_and_best),
                cmocka_unit_test(test_spoofed_claim_is_not_merged),
                cmocka_unit_test(test_clone_or_reboot),
                cmocka_unit_test(test_ourselves),
                cmocka_unit_test(test_thunderbolt_names_it),
                cmocka_unit_test(test_links_and_bridge_loop),
                cmocka_unit_test(test_bounded),
                cmocka_unit_test(test_own_identity),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
