/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the TCP probe's receive paths (probes/net-streams.c, probes/net-client.c) as a responder on
 * the network drives them: the input is what the responder sends over the connection (a socketpair
 * stands in for TCP), after which it closes. The first byte picks the exchange: a download over one
 * stream (READY, then DATA frames dropped as they come, then DOWNLOAD_END or ERROR), or RTT samples
 * (ECHO_REPLY frames read with one recv() each). The probe must end with a result or an error by its
 * deadline, whatever the bytes say. */
#include <sys/socket.h>

#include "probes/net-streams.h"
#include "shared/time-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* More input than a socketpair holds at once teaches nothing new. */
#define INPUT_MAX (64 * 1024)
#define DEADLINE_USEC (50 * 1000)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        NetClient c = NET_CLIENT_NULL;
        int sv[2];

        if (size < 1 || size > INPUT_MAX)
                return 0;
        uint8_t mode = data[0] % 2;
        data++, size--;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
        for (size_t sent = 0; sent < size;) {
                ssize_t k = send(sv[1], data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k <= 0)
                        break;
                sent += (size_t) k;
        }
        (void) shutdown(sv[1], SHUT_WR);

        c.fd = sv[0];
        c.version = 1;
        c.capabilities = PROTO_CAP_DOWNLOAD | PROTO_CAP_ECHO | PROTO_CAP_TEST_STATS;
        c.max_frame = PROTO_FRAME_MAX_DEFAULT;
        c.data = malloc(PROTO_FRAME_MAX_DEFAULT);
        if (!c.data)
                abort();
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + DEADLINE_USEC;

        if (mode == 0) {
                NetStreams s;
                NetTransfer t;
                if (net_streams_open(&s, &c, 1, deadline) < 0)
                        abort(); /* one stream asks the responder nothing */
                (void) net_streams_download(&s, 1, UINT64_C(1) << 30, 1000 * 1000, 1000, deadline, &t);
                net_streams_done(&s);
        } else {
                double samples[3];
                (void) net_client_echo(&c, ELEMENTSOF(samples), samples, deadline);
        }

        net_client_done(&c);
        safe_close(sv[1]);
        return 0;
}
