/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the SMP decoder and the best-common judgement: answers captured from ibsim 0.10
 * (infiniband-diags' iblinkinfo printed the "Could be" each case expects, on the same fabric), a
 * ConnectX-6 at EDR on an HDR switch as /work/shared/realdata's iblinkinfo capture shows it, XDR, and
 * answers no SMA may send. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit-test.h"

#include "daemon/ib-smp.h"

static void hex(const char *s, uint8_t out[static IB_SMP_DATA_SIZE]) {
        assert_int_equal(strlen(s), 2 * IB_SMP_DATA_SIZE);
        for (size_t i = 0; i < IB_SMP_DATA_SIZE; i++) {
                unsigned v;
                assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
                out[i] = v;
        }
}

static void set_bits(uint8_t *data, unsigned off, unsigned width, uint64_t v) {
        for (unsigned i = 0; i < width; i++) {
                unsigned bit = off + width - 1 - i;
                uint8_t mask = 1u << (7 - bit % 8);
                data[bit / 8] = (v >> i) & 1 ? data[bit / 8] | mask : data[bit / 8] & ~mask;
        }
}

/* What ibsim answered to a client attached to Hca2, whose port is enabled for 1X only (w=1) on a
 * switch port enabled for all widths: iblinkinfo prints "Could be 12X" and no speed remark. */
static const char *hca2_local = "00000000000000000000000000000000000000000050c04800000ff901011f0172520047404000080804e040000000000000201f000000000000000000304707";
static const char *hca2_remote_node = "0101020800000000002000000000000000200000000000000020000000080000000000a102000000000000000000000000000000000000000000000000000000";
static const char *hca2_remote = "00000000000000000000000000000000000000000000000000000000021f1f0172520047404000080804e0400000000000000000000000000000000000004707";
static const char *switch_port0 = "00000000000000000000000000000000000000000000c04800000ff9021f1f02745200171040000808030040000000000000011f080000000000000000300000";
/* Hca3: extended speeds enabled for FDR only (e=1): "Could be 53.125 Gbps" (HDR). */
static const char *hca3_local = "00000000000000000000000000000000000000000050c04800000ff9011f1f0872520047404000080804e040000000000000201f000000000000000000301701";
static const char *hca3_remote = "00000000000000000000000000000000000000000000000000000000031f1f0872520047404000080804e0400000000000000000000000000000000000001707";
/* Hca4: SDR only, no extended speeds (s=1 e=0): "Could be 10.0 Gbps" (QDR). */
static const char *hca4_local = "00000000000000000000000000000000000000000050c04800000ff9011f1f0872520011404000080804e040000000000000201f000000000000000000300000";
static const char *hca4_remote = "00000000000000000000000000000000000000000000000000000000041f1f0872520017404000080804e0400000000000000000000000000000000000000000";

static void parse_pi(const char *s, IbPortInfo *p) {
        uint8_t d[IB_SMP_DATA_SIZE];
        const char *problem = NULL;

        hex(s, d);
        if (ib_smp_parse_port_info(d, p, &problem) < 0)
                fail_msg("%s", problem);
}

static void test_node_info(void **state) {
        uint8_t d[IB_SMP_DATA_SIZE];
        IbNodeInfo n;

        hex(hca2_remote_node, d);
        assert_int_equal(ib_smp_parse_node_info(d, &n, NULL), 0);
        assert_int_equal(n.node_type, RDMA_NODE_TYPE_SWITCH);
        assert_int_equal(n.num_ports, 8);
        assert_int_equal(n.node_guid, 0x0000000000200000);
        assert_int_equal(n.sys_image_guid, 0x0000000000200000);
        assert_int_equal(n.port_guid, 0x0000000000200000);
        assert_int_equal(n.local_port, 2); /* Hca2 is cabled to Switch1 port 2 */
}

static void test_node_info_garbage(void **state) {
        static const struct {
                unsigned off, width;
                uint64_t value;
        } table[] = {
                { 0, 8, 2 },          /* base version */
                { 16, 8, 0 },         /* node type */
                { 16, 8, 4 },         /* an RNIC: never an SMA */
                { 24, 8, 0 },         /* no ports */
                { 288, 8, 9 },        /* local port past NumPorts */
                { 96, 64, 0 },        /* no GUID */
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                uint8_t d[IB_SMP_DATA_SIZE];
                const char *problem = NULL;
                IbNodeInfo n = { .num_ports = 77 };

                hex(hca2_remote_node, d);
                set_bits(d, table[i].off, table[i].width, table[i].value);
                assert_int_equal(ib_smp_parse_node_info(d, &n, &problem), -EBADMSG);
                assert_non_null(problem);
                assert_int_equal(n.num_ports, 77); /* untouched */
        }
        /* A CA's local port 0 is no port; a switch's is its management port. */
        {
                uint8_t d[IB_SMP_DATA_SIZE];
                IbNodeInfo n;
                hex(hca2_remote_node, d);
                set_bits(d, 288, 8, 0);
                assert_int_equal(ib_smp_parse_node_info(d, &n, NULL), 0);
                set_bits(d, 16, 8, 1);
                assert_int_equal(ib_smp_parse_node_info(d, &n, NULL), -EBADMSG);
        }
        /* All ones: every field out of range at once. */
        {
                uint8_t d[IB_SMP_DATA_SIZE];
                memset(d, 0xff, sizeof(d));
                assert_int_equal(ib_smp_parse_node_info(d, &(IbNodeInfo) {}, NULL), -EBADMSG);
                assert_int_equal(ib_smp_parse_port_info(d, &(IbPortInfo) {}, NULL), -EBADMSG);
        }
}

/* The name an NVIDIA switch's owners gave it: NAME of "MF0;NAME:MODEL/U1"; nothing for other shapes. */
static void test_switch_name(void **state) {
        _cleanup_(freep) char *quantum = ib_node_description_name("MF0;d32-03-1:MQM8700/U1");
        _cleanup_(freep) char *bare = ib_node_description_name("MF0;leaf7:MSB7800");

        assert_string_equal(quantum, "d32-03-1");
        assert_string_equal(bare, "leaf7");
        assert_null(ib_node_description_name("Switch1"));
        assert_null(ib_node_description_name("MF0;:MQM8700/U1"));
        assert_null(ib_node_description_name("MF0;no-model"));
        assert_null(ib_node_description_name(""));
        assert_null(ib_node_description_name(NULL));
}

static void test_node_description(void **state) {
        uint8_t d[IB_SMP_DATA_SIZE] = {};
        _cleanup_(freep) char *s = NULL, *full = NULL, *empty = NULL;

        /* An NVIDIA Quantum switch as the realdata capture names it. */
        memcpy(d, "MF0;d32-03-1:MQM8700/U1  ", 25);
        assert_int_equal(ib_smp_parse_node_description(d, &s), 0);
        assert_string_equal(s, "MF0;d32-03-1:MQM8700/U1");
        /* 64 bytes and no NUL: all of them, nothing past. */
        memset(d, 'x', sizeof(d));
        assert_int_equal(ib_smp_parse_node_description(d, &full), 0);
        assert_int_equal(strlen(full), 64);
        memset(d, 0, sizeof(d));
        assert_int_equal(ib_smp_parse_node_description(d, &empty), 0);
        assert_string_equal(empty, "");
}

static void test_port_info_fields(void **state) {
        IbPortInfo p;

        parse_pi(hca2_local, &p);
        assert_int_equal(p.cap_mask, 0x0050c048);
        assert_int_equal(p.cap_mask2, 0x0030);
        assert_int_equal(p.local_port, 1);
        assert_int_equal(p.state, RDMA_PORT_STATE_INIT);
        assert_int_equal(p.phys_state, RDMA_PHYS_STATE_LINK_UP);
        assert_int_equal(p.width_enabled, 0x01);
        assert_int_equal(p.width_supported, 0x1f);
        assert_int_equal(p.width_active, 0x01);
        assert_int_equal(p.speed_supported, 7);
        assert_int_equal(p.speed_active, 4);
        assert_int_equal(p.speed_enabled, 7);
        assert_int_equal(p.ext_active, 4);
        assert_int_equal(p.ext_supported, 7);
        assert_int_equal(p.ext_enabled, 7);
        assert_int_equal(ib_port_active_width(&p), RDMA_WIDTH_1X);
        assert_int_equal(ib_port_active_speed(&p), RDMA_SPEED_HDR);
}

static void judge(const char *local, const char *remote, const char *remote_port0, IbLinkJudgement *j) {
        IbPortInfo l, r, r0;

        parse_pi(local, &l);
        parse_pi(remote, &r);
        parse_pi(remote_port0, &r0);
        ib_link_judge(&l, &l, &r, &r0, j);
}

static void test_judge_ibsim(void **state) {
        IbLinkJudgement j;

        judge(hca2_local, hca2_remote, switch_port0, &j);
        assert_true(j.degraded);
        assert_int_equal(j.best_width, RDMA_WIDTH_12X);
        assert_int_equal(j.best_speed, RDMA_SPEED_HDR);
        assert_int_equal(j.best_mgbps, 600000);
        assert_string_equal(j.reason, "1X while both ends support 12X");

        judge(hca3_local, hca3_remote, switch_port0, &j);
        assert_true(j.degraded);
        assert_int_equal(j.active_speed, RDMA_SPEED_FDR);
        assert_int_equal(j.best_speed, RDMA_SPEED_HDR);
        assert_string_equal(j.reason, "FDR while both ends support HDR");

        judge(hca4_local, hca4_remote, switch_port0, &j);
        assert_true(j.degraded);
        assert_int_equal(j.active_speed, RDMA_SPEED_SDR);
        assert_int_equal(j.best_speed, RDMA_SPEED_QDR);
        assert_int_equal(j.best_mgbps, 120000);
        assert_string_equal(j.reason, "SDR while both ends support QDR");

        /* The switch's own external port carries no capability mask: judged by it, the switch has no
         * extended speeds, and only SDR..QDR count (which is why port 0 is asked). */
        {
                IbPortInfo l, r;
                parse_pi(hca3_local, &l);
                parse_pi(hca3_remote, &r);
                ib_link_judge(&l, &l, &r, &r, &j);
                assert_int_equal(j.best_speed, RDMA_SPEED_QDR);
                assert_false(j.degraded);
        }
}

/* A PortInfo built field by field. */
static void build(uint8_t d[static IB_SMP_DATA_SIZE], uint32_t cap, uint16_t cap2, unsigned wsup, unsigned wact,
                  unsigned ssup, unsigned sact, unsigned esup, unsigned eact, unsigned e2sup, unsigned e2act,
                  unsigned phys) {
        memset(d, 0, IB_SMP_DATA_SIZE);
        set_bits(d, 160, 32, cap);
        set_bits(d, 224, 8, 1);
        set_bits(d, 240, 8, wsup);
        set_bits(d, 248, 8, wact);
        set_bits(d, 256, 4, ssup);
        set_bits(d, 260, 4, 4); /* Active */
        set_bits(d, 264, 4, phys);
        set_bits(d, 280, 4, sact);
        set_bits(d, 449, 2, e2act);
        set_bits(d, 451, 2, e2sup);
        set_bits(d, 480, 16, cap2);
        set_bits(d, 496, 4, eact);
        set_bits(d, 500, 4, esup);
}

static void test_judge_hardware(void **state) {
        uint8_t a[IB_SMP_DATA_SIZE], b[IB_SMP_DATA_SIZE];
        IbPortInfo l, r;
        IbLinkJudgement j;

        /* realdata: "10 21[ ] ==( 4X 25.78125 Gbps Active/ LinkUp)==> 40 1[ ] "node3 HCA-2" ( Could be
         * 53.125 Gbps)": a ConnectX-6 (capability mask 0x2651e848, widths 1X 2X 4X, FDR EDR HDR) at EDR
         * on a Quantum port with the same sets. */
        build(a, 0x2651e848, 0, 0x13, IB_WIDTH_4X, 7, 4, 7, IB_EXT_EDR, 0, 0, 5);
        build(b, 0x0242c848, 0, 0x13, IB_WIDTH_4X, 7, 4, 7, IB_EXT_EDR, 0, 0, 5);
        assert_int_equal(ib_smp_parse_port_info(a, &l, NULL), 0);
        assert_int_equal(ib_smp_parse_port_info(b, &r, NULL), 0);
        ib_link_judge(&l, &l, &r, &r, &j);
        assert_true(j.degraded);
        assert_int_equal(j.best_width, RDMA_WIDTH_4X);
        assert_int_equal(j.best_speed, RDMA_SPEED_HDR);
        assert_int_equal(j.best_mgbps, 200000);
        assert_string_equal(j.reason, "EDR while both ends support HDR");

        /* Its uplink "40[ ] ==( 4X 53.125 Gbps Active/ LinkUp)": nothing to say. */
        build(a, 0x0242c848, 0, 0x13, IB_WIDTH_4X, 7, 4, 7, IB_EXT_HDR, 0, 0, 5);
        assert_int_equal(ib_smp_parse_port_info(a, &l, NULL), 0);
        ib_link_judge(&l, &l, &l, &l, &j);
        assert_false(j.degraded);
        assert_string_equal(j.reason, "");

        /* XDR on both ends (CapabilityMask2 says LinkSpeedExt*2 are valid) at NDR and 2X. */
        build(a, 0x2651e848 | IB_PORT_CAP_HAS_CAP_MASK2, IB_PORT_CAP2_EXT_SPEEDS_2, 0x13, IB_WIDTH_2X, 7, 4, 0xf,
              IB_EXT_NDR, 1, 0, 5);
        assert_int_equal(ib_smp_parse_port_info(a, &l, NULL), 0);
        ib_link_judge(&l, &l, &l, &l, &j);
        assert_int_equal(j.best_speed, RDMA_SPEED_XDR);
        assert_int_equal(j.best_width, RDMA_WIDTH_4X);
        assert_int_equal(j.best_mgbps, 800000);
        assert_string_equal(j.reason, "2X while both ends support 4X; NDR while both ends support XDR");
        /* Running XDR: the extended speed 2 wins over the older fields. */
        build(b, 0x2651e848 | IB_PORT_CAP_HAS_CAP_MASK2, IB_PORT_CAP2_EXT_SPEEDS_2, 0x13, IB_WIDTH_4X, 7, 4, 0xf,
              0, 1, 1, 5);
        assert_int_equal(ib_smp_parse_port_info(b, &r, NULL), 0);
        assert_int_equal(ib_port_active_speed(&r), RDMA_SPEED_XDR);
        ib_link_judge(&r, &r, &l, &l, &j);
        assert_false(j.degraded);
        /* A neighbour without the CapabilityMask2 bit cannot claim XDR: NDR is the best. */
        build(b, 0x2651e848, 0, 0x13, IB_WIDTH_4X, 7, 4, 0xf, IB_EXT_NDR, 1, 0, 5);
        assert_int_equal(ib_smp_parse_port_info(b, &r, NULL), 0);
        ib_link_judge(&l, &l, &r, &r, &j);
        assert_int_equal(j.best_speed, RDMA_SPEED_NDR);
        assert_string_equal(j.reason, "2X while both ends support 4X");

        /* A link that is not up: the active fields are whatever the port left there, never judged. */
        build(a, 0x2651e848, 0, 0x13, 0x03, 7, 0, 7, 0, 0, 0, 2);
        assert_int_equal(ib_smp_parse_port_info(a, &l, NULL), 0);
        ib_link_judge(&l, &l, &r, &r, &j);
        assert_false(j.degraded);
}

static void test_port_info_garbage(void **state) {
        static const struct {
                unsigned off, width;
                uint64_t value;
        } table[] = {
                { 260, 4, 0 },   /* state */
                { 260, 4, 6 },
                { 264, 4, 0 },   /* phys state */
                { 264, 4, 9 },
                { 248, 8, 0x03 }, /* two widths active */
                { 248, 8, 0x20 }, /* a width that does not exist */
                { 248, 8, 0x00 },
                { 496, 4, 0x03 }, /* two extended speeds */
                { 496, 4, 0x0f },
                { 449, 2, 2 },    /* extended speed 2 that is not XDR */
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                uint8_t d[IB_SMP_DATA_SIZE];
                const char *problem = NULL;
                IbPortInfo p;

                hex(hca2_local, d);
                set_bits(d, table[i].off, table[i].width, table[i].value);
                if (ib_smp_parse_port_info(d, &p, &problem) != -EBADMSG)
                        fail_msg("case %zu accepted", i);
                assert_non_null(problem);
        }
        /* The active width must be among the supported ones. */
        {
                uint8_t d[IB_SMP_DATA_SIZE];
                hex(hca2_local, d);
                set_bits(d, 240, 8, 0x02);
                assert_int_equal(ib_smp_parse_port_info(d, &(IbPortInfo) {}, NULL), -EBADMSG);
        }
        /* No extended speed and SDR..QDR active field that is two speeds. */
        {
                uint8_t d[IB_SMP_DATA_SIZE];
                hex(hca4_local, d);
                set_bits(d, 280, 4, 3);
                assert_int_equal(ib_smp_parse_port_info(d, &(IbPortInfo) {}, NULL), -EBADMSG);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_node_info),        cmocka_unit_test(test_node_info_garbage),
                cmocka_unit_test(test_node_description), cmocka_unit_test(test_port_info_fields),
                cmocka_unit_test(test_switch_name),
                cmocka_unit_test(test_judge_ibsim),      cmocka_unit_test(test_judge_hardware),
                cmocka_unit_test(test_port_info_garbage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
