/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for peer addresses: the strict parser, the canonical form, hostile input, agreement with
 * the probes' own parser, and the [Peers]/[Reconciler]/[Responder] configuration keys. */
#include <syslog.h>

#include "unit-test.h"
#include "daemon/config.h"
#include "probes/net-client.h"
#include "shared/peer-address.h"
#include "shared/log.h"
#include "shared/parse-util.h"

static const struct {
        const char *input;
        const char *canonical;
} good[] = {
        { "10.0.0.2", "10.0.0.2" },
        { "10.0.0.2:7471", "10.0.0.2" },
        { "10.0.0.2:7472", "10.0.0.2:7472" },
        { "127.0.0.1", "127.0.0.1" },
        { "2001:DB8::1", "2001:db8::1" },
        { "2001:db8:0:0:0:0:0:1", "2001:db8::1" },
        { "[2001:db8::1]", "2001:db8::1" },
        { "[2001:db8::1]:7471", "2001:db8::1" },
        { "[2001:db8::1]:1", "[2001:db8::1]:1" },
        { "fe80::1", "fe80::1" },
        { "fe80::1%eth0", "fe80::1%eth0" },
        { "[fe80::1%thunderbolt0]:7472", "[fe80::1%thunderbolt0]:7472" },
        { "FE80::AB%tb-0.1", "fe80::ab%tb-0.1" },
        { "::1", "::1" },
        { "100.64.1.2:65535", "100.64.1.2:65535" },
};

static const char *const bad[] = {
        "",
        " 10.0.0.2",
        "10.0.0.2 ",
        "10.0.0.2\n",
        "10.0.0.2\t7471",
        "127.1",            /* inet_aton shorthand */
        "0x7f.0.0.1",
        "010.0.0.1",
        "10.0.0.256",
        "10.0.0",
        "host.example.org",
        "localhost",
        "10.0.0.2:",
        "10.0.0.2:0",
        "10.0.0.2:65536",
        "10.0.0.2:07471",
        "10.0.0.2:+1",
        "10.0.0.2:-1",
        "10.0.0.2:1:2",
        "[10.0.0.2]:7471",
        "[2001:db8::1",
        "[2001:db8::1]x",
        "[2001:db8::1]:",
        "2001:db8::1%eth0",  /* zone on a global address */
        "10.0.0.2%eth0",
        "fe80::1%",
        "fe80::1%%",
        "fe80::1%eth0%eth1",
        "fe80::1%eth/0",
        "fe80::1%..",
        "fe80::1%.",
        "fe80::1%0123456789abcdef", /* 16 bytes: longer than IFNAMSIZ allows */
        "fe80::1%eth0\x01",
        "fe80::1%\xc3\xa9th0",
        "0.0.0.0",
        "::",
        "[::]:7471",
        "224.0.0.1",
        "239.255.255.250",
        "255.255.255.255",
        "ff02::1",
        "ff02::1%eth0",
        "::ffff:10.0.0.2",
        "::10.0.0.2",
        ":::",
        "1:2:3:4:5:6:7:8:9",
        "\xff\xfe",
        "[]",
        "[]:7471",
        "%eth0",
};

static void test_good(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                char buf[PEER_ADDRESS_STRING_MAX];
                const char *why = NULL;
                PeerAddress a;
                if (peer_address_parse(good[i].input, 0, &a, &why) < 0)
                        fail_msg("refused \"%s\": %s", good[i].input, why);
                assert_string_equal(peer_address_format(&a, buf), good[i].canonical);
                /* The canonical form parses to itself. */
                PeerAddress again;
                assert_int_equal(peer_address_parse(buf, 0, &again, NULL), 0);
                assert_memory_equal(&a, &again, sizeof(a));
        }
}

static void test_bad(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                const char *why = NULL;
                PeerAddress a;
                if (peer_address_parse(bad[i], 0, &a, &why) != -EINVAL)
                        fail_msg("accepted \"%s\"", bad[i]);
                assert_non_null(why);
                assert_true(strlen(why) > 10);
        }
        /* Too long is refused before anything else looks at it. */
        char long_input[4096];
        memset(long_input, '1', sizeof(long_input) - 1);
        long_input[sizeof(long_input) - 1] = '\0';
        const char *why = NULL;
        PeerAddress a;
        assert_int_equal(peer_address_parse(long_input, 0, &a, &why), -EINVAL);
        assert_string_equal(why, "too long to be an address");
        assert_int_equal(peer_address_parse(NULL, 0, &a, &why), -EINVAL);
}

