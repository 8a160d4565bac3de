/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the PCIe part of the derivation pass without a bus: the Pci state read from the
 * fixtures (the same path as start-up and Refresh()), links and peers made by hand, and what the pass
 * makes of them: which functions are published (only those behind an object and the bridges above
 * them), the PciDevice cross-links, a peer path's joined limit with its hop named, a Thunderbolt
 * peer's limit from the controller's uplink, the affinity rows, GPU links from KFD and NVML, and that
 * a function that goes away takes its cross-links with it. */
#include <time.h>
#include <umockdev.h>

#include "unit-test.h"

#include "daemon/config.h"
#include "daemon/derive-pci.h"
#include "daemon/gpu.h"
#include "daemon/link.h"
#include "daemon/pci.h"
#include "daemon/peer.h"
#include "daemon/rdma.h"
#include "daemon/tbt.h"
#include "shared/string-util.h"
#include "sysfs/sysfs.h"

typedef struct World {
        UMockdevTestbed *testbed;
        char *sys;
        int root_fd;
        BusPublisher publisher; /* no bus: objects are only queued */
        Config config;
        Pci pci;
        Links links;
        Rdma rdma;
        Gpus gpus;
        Thunderbolt tbt;
        Peers peers;
        DerivePciSources src;
} World;

static World *world_new(const char *fixture) {
        char path[PATH_MAX];
        GError *error = NULL;
        World *w = new0(World, 1);

        assert_non_null(w);
        snprintf(path, sizeof(path), "%s/tests/fixtures/pci/%s", unit_top_dir(), fixture);
        w->testbed = umockdev_testbed_new();
        if (!umockdev_testbed_add_from_file(w->testbed, path, &error))
                fail_msg("%s: %s", path, error ? error->message : "?");
        w->sys = umockdev_testbed_get_sys_dir(w->testbed);
        w->root_fd = sysfs_root_open(w->sys);
        assert_true(w->root_fd >= 0);
        config_init(&w->config);
        pci_init(&w->pci, &w->publisher, w->root_fd);
        links_init(&w->links, &w->publisher, w->root_fd);
        rdma_init(&w->rdma, &w->publisher, NULL, w->root_fd, false);
        gpus_init(&w->gpus, &w->publisher);
        thunderbolt_init(&w->tbt, &w->publisher, w->root_fd);
        peers_init(&w->peers, &w->publisher, &w->config.peers);
        assert_int_equal(pci_enumerate_all(&w->pci), 0);
        assert_int_equal(tbt_enumerate_all(&w->tbt), 0);
        w->src = (DerivePciSources) { .pci = &w->pci, .links = &w->links, .rdma = &w->rdma, .gpus = &w->gpus,
                                      .thunderbolt = &w->tbt, .peers = &w->peers };
        return w;
}

static void world_free(World *w) {
        Peer *p;

        /* Paths made by hand, freed by hand (peers_done expects the reconciler's). */
        TABLE_FOREACH(p, &w->peers.paths) {
                bus_object_done(&p->bus);
                free(p->key);
                free(p->address);
                free(p->peer_address);
                free(p->derived.path_limited_by);
                free(p);
        }
        table_done(&w->peers.paths);
        w->peers.paths = (Table) {};
        peers_done(&w->peers);
        thunderbolt_done(&w->tbt);
        gpus_done(&w->gpus);
        rdma_done(&w->rdma);
        links_done(&w->links);
        pci_done(&w->pci);
        bus_publisher_done(&w->publisher);
        config_done(&w->config);
        safe_close(w->root_fd);
        g_free(w->sys);
        g_object_unref(w->testbed);
        free(w);
}

/* A link as netlink and its sysfs read would leave it. */
static Link *add_link(World *w, int ifindex, const char *name, const char *device_path, uint32_t speed_mbps) {
        Link *l = new0(Link, 1);
        assert_non_null(l);
        l->ifindex = ifindex;
        l->links = &w->links;
        l->name = strdup(name);
        l->name_utf8 = strdup(name);
        l->device_path = strdup_or_null(device_path);
        l->derived.speed_mbps = speed_mbps;
        assert_int_equal(table_put(&w->links.table, &l->ifindex, l), 0);
        assert_int_equal(link_object_path(ifindex, &l->bus.path), 0);
        return l;
}

