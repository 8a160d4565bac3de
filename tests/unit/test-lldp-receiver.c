/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LLDP receiver, its switches and the links' Switch, without a wire: frames are handed to it as the
 * socket would, links changed as netlink would, and time moved by hand. */
#include <linux/if.h>
#include <linux/if_arp.h>

#include "unit-test.h"
#include "daemon/derive-switch.h"
#include "daemon/link.h"
#include "daemon/lldp.h"
#include "daemon/switch.h"
#include "shared/log.h"
#include "shared/string-util.h"

/* l is exactly the given strings. */
#define STRV_IS(l, ...) strv_is((l), (const char *const[]) { __VA_ARGS__, NULL })
static bool strv_is(char *const *l, const char *const *want) {
        size_t i = 0;
        for (; want[i]; i++)
                if (!l || !l[i] || !streq(l[i], want[i]))
                        return false;
        return !l || !l[i];
}

typedef struct Fixture {
        sd_event *event;
        BusPublisher publisher; /* no bus: it only queues */
        Links links;
        Switches switches;
        LldpReceiver *lldp;
} Fixture;

static Fixture *fixture_new(void) {
        Fixture *f = new0(Fixture, 1);

        assert_non_null(f);
        log_set_max_level(LOG_CRIT);
        assert_int_equal(sd_event_new(&f->event), 0);
        links_init(&f->links, &f->publisher, -EBADF);
        switches_init(&f->switches, &f->publisher);
        assert_int_equal(lldp_receiver_new_detached(f->event, &f->links, &f->switches, &f->lldp), 0);
        return f;
}

static void fixture_free(Fixture *f) {
        f->lldp = lldp_receiver_free(f->lldp);
        switches_done(&f->switches);
        links_done(&f->links);
        free(f->publisher.dirty);
        sd_event_unref(f->event);
        free(f);
}

/* A link as netlink makes it, told to the receiver as netlink.c would. */
static Link *add_link(Fixture *f, int ifindex, const char *name, const char *kind) {
        Link *l = new0(Link, 1);
        char *path = NULL;

        assert_non_null(l);
        l->ifindex = ifindex;
        l->links = &f->links;
        l->name = strdup(name);
        l->name_utf8 = strdup(name);
        l->info_kind = kind ? strdup(kind) : NULL;
        l->arphrd = ARPHRD_ETHER;
        l->flags = IFF_UP | IFF_RUNNING | IFF_LOWER_UP;
        assert_int_equal(link_object_path(ifindex, &path), 0);
        bus_object_init(&l->bus, &f->publisher, &link_bus_type, path);
        assert_int_equal(table_put(&f->links.table, &l->ifindex, l), 0);
        f->links.hook(l, false, f->links.hook_userdata);
        return l;
}

static void set_flags(Fixture *f, Link *l, unsigned flags) {
        l->flags = flags;
        f->links.hook(l, false, f->links.hook_userdata);
}

typedef struct Frame {
        uint8_t b[512];
        size_t n;
} Frame;

static void tlv(Frame *fr, unsigned type, const void *v, size_t len) {
        fr->b[fr->n++] = (uint8_t) ((type << 1) | (len >> 8));
        fr->b[fr->n++] = (uint8_t) len;
        if (len > 0)
                memcpy(fr->b + fr->n, v, len);
        fr->n += len;
}

/* A switch's LLDPDU: chassis (local subtype, text), port (ifname), TTL, name, capabilities, the 802.3
 * MAC/PHY TLV with MAU type 25GBASE... (unknown here) or 10GBASE-T. */