static void test_listen_addresses(void **state) {
        char buf[PEER_ADDRESS_STRING_MAX];
        PeerAddress a;

        assert_int_equal(peer_address_parse("[::]", PEER_ADDRESS_ALLOW_ANY, &a, NULL), 0);
        assert_true(peer_address_is_any(&a));
        assert_string_equal(peer_address_format_with_port(&a, buf), "[::]:7471");
        assert_int_equal(peer_address_parse("0.0.0.0:7472", PEER_ADDRESS_ALLOW_ANY, &a, NULL), 0);
        assert_string_equal(peer_address_format(&a, buf), "0.0.0.0:7472");
        assert_int_equal(peer_address_parse("224.0.0.1", PEER_ADDRESS_ALLOW_ANY, &a, NULL), -EINVAL);
}

static void test_scope(void **state) {
        const char *why = NULL;
        PeerAddress a;

        assert_int_equal(peer_address_parse("fe80::1", 0, &a, NULL), 0);
        assert_true(peer_address_is_link_local(&a));
        assert_int_equal(peer_address_set_scope(&a, "tb0", &why), 0);
        assert_string_equal(a.scope, "tb0");
        assert_int_equal(peer_address_set_scope(&a, "a/b", &why), -EINVAL);
        assert_int_equal(peer_address_set_scope(&a, "0123456789abcdefXX", &why), -EINVAL);
        assert_int_equal(peer_address_parse("10.0.0.1", 0, &a, NULL), 0);
        assert_int_equal(peer_address_set_scope(&a, "eth0", &why), -EINVAL);
        assert_int_equal(peer_address_parse_host("fe80::2%lo", &a), 0);
        assert_string_equal(a.scope, "lo");
        assert_int_equal(peer_address_parse_host("10.1.2.3:80", &a), -EINVAL);
}

/* Whatever the daemon accepts, the probe it hands the address to accepts too, as the same address. */
static void test_agrees_with_probe_parser(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                char buf[PEER_ADDRESS_STRING_MAX], back[128];
                NetTarget t = {};
                PeerAddress a;

                assert_int_equal(peer_address_parse(good[i].input, 0, &a, NULL), 0);
                if (a.scope[0])
                        continue; /* the probe resolves zones to interfaces this machine may not have */
                peer_address_format_with_port(&a, buf);
                if (net_target_parse_sink(&t, buf) < 0)
                        fail_msg("the probe refuses \"%s\"", buf);
                net_format_address((const struct sockaddr *) &t.sink, true, back, sizeof(back));
                assert_string_equal(back, buf);
        }
}

static char path[] = "/tmp/linkprobe-test-peer-config-XXXXXX";

static int load(Config *c, const char *text) {
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        config_init(c);
        return config_load(c, path, true);
}

