/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for a node's identity: its text forms, its JSON, the IDENTITY frame and its proof, and the
 * responder answering IDENTITY_REQUEST over a socketpair. */
#include "unit-test.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "probes/proto-identity.h"
#include "probes/responder.h"
#include "shared/json-util.h"
#include "shared/log.h"
#include "shared/node-identity.h"

static NodeIdentity sample_identity(void) {
        NodeIdentity id = { .booted_at = UINT64_C(1700000000123456), .n_thunderbolt = 2, .n_rdma = 1 };

        for (size_t i = 0; i < NODE_ID_SIZE; i++) {
                id.node_id[i] = (uint8_t) (0xa0 + i);
                id.boot_id[i] = (uint8_t) i;
        }
        snprintf(id.hostname, sizeof(id.hostname), "node-a \"quoted\" \\ <b> ünïcode");
        memset(id.thunderbolt[0], 0x11, 16);
        memset(id.thunderbolt[1], 0x22, 16);
        id.rdma[0] = UINT64_C(0x0002c90300112233);
        return id;
}

static void assert_identity_equal(const NodeIdentity *a, const NodeIdentity *b) {
        assert_memory_equal(a->node_id, b->node_id, NODE_ID_SIZE);
        assert_memory_equal(a->boot_id, b->boot_id, NODE_ID_SIZE);
        assert_true(a->booted_at == b->booted_at);
        assert_string_equal(a->hostname, b->hostname);
        assert_int_equal(a->n_thunderbolt, b->n_thunderbolt);
        assert_memory_equal(a->thunderbolt, b->thunderbolt, a->n_thunderbolt * 16);
        assert_int_equal(a->n_rdma, b->n_rdma);
        for (size_t i = 0; i < a->n_rdma; i++)
                assert_true(a->rdma[i] == b->rdma[i]);
}

static void test_text_forms(void **state) {
        char buf[64];
        uint8_t u[16];
        uint64_t g;

        assert_int_equal(node_uuid_from_string("DC0A8680-F4C7-4EB1-8B6C-86C9A26F4A11", u), 0);
        assert_string_equal(node_uuid_to_string(u, buf), "dc0a8680-f4c7-4eb1-8b6c-86c9a26f4a11");
        assert_int_equal(node_uuid_from_string("dc0a8680f4c74eb18b6c86c9a26f4a11", u), 0);
        assert_string_equal(node_id_to_string(u, buf), "dc0a8680f4c74eb18b6c86c9a26f4a11");
        static const char *const bad_uuids[] = { "", "dc0a8680-f4c7-4eb1-8b6c-86c9a26f4a1", "dc0a8680-f4c74eb1-8b6c-86c9a26f4a11-",
                                                 "dc0a8680_f4c7_4eb1_8b6c_86c9a26f4a11", "gc0a8680-f4c7-4eb1-8b6c-86c9a26f4a11",
                                                 "dc0a8680-f4c7-4eb1-8b6c-86c9a26f4a11x" };
        for (size_t i = 0; i < ELEMENTSOF(bad_uuids); i++)
                assert_int_equal(node_uuid_from_string(bad_uuids[i], u), -EINVAL);

        assert_int_equal(node_guid_from_string("0002:c903:0011:2233", &g), 0);
        assert_true(g == UINT64_C(0x0002c90300112233));
        assert_string_equal(node_guid_to_string(g, buf), "0002:c903:0011:2233");
        assert_int_equal(node_guid_from_string("0002c90300112233", &g), -EINVAL);
        assert_int_equal(node_guid_from_string("0002:c903:0011:223", &g), -EINVAL);
        assert_int_equal(node_id_from_string(NULL, u), -EINVAL);
}