static Frame lldpdu(const char *chassis, const char *port, uint16_t ttl, const char *name) {
        static const uint8_t head[] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x02, 0, 0, 0, 0, 1, 0x88, 0xcc };
        static const uint8_t caps[] = { 0x00, 0x14, 0x00, 0x14 };
        static const uint8_t macphy[] = { 0x00, 0x12, 0x0f, 1, 0x01, 0x00, 0x00, 0x00, 54 }; /* 10GbaseT */
        uint8_t id[64], t[2] = { (uint8_t) (ttl >> 8), (uint8_t) ttl };
        Frame fr = { .n = sizeof(head) };

        memcpy(fr.b, head, sizeof(head));
        id[0] = LLDP_CHASSIS_LOCAL;
        memcpy(id + 1, chassis, strlen(chassis));
        tlv(&fr, LLDP_TLV_CHASSIS_ID, id, 1 + strlen(chassis));
        id[0] = LLDP_PORT_INTERFACE_NAME;
        memcpy(id + 1, port, strlen(port));
        tlv(&fr, LLDP_TLV_PORT_ID, id, 1 + strlen(port));
        tlv(&fr, LLDP_TLV_TTL, t, 2);
        tlv(&fr, LLDP_TLV_PORT_DESCRIPTION, "to node7", 8);
        if (name)
                tlv(&fr, LLDP_TLV_SYSTEM_NAME, name, strlen(name));
        tlv(&fr, LLDP_TLV_SYSTEM_CAPABILITIES, caps, sizeof(caps));
        tlv(&fr, LLDP_TLV_ORGANIZATION, macphy, sizeof(macphy));
        tlv(&fr, LLDP_TLV_END, NULL, 0);
        return fr;
}

static void receive(Fixture *f, int ifindex, Frame fr, uint64_t now) {
        lldp_receiver_process_frame(f->lldp, ifindex, fr.b, fr.n, now);
}

static void test_neighbor_life(void **state) {
        Fixture *f = fixture_new();
        Link *eth = add_link(f, 3, "lpu-eth0", NULL), *br = add_link(f, 4, "lpu-br0", "bridge");
        uint64_t now = 1000 * USEC_PER_SEC;
        Switch *sw;

        /* A bridge is not listened on: its ports face the wire. */
        receive(f, br->ifindex, lldpdu("leaf-chassis", "Eth1/1", 120, "leaf1"), now);
        assert_int_equal(table_size(&f->switches.table), 0);

        receive(f, eth->ifindex, lldpdu("leaf-chassis", "Eth1/7", 120, "leaf1"), now);
        sw = switch_get(&f->switches, "local-leaf-chassis");
        assert_non_null(sw);
        assert_string_equal(sw->name, "leaf1");
        assert_string_equal(sw->chassis_id, "leaf-chassis");
        assert_true(STRV_IS(sw->sources, "lldp"));
        assert_true(STRV_IS(sw->capabilities, "bridge", "router"));
        assert_int_equal(sw->n_ports, 1);
        assert_string_equal(sw->ports[0].local_path, eth->bus.path);
        assert_string_equal(sw->ports[0].port_id, "Eth1/7");
        assert_string_equal(sw->ports[0].description, "to node7");
        assert_int_equal(sw->ports[0].ethernet.n_speeds, 1);
        assert_int_equal(sw->ports[0].ethernet.speeds_mbps[0], 10000);

        /* The pass: the link faces the switch. */
        assert_true(f->switches.changed);
        derive_links_switch(&f->links, &f->switches);
        assert_string_equal(eth->derived.switch_path, sw->bus.path);
        assert_int_equal(eth->derived.n_lldp_partner_speeds, 1);
        assert_null(br->derived.switch_path);

        /* Refreshed before its TTL: still there past the first deadline. */
        receive(f, eth->ifindex, lldpdu("leaf-chassis", "Eth1/7", 120, "leaf1"), now + 100 * USEC_PER_SEC);
        lldp_receiver_expire(f->lldp, now + 121 * USEC_PER_SEC);
        assert_non_null(switch_get(&f->switches, "local-leaf-chassis"));
        /* Gone at its TTL. */
        lldp_receiver_expire(f->lldp, now + 221 * USEC_PER_SEC);
        assert_null(switch_get(&f->switches, "local-leaf-chassis"));
        assert_int_equal(lldp_receiver_counters(f->lldp)->expired, 1);
        derive_links_switch(&f->links, &f->switches);
        assert_null(eth->derived.switch_path);
        assert_int_equal(eth->derived.n_lldp_partner_speeds, 0);

        /* TTL 0: gone at once. */
        receive(f, eth->ifindex, lldpdu("leaf-chassis", "Eth1/7", 120, "leaf1"), now);
        assert_non_null(switch_get(&f->switches, "local-leaf-chassis"));
        receive(f, eth->ifindex, lldpdu("leaf-chassis", "Eth1/7", 0, NULL), now + 1);
        assert_null(switch_get(&f->switches, "local-leaf-chassis"));

        /* Carrier lost: whatever was there is not now. Down: not listened on any more. */
        receive(f, eth->ifindex, lldpdu("leaf-chassis", "Eth1/7", 120, "leaf1"), now + 2);
        set_flags(f, eth, IFF_UP);
        assert_null(switch_get(&f->switches, "local-leaf-chassis"));
        set_flags(f, eth, IFF_UP | IFF_LOWER_UP);
        receive(f, eth->ifindex, lldpdu("leaf-chassis", "Eth1/7", 120, "leaf1"), now + 3);
        assert_non_null(switch_get(&f->switches, "local-leaf-chassis"));
        set_flags(f, eth, 0);
        assert_null(switch_get(&f->switches, "local-leaf-chassis"));
        receive(f, eth->ifindex, lldpdu("leaf-chassis", "Eth1/7", 120, "leaf1"), now + 4);
        assert_null(switch_get(&f->switches, "local-leaf-chassis"));
        fixture_free(f);
}

