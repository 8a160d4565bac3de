/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * linkprobectl fabric --prometheus=URL: the whole cluster's graph from the series every node's
 * linkprobed exports (linkprobed(8), FABRIC METRICS), read over Prometheus' HTTP API. Each node says
 * what it measured towards each neighbour; an edge seen from both ends is merged into one, and where
 * the two ends disagree about a direction by more than --tolerance= it says so (A measured 40 Gb/s
 * to B, B measured 20 Gb/s from A).
 *
 * The HTTP is deliberately small: HTTP/1.0 (so the answer is never chunked and ends when the server
 * closes), plain http:// only, a deadline over the whole exchange and a bound on the answer's size.
 */
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include "linkprobectl-fabric-model.h"
#include "linkprobectl-prometheus.h"
#include "linkprobectl.h"
#include "shared/node-identity.h"
#include "shared/time-util.h"

#define ANSWER_MAX (32U * 1024U * 1024U)
#define URL_MAX 2048

typedef struct Url {
        char host[256];
        char port[8];
        char prefix[URL_MAX]; /* a path the API lives under ("" or "/prometheus"), no trailing slash */
} Url;

static int url_parse(const char *s, Url *ret) {
        const char *p = s + strlen("http://"), *end, *slash;
        Url u = { .port = "80" };

        if (!startswith(s, "http://") || strlen(s) >= URL_MAX)
                return -EINVAL;
        slash = strchr(p, '/');
        end = slash ?: p + strlen(p);
        if (*p == '[') { /* [IPv6]:port */
                const char *close = memchr(p, ']', (size_t) (end - p));
                if (!close || (size_t) (close - p - 1) >= sizeof(u.host))
                        return -EINVAL;
                snprintf(u.host, sizeof(u.host), "%.*s", (int) (close - p - 1), p + 1);
                p = close + 1;
        } else {
                const char *colon = memchr(p, ':', (size_t) (end - p));
                const char *host_end = colon ?: end;
                if ((size_t) (host_end - p) >= sizeof(u.host))
                        return -EINVAL;
                snprintf(u.host, sizeof(u.host), "%.*s", (int) (host_end - p), p);
                p = host_end;
        }
        if (*p == ':') {
                size_t n = (size_t) (end - p - 1);
                if (n == 0 || n >= sizeof(u.port) || strspn(p + 1, "0123456789") < n)
                        return -EINVAL;
                snprintf(u.port, sizeof(u.port), "%.*s", (int) n, p + 1);
        } else if (p != end)
                return -EINVAL;
        if (isempty(u.host))
                return -EINVAL;
        snprintf(u.prefix, sizeof(u.prefix), "%s", slash ?: "");
        while (*u.prefix && u.prefix[strlen(u.prefix) - 1] == '/')
                u.prefix[strlen(u.prefix) - 1] = '\0';
        /* What goes into the request line must not end it. */
        if (strpbrk(u.prefix, " \r\n?#"))
                return -EINVAL;
        *ret = u;
        return 0;
}

static int wait_fd(int fd, short events, uint64_t deadline) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct pollfd p = { .fd = fd, .events = events };
        int r;

        if (now >= deadline)
                return -ETIME;
        r = poll(&p, 1, (int) MIN((deadline - now + 999) / 1000, (uint64_t) INT32_MAX));
        if (r < 0)
                return -errno;
        return r == 0 ? -ETIME : 0;
}

static int connect_to(const Url *u, uint64_t deadline, int *ret) {
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
        int r = getaddrinfo(u->host, u->port, &hints, &ai), k = -EHOSTUNREACH;

        if (r != 0)
                return -EADDRNOTAVAIL;
        for (struct addrinfo *a = ai; a; a = a->ai_next) {
                _cleanup_(closep) int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                int err = 0;
                socklen_t len = sizeof(err);

                if (fd < 0)
                        continue;
                if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
                        k = -errno;
                        continue;
                }
                k = wait_fd(fd, POLLOUT, deadline);
                if (k >= 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) >= 0 && err != 0)
                        k = -err;
                if (k >= 0) {
                        *ret = TAKE_FD(fd);
                        break;
                }
        }
        freeaddrinfo(ai);
        return k;
}

