/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the libibverbs layer: every conversion from libibverbs' numbers, port status from a
 * synthetic struct ibv_port_attr, the verbs/sysfs comparison, the quiet "no RDMA" path, and (only
 * where the machine has an RDMA device) opening every device and comparing it with sysfs. */
#include <fcntl.h>
#include <infiniband/verbs.h>

#include "unit-test.h"
#include "daemon/rdma-verbs.h"
#include "shared/string-util.h"
#include "sysfs/sysfs.h"

static void test_speed_and_width(void **state) {
        static const struct {
                uint8_t speed;
                uint32_t speed_ex;
                RdmaSpeed expected;
        } speeds[] = {
                { 1, 0, RDMA_SPEED_SDR },   { 2, 0, RDMA_SPEED_DDR },    { 4, 0, RDMA_SPEED_QDR },
                { 8, 0, RDMA_SPEED_FDR10 }, { 16, 0, RDMA_SPEED_FDR },   { 32, 0, RDMA_SPEED_EDR },
                { 64, 0, RDMA_SPEED_HDR },  { 128, 0, RDMA_SPEED_NDR },  { 0, 256, RDMA_SPEED_XDR },
                /* active_speed_ex wins when set (the kernel leaves active_speed at 0 then). */
                { 128, 256, RDMA_SPEED_XDR }, { 0, 0, RDMA_SPEED_UNKNOWN }, { 3, 0, RDMA_SPEED_UNKNOWN },
                { 255, 0, RDMA_SPEED_UNKNOWN }, { 0, 512, RDMA_SPEED_UNKNOWN },
        };
        static const struct {
                uint8_t width;
                RdmaWidth expected;
        } widths[] = {
                { 1, RDMA_WIDTH_1X },  { 2, RDMA_WIDTH_4X },      { 4, RDMA_WIDTH_8X },      { 8, RDMA_WIDTH_12X },
                { 16, RDMA_WIDTH_2X }, { 0, RDMA_WIDTH_UNKNOWN }, { 3, RDMA_WIDTH_UNKNOWN }, { 32, RDMA_WIDTH_UNKNOWN },
        };

        for (size_t i = 0; i < ELEMENTSOF(speeds); i++)
                assert_int_equal(rdma_speed_from_ibv(speeds[i].speed, speeds[i].speed_ex), speeds[i].expected);
        for (size_t i = 0; i < ELEMENTSOF(widths); i++)
                assert_int_equal(rdma_width_from_ibv(widths[i].width), widths[i].expected);
}