static void test_hostnames(void **state) {
        char out[NODE_HOSTNAME_MAX + 1], long_name[300];

        assert_true(node_hostname_is_valid("a", 1));
        assert_true(node_hostname_is_valid("rack-7 \"gpu\" <b>", 16));
        assert_false(node_hostname_is_valid("", 0));
        assert_false(node_hostname_is_valid("a\nb", 3));
        assert_false(node_hostname_is_valid("a\x1b[2Jb", 6));
        assert_false(node_hostname_is_valid("a\x7f", 2));
        assert_false(node_hostname_is_valid("a\xc2\x85", 3)); /* NEL, a C1 control */
        assert_false(node_hostname_is_valid("a\xe2\x80\xae" "b", 5)); /* U+202E RIGHT-TO-LEFT OVERRIDE */
        assert_false(node_hostname_is_valid("a\xe2\x81\xa7" "b", 5)); /* U+2067 RIGHT-TO-LEFT ISOLATE */
        assert_true(node_hostname_is_valid("a\xe2\x80\x94" "b", 5));  /* an em dash is just text */
        assert_false(node_hostname_is_valid("a\xff", 2));
        assert_false(node_hostname_is_valid("a\0b", 3));
        memset(long_name, 'x', sizeof(long_name));
        assert_true(node_hostname_is_valid(long_name, NODE_HOSTNAME_MAX));
        assert_false(node_hostname_is_valid(long_name, NODE_HOSTNAME_MAX + 1));

        node_hostname_sanitize("evil\x1b[2J\xff\xc2\x85ok\xe2\x80\xae", out);
        assert_string_equal(out, "evil?[2J??ok?");
        assert_true(node_hostname_is_valid(out, strlen(out)));
        node_hostname_sanitize("", out);
        assert_string_equal(out, "?");
        long_name[sizeof(long_name) - 1] = '\0';
        node_hostname_sanitize(long_name, out);
        assert_int_equal(strlen(out), NODE_HOSTNAME_MAX);
        /* A multi-byte character that does not fit whole is left out, never cut. */
        memset(long_name, 'x', NODE_HOSTNAME_MAX - 1);
        strcpy(long_name + NODE_HOSTNAME_MAX - 1, "ü");
        node_hostname_sanitize(long_name, out);
        assert_int_equal(strlen(out), NODE_HOSTNAME_MAX - 1);
}

static void test_json(void **state) {
        NodeIdentity id = sample_identity(), back;
        _cleanup_(json_object_putp) json_object *o = node_identity_to_json(&id);

        assert_non_null(o);
        assert_int_equal(node_identity_from_json(o, &back), 0);
        assert_identity_equal(&id, &back);
        assert_string_equal(json_string_or(o, "node_id", ""), "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");

        static const char *const bad[] = {
                "[]",
                "{}",
                "{\"node_id\":\"00000000000000000000000000000000\",\"hostname\":\"a\"}",
                "{\"node_id\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\"}",
                "{\"node_id\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\",\"hostname\":\"a\\u001bb\"}",
                "{\"node_id\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\",\"hostname\":\"a\",\"boot_id\":7}",
                "{\"node_id\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\",\"hostname\":\"a\",\"booted_at\":-1}",
                "{\"node_id\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\",\"hostname\":\"a\",\"thunderbolt_host_uuids\":\"x\"}",
                "{\"node_id\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\",\"hostname\":\"a\",\"thunderbolt_host_uuids\":[1]}",
                "{\"node_id\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\",\"hostname\":\"a\",\"rdma_node_guids\":[\"x\"]}",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(json_object_putp) json_object *b = json_tokener_parse(bad[i]);
                if (node_identity_from_json(b, &back) >= 0)
                        fail_msg("accepted %s", bad[i]);
        }
        /* Nine Thunderbolt hosts do not fit the frame: refused, not cut. */
        _cleanup_(json_object_putp) json_object *many = node_identity_to_json(&id);
        json_object *a = json_object_new_array();
        for (int i = 0; i < NODE_IDENTITY_THUNDERBOLT_MAX + 1; i++)
                json_object_array_add(a, json_object_new_string("dc0a8680-f4c7-4eb1-8b6c-86c9a26f4a11"));
        json_object_object_add(many, "thunderbolt_host_uuids", a);
        assert_int_equal(node_identity_from_json(many, &back), -EINVAL);
}

