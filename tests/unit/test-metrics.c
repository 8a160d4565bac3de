/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the metrics endpoint's request judging, listen addresses and label escaping. */
#include <sys/socket.h>
#include <netinet/in.h>

#include "unit-test.h"
#include "daemon/metrics-http.h"
#include "shared/socket-util.h"
#include "daemon/metrics-text.h"
#include "daemon/metrics.h"

#define REQ(s) metrics_parse_request(s, sizeof(s) - 1)

static void test_requests(void **state) {
        assert_int_equal(REQ("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), METRICS_REQUEST_GET_METRICS);
        assert_int_equal(REQ("GET /metrics?name[]=x HTTP/1.1\r\n\r\n"), METRICS_REQUEST_GET_METRICS);
        assert_int_equal(REQ("HEAD /metrics HTTP/1.0\r\n\r\n"), METRICS_REQUEST_HEAD_METRICS);
        assert_int_equal(REQ("GET / HTTP/1.1\n\n"), METRICS_REQUEST_GET_INDEX);
        assert_int_equal(REQ("GET /other HTTP/1.1\r\n\r\n"), METRICS_REQUEST_NOT_FOUND);
        assert_int_equal(REQ("GET /metricsx HTTP/1.1\r\n\r\n"), METRICS_REQUEST_NOT_FOUND);
        assert_int_equal(REQ("POST /metrics HTTP/1.1\r\n\r\n"), METRICS_REQUEST_BAD_METHOD);
        assert_int_equal(REQ("get /metrics HTTP/1.1\r\n\r\n"), METRICS_REQUEST_BAD_METHOD);
        assert_int_equal(REQ("GET /metrics HTTP/1.1\r\nHost: x\r\n"), METRICS_REQUEST_INCOMPLETE);
        assert_int_equal(REQ(""), METRICS_REQUEST_INCOMPLETE);
        assert_int_equal(REQ("GET /metrics\r\n\r\n"), METRICS_REQUEST_BAD);
        assert_int_equal(REQ("GET /metrics SPDY/3\r\n\r\n"), METRICS_REQUEST_BAD);
        assert_int_equal(REQ("GARBAGE\r\n\r\n"), METRICS_REQUEST_BAD);
        assert_int_equal(REQ("GET /me\0trics HTTP/1.1\r\n\r\n"), METRICS_REQUEST_BAD);

        char big[METRICS_HTTP_REQUEST_MAX];
        memset(big, 'A', sizeof(big));
        assert_int_equal(metrics_parse_request(big, sizeof(big)), METRICS_REQUEST_BAD);
        char longpath[600];
        snprintf(longpath, sizeof(longpath), "GET /%0500d HTTP/1.1\r\n\r\n", 0);
        assert_int_equal(metrics_parse_request(longpath, strlen(longpath)), METRICS_REQUEST_NOT_FOUND);
}

static void test_listen(void **state) {
        struct sockaddr_storage sa;
        socklen_t len;

        assert_int_equal(socket_parse_listen_address("127.0.0.1:9479", &sa, &len), 0);
        assert_int_equal(sa.ss_family, AF_INET);
        assert_int_equal(ntohs(((struct sockaddr_in *) &sa)->sin_port), 9479);
        assert_int_equal(socket_parse_listen_address("[::1]:9479", &sa, &len), 0);
        assert_int_equal(sa.ss_family, AF_INET6);
        assert_int_equal(socket_parse_listen_address("9479", &sa, &len), 0);
        assert_int_equal(sa.ss_family, AF_INET6);
        static const char *const bad[] = { "", "::1:9479", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0",
                                           "127.0.0.1:65536", "localhost:9479", "[::1]9479", "[::1", "x:y",
                                           "300.0.0.1:1", "-1" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (socket_parse_listen_address(bad[i], &sa, &len) >= 0)
                        fail_msg("accepted \"%s\"", bad[i]);
}

static void test_label_escaping(void **state) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        metrics_write_label_value(f, "a\"b\\c\nd\xc3\xa9");
        fclose(f);
        assert_string_equal(buf, "a\\\"b\\\\c\\nd\xc3\xa9");
        free(buf);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_requests),
                cmocka_unit_test(test_listen),
                cmocka_unit_test(test_label_escaping),
        };
        return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