static void test_states_and_types(void **state) {
        assert_int_equal(rdma_port_state_from_ibv(IBV_PORT_NOP), RDMA_PORT_STATE_NOP);
        assert_int_equal(rdma_port_state_from_ibv(IBV_PORT_DOWN), RDMA_PORT_STATE_DOWN);
        assert_int_equal(rdma_port_state_from_ibv(IBV_PORT_INIT), RDMA_PORT_STATE_INIT);
        assert_int_equal(rdma_port_state_from_ibv(IBV_PORT_ARMED), RDMA_PORT_STATE_ARMED);
        assert_int_equal(rdma_port_state_from_ibv(IBV_PORT_ACTIVE), RDMA_PORT_STATE_ACTIVE);
        assert_int_equal(rdma_port_state_from_ibv(IBV_PORT_ACTIVE_DEFER), RDMA_PORT_STATE_ACTIVE_DEFER);
        assert_int_equal(rdma_port_state_from_ibv(6), RDMA_PORT_STATE_UNKNOWN);
        assert_int_equal(rdma_port_state_from_ibv(-1), RDMA_PORT_STATE_UNKNOWN);

        for (uint8_t i = 0; i < _RDMA_PHYS_STATE_MAX; i++)
                assert_int_equal(rdma_phys_state_from_ibv(i), (RdmaPhysState) i);
        assert_int_equal(rdma_phys_state_from_ibv(5), RDMA_PHYS_STATE_LINK_UP);
        assert_int_equal(rdma_phys_state_from_ibv(8), RDMA_PHYS_STATE_UNKNOWN);
        assert_int_equal(rdma_phys_state_from_ibv(255), RDMA_PHYS_STATE_UNKNOWN);

        assert_int_equal(rdma_link_layer_from_ibv(IBV_LINK_LAYER_UNSPECIFIED), RDMA_LINK_LAYER_UNKNOWN);
        assert_int_equal(rdma_link_layer_from_ibv(IBV_LINK_LAYER_INFINIBAND), RDMA_LINK_LAYER_INFINIBAND);
        assert_int_equal(rdma_link_layer_from_ibv(IBV_LINK_LAYER_ETHERNET), RDMA_LINK_LAYER_ETHERNET);
        assert_int_equal(rdma_link_layer_from_ibv(9), RDMA_LINK_LAYER_UNKNOWN);

        assert_int_equal(rdma_node_type_from_ibv(IBV_NODE_UNKNOWN), RDMA_NODE_TYPE_UNKNOWN);
        assert_int_equal(rdma_node_type_from_ibv(IBV_NODE_CA), RDMA_NODE_TYPE_CA);
        assert_int_equal(rdma_node_type_from_ibv(IBV_NODE_SWITCH), RDMA_NODE_TYPE_SWITCH);
        assert_int_equal(rdma_node_type_from_ibv(IBV_NODE_ROUTER), RDMA_NODE_TYPE_ROUTER);
        assert_int_equal(rdma_node_type_from_ibv(IBV_NODE_RNIC), RDMA_NODE_TYPE_RNIC);
        assert_int_equal(rdma_node_type_from_ibv(IBV_NODE_USNIC), RDMA_NODE_TYPE_USNIC);
        assert_int_equal(rdma_node_type_from_ibv(IBV_NODE_USNIC_UDP), RDMA_NODE_TYPE_USNIC_UDP);
        assert_int_equal(rdma_node_type_from_ibv(IBV_NODE_UNSPECIFIED), RDMA_NODE_TYPE_UNSPECIFIED);
        assert_int_equal(rdma_node_type_from_ibv(0), RDMA_NODE_TYPE_UNKNOWN);
        assert_int_equal(rdma_node_type_from_ibv(8), RDMA_NODE_TYPE_UNKNOWN);

        assert_int_equal(rdma_mtu_from_ibv(IBV_MTU_256), 256);
        assert_int_equal(rdma_mtu_from_ibv(IBV_MTU_1024), 1024);
        assert_int_equal(rdma_mtu_from_ibv(IBV_MTU_4096), 4096);
        assert_int_equal(rdma_mtu_from_ibv(0), 0);
        assert_int_equal(rdma_mtu_from_ibv(6), 0);
}

static void test_event_types(void **state) {
        static const struct {
                enum ibv_event_type raw;
                RdmaVerbsEventType type;
        } table[] = {
                { IBV_EVENT_PORT_ACTIVE, RDMA_VERBS_EVENT_PORT_ACTIVE },
                { IBV_EVENT_PORT_ERR, RDMA_VERBS_EVENT_PORT_ERR },
                { IBV_EVENT_LID_CHANGE, RDMA_VERBS_EVENT_LID_CHANGE },
                { IBV_EVENT_PKEY_CHANGE, RDMA_VERBS_EVENT_PKEY_CHANGE },
                { IBV_EVENT_SM_CHANGE, RDMA_VERBS_EVENT_SM_CHANGE },
                { IBV_EVENT_GID_CHANGE, RDMA_VERBS_EVENT_GID_CHANGE },
                { IBV_EVENT_CLIENT_REREGISTER, RDMA_VERBS_EVENT_CLIENT_REREGISTER },
                { IBV_EVENT_DEVICE_FATAL, RDMA_VERBS_EVENT_DEVICE_FATAL },
                { IBV_EVENT_CQ_ERR, RDMA_VERBS_EVENT_OTHER },
                { IBV_EVENT_QP_FATAL, RDMA_VERBS_EVENT_OTHER },
                { IBV_EVENT_SRQ_LIMIT_REACHED, RDMA_VERBS_EVENT_OTHER },
                { IBV_EVENT_WQ_FATAL, RDMA_VERBS_EVENT_OTHER },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                assert_int_equal(rdma_verbs_event_type_from_ibv(table[i].raw), table[i].type);
                assert_non_null(rdma_verbs_event_type_to_string(table[i].type));
        }
        assert_int_equal(rdma_verbs_event_type_from_ibv(1000), RDMA_VERBS_EVENT_OTHER);
        assert_string_equal(rdma_verbs_event_type_to_string(RDMA_VERBS_EVENT_PORT_ACTIVE), "port-active");
        assert_null(rdma_verbs_event_type_to_string(_RDMA_VERBS_EVENT_TYPE_MAX));
        for (RdmaVerbsAvailability a = 0; a < _RDMA_VERBS_AVAILABILITY_MAX; a++)
                assert_non_null(rdma_verbs_availability_to_string(a));
        assert_null(rdma_verbs_availability_to_string(_RDMA_VERBS_AVAILABILITY_INVALID));
}

