/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * linkprobectl fabric --prometheus=URL: the whole cluster's graph from the series every node's
 * linkprobed exports (linkprobed(8), FABRIC METRICS), read over Prometheus' HTTP API. Each node says
 * what it measured towards each neighbour; an edge seen from both ends is merged into one, and where
 * the two ends disagree about a direction by more than --tolerance= it says so (A measured 40 Gb/s
 * to B, B measured 20 Gb/s from A).
 *
 * The HTTP (TLS, authentication, proxies, the deadline and the errors) is libcurl's, in
 * linkprobectl-http.c.
 */
#include <math.h>

#include "fabric/fabric-model.h"
#include "fabric/fabric-sides.h"
#include "linkprobectl-http.h"
#include "linkprobectl-prometheus.h"
#include "linkprobectl.h"
#include "shared/node-identity.h"
#include "shared/time-util.h"

/* The result vector of an instant query: [{"metric": {...}, "value": [t, "v"]}]; 0, or an exit code. */
static int query(HttpClient *http, const char *expr, json_object **ret) {
        _cleanup_(freep) char *body = NULL;
        _cleanup_(json_object_putp) json_object *doc = NULL;
        json_object *result;
        int r;

        r = http_client_get(http, "/api/v1/query", "query", expr, &body);
        if (r != 0)
                return r;
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

/* Every series `fabric` reads, in one query: one answer to parse, one round trip. */
#define NODE_SERIES "linkprobe_(node_info|node_identity_info|link_address_info|link_speed_bytes|rdma_port_info|" \
        "rdma_port_rate_bytes|peer_measured_timestamp_seconds)"
#define EDGE_SERIES "linkprobe_(neighbor_info|neighbor_problems|edge_[a-z_]+)"
/* The whole cluster's, without what says nothing: flags and counts that are 0 (absent is the same),
 * link speeds that are unknown, loopback addresses; a third less to answer, send and parse. Two
 * queries, not one joined by "or": "or" keeps one series per label set whatever the metric's name,
 * and an edge's flags have the label set of its rates. */
#define FABRIC_SERIES                                                                                        \
        "{__name__=~\"linkprobe_(node_info|node_identity_info|neighbor_info|rdma_port_info|rdma_port_rate_bytes|" \
        "peer_measured_timestamp_seconds|edge_(upload|download)_bytes|edge_rtt_seconds|"                    \
        "edge_measured_timestamp_seconds|edge_thunderbolt_(rx|tx)_bytes)\"}"
#define FABRIC_NONZERO                                                                                        \
        "{__name__=~\"linkprobe_(neighbor_problems|edge_stale|edge_degraded|edge_thunderbolt_degraded|"      \
        "link_speed_bytes)\"} > 0 or linkprobe_link_address_info{class!=\"loopback\"}"
/* The switches: what each node's cables end in, and the sweep's switch-to-switch links (two queries for
 * the reason FABRIC_NONZERO gives). */
#define SWITCH_SERIES                                                                                     \
        "{__name__=~\"linkprobe_(link_switch_info|rdma_port_remote_info|switch_link_info|switch_link_rate_gbps|" \
        "switch_link_best_rate_gbps|link_best_common_speed_bytes|rdma_port_best_rate_bytes)\"}"
#define SWITCH_DEGRADED                                                                                   \
        "{__name__=~\"linkprobe_(link_degraded|rdma_port_degraded|rdma_port_health|switch_link_degraded)\","  \
        "health=~\"|degraded\"} > 0"
/* Who is who: enough to find a few nodes' series among a thousand. */
#define IDENTITY_SERIES "{__name__=~\"linkprobe_(node_info|node_identity_info)\"}"
/* Past this many nodes asked for, the whole cluster is read: a selector that long gains nothing. */
#define SELECTED_MAX 64

typedef struct Reading {
        json_object *model;
        FabricSides sides;
        json_object *result[2];
        json_object *boots;     /* scrape target -> its boot_id */
        json_object *targets;   /* scrape target -> the NodeId it answers with */
        json_object *first;     /* NodeId -> the first scrape target that answered with it */
        json_object *rdma_rate; /* NodeId/device -> Gb/s */
        json_object *owners;    /* address -> the NodeId whose interface holds it ("" when two do) */
        json_object *best;      /* NodeId/device -> the best common Gb/s of a link */
        json_object *degraded;  /* NodeId/device[/port] -> true */
        json_object *switch_rate; /* switch key/port -> Gb/s */
        json_object *switch_best; /* switch key/port -> the best both ends support, Gb/s */
        json_object *switch_degraded; /* switch key/port -> the reason it is degraded */
} Reading;

static void reading_done(Reading *r) {
        json_object_put(r->boots);
        json_object_put(r->targets);
        json_object_put(r->first);
        json_object_put(r->rdma_rate);
        json_object_put(r->owners);
        json_object_put(r->best);
        json_object_put(r->degraded);
        json_object_put(r->switch_rate);
        json_object_put(r->switch_best);
        json_object_put(r->switch_degraded);
        fabric_sides_done(&r->sides);
}

/* A scrape target: what Prometheus adds to every series it scrapes. */
static void target_of(json_object *series, char *buf, size_t size) {
        snprintf(buf, size, "%s\x1f%s", strempty(label(series, "instance")), strempty(label(series, "job")));
}

/* The NodeId of the node a per-node series (a link, an RDMA port) came from. */
static const char *node_of(Reading *rd, json_object *series) {
        json_object *v;
        char target[1024];

        target_of(series, target, sizeof(target));
        return json_object_object_get_ex(rd->targets, target, &v) ? json_object_get_string(v) : NULL;
}

static const char *string_at(json_object *map, const char *key) {
        json_object *v;
        return json_object_object_get_ex(map, key, &v) ? json_object_get_string(v) : NULL;
}

/* Two scrape targets answering with one NodeId are one node scraped twice (one boot) or two machines
 * with one machine ID (two boots; without a boot ID, two hostnames). */
static int add_identity(Reading *rd, json_object *series) {
        const char *id = label(series, "node_id"), *host = label(series, "nodename"), *boot, *other;
        char target[1024];
        json_object *was;

        if (!valid_id(id))
                return 0;
        target_of(series, target, sizeof(target));
        boot = string_at(rd->boots, target);
        json_object_object_add(rd->targets, target, json_object_new_string(id));
        if (!json_object_object_get_ex(rd->first, id, &was)) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "boot", json_string_or_null(boot));
                json_object_object_add(o, "host", json_string_or_null(host));
                json_object_object_add(o, "target", json_object_new_string(target));
                json_object_object_add(rd->first, id, o);
                return fabric_add_node(rd->model, id, host, false);
        }
        other = json_string_or(was, "boot", NULL);
        if (boot && other ? streq(boot, other) : streq_ptr(host, json_string_or(was, "host", NULL)))
                return 0;
        if (json_bool_or(fabric_node(rd->model, id), "Clashing", false))
                return 0;
        json_object_object_add(fabric_node(rd->model, id), "Clashing", json_object_new_boolean(true));
        return fabric_add_problem(rd->model,
                                  "Two nodes answer with NodeId %s (\"%s\" and \"%s\"): a cloned machine ID? Give each "
                                  "node its own /etc/machine-id",
                                  id, strna(json_string_or(was, "host", NULL)), strna(host));
}