/* One GET of path (already URL-encoded); the body of a 200 answer. */
static int http_get(const Url *u, const char *path, uint64_t deadline, char **ret) {
        _cleanup_(closep) int fd = -EBADF;
        _cleanup_(freep) char *request = NULL, *buf = NULL;
        size_t n = 0, sent = 0, len;
        char *body;
        int r;

        r = connect_to(u, deadline, &fd);
        if (r < 0)
                return r;
        if (asprintf(&request, "GET %s%s HTTP/1.0\r\nHost: %s\r\nAccept: application/json\r\nUser-Agent: linkprobectl/%s\r\n\r\n",
                     u->prefix, path, u->host, VERSION) < 0)
                return -ENOMEM;
        for (len = strlen(request); sent < len;) {
                ssize_t k = send(fd, request + sent, len - sent, MSG_NOSIGNAL);
                if (k < 0 && errno == EAGAIN)
                        k = wait_fd(fd, POLLOUT, deadline) < 0 ? -1 : 0;
                else if (k < 0 && errno != EINTR)
                        return -errno;
                if (k < 0)
                        return -ETIME;
                sent += (size_t) MAX(k, (ssize_t) 0);
        }
        buf = malloc(ANSWER_MAX + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = recv(fd, buf + n, ANSWER_MAX - n, 0);
                if (k == 0)
                        break;
                if (k < 0 && errno == EAGAIN) {
                        r = wait_fd(fd, POLLIN, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (k < 0 && errno != EINTR)
                        return -errno;
                n += (size_t) MAX(k, (ssize_t) 0);
                if (n >= ANSWER_MAX)
                        return -EFBIG;
        }
        buf[n] = '\0';
        if (!startswith(buf, "HTTP/1.") || strlen(buf) < 12 || !strneq(buf + 8, " 200", 4))
                return -EBADMSG;
        body = strstr(buf, "\r\n\r\n");
        if (!body)
                return -EBADMSG;
        *ret = strdup(body + 4);
        return *ret ? 0 : -ENOMEM;
}

static char *url_encode(const char *s) {
        char *ret = malloc(strlen(s) * 3 + 1), *t = ret;

        if (!ret)
                return NULL;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-_.~", *p))
                        *t++ = (char) *p;
                else
                        t += sprintf(t, "%%%02X", *p);
        *t = '\0';
        return ret;
}

/* The result vector of an instant query: [{"metric": {...}, "value": [t, "v"]}]; 0, or an exit code. */
static int query(const Url *u, const char *expr, uint64_t deadline, json_object **ret) {
        _cleanup_(freep) char *encoded = url_encode(expr), *path = NULL, *body = NULL;
        _cleanup_(json_object_putp) json_object *doc = NULL;
        json_object *result;
        int r;

        if (!encoded || asprintf(&path, "/api/v1/query?query=%s", encoded) < 0)
                return log_oom_ctl();
        r = http_get(u, path, deadline, &body);
        if (r < 0) {
                fprintf(stderr, "Cannot query Prometheus at %s:%s for %s: %s\n", u->host, u->port, expr,
                        r == -EBADMSG ? "not a successful HTTP answer" : r == -ETIME ? "timed out" : strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        doc = json_tokener_parse(body);
        result = ctl_member(doc, "data.result");
        if (!streq(json_string_or(doc, "status", ""), "success") || !json_object_is_type(result, json_type_array)) {
                fprintf(stderr, "Prometheus did not answer the query %s with a result.\n", expr);
                return CTL_EXIT_FAILURE;
        }
        *ret = json_object_get(result);
        return 0;
}

static const char *label(json_object *series, const char *key) {
        json_object *metric = ctl_member(series, "metric"), *v;
        return metric && json_object_object_get_ex(metric, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static double value(json_object *series) {
        json_object *v = ctl_member(series, "value");
        const char *text = json_object_is_type(v, json_type_array) ? json_object_get_string(json_object_array_get_idx(v, 1)) : NULL;
        double d = text ? strtod(text, NULL) : NAN;
        return isfinite(d) ? d : 0;
}

static bool valid_id(const char *id) {
        uint8_t bytes[NODE_ID_SIZE];
        return id && node_id_from_string(id, bytes) >= 0;
}

/* What one node says about one of its edges, before the two ends are merged. */
typedef struct Side {
        const char *from, *to, *transport, *interface;
        double up, down, rtt_usec;
        bool stale, degraded, measured, used;
} Side;

typedef struct Sides {
        Side *s;
        size_t n;
} Sides;

static Side *side_get(Sides *sides, const char *from, const char *to, const char *transport, const char *interface) {
        Side *grown;

        for (size_t i = 0; i < sides->n; i++)
                if (streq(sides->s[i].from, from) && streq(sides->s[i].to, to) && streq(sides->s[i].transport, transport) &&
                    streq(sides->s[i].interface, interface))
                        return &sides->s[i];
        if (sides->n >= FABRIC_EDGES_MAX || !(grown = reallocarray(sides->s, sides->n + 1, sizeof(Side))))
                return NULL;
        sides->s = grown;
        sides->s[sides->n] = (Side) { .from = from, .to = to, .transport = transport, .interface = interface,
                                      .measured = !streq(transport, "thunderbolt") };
        return &sides->s[sides->n++];
}

typedef enum Field { FIELD_UP, FIELD_DOWN, FIELD_RTT, FIELD_STALE, FIELD_DEGRADED } Field;

/* Folds one family's series into the sides; per-edge label "interface" (or "sysname" for Thunderbolt). */
static void fold(json_object *result, const char *transport_override, Field field, double scale, Sides *sides) {
        for (size_t i = 0; i < json_object_array_length(result); i++) {
                json_object *series = json_object_array_get_idx(result, i);
                const char *from = label(series, "node_id"), *to = label(series, "neighbor_id");
                const char *transport = transport_override ?: label(series, "transport");
                /* Prometheus keeps no empty labels: a Thunderbolt peer without a network interface is
                 * named by its sysname. */
                const char *interface = label(series, "interface") ?: transport_override ? label(series, "sysname") : NULL;
                Side *s;

                if (!valid_id(from) || !valid_id(to) || !transport)
                        continue;
                interface = strempty(interface);
                s = side_get(sides, from, to, transport, interface);
                if (!s)
                        continue;
                double v = value(series) * scale;
                switch (field) {
                case FIELD_UP:
                        s->up = v;
                        break;
                case FIELD_DOWN:
                        s->down = v;
                        break;
                case FIELD_RTT:
                        s->rtt_usec = v;
                        break;
                case FIELD_STALE:
                        s->stale = v != 0;
                        break;
                case FIELD_DEGRADED:
                        s->degraded = v != 0;
                        break;
                }
        }
}

static int compare_sides(const void *a, const void *b) {
        const Side *x = a, *y = b;
        double bx = MIN(x->up, x->down), by = MIN(y->up, y->down);
        return bx != by ? (bx > by ? -1 : 1) : strcmp(x->interface, y->interface);
}

static bool differ(double a, double b) {
        double big = MAX(a, b);
        return big > 0 && fabs(a - b) > big * arg_tolerance / 100.0;
}

/* One edge from x's word, with y's (the far end's, the other way round) when there is one. */
static int add_merged(json_object *model, const Side *x, const Side *y) {
        json_object *e = fabric_add_edge(model, x->from, x->to, x->transport), *seen;
        _cleanup_(freep) char *dis = NULL;

        if (!e)
                return -ENOMEM;
        json_object_object_add(e, "FromInterface", json_string_or_null(isempty(x->interface) ? NULL : x->interface));
        json_object_object_add(e, "ToInterface", json_string_or_null(y && !isempty(y->interface) ? y->interface : NULL));
        json_object_object_add(e, "UploadGbps", json_object_new_double(x->up));
        json_object_object_add(e, "DownloadGbps", json_object_new_double(x->down));
        json_object_object_add(e, "RttUsec", x->measured ? json_object_new_double(x->rtt_usec) : NULL);
        json_object_object_add(e, "Measured", json_object_new_boolean(x->measured));
        json_object_object_add(e, "Stale", json_object_new_boolean(x->stale || (y && y->stale)));
        json_object_object_add(e, "Degraded", json_object_new_boolean(x->degraded || (y && y->degraded)));
        if (y) {
                seen = json_object_new_array();
                json_object_array_add(seen, json_object_new_string(x->from));
                json_object_array_add(seen, json_object_new_string(y->from));
        } else
                seen = json_object_new_string(x->from);
        json_object_object_add(e, "SeenFrom", seen);
        /* x's upload is the direction y downloads, and the other way round. */
        if (y && (differ(x->up, y->down) || differ(x->down, y->up)) &&
            asprintf(&dis, "%s says %.2f Gb/s to %s and %.2f from it; %s says %.2f Gb/s from %s and %.2f to it",
                     fabric_hostname(model, x->from), x->up, fabric_hostname(model, x->to), x->down,
                     fabric_hostname(model, y->from), y->down, fabric_hostname(model, x->from), y->up) < 0)
                return -ENOMEM;
        json_object_object_add(e, "Disagreement", json_string_or_null(dis));
        return 0;
}

/* Pairs each node's edges to a neighbour with the neighbour's edges back, per transport, the fastest
 * with the fastest (Prometheus does not know which cable is which; a cable's two ends measure the
 * same). What is seen from one end only stays an edge of its own. */
static int merge(json_object *model, Sides *sides) {
        if (sides->n > 1)
                qsort(sides->s, sides->n, sizeof(Side), compare_sides);
        for (size_t i = 0; i < sides->n; i++) {
                Side *x = &sides->s[i], *y = NULL;
                int r;

                if (x->used)
                        continue;
                x->used = true;
                for (size_t j = i + 1; j < sides->n && !y; j++) {
                        Side *c = &sides->s[j];
                        if (!c->used && streq(c->from, x->to) && streq(c->to, x->from) && streq(c->transport, x->transport))
                                y = c;
                }
                if (y)
                        y->used = true;
                r = add_merged(model, x, y);
                if (r < 0)
                        return r;
        }
        return 0;
}

int fabric_from_prometheus(const char *url, uint64_t timeout_usec, json_object **ret) {
        static const struct {
                const char *name, *transport;
                Field field;
                double scale;
        } families[] = {
                { "linkprobe_edge_upload_bytes", NULL, FIELD_UP, 8e-9 },
                { "linkprobe_edge_download_bytes", NULL, FIELD_DOWN, 8e-9 },
                { "linkprobe_edge_rtt_seconds", NULL, FIELD_RTT, 1e6 },
                { "linkprobe_edge_stale", NULL, FIELD_STALE, 1 },
                { "linkprobe_edge_degraded", NULL, FIELD_DEGRADED, 1 },
                { "linkprobe_edge_thunderbolt_rx_bytes", "thunderbolt", FIELD_UP, 8e-9 },
                { "linkprobe_edge_thunderbolt_tx_bytes", "thunderbolt", FIELD_DOWN, 8e-9 },
                { "linkprobe_edge_thunderbolt_degraded", "thunderbolt", FIELD_DEGRADED, 1 },
        };
        _cleanup_(json_object_putp) json_object *model = fabric_model_new("prometheus"), *identities = NULL,
                                               *neighbors = NULL, *problems = NULL;
        json_object *results[ELEMENTSOF(families)] = {};
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        Sides sides = {};
        Url u;
        int r;

        if (!model)
                return log_oom_ctl();
        if (url_parse(url, &u) < 0) {
                _cleanup_(freep) char *shown = escape_for_terminal(url);
                fprintf(stderr, "Cannot use \"%s\": expected http://HOST[:PORT][/PATH].\n", strna(shown));
                return CTL_EXIT_USAGE;
        }
        r = query(&u, "linkprobe_node_identity_info", deadline, &identities);
        if (r == 0)
                r = query(&u, "linkprobe_neighbor_info", deadline, &neighbors);
        if (r == 0)
                r = query(&u, "linkprobe_neighbor_problems > 0", deadline, &problems);
        for (size_t i = 0; r == 0 && i < ELEMENTSOF(families); i++)
                r = query(&u, families[i].name, deadline, &results[i]);
        if (r != 0)
                goto finish;

        /* The nodes: those scraped, then those only their neighbours name. */
        for (size_t i = 0; i < json_object_array_length(identities); i++) {
                json_object *s = json_object_array_get_idx(identities, i);
                if (valid_id(label(s, "node_id")) && fabric_add_node(model, label(s, "node_id"), label(s, "nodename"), false) < 0)
                        break;
        }
        for (size_t i = 0; i < json_object_array_length(neighbors); i++) {
                json_object *s = json_object_array_get_idx(neighbors, i);
                if (valid_id(label(s, "neighbor_id")))
                        (void) fabric_add_node(model, label(s, "neighbor_id"), label(s, "neighbor_hostname"), false);
        }
        for (size_t i = 0; i < json_object_array_length(problems); i++) {
                json_object *s = json_object_array_get_idx(problems, i);
                if (valid_id(label(s, "node_id")) && valid_id(label(s, "neighbor_id")))
                        (void) fabric_add_problem(model, "%s sees %.0f problem(s) with %s: linkprobectl fabric on %s says which",
                                                  fabric_hostname(model, label(s, "node_id")), value(s),
                                                  fabric_hostname(model, label(s, "neighbor_id")),
                                                  fabric_hostname(model, label(s, "node_id")));
        }
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                fold(results[i], families[i].transport, families[i].field, families[i].scale, &sides);
        if (merge(model, &sides) < 0) {
                r = log_oom_ctl();
                goto finish;
        }
        *ret = TAKE_PTR(model);
finish:
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                json_object_put(results[i]);
        free(sides.s);
        return r;
}