static void test_status_from_attr(void **state) {
        struct ibv_port_attr attr = {
                .state = IBV_PORT_ACTIVE,
                .phys_state = 5,
                .link_layer = IBV_LINK_LAYER_INFINIBAND,
                .active_width = 2,  /* 4X */
                .active_speed = 64, /* HDR */
                .lid = 0x1a,
                .sm_lid = 1,
                .lmc = 2,
                .sm_sl = 3,
                .port_cap_flags = 0xa651e848,
        };
        RdmaPortStatus s;

        rdma_port_status_from_ibv(&attr, 0, &s);
        assert_int_equal(s.known, _RDMA_PORT_FIELD_ALL);
        assert_int_equal(s.state, RDMA_PORT_STATE_ACTIVE);
        assert_int_equal(s.phys_state, RDMA_PHYS_STATE_LINK_UP);
        assert_int_equal(s.link_layer, RDMA_LINK_LAYER_INFINIBAND);
        assert_int_equal(s.rate.width, RDMA_WIDTH_4X);
        assert_int_equal(s.rate.speed, RDMA_SPEED_HDR);
        assert_int_equal(s.rate.mgbps, 200000);
        assert_int_equal(s.lid, 0x1a);
        assert_int_equal(s.sm_lid, 1);
        assert_int_equal(s.lmc, 2);
        assert_int_equal(s.sm_sl, 3);
        assert_int_equal(s.cap_mask, 0xa651e848);

        /* XDR is only in active_speed_ex. */
        attr.active_speed = 0;
        rdma_port_status_from_ibv(&attr, 256, &s);
        assert_int_equal(s.rate.speed, RDMA_SPEED_XDR);
        assert_int_equal(s.rate.mgbps, 800000);

        /* Values this code does not know leave rate, speed or width unknown, not wrong. */
        attr.active_speed = 3;
        rdma_port_status_from_ibv(&attr, 0, &s);
        assert_false(s.known & (RDMA_PORT_FIELD_SPEED | RDMA_PORT_FIELD_RATE));
        assert_true(s.known & RDMA_PORT_FIELD_WIDTH);
        attr.active_speed = 1;
        attr.active_width = 0;
        rdma_port_status_from_ibv(&attr, 0, &s);
        assert_false(s.known & (RDMA_PORT_FIELD_WIDTH | RDMA_PORT_FIELD_RATE));
        assert_true(s.known & RDMA_PORT_FIELD_SPEED);
}

