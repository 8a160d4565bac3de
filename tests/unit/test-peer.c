/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for peer paths without a bus: keys, taking in probe results (including nonsense from a
 * misbehaving probe), staleness, when a path is measured again, and the best path to each peer. */
#include <syslog.h>

#include "unit-test.h"
#include "daemon/config.h"
#include "daemon/derive.h"
#include "daemon/peer-result.h"
#include "daemon/peer.h"
#include "shared/log.h"
#include "shared/time-util.h"

/* The paths and targets, published nowhere: a publisher without a bus only queues. */
typedef struct Fixture {
        BusPublisher publisher;
        Config config;
        Peers peers;
} Fixture;

static Fixture *fixture_new(void) {
        Fixture *f = new0(Fixture, 1);
        assert_non_null(f);
        config_init(&f->config);
        peers_init(&f->peers, &f->publisher, &f->config.peers);
        return f;
}

static void fixture_free(Fixture *f) {
        Peer *p;
        TABLE_FOREACH(p, &f->peers.paths) {
                free(p->key);
                free(p->address);
                free(p->peer_address);
                free(p->source_device);
                peer_measurement_done(&p->m);
                free(p->last_error);
                free(p->last_error_message);
                free(p);
        }
        table_done(&f->peers.paths);
        f->peers.paths = (Table) {};
        peers_done(&f->peers);
        bus_publisher_done(&f->publisher);
        config_done(&f->config);
        free(f);
}

/* A path as peer_ensure() makes it, minus the bus object (unpublished objects need no bus). */
static Peer *fake_peer(Fixture *m, PeerTransport t, const char *device, const char *address, const char *peer) {
        Peer *p = new0(Peer, 1);
        assert_non_null(p);
        assert_int_equal(peer_address_parse(address, 0, &p->sink, NULL), 0);
        p->owner = &m->peers;
        p->transport = t;
        p->key = peer_make_key(t, device, 1, &p->sink);
        p->address = strdup(address);
        p->peer_address = strdup(peer ?: address);
        p->derived.stale = true;
        assert_int_equal(table_put(&m->peers.paths, p->key, p), 0);
        return p;
}

static void test_strings_and_keys(void **state) {
        PeerAddress a;
        char *k;

        for (int i = 0; i < _PEER_TRANSPORT_MAX; i++)
                assert_int_equal(peer_transport_from_string(peer_transport_to_string((PeerTransport) i)), i);
        for (int i = 0; i < _PEER_PROBE_STATE_MAX; i++)
                assert_int_equal(peer_probe_state_from_string(peer_probe_state_to_string((PeerProbeState) i)), i);
        assert_int_equal(peer_transport_from_string("udp"), _PEER_TRANSPORT_INVALID);
        assert_int_equal(peer_probe_state_from_string(NULL), _PEER_PROBE_STATE_INVALID);

        assert_int_equal(peer_address_parse("[fe80::1%tb0]:7471", 0, &a, NULL), 0);
        k = peer_make_key(PEER_TRANSPORT_TCP, NULL, 0, &a);
        assert_string_equal(k, "tcp:fe80::1%tb0");
        free(k);
        assert_int_equal(peer_address_parse("10.0.0.2:7472", 0, &a, NULL), 0);
        k = peer_make_key(PEER_TRANSPORT_RDMA, "mlx5_0", 1, &a);
        assert_string_equal(k, "rdma:mlx5_0/1:10.0.0.2:7472");
        free(k);
}

static ProbeResult result_from(const char *json, int status) {
        ProbeResult r = {};
        probe_result_from_output(&r, json, strlen(json), true, status);
        return r;
}

