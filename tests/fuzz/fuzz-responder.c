/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the responder core (probes/responder.c) as a peer on the network reaches it: the input is
 * the byte stream a client sends over one connection (a socketpair stands in for TCP), after which
 * the client half-closes and reads whatever comes back. The responder must end the connection by
 * itself (never hang, never crash, never leak), whatever the stream says. The first byte picks the
 * set-up: with or without a pre-shared key, and how the stream is cut into writes. */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "probes/responder.h"
#include "shared/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A stream longer than this teaches nothing new and only slows the fuzzer down. */
#define STREAM_MAX (64 * 1024)
/* Rounds of the event loop before a connection that is still open counts as a hang. */
#define ROUNDS_MAX 20000

static sd_event *event;

static bool pump_client(int fd, uint64_t *received) {
        uint8_t buf[16384];

        for (;;) {
                ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (k > 0) {
                        *received += (uint64_t) k;
                        continue;
                }
                return k == 0 || (errno != EAGAIN && errno != EINTR); /* true: the responder hung up */
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(responder_freep) Responder *r = NULL;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(40000) };
        ResponderLimits limits = RESPONDER_LIMITS_DEFAULT;
        ResponderStats st;
        ProtoKey key = { .size = 32 };
        uint64_t received = 0;
        size_t sent = 0, chunk;
        bool closed = false, shut = false;
        int sv[2];

        if (size < 1 || size > STREAM_MAX)
                return 0;
        log_set_max_level(LOG_CRIT);
        if (!event && sd_event_new(&event) < 0)
                abort();

        /* Small limits keep every test short: a download of a few frames, a few milliseconds. */
        limits.max_frame = PROTO_FRAME_MAX_MIN;
        limits.handshake_timeout_usec = 200 * 1000;
        limits.idle_timeout_usec = 200 * 1000;
        limits.max_test_bytes = 64 * 1024;
        limits.max_test_usec = 20 * 1000;
        limits.rate = 1000000;
        limits.burst = 1000000;
        memset(key.bytes, 'k', key.size);
        if (responder_new(event, &limits, data[0] & 1 ? &key : NULL, NULL, &r) < 0)
                abort();
        /* A node's identity to hand out (IDENTITY_REQUEST), as linkprobed gives it. */
        NodeIdentity id = { .node_id = { 1, 2, 3 }, .hostname = "fuzz", .n_thunderbolt = 1, .n_rdma = 1 };
        responder_set_identity(r, &id);
        chunk = (data[0] >> 1) % 16 == 0 ? SIZE_MAX : (size_t) ((data[0] >> 1) % 16) * 3;
        data++, size--;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
        inet_pton(AF_INET, "192.0.2.1", &sa.sin_addr);
        if (responder_add_connection(r, sv[1], (struct sockaddr *) &sa) < 0)
                abort();

        for (unsigned round = 0; round < ROUNDS_MAX; round++) {
                if (sent < size) {
                        ssize_t k = send(sv[0], data + sent, MIN(size - sent, chunk), MSG_NOSIGNAL | MSG_DONTWAIT);
                        if (k > 0)
                                sent += (size_t) k;
                        else if (k < 0 && errno != EAGAIN && errno != EINTR)
                                sent = size; /* the responder hung up; stop talking */
                }
                if (sent >= size && !shut) {
                        (void) shutdown(sv[0], SHUT_WR);
                        shut = true;
                }
                closed = pump_client(sv[0], &received) || closed;
                responder_get_stats(r, &st);
                if (shut && st.connections == 0)
                        break;
                if (sd_event_run(event, 1000) < 0)
                        abort();
        }
        responder_get_stats(r, &st);
        /* A client that said all it had to say and hung up half-way must not keep a connection open. */
        if (st.connections != 0)
                abort();
        (void) closed;
        safe_close(sv[0]);
        return 0;
}