static Peer *add_peer(World *w, const char *address, int source_ifindex) {
        Peer *p = new0(Peer, 1);
        assert_non_null(p);
        assert_int_equal(peer_address_parse(address, 0, &p->sink, NULL), 0);
        p->owner = &w->peers;
        p->transport = PEER_TRANSPORT_TCP;
        p->key = peer_make_key(PEER_TRANSPORT_TCP, NULL, 0, &p->sink);
        p->address = strdup(address);
        p->peer_address = strdup(address);
        p->derived.source_ifindex = source_ifindex;
        assert_int_equal(table_put(&w->peers.paths, p->key, p), 0);
        return p;
}

static size_t published(World *w) {
        PciObject *o;
        size_t n = 0;

        TABLE_FOREACH(o, &w->pci.functions)
                n += o->published;
        return n;
}

static const char *path_of(const char *address) {
        static char *path = NULL;
        path = mfree(path);
        assert_int_equal(pci_object_path(address, &path), 0);
        return path;
}

static void test_workstation(void **state) {
        World *w = world_new("workstation-x8.umockdev");
        Link *nic = add_link(w, 4, "enp5s0f0", "devices/pci0000:00/0000:00:02.1/0000:05:00.0", 10000);
        Link *veth = add_link(w, 5, "veth0", NULL, 10000);
        Peer *p = add_peer(w, "192.0.2.1", 4);

        derive_pci(&w->src, true);
        /* The NIC and its root port: the GPU is behind no object yet. */
        assert_int_equal(published(w), 2);
        assert_string_equal(nic->derived.pci_device_path, path_of("0000:05:00.0"));
        assert_null(veth->derived.pci_device_path);
        /* 10 Gb/s Ethernet behind 31.5 Gb/s of PCIe: the link limits. */
        assert_true(p->derived.path_limit_gbps == 10.0);
        assert_string_equal(p->derived.path_limited_by, "link enp5s0f0 at 10000 Mb/s");
        assert_int_equal(w->pci.n_affinity, 0); /* one device: no pair */

        /* A 40G NIC would be limited by its slot: Gen3 x4. */
        nic->derived.speed_mbps = 40000;
        derive_pci(&w->src, false);
        assert_true(p->derived.path_limit_gbps > 31.50 && p->derived.path_limit_gbps < 31.51);
        assert_string_equal(p->derived.path_limited_by, "PCIe link 0000:00:02.1 - 0000:05:00.0 at 8.0 GT/s x4 (31.5 Gb/s)");

        /* A GPU from the probe: its function and port are published, trained low (the health judge says
         * whether that is degraded), in the affinity. */
        Gpu *g = NULL;
        assert_int_equal(gpu_new(&w->gpus, 0, "pci:0000:01:00.0@test", &g), 0);
        g->inventory.pci_bus_id = strdup("0000:01:00.0");
        derive_pci(&w->src, false);
        assert_int_equal(published(w), 4);
        PciObject *o = pci_object_get(&w->pci, "0000:01:00.0");
        assert_true(o->published && o->derived.trained_low);
        assert_string_equal(pci_object_get(&w->pci, "0000:00:01.1")->derived.trained_low_below, "0000:01:00.0");
        assert_string_equal(g->derived.pci_device_path, path_of("0000:01:00.0"));
        assert_true(g->derived.pci_path_gbytes > 15.75 && g->derived.pci_path_gbytes < 15.76);
        assert_int_equal(w->pci.n_affinity, 1);
        assert_string_equal(w->pci.affinity[0].relation, "PHB");

        /* The NIC's function goes away: unpublished, its link's PciDevice follows. */
        umockdev_testbed_remove_device(w->testbed, "/sys/devices/pci0000:00/0000:00:02.1/0000:05:00.0");
        assert_int_equal(pci_enumerate_all(&w->pci), 0);
        derive_pci(&w->src, false);
        assert_null(nic->derived.pci_device_path);
        assert_null(pci_object_get(&w->pci, "0000:05:00.0"));
        assert_false(pci_object_get(&w->pci, "0000:00:02.1")->published);
        assert_true(p->derived.path_limit_gbps == 40.0);
        world_free(w);
}