static void test_apply_result(void **state) {
        Fixture *m = fixture_new();
        Peer *p = fake_peer(m, PEER_TRANSPORT_TCP, NULL, "10.0.0.2", NULL);
        uint64_t now = now_usec(CLOCK_REALTIME);
        ProbeResult r;

        r = result_from("{\"status\":\"ok\",\"upload_gbps\":9.5,\"download_gbps\":8,\"rtt_usec\":21.5,"
                        "\"jitter_usec\":1.25,\"jitter_rfc3550_usec\":0.5,\"source\":\"10.0.0.1\"}",
                        0);
        r.duration_usec = 2100000;
        peer_apply_result(p, &r, now);
        probe_result_done(&r);
        assert_int_equal(p->state, PEER_PROBE_OK);
        assert_true(p->m.upload_gbps == 9.5 && p->m.download_gbps == 8 && p->m.rtt_usec == 21.5);
        assert_true(p->m.jitter_usec == 1.25 && p->m.jitter_rfc3550_usec == 0.5);
        assert_string_equal(p->m.source_address, "10.0.0.1");
        assert_true(p->m.measured_at == now && p->m.probe_duration_usec == 2100000);
        assert_false(peer_is_stale(p, now));
        assert_null(p->last_error);

        /* A failure keeps the last measurement and says why. */
        r = result_from("{\"status\":\"error\",\"error\":{\"name\":\"ECONNREFUSED\",\"message\":\"connect: refused\"}}", 1);
        peer_apply_result(p, &r, now + 1);
        probe_result_done(&r);
        assert_int_equal(p->state, PEER_PROBE_FAILED);
        assert_string_equal(p->last_error, "ECONNREFUSED");
        assert_string_equal(p->last_error_message, "connect: refused");
        assert_true(p->m.upload_gbps == 9.5 && p->m.measured_at == now);
        assert_int_equal(p->n_failures, 1);

        r = result_from("{\"status\":\"unsupported\",\"reason\":\"no RDMA device\"}", 0);
        peer_apply_result(p, &r, now + 2);
        probe_result_done(&r);
        assert_int_equal(p->state, PEER_PROBE_UNSUPPORTED);
        assert_string_equal(p->last_error, "unsupported");
        assert_int_equal(p->n_failures, 0);

        /* Nonsense from a probe becomes 0, never a NaN or a negative rate on the bus. */
        r = result_from("{\"status\":\"ok\",\"upload_gbps\":-3,\"download_gbps\":\"fast\",\"rtt_usec\":1e300,"
                        "\"jitter_usec\":null,\"source\":\"\\u00ff\\n\"}",
                        0);
        peer_apply_result(p, &r, now + 3);
        probe_result_done(&r);
        assert_int_equal(p->state, PEER_PROBE_OK);
        assert_true(p->m.upload_gbps == 0 && p->m.download_gbps == 0 && p->m.rtt_usec == 0 && p->m.jitter_usec == 0);

        /* A probe that could not even be judged. */
        r = (ProbeResult) { .outcome = PROBE_OUTCOME_TIMEOUT, .error_name = (char *) "deadline" };
        peer_apply_result(p, &r, now + 4);
        assert_int_equal(p->state, PEER_PROBE_FAILED);
        assert_string_equal(p->last_error, "deadline");
        fixture_free(m);
}

static void test_stale(void **state) {
        Fixture *m = fixture_new();
        Peer *p = fake_peer(m, PEER_TRANSPORT_TCP, NULL, "10.0.0.2", NULL);
        Peer *q = fake_peer(m, PEER_TRANSPORT_RDMA, "mlx5_0", "10.0.0.2", NULL);
        uint64_t now = now_usec(CLOCK_REALTIME);

        m->config.peers.tcp_ttl_usec = 10 * USEC_PER_SEC;
        m->config.peers.rdma_ttl_usec = 100 * USEC_PER_SEC;
        assert_true(peer_ttl_usec(p) == 10 * USEC_PER_SEC && peer_ttl_usec(q) == 100 * USEC_PER_SEC);

        /* Never measured: stale, nothing to wait for. */
        assert_true(peer_expires_at(p) == 0);
        assert_true(peer_is_stale(p, now));

        p->m.measured_at = now - 4 * USEC_PER_SEC;
        q->m.measured_at = now - 40 * USEC_PER_SEC;
        assert_true(peer_expires_at(p) == now + 6 * USEC_PER_SEC);
        assert_false(peer_is_stale(p, now));
        assert_true(peer_expires_at(q) == now + 60 * USEC_PER_SEC);
        assert_false(peer_is_stale(q, now));
        assert_true(peer_is_stale(p, now + 6 * USEC_PER_SEC));
        fixture_free(m);
}