typedef struct EdgeFamily {
        const char *name, *transport;
        FabricSideField field;
        double scale;
} EdgeFamily;

static const EdgeFamily edge_families[] = {
        { "linkprobe_edge_upload_bytes", NULL, SIDE_UP, 8e-9 },
        { "linkprobe_edge_download_bytes", NULL, SIDE_DOWN, 8e-9 },
        { "linkprobe_edge_rtt_seconds", NULL, SIDE_RTT, 1e6 },
        { "linkprobe_edge_stale", NULL, SIDE_STALE, 1 },
        { "linkprobe_edge_degraded", NULL, SIDE_DEGRADED, 1 },
        { "linkprobe_edge_measured_timestamp_seconds", NULL, SIDE_MEASURED_AT, 1e6 },
        { "linkprobe_edge_thunderbolt_rx_bytes", "thunderbolt", SIDE_UP, 8e-9 },
        { "linkprobe_edge_thunderbolt_tx_bytes", "thunderbolt", SIDE_DOWN, 8e-9 },
        { "linkprobe_edge_thunderbolt_degraded", "thunderbolt", SIDE_DEGRADED, 1 },
};

/* One family's word about one edge; per-edge label "interface" (or "sysname" for Thunderbolt). */
static int add_edge_word(Reading *rd, json_object *series, const EdgeFamily *f) {
        const char *from = label(series, "node_id"), *to = label(series, "neighbor_id");
        const char *transport = f->transport ?: label(series, "transport");
        /* Prometheus keeps no empty labels: a Thunderbolt peer without a network interface is named by
         * its sysname. */
        const char *interface = label(series, "interface") ?: f->transport ? label(series, "sysname") : NULL;
        double v = value(series) * f->scale;
        FabricSide *s;

        if (!valid_id(from) || !valid_id(to) || !transport)
                return 0;
        s = fabric_sides_add(&rd->sides, from, to, transport, interface);
        if (!s)
                return -ENOMEM;
        s->fields = f->field;
        s->measured = !f->transport;
        switch (f->field) {
        case SIDE_UP:
                s->up = v;
                break;
        case SIDE_DOWN:
                s->down = v;
                break;
        case SIDE_RTT:
                s->rtt_usec = v;
                break;
        case SIDE_STALE:
                s->stale = v != 0;
                break;
        case SIDE_DEGRADED:
                s->degraded = v != 0;
                break;
        case SIDE_MEASURED_AT:
                s->measured_at = v > 0 ? (uint64_t) v : 0;
                break;
        case SIDE_ADDRESS:
                break;
        }
        return 0;
}

