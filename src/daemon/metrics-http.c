/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "metrics-http.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/socket-util.h"
#include "shared/time-util.h"

typedef struct HttpConnection HttpConnection;

struct MetricsHttp {
        sd_event *event;
        metrics_render_t render;
        void *userdata;
        int listen_fd;
        sd_event_source *listen_source;
        HttpConnection *connections[METRICS_HTTP_CONNECTIONS_MAX];
        uint64_t served;
};

struct HttpConnection {
        MetricsHttp *server;
        size_t slot;
        int fd;
        sd_event_source *io;
        sd_event_source *timer;
        char request[METRICS_HTTP_REQUEST_MAX];
        size_t request_size;
        char *response;
        size_t response_size, sent;
        uint64_t accepted;
        bool draining;
};

MetricsRequest metrics_parse_request(const char *buf, size_t size) {
        const char *end = memmem(buf, size, "\r\n\r\n", 4) ?: memmem(buf, size, "\n\n", 2);
        const char *line_end, *sp1, *sp2;
        char path[256];
        bool head;

        if (!end)
                return size >= METRICS_HTTP_REQUEST_MAX ? METRICS_REQUEST_BAD : METRICS_REQUEST_INCOMPLETE;
        if (memchr(buf, '\0', (size_t) (end - buf)))
                return METRICS_REQUEST_BAD;

        line_end = memchr(buf, '\n', size);
        sp1 = memchr(buf, ' ', (size_t) (line_end - buf));
        if (!sp1)
                return METRICS_REQUEST_BAD;
        sp2 = memchr(sp1 + 1, ' ', (size_t) (line_end - sp1 - 1));
        if (!sp2 || (size_t) (line_end - sp2) < 9 || !strneq(sp2 + 1, "HTTP/1.", 7))
                return METRICS_REQUEST_BAD;

        if ((size_t) (sp1 - buf) == 3 && strneq(buf, "GET", 3))
                head = false;
        else if ((size_t) (sp1 - buf) == 4 && strneq(buf, "HEAD", 4))
                head = true;
        else
                return METRICS_REQUEST_BAD_METHOD;

        size_t len = (size_t) (sp2 - sp1 - 1);
        if (len == 0 || len >= sizeof(path))
                return METRICS_REQUEST_NOT_FOUND;
        memcpy(path, sp1 + 1, len);
        path[len] = '\0';
        path[strcspn(path, "?")] = '\0'; /* scrapers may add parameters; we have none */

        if (streq(path, "/metrics"))
                return head ? METRICS_REQUEST_HEAD_METRICS : METRICS_REQUEST_GET_METRICS;
        if (streq(path, "/"))
                return head ? METRICS_REQUEST_HEAD_INDEX : METRICS_REQUEST_GET_INDEX;
        return METRICS_REQUEST_NOT_FOUND;
}

static void connection_free(HttpConnection *c) {
        if (!c)
                return;
        c->server->connections[c->slot] = NULL;
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        safe_close(c->fd);
        free(c->response);
        free(c);
}

static int connection_respond(HttpConnection *c, int code, const char *reason, const char *type, const char *body,
                              size_t body_size, bool head, const char *extra_header) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return -ENOMEM;
        fprintf(f, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n", code,
                reason, type, body_size, strempty(extra_header));
        if (!head && body_size > 0)
                fwrite(body, 1, body_size, f);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        c->response = buf;
        c->response_size = size;
        return sd_event_source_set_io_events(c->io, EPOLLOUT);
}

static int connection_handle(HttpConnection *c, MetricsRequest req) {
        static const char index[] = "linkprobed: metrics at /metrics\n";
        static const char text[] = "text/plain; charset=utf-8";
        _cleanup_(freep) char *metrics = NULL;
        size_t size = 0;
        int r;

        switch (req) {
        case METRICS_REQUEST_GET_METRICS:
        case METRICS_REQUEST_HEAD_METRICS:
                r = c->server->render(c->server->userdata, &metrics, &size);
                if (r < 0)
                        return connection_respond(c, 500, "Internal Server Error", text, "", 0, false, NULL);
                c->server->served++;
                return connection_respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", metrics, size,
                                          req == METRICS_REQUEST_HEAD_METRICS, NULL);
        case METRICS_REQUEST_GET_INDEX:
        case METRICS_REQUEST_HEAD_INDEX:
                return connection_respond(c, 200, "OK", text, index, sizeof(index) - 1,
                                          req == METRICS_REQUEST_HEAD_INDEX, NULL);
        case METRICS_REQUEST_NOT_FOUND:
                return connection_respond(c, 404, "Not Found", text, "not found\n", 10, false, NULL);
        case METRICS_REQUEST_BAD_METHOD:
                return connection_respond(c, 405, "Method Not Allowed", text, "only GET and HEAD\n", 18, false,
                                          "Allow: GET, HEAD\r\n");
        case METRICS_REQUEST_BAD:
                return connection_respond(c, 400, "Bad Request", text, "bad request\n", 12, false, NULL);
        case METRICS_REQUEST_INCOMPLETE:
                break;
        }
        return 0;
}