/* Draws chosen by the test, each the most or the least a draw can be, in turn. */
static unsigned n_draws;
static bool draw_high_first;

static uint64_t adversarial_random_below(uint64_t n) {
        bool high = (n_draws++ % 2 == 0) == draw_high_first;
        return high ? n - 1 : 0;
}

static void test_renew_at(void **state) {
        Fixture *m = fixture_new();
        Peer *p = fake_peer(m, PEER_TRANSPORT_TCP, NULL, "10.0.0.2", NULL);
        const uint64_t ttl = USEC_PER_SEC, measured_at = 1000 * USEC_PER_SEC, tick = 100 * USEC_PER_MSEC;
        const uint64_t now = measured_at + 2 * USEC_PER_SEC;

        m->config.peers.tcp_ttl_usec = ttl;
        p->state = PEER_PROBE_OK;
        p->m.measured_at = measured_at;

        /* A probe that takes 0.45 s, the first draw nothing: renewed 0.45 s before the TTL is out, with
         * one draw. (Drawn twice, the second draw, a tenth, made it 0.55 s: inside the first half.) */
        p->m.probe_duration_usec = 450 * USEC_PER_MSEC;
        n_draws = 0;
        draw_high_first = false;
        assert_true(peer_renew_at(p, now, tick, adversarial_random_below) == measured_at + 550 * USEC_PER_MSEC);
        assert_int_equal(n_draws, 1);

        /* Whatever the probe took and whatever is drawn: in the second half of the result's life, and
         * no later than its duration (or half the TTL) before the end. */
        for (uint64_t d = 0; d <= 2 * ttl; d += 10 * USEC_PER_MSEC)
                for (int high = 0; high <= 1; high++) {
                        p->m.probe_duration_usec = d;
                        n_draws = 0;
                        draw_high_first = high;
                        uint64_t at = peer_renew_at(p, now, tick, adversarial_random_below);
                        assert_true(at >= measured_at + ttl / 2);
                        assert_true(at <= measured_at + ttl - MIN(d, ttl / 2));
                        assert_int_equal(n_draws, 1);
                }

        /* A failure backs off from a tick, doubling, up to the TTL, from now (the draws: nothing). */
        p->state = PEER_PROBE_FAILED;
        draw_high_first = false;
        const struct {
                unsigned failures;
                uint64_t after;
        } backoff[] = { { 1, tick }, { 3, 4 * tick }, { 30, ttl } };
        for (size_t i = 0; i < ELEMENTSOF(backoff); i++) {
                p->n_failures = backoff[i].failures;
                n_draws = 0;
                assert_true(peer_renew_at(p, now, tick, adversarial_random_below) == now + backoff[i].after);
        }
        fixture_free(m);
}

static void measured(Peer *p, double up, double down, double rtt, bool stale) {
        p->m.measured_at = 1;
        p->m.upload_gbps = up;
        p->m.download_gbps = down;
        p->m.rtt_usec = rtt;
        p->derived.stale = stale;
}