static void test_config(void **state) {
        Config c;

        assert_int_equal(load(&c, "[Peers]\nAddress=10.0.0.2 [fe80::1%tb0]:7471\nAddress=10.0.0.2:7471 2001:db8::1\n"
                                  "Discover=thunderbolt veth\nPreSharedKeyFile=/etc/linkprobe/psk\n"
                                  "[Reconciler]\nTickSec=500ms\nTcpTtlSec=2min\nRdmaTtlSec=1h\nTcpDurationSec=250ms\n"
                                  "TcpSamples=7\nRdmaDurationSec=2s\n"
                                  "[Responder]\nListen=[::]:7471 10.0.0.1:7472\nPreSharedKeyFile=/k\nMaxConnections=9\n"
                                  "RatePerSource=3\nBurstPerSource=4\nMaxTestDurationSec=5s\nMaxTestBytes=1G\n"
                                  "HandshakeTimeoutSec=2s\nIdleTimeoutSec=20s\nRDMA=no\n"),
                         0);
        assert_int_equal(strv_length(c.peers.addresses), 3);
        assert_string_equal(c.peers.addresses[0], "10.0.0.2");
        assert_string_equal(c.peers.addresses[1], "fe80::1%tb0");
        assert_string_equal(c.peers.addresses[2], "2001:db8::1");
        assert_int_equal(strv_length(c.peers.discover_kinds), 2);
        assert_string_equal(c.peers.psk_file, "/etc/linkprobe/psk");
        assert_true(c.peers.tick_usec == 500 * USEC_PER_MSEC);
        assert_true(c.peers.tcp_ttl_usec == 120 * USEC_PER_SEC);
        assert_true(c.peers.rdma_ttl_usec == 3600 * USEC_PER_SEC);
        assert_true(c.peers.tcp_duration_usec == 250 * USEC_PER_MSEC);
        assert_int_equal(c.peers.tcp_samples, 7);
        assert_true(c.peers.rdma_duration_usec == 2 * USEC_PER_SEC);
        assert_int_equal(strv_length(c.peers.listen), 2);
        assert_string_equal(c.peers.listen[0], "::");
        assert_string_equal(c.peers.listen[1], "10.0.0.1:7472");
        assert_int_equal(c.peers.max_connections, 9);
        assert_int_equal(c.peers.rate, 3);
        assert_int_equal(c.peers.burst, 4);
        assert_true(c.peers.max_test_bytes == UINT64_C(1) << 30);
        assert_int_equal(c.peers.rdma, 0);
        config_done(&c);

        /* An empty value empties a list; "no" turns discovery off. */
        assert_int_equal(load(&c, "[Peers]\nAddress=10.0.0.2\nAddress=\nAddress=10.0.0.3\nDiscover=thunderbolt\n"
                                  "Discover=no\n"),
                         0);
        assert_int_equal(strv_length(c.peers.addresses), 1);
        assert_string_equal(c.peers.addresses[0], "10.0.0.3");
        assert_int_equal(strv_length(c.peers.discover_kinds), 0);
        config_done(&c);

        /* Defaults. */
        assert_int_equal(load(&c, "\n"), 0);
        assert_true(c.peers.tick_usec == 15 * USEC_PER_SEC);
        assert_true(c.peers.tcp_ttl_usec == 300 * USEC_PER_SEC);
        assert_true(c.peers.rdma_ttl_usec == 6 * 3600 * USEC_PER_SEC);
        assert_null(c.peers.addresses);
        assert_null(c.peers.listen);
        assert_int_equal(c.peers.rdma, -1);
        config_done(&c);
}

static void test_config_bad(void **state) {
        static const char *const bad_config[] = {
                "[Peers]\nAddress=host.example.org\n",
                "[Peers]\nAddress=10.0.0.2 127.1\n",
                "[Peers]\nAddress=0.0.0.0\n",
                "[Peers]\nDiscover=carrier-pigeon\n",
                "[Peers]\nPreSharedKeyFile=relative/psk\n",
                "[Reconciler]\nTickSec=0\n",
                "[Reconciler]\nTickSec=1ms\n",
                "[Reconciler]\nTcpTtlSec=soon\n",
                "[Reconciler]\nTcpDurationSec=2min\n",
                "[Reconciler]\nTcpSamples=0\n",
                "[Responder]\nListen=224.0.0.1\n",
                "[Responder]\nListen=[::]:0\n",
                "[Responder]\nMaxConnections=-1\n",
                "[Responder]\nMaxTestBytes=2T\n",
                "[Responder]\nRDMA=maybe\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad_config); i++) {
                Config c;
                if (load(&c, bad_config[i]) != -EINVAL)
                        fail_msg("accepted: %s", bad_config[i]);
                config_done(&c);
        }
}

static int setup(void **state) {
        int fd = mkstemp(path);
        if (fd < 0)
                return -1;
        close(fd);
        log_set_max_level(LOG_CRIT);
        return 0;
}

static int teardown(void **state) {
        unlink(path);
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_good),
                cmocka_unit_test(test_bad),
                cmocka_unit_test(test_listen_addresses),
                cmocka_unit_test(test_scope),
                cmocka_unit_test(test_agrees_with_probe_parser),
                cmocka_unit_test(test_config),
                cmocka_unit_test(test_config_bad),
        };
        return cmocka_run_group_tests_name("peer-address", tests, setup, teardown);
}