static int add_interface_series(Reading *rd, json_object *series, const char *name) {
        const char *node = node_of(rd, series), *device = label(series, "device");
        json_object *iface;
        char key[512];

        if (!node || isempty(device))
                return 0;
        if (streq(name, "linkprobe_rdma_port_info")) {
                const char *netdev = label(series, "netdev");
                json_object *v;
                if (isempty(netdev) || !(iface = fabric_add_interface(rd->model, node, netdev)))
                        return isempty(netdev) ? 0 : -ENOMEM;
                snprintf(key, sizeof(key), "%s/%s", node, device);
                return fabric_interface_add_rdma(iface, device, json_object_object_get_ex(rd->rdma_rate, key, &v)
                                                                        ? json_object_get_double(v) : 0);
        }
        iface = fabric_add_interface(rd->model, node, device);
        if (!iface)
                return -ENOMEM;
        if (streq(name, "linkprobe_link_speed_bytes")) {
                if (value(series) > 0)
                        json_object_object_add(iface, "SpeedGbps", json_object_new_double(value(series) * 8e-9));
                return 0;
        }
        const char *address = label(series, "address");
        return address ? fabric_interface_add_address(iface, address, strtoll(strempty(label(series, "prefix_length")), NULL, 10),
                                                      label(series, "class"))
                       : 0;
}

/* Which node holds each address: the interfaces are read by now. */
static int index_owners(Reading *rd) {
        json_object *ifaces = ctl_member(rd->model, "Interfaces");

        for (size_t i = 0; i < json_array_len(ifaces); i++) {
                json_object *iface = json_object_array_get_idx(ifaces, i), *addresses = ctl_member(iface, "Addresses");
                const char *node = json_string_or(iface, "NodeId", "");
                for (size_t k = 0; k < json_array_len(addresses); k++) {
                        const char *a = json_string_or(json_object_array_get_idx(addresses, k), "Address", "");
                        const char *was = string_at(rd->owners, a);
                        json_object_object_add(rd->owners, a, json_object_new_string(was && !streq(was, node) ? "" : node));
                }
        }
        return 0;
}

/* A path a node measured, over its interface `source` to address `peer`: whose address it is tells
 * which of the neighbour's cables that edge is (the merge reads it). */