static int on_connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        HttpConnection *c = userdata;

        if (c->draining) {
                /* Discard what the client still sends until it closes (or the timer ends it): closing
                 * with unread data makes the kernel send a reset that can destroy our answer. */
                char sink[4096];
                ssize_t k = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
                if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
                        connection_free(c);
                return 0;
        }

        if (c->response) {
                while (c->sent < c->response_size) {
                        ssize_t k = send(fd, c->response + c->sent, c->response_size - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
                        if (k < 0) {
                                if (errno == EAGAIN || errno == EINTR)
                                        return 0;
                                connection_free(c);
                                return 0;
                        }
                        c->sent += (size_t) k;
                }
                c->draining = true;
                (void) shutdown(fd, SHUT_WR);
                (void) sd_event_source_set_io_events(c->io, EPOLLIN);
                return 0;
        }

        ssize_t k = recv(fd, c->request + c->request_size, sizeof(c->request) - c->request_size, MSG_DONTWAIT);
        if (k < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                connection_free(c);
                return 0;
        }
        if (k == 0) {
                connection_free(c);
                return 0;
        }
        c->request_size += (size_t) k;

        MetricsRequest req = metrics_parse_request(c->request, c->request_size);
        if (req != METRICS_REQUEST_INCOMPLETE && connection_handle(c, req) < 0)
                connection_free(c);
        return 0;
}

static int on_connection_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        connection_free(userdata);
        return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        MetricsHttp *h = userdata;
        size_t slot;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
                return 0;
        for (slot = 0; slot < METRICS_HTTP_CONNECTIONS_MAX; slot++)
                if (!h->connections[slot])
                        break;
        if (slot == METRICS_HTTP_CONNECTIONS_MAX) {
                /* Full: whoever has been sitting longest without finishing a request makes room, so
                 * a handful of idle connections cannot keep scrapers out. */
                HttpConnection *oldest = NULL;
                for (size_t i = 0; i < METRICS_HTTP_CONNECTIONS_MAX; i++) {
                        HttpConnection *c = h->connections[i];
                        if (c && (!c->response || c->draining) && (!oldest || c->accepted < oldest->accepted))
                                oldest = c;
                }
                if (!oldest) {
                        safe_close(cfd);
                        return 0;
                }
                slot = oldest->slot;
                connection_free(oldest);
        }

        HttpConnection *c = new0(HttpConnection, 1);
        if (!c) {
                safe_close(cfd);
                return 0;
        }
        c->server = h;
        c->slot = slot;
        c->accepted = now_usec(CLOCK_MONOTONIC);
        c->fd = cfd;
        h->connections[slot] = c;
        r = sd_event_add_io(h->event, &c->io, cfd, EPOLLIN, on_connection_io, c);
        if (r >= 0)
                r = sd_event_add_time_relative(h->event, &c->timer, CLOCK_MONOTONIC, METRICS_HTTP_TIMEOUT_USEC,
                                               0, on_connection_timeout, c);
        if (r < 0)
                connection_free(c);
        return 0;
}

MetricsHttp *metrics_http_free(MetricsHttp *h) {
        if (!h)
                return NULL;
        for (size_t i = 0; i < METRICS_HTTP_CONNECTIONS_MAX; i++)
                connection_free(h->connections[i]);
        sd_event_source_disable_unref(h->listen_source);
        safe_close(h->listen_fd);
        return mfree(h);
}

int metrics_http_start(sd_event *event, const char *listen_address, metrics_render_t render, void *userdata,
                       MetricsHttp **ret) {
        struct sockaddr_storage sa;
        socklen_t len;
        MetricsHttp *h;
        int r, one = 1, zero = 0;

        r = socket_parse_listen_address(listen_address, &sa, &len);
        if (r < 0)
                return r;

        h = new0(MetricsHttp, 1);
        if (!h)
                return -ENOMEM;
        h->event = event;
        h->render = render;
        h->userdata = userdata;
        h->listen_fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (h->listen_fd < 0) {
                r = -errno;
                goto fail;
        }
        (void) setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (sa.ss_family == AF_INET6)
                (void) setsockopt(h->listen_fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        if (bind(h->listen_fd, (struct sockaddr *) &sa, len) < 0 || listen(h->listen_fd, 16) < 0) {
                r = -errno;
                goto fail;
        }
        r = sd_event_add_io(event, &h->listen_source, h->listen_fd, EPOLLIN, on_accept, h);
        if (r < 0)
                goto fail;
        log_info("Serving metrics at http://%s/metrics", listen_address);
        *ret = h;
        return 0;

fail:
        metrics_http_free(h);
        return r;
}
