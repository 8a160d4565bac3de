/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd-bus, like dbus-daemon (tests/integration/test_hostile_bus.py), refuses a string that is not UTF-8:
 * a server-side sd-bus connection on a socketpair is sent hand-marshalled method calls, and reading the
 * argument the way every method of ours does (sd_bus_message_read(m, "s", ...)) fails with -EBADMSG for
 * the bad ones, so the method answers with an error and never holds such a string. So no code of ours
 * has to cope with one, whatever bus the daemon sits on. */
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "unit-test.h"

typedef struct Buf {
        uint8_t data[512];
        size_t n;
} Buf;

static void pad(Buf *b, size_t align) {
        while (b->n % align)
                b->data[b->n++] = 0;
}

static void put_u32(Buf *b, uint32_t v) {
        pad(b, 4);
        memcpy(b->data + b->n, &v, 4); /* little endian, as the 'l' in the header says (x86, arm64) */
        b->n += 4;
}

static void put_string(Buf *b, const char *s, size_t len) {
        put_u32(b, (uint32_t) len);
        memcpy(b->data + b->n, s, len);
        b->n += len;
        b->data[b->n++] = 0;
}

static void put_signature(Buf *b, const char *s) {
        b->data[b->n++] = (uint8_t) strlen(s);
        memcpy(b->data + b->n, s, strlen(s) + 1);
        b->n += strlen(s) + 1;
}

static void put_field(Buf *b, uint8_t code, const char *type, const char *value) {
        pad(b, 8);
        b->data[b->n++] = code;
        put_signature(b, type);
        if (streq(type, "g"))
                put_signature(b, value);
        else
                put_string(b, value, strlen(value));
}

/* A method call AddPeer(s) to /org/linkprobe/LinkProbe1 with the argument's bytes as given. */
static size_t method_call(uint8_t *out, uint32_t serial, const char *arg, size_t arg_len) {
        Buf h = {}, body = {};
        size_t fields_at;

        put_string(&body, arg, arg_len);
        h.data[0] = 'l', h.data[1] = 1 /* method call */, h.data[2] = 0, h.data[3] = 1;
        h.n = 4;
        put_u32(&h, (uint32_t) body.n);
        put_u32(&h, serial);
        put_u32(&h, 0); /* fields length, filled in below */
        fields_at = h.n;
        put_field(&h, 1, "o", "/org/linkprobe/LinkProbe1");
        put_field(&h, 2, "s", "org.linkprobe.LinkProbe1.Manager");
        put_field(&h, 3, "s", "AddPeer");
        put_field(&h, 8, "g", "s");
        uint32_t fields_len = (uint32_t) (h.n - fields_at);
        memcpy(h.data + fields_at - 4, &fields_len, 4);
        pad(&h, 8);
        memcpy(out, h.data, h.n);
        memcpy(out + h.n, body.data, body.n);
        return h.n + body.n;
}

static unsigned seen;
static int read_result;

static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *s;

        if (!sd_bus_message_is_method_call(m, NULL, "AddPeer"))
                return 0;
        seen++;
        read_result = sd_bus_message_read(m, "s", &s);
        return 0;
}

/* Sends one call through a fresh server connection; returns whether the argument could be read. */
static bool delivered(const char *arg, size_t arg_len) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *server = NULL;
        uint8_t msg[1024];
        sd_id128_t id;
        int sv[2];
        size_t n;
        char greeting[128];

        seen = 0;
        read_result = -ENODATA;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(sd_id128_randomize(&id), 0);
        assert_int_equal(sd_bus_new(&server), 0);
        assert_int_equal(sd_bus_set_fd(server, sv[1], sv[1]), 0);
        assert_int_equal(sd_bus_set_server(server, 1, id), 0);
        assert_int_equal(sd_bus_set_anonymous(server, 1), 0);
        assert_int_equal(sd_bus_add_filter(server, NULL, on_message, NULL), 0);
        assert_int_equal(sd_bus_start(server), 0);

        /* ANONYMOUS authentication, then the message. */
        n = (size_t) snprintf(greeting, sizeof(greeting), "%cAUTH ANONYMOUS\r\nBEGIN\r\n", 0);
        assert_int_equal(write(sv[0], greeting, n), (ssize_t) n);
        n = method_call(msg, 1, arg, arg_len);
        assert_int_equal(write(sv[0], msg, n), (ssize_t) n);
        shutdown(sv[0], SHUT_WR);

        for (unsigned i = 0; i < 100; i++) {
                int r = sd_bus_process(server, NULL);
                if (r < 0 || seen)
                        break;
                if (r == 0 && sd_bus_wait(server, 100 * 1000) < 0)
                        break;
        }
        safe_close(sv[0]);
        /* Either the message never came through, or its argument cannot be read: never a string. */
        if (seen && read_result < 0)
                assert_int_equal(read_result, -EBADMSG);
        return seen > 0 && read_result >= 0;
}

static void test_utf8_arguments_reach_handlers(void **state) {
        /* Control of the experiment: the same message with valid text arrives, also odd but valid text. */
        assert_true(delivered("10.0.0.1", 8));
        assert_true(delivered("\xe2\x80\xae" "1.0.0.01", 11)); /* right-to-left override: valid UTF-8 */
}

static void test_invalid_utf8_never_does(void **state) {
        static const struct {
                const char *bytes;
                size_t len;
        } bad[] = {
                { "\xff\xfe" "10.0.0.1", 10 },           /* bytes that are never UTF-8 */
                { "10.0.0.1\xc3", 9 },                   /* a sequence cut short */
                { "\xc0\xaf" "10", 4 },                  /* an overlong encoding */
                { "\xed\xa0\x80" "10", 5 },              /* a UTF-16 surrogate */
                { "10.0\x00" "0.1", 8 },                 /* a NUL inside */
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_false(delivered(bad[i].bytes, bad[i].len));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf8_arguments_reach_handlers),
                cmocka_unit_test(test_invalid_utf8_never_does),
        };
        return cmocka_run_group_tests_name("bus-utf8", tests, NULL, NULL);
}