static int add_path_address(Reading *rd, json_object *series) {
        const char *node = node_of(rd, series), *peer = label(series, "peer"), *source = label(series, "source");
        const char *transport = label(series, "transport"), *owner;
        char host[256];
        FabricSide *s;

        if (!node || !peer || isempty(source) || !transport)
                return 0;
        fabric_address_host(peer, host, sizeof(host));
        owner = string_at(rd->owners, host);
        if (isempty(owner) || streq(owner, node))
                return 0;
        s = fabric_sides_add(&rd->sides, node, owner, transport, source);
        if (!s)
                return -ENOMEM;
        s->address = peer;
        s->fields = SIDE_ADDRESS;
        return 0;
}

/* Passes over the answer, each reading what the next needs: the scrape targets' boots, the nodes, the
 * nodes their neighbours name, the RDMA ports' rates, every edge and interface, then the addresses
 * each edge's path measured. */
static int read_answer(Reading *rd, json_object *result, unsigned pass);

static int read_series(Reading *rd, unsigned pass) {
        for (size_t k = 0; k < ELEMENTSOF(rd->result); k++) {
                int r = read_answer(rd, rd->result[k], pass);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int read_answer(Reading *rd, json_object *result, unsigned pass) {
        for (size_t i = 0; i < json_array_len(result); i++) {
                json_object *s = json_object_array_get_idx(result, i);
                const char *name = label(s, "__name__");
                char target[1024], key[512];
                int r = 0;

                if (!name)
                        continue;
                if (pass == 0 && streq(name, "linkprobe_node_info") && label(s, "boot_id")) {
                        target_of(s, target, sizeof(target));
                        json_object_object_add(rd->boots, target, json_object_new_string(label(s, "boot_id")));
                } else if (pass == 1 && streq(name, "linkprobe_node_identity_info"))
                        r = add_identity(rd, s);
                else if (pass == 2 && streq(name, "linkprobe_neighbor_info") && valid_id(label(s, "neighbor_id")))
                        r = fabric_add_node(rd->model, label(s, "neighbor_id"), label(s, "neighbor_hostname"), false);
                else if (pass == 2 && streq(name, "linkprobe_rdma_port_rate_bytes") && node_of(rd, s) && label(s, "device")) {
                        snprintf(key, sizeof(key), "%s/%s", node_of(rd, s), label(s, "device"));
                        json_object_object_add(rd->rdma_rate, key, json_object_new_double(value(s) * 8e-9));
                } else if (pass == 3 && streq(name, "linkprobe_neighbor_problems")) {
                        if (value(s) > 0 && valid_id(label(s, "node_id")) && valid_id(label(s, "neighbor_id")))
                                r = fabric_add_problem(rd->model, "%s sees %.0f problem(s) with %s: linkprobectl fabric on %s says which",
                                                       fabric_hostname(rd->model, label(s, "node_id")), value(s),
                                                       fabric_hostname(rd->model, label(s, "neighbor_id")),
                                                       fabric_hostname(rd->model, label(s, "node_id")));
                } else if (pass == 3 && startswith(name, "linkprobe_edge_")) {
                        for (size_t k = 0; k < ELEMENTSOF(edge_families); k++)
                                if (streq(name, edge_families[k].name)) {
                                        r = add_edge_word(rd, s, &edge_families[k]);
                                        break;
                                }
                } else if (pass == 3 && (streq(name, "linkprobe_link_address_info") || streq(name, "linkprobe_link_speed_bytes") ||
                                         streq(name, "linkprobe_rdma_port_info")))
                        r = add_interface_series(rd, s, name);
                else if (pass == 4 && streq(name, "linkprobe_peer_measured_timestamp_seconds"))
                        r = add_path_address(rd, s);
                /* Past the bounds on nodes, a polluted server's answer is left out rather than fatal. */
                if (r < 0 && r != -E2BIG)
                        return r;
        }
        return 0;
}

/* ---- switches ---- */

static double number_at(json_object *map, const char *key) {
        json_object *v;
        return json_object_object_get_ex(map, key, &v) ? json_object_get_double(v) : 0;
}

/* Pass 0 over the switches' answers: the figures the attachments and switch links are given. */
static void index_switch_series(Reading *rd, json_object *s, const char *name) {
        const char *node = node_of(rd, s);
        char key[512], sw[128];

        if (streq(name, "linkprobe_link_best_common_speed_bytes") && node && label(s, "device")) {
                snprintf(key, sizeof(key), "%s/%s", node, label(s, "device"));
                json_object_object_add(rd->best, key, json_object_new_double(value(s) * 8e-9));
        } else if (streq(name, "linkprobe_link_degraded") && node && label(s, "device")) {
                snprintf(key, sizeof(key), "%s/%s", node, label(s, "device"));
                json_object_object_add(rd->degraded, key, json_object_new_boolean(true));
        } else if (streq(name, "linkprobe_rdma_port_best_rate_bytes") && node && label(s, "device")) {
                snprintf(key, sizeof(key), "%s/%s/%s", node, label(s, "device"), strempty(label(s, "port")));
                json_object_object_add(rd->best, key, json_object_new_double(value(s) * 8e-9));
        } else if ((streq(name, "linkprobe_rdma_port_health") || streq(name, "linkprobe_rdma_port_degraded")) && node &&
                   label(s, "device")) {
                snprintf(key, sizeof(key), "%s/%s/%s", node, label(s, "device"), strempty(label(s, "port")));
                json_object_object_add(rd->degraded, key, json_object_new_boolean(true));
        } else if (startswith(name, "linkprobe_switch_link_") &&
                   fabric_switch_key(label(s, "switch_guid"), NULL, NULL, sw, sizeof(sw)) >= 0) {
                snprintf(key, sizeof(key), "%s/%s", sw, strempty(label(s, "port")));
                if (streq(name, "linkprobe_switch_link_rate_gbps"))
                        json_object_object_add(rd->switch_rate, key, json_object_new_double(value(s)));
                else if (streq(name, "linkprobe_switch_link_best_rate_gbps"))
                        json_object_object_add(rd->switch_best, key, json_object_new_double(value(s)));
                else if (streq(name, "linkprobe_switch_link_degraded"))
                        json_object_object_add(rd->switch_degraded, key, json_object_new_string(strempty(label(s, "reason"))));
        }
}

/* Pass 1: the switches, each node's cables into them, the switch-to-switch links. */
static int add_switch_series(Reading *rd, json_object *s, const char *name) {
        const char *node = node_of(rd, s);
        char key[128], far[128], k[512];

        if (streq(name, "linkprobe_link_switch_info") && node && label(s, "device")) {
                json_object *iface = fabric_interface(rd->model, node, label(s, "device"));
                if (fabric_switch_key(NULL, label(s, "chassis_id"), label(s, "switch_name"), key, sizeof(key)) < 0)
                        return 0;
                if (!fabric_add_switch(rd->model, key, label(s, "switch_name"), NULL, "lldp"))
                        return -ENOMEM;
                snprintf(k, sizeof(k), "%s/%s", node, label(s, "device"));
                return fabric_add_attachment(rd->model, node, label(s, "device"), "ethernet", key, label(s, "port_id"),
                                             json_double_or(iface, "SpeedGbps", 0), number_at(rd->best, k),
                                             json_object_object_get_ex(rd->degraded, k, NULL));
        }
        if (streq(name, "linkprobe_rdma_port_remote_info") && node && label(s, "device") &&
            streq_ptr(label(s, "remote_type"), "switch")) {
                char iface[128];
                if (fabric_switch_key(label(s, "remote_guid"), NULL, NULL, key, sizeof(key)) < 0)
                        return 0;
                if (!fabric_add_switch(rd->model, key, label(s, "switch_name"), label(s, "remote_description"), "infiniband"))
                        return -ENOMEM;
                snprintf(iface, sizeof(iface), "%s/%s", label(s, "device"), label(s, "port") ?: "1");
                snprintf(k, sizeof(k), "%s/%s", node, label(s, "device"));
                double rate = number_at(rd->rdma_rate, k);
                snprintf(k, sizeof(k), "%s/%s/%s", node, label(s, "device"), strempty(label(s, "port")));
                return fabric_add_attachment(rd->model, node, iface, "infiniband", key, label(s, "remote_port"), rate,
                                             number_at(rd->best, k), json_object_object_get_ex(rd->degraded, k, NULL));
        }
        if (streq(name, "linkprobe_switch_link_info")) {
                if (fabric_switch_key(label(s, "switch_guid"), NULL, NULL, key, sizeof(key)) < 0 ||
                    fabric_switch_key(label(s, "remote_guid"), NULL, NULL, far, sizeof(far)) < 0)
                        return 0;
                if (!fabric_add_switch(rd->model, key, label(s, "switch_name"), NULL, "sweep") ||
                    !fabric_add_switch(rd->model, far, label(s, "remote_name"), NULL, "sweep"))
                        return -ENOMEM;
                json_object *reason = NULL;
                snprintf(k, sizeof(k), "%s/%s", key, strempty(label(s, "port")));
                json_object_object_get_ex(rd->switch_degraded, k, &reason);
                return fabric_add_switch_link(rd->model, key, label(s, "port"), far, label(s, "remote_port"), label(s, "width"),
                                              label(s, "speed"), number_at(rd->switch_rate, k),
                                              &(FabricLinkJudgement) { .best = number_at(rd->switch_best, k),
                                                                       .degraded = reason != NULL,
                                                                       .reason = json_object_get_string(reason) });
        }
        return 0;
}

static int read_switches(Reading *rd, HttpClient *http) {
        _cleanup_(json_object_putp) json_object *result = NULL, *degraded = NULL;
        int r;

        r = query(http, SWITCH_SERIES, &result);
        if (r == 0)
                r = query(http, SWITCH_DEGRADED, &degraded);
        if (r != 0)
                return r;
        rd->best = json_object_new_object();
        rd->degraded = json_object_new_object();
        rd->switch_rate = json_object_new_object();
        rd->switch_best = json_object_new_object();
        rd->switch_degraded = json_object_new_object();
        if (!rd->best || !rd->degraded || !rd->switch_rate || !rd->switch_best || !rd->switch_degraded)
                return log_oom_ctl();
        for (unsigned pass = 0; pass < 2; pass++)
                for (size_t k = 0; k < 2; k++) {
                        json_object *answer = k == 0 ? result : degraded;
                        for (size_t i = 0; i < json_array_len(answer); i++) {
                                json_object *s = json_object_array_get_idx(answer, i);
                                const char *name = label(s, "__name__");
                                if (!name)
                                        continue;
                                if (pass == 0)
                                        index_switch_series(rd, s, name);
                                else if ((r = add_switch_series(rd, s, name)) < 0 && r != -E2BIG)
                                        return log_oom_ctl();
                        }
                }
        return 0;
}

/* s as an RE2 pattern that matches it alone, inside a PromQL double-quoted string. */
static void append_literal(FILE *f, const char *s) {
        for (; *s; s++) {
                if (*s == '\\') {
                        fputs("\\\\\\\\", f); /* an escaped backslash in the regex, each escaped for the string */
                        continue;
                }
                if (strchr(".+*?()|[]{}^$", *s))
                        fputs("\\\\", f); /* a regex backslash, escaped for the string */
                if (*s == '"')
                        fputc('\\', f);
                fputc(*s, f);
        }
}

/*
 * The query for the series of only the nodes named (hostnames or NodeIds, comma-separated): their
 * edges by node_id, their links by scrape target. NULL when a name is not among the identities (the
 * whole cluster is read, and the ring says which names it does not know) or too many are named.
 */
static char *selected_query(json_object *identities, const char *names) {
        _cleanup_(freep) char *copy = strdup(names), *ids = NULL, *targets = NULL;
        _cleanup_(json_object_putp) json_object *wanted = json_object_new_object();
        size_t n_ids = 0, n_targets = 0, ids_len = 0, targets_len = 0;
        FILE *fi = NULL, *ft = NULL;
        char *state = NULL;

        if (!copy || !wanted)
                return NULL;
        /* The NodeIds named, by NodeId or hostname. */
        for (char *w = strtok_r(copy, ", ", &state); w; w = strtok_r(NULL, ", ", &state)) {
                bool found = false;
                for (size_t i = 0; i < json_array_len(identities); i++) {
                        json_object *s = json_object_array_get_idx(identities, i);
                        const char *id = label(s, "node_id");
                        if (!id || !streq(strempty(label(s, "__name__")), "linkprobe_node_identity_info") ||
                            (!streq(id, w) && !streq_ptr(label(s, "nodename"), w)))
                                continue;
                        found = true;
                        if (!json_object_object_get_ex(wanted, id, NULL))
                                json_object_object_add(wanted, id, NULL);
                }
                if (!found || json_object_object_length(wanted) > SELECTED_MAX)
                        return NULL;
        }
        fi = open_memstream(&ids, &ids_len);
        ft = open_memstream(&targets, &targets_len);
        if (!fi || !ft) {
                if (fi)
                        fclose(fi);
                if (ft)
                        fclose(ft);
                return NULL;
        }
        json_object_object_foreach(wanted, id, unused) {
                (void) unused;
                fprintf(fi, "%s", n_ids++ > 0 ? "|" : "");
                append_literal(fi, id);
        }
        /* Every scrape target answering with one of them: a clone of a node comes along, to be seen. */
        for (size_t i = 0; i < json_array_len(identities); i++) {
                json_object *s = json_object_array_get_idx(identities, i);
                if (streq(strempty(label(s, "__name__")), "linkprobe_node_identity_info") &&
                    json_object_object_get_ex(wanted, strempty(label(s, "node_id")), NULL)) {
                        fprintf(ft, "%s", n_targets++ > 0 ? "|" : "");
                        append_literal(ft, strempty(label(s, "instance")));
                }
        }
        fclose(fi);
        fclose(ft);
        if (n_ids == 0)
                return NULL;
        /* No series of the one side of "or" has the label set of one of the other's (see FABRIC_NONZERO). */
        return ctl_strdupf("{__name__=~\"" EDGE_SERIES "\",node_id=~\"%s\"} or {__name__=~\"" NODE_SERIES
                           "\",instance=~\"%s\"}", ids, targets);
}

int fabric_from_prometheus(const char *url, const HttpAuth *auth, uint64_t timeout_usec, const char *only,
                           json_object **ret) {
        _cleanup_(json_object_putp) json_object *model = fabric_model_new("prometheus"), *result = NULL, *nonzero = NULL;
        _cleanup_(reading_done) Reading rd = {};
        _cleanup_(http_client_freep) HttpClient *http = NULL;
        int r;

        if (!model)
                return log_oom_ctl();
        r = http_client_new(url, auth, now_usec(CLOCK_MONOTONIC) + timeout_usec, &http);
        if (r != 0)
                return r;
        if (only) {
                _cleanup_(json_object_putp) json_object *identities = NULL;
                _cleanup_(freep) char *expr = NULL;

                r = query(http, IDENTITY_SERIES, &identities);
                if (r != 0)
                        return r;
                expr = selected_query(identities, only);
                if (expr) {
                        r = query(http, expr, &result);
                        if (r != 0)
                                return r;
                }
        }
        if (!result) {
                r = query(http, FABRIC_SERIES, &result);
                if (r == 0)
                        r = query(http, FABRIC_NONZERO, &nonzero);
                if (r != 0)
                        return r;
        }
        rd = (Reading) { .model = model, .result = { result, nonzero }, .boots = json_object_new_object(),
                         .targets = json_object_new_object(), .first = json_object_new_object(),
                         .rdma_rate = json_object_new_object(), .owners = json_object_new_object() };
        if (!rd.boots || !rd.targets || !rd.first || !rd.rdma_rate || !rd.owners)
                return log_oom_ctl();
        for (unsigned pass = 0; pass < 5; pass++) {
                r = pass == 4 ? index_owners(&rd) : 0;
                if (r >= 0)
                        r = read_series(&rd, pass);
                if (r < 0)
                        return log_oom_ctl();
        }
        /* A few nodes asked for (fabric ring --nodes=) need no switches. */
        if (!only) {
                r = read_switches(&rd, http);
                if (r != 0)
                        return r;
        }
        if (fabric_sides_merge(model, &rd.sides) < 0)
                return log_oom_ctl();
        *ret = TAKE_PTR(model);
        return 0;
}