static void test_best_paths(void **state) {
        Fixture *m = fixture_new();
        Peer **best = NULL;
        size_t n = 0;

        /* Peer 10.0.0.2: a fast RDMA path, a slower TCP path. */
        Peer *tcp2 = fake_peer(m, PEER_TRANSPORT_TCP, NULL, "10.0.0.2", NULL);
        Peer *rdma2 = fake_peer(m, PEER_TRANSPORT_RDMA, "mlx5_0", "10.0.0.2", NULL);
        measured(tcp2, 9, 9, 20, false);
        measured(rdma2, 90, 95, 3, false);
        /* Peer fe80::1: two links; equal bottleneck bandwidth, so the lower RTT wins; the asymmetric
         * path's 40 up does not help it past its 5 down. */
        Peer *ll_a = fake_peer(m, PEER_TRANSPORT_TCP, NULL, "fe80::1%a0", "fe80::1");
        Peer *ll_b = fake_peer(m, PEER_TRANSPORT_TCP, NULL, "fe80::1%b0", "fe80::1");
        Peer *ll_c = fake_peer(m, PEER_TRANSPORT_TCP, NULL, "fe80::1%c0", "fe80::1");
        measured(ll_a, 10, 10, 50, false);
        measured(ll_b, 10, 12, 30, false);
        measured(ll_c, 40, 5, 1, false);
        /* Peer 10.0.0.3: a fresh slow path beats a stale fast one. */
        Peer *fresh = fake_peer(m, PEER_TRANSPORT_TCP, NULL, "10.0.0.3", NULL);
        Peer *old = fake_peer(m, PEER_TRANSPORT_RDMA, "mlx5_0", "10.0.0.3", NULL);
        measured(fresh, 1, 1, 100, false);
        measured(old, 100, 100, 1, true);
        /* Peer 10.0.0.4: never measured, so no best path. */
        (void) fake_peer(m, PEER_TRANSPORT_TCP, NULL, "10.0.0.4", NULL);

        assert_int_equal(peer_best_paths(&m->peers, &best, &n), 0);
        assert_int_equal(n, 3);
        assert_ptr_equal(best[0], rdma2);
        assert_ptr_equal(best[1], fresh);
        assert_ptr_equal(best[2], ll_b);
        free(best);

        /* Once the fast path goes stale too, the fast one wins again. */
        fresh->derived.stale = true;
        assert_int_equal(peer_best_paths(&m->peers, &best, &n), 0);
        assert_ptr_equal(best[1], old);
        free(best);
        fixture_free(m);
}

static void test_best_paths_empty(void **state) {
        Fixture *m = fixture_new();
        Peer **best = NULL;
        size_t n = 1;

        assert_int_equal(peer_best_paths(&m->peers, &best, &n), 0);
        assert_int_equal(n, 0);
        free(best);
        fixture_free(m);
}

static void test_targets(void **state) {
        Fixture *m = fixture_new();
        PeerAddress a;
        PeerTarget *t;

        assert_int_equal(peer_address_parse("10.0.0.2:7471", 0, &a, NULL), 0);
        assert_int_equal(peer_target_add(&m->peers, &a, PEER_ORIGIN_CONFIG, &t), 0);
        assert_int_equal(peer_target_add(&m->peers, &a, PEER_ORIGIN_ADDED, NULL), 0);
        assert_ptr_equal(peer_target_get(&m->peers, "10.0.0.2"), t);
        assert_int_equal(t->origins, PEER_ORIGIN_CONFIG | PEER_ORIGIN_ADDED);
        assert_false(peer_target_drop(&m->peers, t, PEER_ORIGIN_ADDED));
        assert_true(peer_target_drop(&m->peers, t, PEER_ORIGIN_CONFIG));
        assert_null(peer_target_get(&m->peers, "10.0.0.2"));

        /* Bounded: a caller cannot make us keep more than PEER_TARGETS_MAX addresses. */
        for (unsigned i = 0; i < PEER_TARGETS_MAX; i++) {
                char s[32];
                snprintf(s, sizeof(s), "10.1.%u.%u", i / 250, i % 250 + 1);
                assert_int_equal(peer_address_parse(s, 0, &a, NULL), 0);
                assert_int_equal(peer_target_add(&m->peers, &a, PEER_ORIGIN_ADDED, NULL), 0);
        }
        assert_int_equal(peer_address_parse("10.2.0.1", 0, &a, NULL), 0);
        assert_int_equal(peer_target_add(&m->peers, &a, PEER_ORIGIN_ADDED, NULL), -E2BIG);
        fixture_free(m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_strings_and_keys), cmocka_unit_test(test_apply_result),
                cmocka_unit_test(test_stale),            cmocka_unit_test(test_renew_at),
                cmocka_unit_test(test_best_paths),
                cmocka_unit_test(test_best_paths_empty), cmocka_unit_test(test_targets),
        };
        log_set_max_level(LOG_ERR);
        return cmocka_run_group_tests_name("peer", tests, NULL, NULL);
}