static void test_compare(void **state) {
        RdmaVerbsPort verbs = {
                .number = 1,
                .status = {
                        .known = _RDMA_PORT_FIELD_ALL,
                        .state = RDMA_PORT_STATE_ACTIVE,
                        .phys_state = RDMA_PHYS_STATE_LINK_UP,
                        .link_layer = RDMA_LINK_LAYER_INFINIBAND,
                        .rate = { 200000, RDMA_WIDTH_4X, RDMA_SPEED_HDR },
                        .lid = 0x1a,
                        .sm_lid = 0x1,
                        .cap_mask = 0xa651e848,
                },
        };
        InfinibandPort sysfs = { .number = 1, .status = verbs.status };
        _cleanup_(freep) char *description = NULL, *more = NULL;
        char *untouched = (char *) "not written";

        /* Equal: the description is set to NULL. */
        assert_int_equal(rdma_verbs_port_compare(&verbs, &sysfs, &untouched), 0);
        assert_null(untouched);
        assert_int_equal(rdma_verbs_port_compare(&verbs, &sysfs, NULL), 0);

        /* The port trained down between the two reads. */
        sysfs.status.rate = (RdmaRate) { 100000, RDMA_WIDTH_2X, RDMA_SPEED_HDR };
        sysfs.status.state = RDMA_PORT_STATE_INIT;
        assert_int_equal(rdma_verbs_port_compare(&verbs, &sysfs, &description),
                         RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_RATE | RDMA_PORT_FIELD_WIDTH);
        assert_string_equal(description, "state: verbs ACTIVE, sysfs INIT; rate: verbs 200 Gb/s (4X HDR), sysfs 100 Gb/s "
                                         "(2X HDR); width: verbs 4X, sysfs 2X");

        /* Numbers are shown the way sysfs writes them; unknown fields on one side do not count. */
        sysfs.status = verbs.status;
        sysfs.status.lid = 0x2b;
        sysfs.status.cap_mask = 0x04010000;
        sysfs.status.known &= ~(unsigned) RDMA_PORT_FIELD_STATE;
        verbs.status.state = RDMA_PORT_STATE_DOWN;
        assert_int_equal(rdma_verbs_port_compare(&verbs, &sysfs, &more), RDMA_PORT_FIELD_LID | RDMA_PORT_FIELD_CAP_MASK);
        assert_string_equal(more, "lid: verbs 0x1a, sysfs 0x2b; cap_mask: verbs 0xa651e848, sysfs 0x04010000");
}

/* Runs fn with stderr going to a temporary file and returns what it printed. */
static char *capture_stderr(int (*fn)(void *), void *userdata, int *ret) {
        char path[] = "/tmp/linkprobe-test-rdma-verbs-XXXXXX";
        char buf[4096];
        ssize_t n;
        int fd, saved;

        fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        assert_true(saved >= 0);
        assert_true(dup2(fd, STDERR_FILENO) >= 0);
        *ret = fn(userdata);
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        n = pread(fd, buf, sizeof(buf) - 1, 0);
        close(fd);
        assert_true(n >= 0);
        buf[n] = '\0';
        return strdup(buf);
}

typedef struct ListCall {
        char **names;
        RdmaVerbsAvailability availability;
} ListCall;

static int call_list(void *userdata) {
        ListCall *c = userdata;
        return rdma_verbs_list(&c->names, &c->availability);
}

static int call_open_missing(void *userdata) {
        RdmaVerbsDevice *d = NULL;
        int r = rdma_verbs_device_open("linkprobe-no-such-device", &d);
        assert_null(d);
        return r;
}

/* Runs everywhere: with RDMA the list is consistent, without it the result is a quiet 0. */
static void test_list(void **state) {
        _cleanup_(freep) char *printed = NULL, *printed_open = NULL;
        ListCall c = { .availability = _RDMA_VERBS_AVAILABILITY_INVALID };
        RdmaVerbsDevice *d = NULL;
        int r;

        printed = capture_stderr(call_list, &c, &r);
        assert_int_equal(r, 0);
        assert_non_null(c.names);
        assert_non_null(rdma_verbs_availability_to_string(c.availability));
        print_message("# libibverbs: %s\n", rdma_verbs_availability_to_string(c.availability));
        if (c.availability == RDMA_VERBS_AVAILABLE)
                assert_true(strv_length(c.names) > 0);
        else {
                assert_int_equal(strv_length(c.names), 0);
                /* "No RDMA" is a normal state: nothing on stderr. */
                assert_string_equal(printed, "");
        }
        strv_free(c.names);

        /* A device that does not exist, RDMA or not. */
        printed_open = capture_stderr(call_open_missing, NULL, &r);
        assert_int_equal(r, -ENODEV);
        if (c.availability != RDMA_VERBS_AVAILABLE)
                assert_string_equal(printed_open, "");
        assert_int_equal(rdma_verbs_device_open("", &d), -EINVAL);
        assert_int_equal(rdma_verbs_device_open(NULL, &d), -EINVAL);
        assert_null(d);
        assert_null(rdma_verbs_device_free(NULL));
}