static void test_frame(void **state) {
        NodeIdentity id = sample_identity(), back;
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], proof[PROTO_HMAC_SIZE];
        uint8_t server_nonce[PROTO_NONCE_SIZE] = { 1 }, client_nonce[PROTO_CLIENT_NONCE_SIZE] = { 2 };
        ProtoKey key = { .size = 20 }, other = { .size = 20 };
        ProtoHeader h;
        ssize_t n;

        memset(key.bytes, 'k', key.size);
        memset(other.bytes, 'o', other.size);
        n = proto_encode_identity(buf, sizeof(buf), &id, &key, server_nonce, client_nonce);
        assert_true(n > PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), 0);
        assert_int_equal(h.type, PROTO_IDENTITY);
        assert_int_equal(h.length, (size_t) n - PROTO_HEADER_SIZE);
        assert_int_equal(proto_decode_identity(buf + PROTO_HEADER_SIZE, h.length, &back, proof), 0);
        assert_identity_equal(&id, &back);

        /* The proof holds for this key and this session only, and for these bytes only. */
        assert_true(proto_identity_verify(&key, server_nonce, client_nonce, buf + PROTO_HEADER_SIZE, h.length));
        assert_false(proto_identity_verify(&other, server_nonce, client_nonce, buf + PROTO_HEADER_SIZE, h.length));
        assert_false(proto_identity_verify(NULL, server_nonce, client_nonce, buf + PROTO_HEADER_SIZE, h.length));
        client_nonce[0] ^= 1;
        assert_false(proto_identity_verify(&key, server_nonce, client_nonce, buf + PROTO_HEADER_SIZE, h.length));
        client_nonce[0] ^= 1;
        buf[PROTO_HEADER_SIZE + PROTO_IDENTITY_FIXED_SIZE + 1] ^= 0x20; /* "node" becomes "nOde" */
        assert_int_equal(proto_decode_identity(buf + PROTO_HEADER_SIZE, h.length, &back, proof), 0);
        assert_false(proto_identity_verify(&key, server_nonce, client_nonce, buf + PROTO_HEADER_SIZE, h.length));

        /* Without a key the proof is zeroes, and verifies under no key. */
        n = proto_encode_identity(buf, sizeof(buf), &id, NULL, server_nonce, client_nonce);
        assert_true(n > 0);
        assert_int_equal(proto_decode_identity(buf + PROTO_HEADER_SIZE, (size_t) n - PROTO_HEADER_SIZE, &back, proof), 0);
        for (size_t i = 0; i < sizeof(proof); i++)
                assert_int_equal(proof[i], 0);
        assert_false(proto_identity_verify(&key, server_nonce, client_nonce, buf + PROTO_HEADER_SIZE,
                                           (size_t) n - PROTO_HEADER_SIZE));

        /* What cannot be sent is not encoded. */
        assert_int_equal(proto_encode_identity(buf, 40, &id, NULL, server_nonce, client_nonce), -ENOBUFS);
        back = id;
        strcpy(back.hostname, "bad\nname");
        assert_int_equal(proto_encode_identity(buf, sizeof(buf), &back, NULL, server_nonce, client_nonce), -EINVAL);
        back = id;
        memset(back.node_id, 0, sizeof(back.node_id));
        assert_int_equal(proto_encode_identity(buf, sizeof(buf), &back, NULL, server_nonce, client_nonce), -EINVAL);
}

static void test_frame_garbage(void **state) {
        NodeIdentity id = sample_identity(), back;
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], proof[PROTO_HMAC_SIZE], nonce[PROTO_NONCE_SIZE] = {};
        ProtoHeader h;
        ssize_t n = proto_encode_identity(buf, sizeof(buf), &id, NULL, nonce, nonce);
        uint8_t *p = buf + PROTO_HEADER_SIZE;
        size_t len = (size_t) n - PROTO_HEADER_SIZE;

        assert_true(n > 0);
        /* Counts that do not add up to the payload's size. */
        p[41]++;
        assert_int_equal(proto_decode_identity(p, len, &back, proof), -EBADMSG);
        p[41]--;
        p[40] = 0;
        assert_int_equal(proto_decode_identity(p, len, &back, proof), -EBADMSG);
        p[40] = (uint8_t) strlen(id.hostname);
        p[43] = 1; /* reserved */
        assert_int_equal(proto_decode_identity(p, len, &back, proof), -EBADMSG);
        p[43] = 0;
        p[42] = 200;
        assert_int_equal(proto_decode_identity(p, len, &back, proof), -EBADMSG);
        p[42] = 1;
        p[PROTO_IDENTITY_FIXED_SIZE + 1] = '\x1b'; /* an escape sequence in the hostname */
        assert_int_equal(proto_decode_identity(p, len, &back, proof), -EBADMSG);
        assert_int_equal(proto_decode_identity(p, PROTO_IDENTITY_MIN - 1, &back, proof), -EBADMSG);

        /* A 10 kB identity is refused by its header, before anything is read or allocated. */
        proto_header_encode(buf, PROTO_IDENTITY, 10240);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EMSGSIZE);
        proto_header_encode(buf, PROTO_IDENTITY, PROTO_IDENTITY_MAX + 1);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EMSGSIZE);
        proto_header_encode(buf, PROTO_IDENTITY_REQUEST, 1);
        assert_int_equal(proto_header_decode(buf, PROTO_FRAME_MAX_DEFAULT, &h), -EMSGSIZE);
}

