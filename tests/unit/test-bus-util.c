/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus_message_append_valid_string() writes a string in place, without sd-bus's UTF-8 check
 * (GetManagedObjects appends a dozen per link): what it writes must read back, through sd-bus's own
 * checks, as the same text sd_bus_message_append_basic() writes, at any alignment. */
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "unit-test.h"
#include "daemon/bus-util.h"
#include "shared/string-util.h"

/* A server connection on a socketpair: enough for sd-bus to build messages, none is sent. */
static sd_bus *bus_new_unconnected(int sv[2]) {
        sd_bus *bus = NULL;
        sd_id128_t id;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(sd_id128_randomize(&id), 0);
        assert_int_equal(sd_bus_new(&bus), 0);
        assert_int_equal(sd_bus_set_fd(bus, sv[1], sv[1]), 0);
        assert_int_equal(sd_bus_set_server(bus, 1, id), 0);
        assert_int_equal(sd_bus_set_anonymous(bus, 1), 0);
        assert_int_equal(sd_bus_start(bus), 0);
        return bus;
}

static void test_valid_string_reads_back(void **state) {
        static const char *const texts[] = {
                "", NULL, "up", "fe80::a085:70ff:fe5f:fbad", "caf\xc3\xa9", "v\\xff\\xfe",
                "org.linkprobe.LinkProbe1.Link",
        };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int sv[2];

        bus = bus_new_unconnected(sv);
        assert_int_equal(sd_bus_message_new_signal(bus, &m, "/a", "org.linkprobe.Test", "Strings"), 0);
        /* Each text after a byte, so that each string starts off its 4-byte alignment, once written in
         * place and once the checked way. */
        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                uint8_t y = (uint8_t) i;
                assert_int_equal(sd_bus_message_append_basic(m, 'y', &y), 0);
                assert_int_equal(bus_message_append_valid_string(m, texts[i]), 0);
                assert_int_equal(sd_bus_message_append_basic(m, 's', strempty(texts[i])), 0);
        }
        assert_int_equal(sd_bus_message_seal(m, 1, 0), 0);
        assert_int_equal(sd_bus_message_rewind(m, true), 1);
        assert_string_equal(sd_bus_message_get_signature(m, true), "yssyssyssyssyssyssyss");

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                const char *in_place, *checked;
                uint8_t y;

                assert_int_equal(sd_bus_message_read(m, "yss", &y, &in_place, &checked), 1);
                assert_int_equal(y, i);
                assert_string_equal(in_place, strempty(texts[i]));
                assert_string_equal(checked, in_place);
        }
        assert_int_equal(sd_bus_message_at_end(m, true), 1);
        safe_close(sv[0]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_valid_string_reads_back),
        };
        return cmocka_run_group_tests_name("bus-util", tests, NULL, NULL);
}