static void test_two_links_one_switch(void **state) {
        Fixture *f = fixture_new();
        Link *a = add_link(f, 3, "lpu-eth0", NULL), *b = add_link(f, 5, "lpu-eth1", NULL);
        Switch *sw;

        receive(f, a->ifindex, lldpdu("spine", "Eth1/1", 120, "spine"), USEC_PER_SEC);
        receive(f, b->ifindex, lldpdu("spine", "Eth1/2", 120, "spine"), USEC_PER_SEC);
        sw = switch_get(&f->switches, "local-spine");
        assert_non_null(sw);
        assert_int_equal(sw->n_ports, 2);
        derive_links_switch(&f->links, &f->switches);
        assert_string_equal(a->derived.switch_path, sw->bus.path);
        assert_string_equal(b->derived.switch_path, sw->bus.path);
        /* One port goes: the switch stays for the other. */
        receive(f, a->ifindex, lldpdu("spine", "Eth1/1", 0, NULL), 2 * USEC_PER_SEC);
        assert_int_equal(sw->n_ports, 1);
        derive_links_switch(&f->links, &f->switches);
        assert_null(a->derived.switch_path);
        assert_string_equal(b->derived.switch_path, sw->bus.path);
        fixture_free(f);
}

static void test_bounds(void **state) {
        Fixture *f = fixture_new();
        Link *eth = add_link(f, 3, "lpu-eth0", NULL);
        const LldpCounters *c = lldp_receiver_counters(f->lldp);
        uint64_t now = USEC_PER_SEC;
        char chassis[32];

        /* A flood of distinct chassis, slowly enough for the rate limit: bounded per link. */
        for (unsigned i = 0; i < 3 * LLDP_NEIGHBORS_PER_LINK_MAX; i++) {
                snprintf(chassis, sizeof(chassis), "liar-%u", i);
                receive(f, eth->ifindex, lldpdu(chassis, "p", 120, "liar"), now + i * USEC_PER_SEC);
        }
        assert_int_equal(table_size(&f->switches.table), LLDP_NEIGHBORS_PER_LINK_MAX);
        assert_int_equal(c->neighbors_refused, 2 * LLDP_NEIGHBORS_PER_LINK_MAX);

        /* Frames faster than the rate: the burst passes, the rest is dropped and counted. */
        now += 1000 * USEC_PER_SEC;
        uint64_t before = c->received;
        for (unsigned i = 0; i < 2 * LLDP_FRAMES_BURST; i++)
                receive(f, eth->ifindex, lldpdu("liar-0", "p", 120, "liar"), now);
        assert_int_equal(c->received - before, LLDP_FRAMES_BURST);
        assert_int_equal(c->rate_limited, LLDP_FRAMES_BURST);

        /* A malformed frame is counted and changes nothing. */
        now += 1000 * USEC_PER_SEC;
        Frame bad = lldpdu("liar-0", "p", 120, "liar");
        bad.n = 20;
        receive(f, eth->ifindex, bad, now);
        assert_int_equal(c->malformed, 1);
        assert_int_equal(table_size(&f->switches.table), LLDP_NEIGHBORS_PER_LINK_MAX);
        fixture_free(f);
}

