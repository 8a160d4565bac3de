/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the /metrics endpoint's request judging and the listen-address parser. */
#include <sys/socket.h>

#include "daemon/metrics-http.h"
#include "shared/socket-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct sockaddr_storage sa;
        socklen_t len;
        char text[256];

        if (size > METRICS_HTTP_REQUEST_MAX)
                return 0;
        MetricsRequest r = metrics_parse_request((const char *) data, size);
        if (r < METRICS_REQUEST_INCOMPLETE || r > METRICS_REQUEST_BAD)
                abort();
        /* A complete request is judged the same however much more arrives after it. */
        if (r != METRICS_REQUEST_INCOMPLETE && size < METRICS_HTTP_REQUEST_MAX) {
                uint8_t more[METRICS_HTTP_REQUEST_MAX];
                memcpy(more, data, size);
                memset(more + size, 'x', sizeof(more) - size);
                if (metrics_parse_request((const char *) more, sizeof(more)) != r)
                        abort();
        }

        size_t n = MIN(size, sizeof(text) - 1);
        memcpy(text, data, n);
        text[n] = '\0';
        if (socket_parse_listen_address(text, &sa, &len) >= 0 && sa.ss_family != AF_INET && sa.ss_family != AF_INET6)
                abort();
        return 0;
}