static void test_laptop_thunderbolt(void **state) {
        World *w = world_new("laptop-tb-gen3x4.umockdev");
        Link *tb = add_link(w, 7, "thunderbolt0",
                            "devices/pci0000:00/0000:00:1c.4/0000:05:00.0/0000:06:00.0/0000:07:00.0/domain0/0-0/0-1/0-1.0",
                            40000);
        Peer *p = add_peer(w, "fe80::1%thunderbolt0", 7);
        TbtObject *peer = tbt_object_get(&w->tbt, "0-1"), *domain = tbt_object_get(&w->tbt, "domain0");

        assert_non_null(peer);
        tb->derived.thunderbolt_peer_path = strdup(peer->bus.path);
        derive_pci(&w->src, true);
        assert_string_equal(domain->derived.pci_device_path, path_of("0000:07:00.0"));
        assert_null(peer->derived.pci_device_path);
        assert_true(peer->derived.path_limit_gbps > 31.50 && peer->derived.path_limit_gbps < 31.51);
        assert_string_equal(peer->derived.path_limited_by,
                            "PCIe link 0000:00:1c.4 - 0000:05:00.0 at 8.0 GT/s x4 (31.5 Gb/s)");
        /* The measured path over thunderbolt-net says the same. */
        assert_true(p->derived.path_limit_gbps > 31.50 && p->derived.path_limit_gbps < 31.51);
        assert_string_equal(p->derived.path_limited_by, peer->derived.path_limited_by);
        /* The link and the domain sit on one function. */
        assert_int_equal(w->pci.n_affinity, 1);
        assert_string_equal(w->pci.affinity[0].relation, "X");
        world_free(w);
}

static void test_gpu_links(void **state) {
        World *w = world_new("amd-xgmi.umockdev");

        derive_pci(&w->src, true);
        PciObject *a = pci_object_get(&w->pci, "0000:03:00.0"), *b = pci_object_get(&w->pci, "0000:43:00.0");
        assert_true(a->published && b->published && a->derived.gpu);
        assert_int_equal(a->derived.n_gpu_links, 1);
        assert_string_equal(a->derived.gpu_links[0].type, "XGMI");
        assert_string_equal(a->derived.gpu_links[0].peer_path, b->bus.path);
        assert_true(a->derived.gpu_links[0].max_gbytes == 100.0);
        assert_int_equal(w->pci.n_affinity, 1);
        assert_string_equal(w->pci.affinity[0].relation, "XGMI");

        /* NVLinks from the probe's document, direct and through NVSwitches. */
        json_object *doc = json_tokener_parse(
                "{\"nvml\": {\"status\": \"ok\", \"devices\": ["
                "{\"pci_bus_id\": \"0000:03:00.0\", \"nvlinks\": ["
                "{\"link\": 0, \"version\": 4, \"remote_pci_bus_id\": \"0000:43:00.0\", \"remote_type\": \"gpu\"},"
                "{\"link\": 1, \"version\": 4, \"remote_pci_bus_id\": \"0000:43:00.0\", \"remote_type\": \"gpu\"}]}]}}");
        GpuNvLink *links = NULL;
        size_t n = 0;
        assert_int_equal(gpu_nvlinks_from_json(doc, &links, &n), 1);
        assert_int_equal(n, 1);
        assert_int_equal(links[0].count, 2);
        w->gpus.nvlinks = links;
        w->gpus.n_nvlinks = n;
        w->gpus.changed = true;
        derive_pci(&w->src, false);
        assert_int_equal(a->derived.n_gpu_links, 2);
        assert_string_equal(a->derived.gpu_links[1].type, "NVLink");
        assert_true(a->derived.gpu_links[1].max_gbytes == 50.0);
        assert_string_equal(w->pci.affinity[0].relation, "NV2");
        json_object_put(doc);

        /* Malformed members are refused, absent ones are no links. */
        static const char *const bad[] = {
                "{\"nvml\": {\"status\": \"ok\"}}",
                "{\"nvml\": {\"status\": \"ok\", \"devices\": [{\"pci_bus_id\": \"0000:3:00.0\", \"nvlinks\": []}]}}",
                ("{\"nvml\": {\"status\": \"ok\", \"devices\": [{\"pci_bus_id\": \"0000:03:00.0\", \"nvlinks\": "
                 "[{\"version\": -1, \"remote_pci_bus_id\": \"0000:43:00.0\"}]}]}}"),
                "{\"nvml\": 7}",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                doc = json_tokener_parse(bad[i]);
                assert_true(gpu_nvlinks_from_json(doc, &links, &n) < 0);
                json_object_put(doc);
        }
        doc = json_tokener_parse("{\"nvml\": {\"status\": \"absent\", \"reason\": \"no library\"}}");
        assert_int_equal(gpu_nvlinks_from_json(doc, &links, &n), 0);
        assert_null(links);
        json_object_put(doc);
        world_free(w);
}