/* Needs an RDMA device (rdma_rxe over a veth would do); otherwise skipped with the reason. */
static void test_devices(void **state) {
        _cleanup_(strv_freep) char **names = NULL;
        _cleanup_(closep) int root_fd = -EBADF;
        RdmaVerbsAvailability availability;

        assert_int_equal(rdma_verbs_list(&names, &availability), 0);
        if (availability != RDMA_VERBS_AVAILABLE) {
                print_message("# SKIP: %s\n", rdma_verbs_availability_to_string(availability));
                names = strv_free(names); /* skip() does not return through the cleanup handlers */
                skip();
        }
        root_fd = sysfs_root_open("/sys");
        assert_true(root_fd >= 0);

        STRV_FOREACH(name, names) {
                _cleanup_(rdma_verbs_device_freep) RdmaVerbsDevice *v = NULL;
                _cleanup_(infiniband_device_freep) InfinibandDevice *s = NULL;
                RdmaVerbsEvent event;
                int fd, r;

                r = rdma_verbs_device_open(*name, &v);
                if (r == -EACCES || r == -EPERM) {
                        print_message("# %s: %s, not opened\n", *name, strerror(-r));
                        continue;
                }
                assert_int_equal(r, 0);
                assert_string_equal(v->name, *name);
                assert_true(v->n_ports > 0);
                assert_int_not_equal(v->node_type, RDMA_NODE_TYPE_UNKNOWN);

                fd = rdma_verbs_device_get_event_fd(v);
                assert_true(fd >= 0);
                assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
                r = rdma_verbs_device_read_event(v, &event);
                assert_true(r == 0 || r == -EAGAIN);

                assert_int_equal(rdma_verbs_device_query_ports(v), 0);
                assert_int_equal(rdma_verbs_device_query_port(v, 0), -ENOENT);
                assert_int_equal(rdma_verbs_device_query_port(v, (uint32_t) v->n_ports + 1), -ENOENT);

                assert_int_equal(infiniband_device_read(root_fd, *name, &s), 0);
                assert_int_equal(s->node_guid, v->node_guid);
                for (size_t i = 0; i < v->n_ports; i++) {
                        _cleanup_(freep) char *differences = NULL;
                        const InfinibandPort *sp = infiniband_device_get_port(s, v->ports[i].number);

                        assert_non_null(sp);
                        assert_true(v->ports[i].status.known & RDMA_PORT_FIELD_STATE);
                        /* They may differ if a port changes in between; say so, do not fail. */
                        if (rdma_verbs_port_compare(&v->ports[i], sp, &differences) != 0)
                                print_message("# %s/%u: %s\n", *name, sp->number, strna(differences));
                }
        }
}

int main(void) {
        _cleanup_(strv_freep) char **names = NULL;
        RdmaVerbsAvailability availability = RDMA_VERBS_NO_SUBSYSTEM;
        static char skip_name[160];

        /* cmocka's TAP output names a skipped test and nothing else, so the reason goes into the
         * name of the one test that needs a device. */
        if (rdma_verbs_list(&names, &availability) < 0 || availability != RDMA_VERBS_AVAILABLE)
                snprintf(skip_name, sizeof(skip_name), "test_devices: %s", rdma_verbs_availability_to_string(availability));
        else
                snprintf(skip_name, sizeof(skip_name), "test_devices");

        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_speed_and_width),
                cmocka_unit_test(test_states_and_types),
                cmocka_unit_test(test_event_types),
                cmocka_unit_test(test_status_from_attr),
                cmocka_unit_test(test_compare),
                cmocka_unit_test(test_list),
                { skip_name, test_devices, NULL, NULL, NULL },
        };
        return cmocka_run_group_tests_name("rdma-verbs", tests, NULL, NULL);
}