/* A client on a socketpair: reads whole frames, pumping the responder's loop while it waits. */
static int read_frame(sd_event *e, int fd, ProtoHeader *h, uint8_t *payload) {
        uint8_t in[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        size_t have = 0;

        for (unsigned i = 0; i < 5000; i++) {
                if (have >= PROTO_HEADER_SIZE) {
                        assert_int_equal(proto_header_decode(in, PROTO_FRAME_MAX_DEFAULT, h), 0);
                        if (have >= PROTO_HEADER_SIZE + h->length) {
                                memcpy(payload, in + PROTO_HEADER_SIZE, h->length);
                                return 0;
                        }
                }
                /* One frame at a time: never read past its end. */
                size_t want = have < PROTO_HEADER_SIZE ? PROTO_HEADER_SIZE - have : PROTO_HEADER_SIZE + h->length - have;
                ssize_t k = recv(fd, in + have, want, MSG_DONTWAIT);
                if (k == 0)
                        return -ECONNRESET;
                if (k < 0) {
                        assert_int_equal(errno, EAGAIN);
                        assert_true(sd_event_run(e, 1000) >= 0);
                        continue;
                }
                have += (size_t) k;
        }
        return -ETIME;
}

static void handshake_and_ask(const ProtoKey *key, bool with_identity, bool *ret_have, NodeIdentity *ret,
                              bool *ret_authenticated) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(responder_freep) Responder *r = NULL;
        ResponderLimits limits = RESPONDER_LIMITS_DEFAULT;
        NodeIdentity id = sample_identity();
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(40000), .sin_addr.s_addr = htonl(0xc0000201) };
        ProtoHello hello = { .version = PROTO_VERSION, .capabilities = PROTO_CAP_IDENTITY, .nonce = { 7 } };
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], payload[PROTO_CONTROL_MAX], proof[PROTO_HMAC_SIZE];
        ProtoHelloReply hr;
        ProtoHeader h;
        int sv[2];

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(responder_new(e, &limits, key, NULL, &r), 0);
        if (with_identity)
                responder_set_identity(r, &id);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(responder_add_connection(r, sv[1], (struct sockaddr *) &sa), 0);

        ssize_t n = proto_encode_hello(buf, sizeof(buf), &hello);
        assert_int_equal(send(sv[0], buf, (size_t) n, 0), n);
        assert_int_equal(read_frame(e, sv[0], &h, payload), 0);
        assert_int_equal(h.type, PROTO_HELLO_REPLY);
        assert_int_equal(proto_decode_hello_reply(payload, h.length, &hr), 0);
        *ret_have = hr.capabilities & PROTO_CAP_IDENTITY;
        if (key) {
                uint8_t auth[PROTO_HMAC_SIZE];
                assert_int_equal(proto_auth_compute(key, hr.nonce, hello.nonce, auth), 0);
                n = proto_encode_auth(buf, sizeof(buf), auth);
                assert_int_equal(send(sv[0], buf, (size_t) n, 0), n);
                assert_int_equal(read_frame(e, sv[0], &h, payload), 0);
                assert_int_equal(h.type, PROTO_AUTH_OK);
        }
        n = proto_encode_empty(buf, sizeof(buf), PROTO_IDENTITY_REQUEST);
        assert_int_equal(send(sv[0], buf, (size_t) n, 0), n);
        assert_int_equal(read_frame(e, sv[0], &h, payload), 0);
        if (!with_identity) {
                assert_int_equal(h.type, PROTO_ERROR);
                safe_close(sv[0]);
                return;
        }
        assert_int_equal(h.type, PROTO_IDENTITY);
        assert_int_equal(proto_decode_identity(payload, h.length, ret, proof), 0);
        *ret_authenticated = key && proto_identity_verify(key, hr.nonce, hello.nonce, payload, h.length);

        /* A malformed request ends the connection; the responder carries on. */
        proto_header_encode(buf, PROTO_IDENTITY_REQUEST, 1);
        buf[PROTO_HEADER_SIZE] = 'x';
        assert_int_equal(send(sv[0], buf, PROTO_HEADER_SIZE + 1, 0), PROTO_HEADER_SIZE + 1);
        int k = read_frame(e, sv[0], &h, payload);
        assert_true(k < 0 || h.type == PROTO_ERROR);
        safe_close(sv[0]);
}

static void test_responder(void **state) {
        ProtoKey key = { .size = 24 };
        NodeIdentity id = sample_identity(), got;
        bool have = false, authenticated = false;

        memset(key.bytes, 'z', key.size);
        log_set_max_level(LOG_CRIT);
        handshake_and_ask(NULL, true, &have, &got, &authenticated);
        assert_true(have);
        assert_false(authenticated);
        assert_identity_equal(&id, &got);
        handshake_and_ask(&key, true, &have, &got, &authenticated);
        assert_true(have);
        assert_true(authenticated);
        assert_identity_equal(&id, &got);
        /* No identity: not offered, and asked anyway, an error rather than a hang. */
        handshake_and_ask(NULL, false, &have, &got, &authenticated);
        assert_false(have);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_text_forms),
                cmocka_unit_test(test_hostnames),
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_frame),
                cmocka_unit_test(test_frame_garbage),
                cmocka_unit_test(test_responder),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