static void test_switches_max(void **state) {
        Switches s;
        BusPublisher pub = {};
        char key[32], link33[] = "/org/linkprobe/LinkProbe1/link/_33", rdma[] = "/org/linkprobe/LinkProbe1/rdma/mlx5_5f0_5f1",
             p[] = "p", port17[] = "17", guid[] = "0x1", x[] = "x", bad_path[] = "not a path";

        log_set_max_level(LOG_CRIT);
        switches_init(&s, &pub);
        for (unsigned i = 0; i < SWITCHES_MAX + 10; i++) {
                snprintf(key, sizeof(key), "chassis-%u", i);
                SwitchPort port = { .local_path = link33, .port_id = p };
                int r = switch_port_set(&s, SWITCH_SOURCE_LLDP, key, &(SwitchInfo) { .name = x }, &port, 1);
                assert_int_equal(r, i < SWITCHES_MAX ? 1 : -E2BIG);
        }
        assert_int_equal(table_size(&s.table), SWITCHES_MAX);
        /* Another source's port on the same switch, and a bad local path. */
        SwitchPort ib = { .local_path = rdma, .port_id = port17 };
        assert_int_equal(switch_port_set(&s, SWITCH_SOURCE_INFINIBAND, "chassis-0", &(SwitchInfo) { .node_guid = guid },
                                         &ib, 2), 1);
        Switch *sw = switch_get(&s, "chassis-0");
        assert_true(STRV_IS(sw->sources, "lldp", "infiniband"));
        assert_string_equal(sw->node_guid, "0x1");
        assert_string_equal(sw->name, "x");
        assert_int_equal(sw->last_seen, 2);
        SwitchPort bad = { .local_path = bad_path, .port_id = p };
        assert_int_equal(switch_port_set(&s, SWITCH_SOURCE_LLDP, "chassis-0", &(SwitchInfo) {}, &bad, 3), -EINVAL);
        switches_remove_local(&s, SWITCH_SOURCE_LLDP, link33);
        assert_int_equal(table_size(&s.table), 1);
        assert_true(STRV_IS(sw->sources, "infiniband"));
        assert_int_equal(switch_port_remove(&s, SWITCH_SOURCE_INFINIBAND, "chassis-0", ib.local_path, "17"), 1);
        assert_int_equal(table_size(&s.table), 0);
        switches_done(&s);
        free(pub.dirty);
}

static void test_firmware_agent(void **state) {
        char names[3][32] = { "link-down-on-close", "disable-fw-lldp", "rs-fec" };
        char ice[2][32] = { "fw-lldp-agent", "legacy-rx" };

        assert_string_equal(lldp_firmware_agent_flag((const char (*)[32]) names, 3, 0), "disable-fw-lldp");
        assert_null(lldp_firmware_agent_flag((const char (*)[32]) names, 3, 1u << 1));
        assert_string_equal(lldp_firmware_agent_flag((const char (*)[32]) ice, 2, 1u << 0), "fw-lldp-agent");
        assert_null(lldp_firmware_agent_flag((const char (*)[32]) ice, 2, 1u << 1));
        assert_null(lldp_firmware_agent_flag((const char (*)[32]) ice, 0, 0));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_neighbor_life),
                cmocka_unit_test(test_two_links_one_switch),
                cmocka_unit_test(test_bounds),
                cmocka_unit_test(test_switches_max),
                cmocka_unit_test(test_firmware_agent),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