/* The figure the issue asks for, as the daemon spends it: enumerating the 8-GPU server's functions (and
 * the KFD topology), then the pass that publishes 50 of them, cross-links 8 GPUs and 9 NICs and makes
 * the 136 affinity rows. */
static void test_server_enumeration_time(void **state) {
        static const char *const gpus[] = { "0000:18:00.0", "0000:1c:00.0", "0000:3a:00.0", "0000:3e:00.0",
                                            "0000:9d:00.0", "0000:a1:00.0", "0000:bd:00.0", "0000:c1:00.0" };
        static const char *const nics[] = { "0000:00:1c.0/0000:05:00.0",
                                            "0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0",
                                            "0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:1a:00.0/0000:1b:01.0/0000:1d:00.0",
                                            "0000:37:01.0/0000:38:00.0/0000:39:01.0/0000:3b:00.0",
                                            "0000:37:03.0/0000:3c:00.0/0000:3d:01.0/0000:3f:00.0",
                                            "0000:9a:01.0/0000:9b:00.0/0000:9c:01.0/0000:9e:00.0",
                                            "0000:9a:03.0/0000:9f:00.0/0000:a0:01.0/0000:a2:00.0",
                                            "0000:ba:01.0/0000:bb:00.0/0000:bc:01.0/0000:be:00.0",
                                            "0000:ba:03.0/0000:bf:00.0/0000:c0:01.0/0000:c2:00.0" };
        World *w = world_new("server-8gpu.umockdev");
        struct timespec t0, t1, t2, t3;

        for (size_t i = 0; i < ELEMENTSOF(nics); i++) {
                char path[256], name[16];
                snprintf(path, sizeof(path), "devices/pci%.7s/%s", nics[i], nics[i]);
                snprintf(name, sizeof(name), "nic%zu", i);
                add_link(w, 10 + (int) i, name, path, 400000);
        }
        for (size_t i = 0; i < ELEMENTSOF(gpus); i++) {
                Gpu *g = NULL;
                char key[64];
                snprintf(key, sizeof(key), "pci:%s@test", gpus[i]);
                assert_int_equal(gpu_new(&w->gpus, (unsigned) i, key, &g), 0);
                g->inventory.pci_bus_id = strdup(gpus[i]);
        }
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(pci_enumerate_all(&w->pci), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        derive_pci(&w->src, true);
        clock_gettime(CLOCK_MONOTONIC, &t2);
        /* Again, as after a change uevent: the names are known, nothing is published anew. */
        w->pci.changed = true;
        derive_pci(&w->src, false);
        clock_gettime(CLOCK_MONOTONIC, &t3);
        assert_int_equal(published(w), 50);
        assert_int_equal(w->pci.n_affinity, 17 * 16 / 2);
        print_message("server-8gpu: enumeration %.2f ms, first derivation pass %.2f ms (50 functions published and "
                      "named from pci.ids, 136 pairs), a later pass %.2f ms\n",
                      (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6,
                      (double) (t2.tv_sec - t1.tv_sec) * 1e3 + (double) (t2.tv_nsec - t1.tv_nsec) / 1e6,
                      (double) (t3.tv_sec - t2.tv_sec) * 1e3 + (double) (t3.tv_nsec - t2.tv_nsec) / 1e6);
        world_free(w);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_workstation),
                cmocka_unit_test(test_laptop_thunderbolt),
                cmocka_unit_test(test_gpu_links),
                cmocka_unit_test(test_server_enumeration_time),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
