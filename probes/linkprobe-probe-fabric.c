/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * linkprobe-probe-fabric: walks the whole InfiniBand subnet with libibnetdisc (ibnetdiscover's own
 * library) and prints every switch and every switch-to-switch link as one JSON document. linkprobed
 * runs it as a child with a deadline ([Fabric] Sweep=yes), so a fabric that answers slowly or not at
 * all never holds up the daemon's loop, and the memory the walk needs is given back when it exits.
 *
 *   {"probe": "fabric", "version": 1, "status": "ok",
 *    "switches": [{"guid": "0x...", "description": "...", "ports": N, "cap_info": "128 hex digits",
 *                  "links": [{"port": P, "remote_guid": "0x...", "remote_port": Q,
 *                             "port_info": "128 hex digits"}]}],
 *    "unanswered": [{"guid": "0x...", "port": P}, ...], "total_switches": N, "truncated": false,
 *    "mads": M, "subnets": [{"ca": "...", "port": P, "switches": N}], "subnets_not_walked": 0}
 *
 * port_info is the PortInfo of the switch's port as the switch answered it: the daemon decodes and
 * checks it with the same code that reads a neighbour's answers (src/daemon/ib-smp.c). cap_info is
 * the PortInfo of the switch's port 0, whose capability masks say which extended speeds its external
 * ports' fields are valid for (as iblinkinfo reads them); absent when the walk did not get it. The far
 * end of a switch-to-switch link is that switch's own entry: the daemon judges each link from both
 * ends' PortInfo without a second copy of either in the document. "unanswered"
 * lists the switch ports whose link is up but whose far end never answered (a MAD timeout mid-sweep):
 * the walk is then incomplete, and the daemon keeps its last complete result.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <endian.h>
#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "fabric-subnets.h"
#include "probe-util.h"
#include "shared/parse-util.h"

#define PROBE_NAME "fabric"
/* PortInfo:PortPhysicalState LinkUp. */
#define PHYS_STATE_LINK_UP 5

typedef struct Options {
        const char *ca;
        unsigned port;
        unsigned max_switches;
        unsigned timeout_ms;
        unsigned retries;
        unsigned max_smps;
        uint64_t deadline_usec;
} Options;

static unsigned parse_bounded(const char *arg, const char *what, unsigned min, unsigned max) {
        uint32_t v;

        if (parse_u32(arg, &v) < 0 || v < min || v > max)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_USAGE, "usage", "%s=%s: expected %u to %u", what, arg, min,
                                 max);
        return v;
}

static void parse_options(int argc, char **argv, Options *o) {
        static const struct option options[] = {
                { "ca", required_argument, NULL, 'C' },
                { "port", required_argument, NULL, 'P' },
                { "max-switches", required_argument, NULL, 'm' },
                { "timeout-ms", required_argument, NULL, 't' },
                { "retries", required_argument, NULL, 'r' },
                { "outstanding-smps", required_argument, NULL, 'o' },
                { "deadline", required_argument, NULL, 'd' },
                {}
        };
        int c;

        *o = (Options) { .max_switches = 2048, .timeout_ms = 200, .retries = 2, .max_smps = 16,
                         .deadline_usec = 60 * USEC_PER_SEC };
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'C':
                        o->ca = optarg;
                        break;
                case 'P':
                        o->port = parse_bounded(optarg, "--port", 0, 254);
                        break;
                case 'm':
                        o->max_switches = parse_bounded(optarg, "--max-switches", 1, 65535);
                        break;
                case 't':
                        o->timeout_ms = parse_bounded(optarg, "--timeout-ms", 1, 60000);
                        break;
                case 'r':
                        o->retries = parse_bounded(optarg, "--retries", 0, 10);
                        break;
                case 'o':
                        o->max_smps = parse_bounded(optarg, "--outstanding-smps", 1, 64);
                        break;
                case 'd':
                        o->deadline_usec = (uint64_t) parse_bounded(optarg, "--deadline", 1, 3600) * USEC_PER_SEC;
                        break;
                default:
                        probe_exit_error(PROBE_NAME, PROBE_EXIT_USAGE, "usage", "unknown option (see "
                                         "linkprobe-probe-fabric(8))");
                }
        if (optind < argc)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_USAGE, "usage", "unexpected argument %s", argv[optind]);
}

/* The document is written as it is formatted, not built as a json-c tree first: a fabric of a thousand
 * HCAs has some 2,000 switch-to-switch links, and a tree of their objects cost more CPU time than
 * ibnetdiscover spends printing the whole fabric (bench/bench-sweep). json-c still escapes what
 * comes from the fabric (descriptions) and formats the small parts. */
static const char hex_digits[] = "0123456789abcdef";

/* "0x" and 16 hex digits, as ibnetdiscover writes a GUID. */
static void format_guid(char s[static 19], uint64_t guid) {
        s[0] = '0';
        s[1] = 'x';
        for (int i = 0; i < 16; i++)
                s[2 + i] = hex_digits[(guid >> (60 - 4 * i)) & 0xf];
        s[18] = '\0';
}

static void print_guid(FILE *f, uint64_t guid) {
        char s[19];

        format_guid(s, guid);
        fprintf(f, "\"%s\"", s);
}

static void print_hex(FILE *f, const uint8_t *data, size_t n) {
        char s[2 * IB_SMP_DATA_SIZE + 2];
        size_t k = 0;

        s[k++] = '"';
        for (size_t i = 0; i < n && i < IB_SMP_DATA_SIZE; i++) {
                s[k++] = hex_digits[data[i] >> 4];
                s[k++] = hex_digits[data[i] & 0xf];
        }
        s[k++] = '"';
        fwrite(s, 1, k, f);
}

/* A part json-c formats; a document cut short by a failure is refused by the daemon. */
static void print_json(FILE *f, json_object *o) {
        int r = probe_write_json(f, o);

        if (r < 0)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "output", "Cannot write the document: %s",
                                 strerror(-r));
}

/* The description as the switch answered it: up to 64 bytes, NUL-padded (the daemon escapes it). */
static void print_description(FILE *f, const char *d) {
        json_object *o = json_object_new_string_len(d, (int) strnlen(d, 64));

        print_json(f, o);
        json_object_put(o);
}

static void print_switch(FILE *f, ibnd_node_t *node, bool first, json_object *unanswered) {
        bool first_link = true;

        fputs(first ? "{\"guid\":" : ",{\"guid\":", f);
        print_guid(f, node->guid);
        fputs(",\"description\":", f);
        print_description(f, node->nodedesc);
        fprintf(f, ",\"ports\":%d", node->numports);
        if (node->ports && node->ports[0]) {
                fputs(",\"cap_info\":", f);
                print_hex(f, node->ports[0]->info, IB_SMP_DATA_SIZE);
        }
        fputs(",\"links\":[", f);
        for (int i = 1; i <= node->numports; i++) {
                ibnd_port_t *p = node->ports ? node->ports[i] : NULL;

                if (!p)
                        continue;
                if (!p->remoteport) {
                        if (mad_get_field(p->info, 0, IB_PORT_PHYS_STATE_F) == PHYS_STATE_LINK_UP) {
                                json_object *u = json_object_new_object();
                                char guid[19];

                                format_guid(guid, node->guid);
                                json_object_object_add(u, "guid", json_object_new_string(guid));
                                json_object_object_add(u, "port", json_object_new_int(i));
                                json_object_array_add(unanswered, u);
                        }
                        continue;
                }
                if (p->remoteport->node->type != IB_NODE_SWITCH)
                        continue;
                fprintf(f, "%s{\"port\":%d,\"remote_guid\":", first_link ? "" : ",", i);
                print_guid(f, p->remoteport->node->guid);
                fprintf(f, ",\"remote_port\":%d,\"port_info\":", p->remoteport->portnum);
                print_hex(f, p->info, IB_SMP_DATA_SIZE);
                fputc('}', f);
                first_link = false;
        }
        fputs("]}", f);
}

typedef struct Walks {
        ibnd_fabric_t *fabrics[FABRIC_SUBNETS_MAX];
        FabricLocalPort from[FABRIC_SUBNETS_MAX];
        size_t n;
} Walks;

static bool walked(uint64_t port_guid, void *userdata) {
        const Walks *w = userdata;

        for (size_t i = 0; i < w->n; i++)
                if (ibnd_find_port_guid(w->fabrics[i], port_guid))
                        return true;
        return false;
}

/* The active InfiniBand ports of every CA libibumad lists, in its order. */
static size_t local_ports(FabricLocalPort *ret, size_t max) {
        char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
        int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
        size_t k = 0;

        for (int i = 0; i < n && k < max; i++) {
                umad_ca_t ca;

                if (umad_get_ca(names[i], &ca) < 0)
                        continue;
                for (int p = 0; p < UMAD_CA_MAX_PORTS && k < max; p++) {
                        const umad_port_t *up = ca.ports[p];

                        if (!up || !fabric_port_walkable(up->state, up->link_layer))
                                continue;
                        snprintf(ret[k].ca, sizeof(ret[k].ca), "%s", ca.ca_name);
                        ret[k].port = (unsigned) up->portnum;
                        ret[k].port_guid = be64toh(up->port_guid);
                        k++;
                }
                umad_release_ca(&ca);
        }
        return k;
}

static ibnd_fabric_t *walk(const char *ca, unsigned port, ibnd_config_t *config) {
        ibnd_fabric_t *fabric = ibnd_discover_fabric((char *) ca, (int) port, NULL, config);

        if (!fabric)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "discover-failed",
                                 "libibnetdisc could not walk the subnet from %s port %u (no umad device, no "
                                 "access to it, or no answer from the first hop)",
                                 ca ?: "the first CA", port);
        return fabric;
}

/* Whether an earlier subnet's walk has this switch already (a cable between two subnets' switches is
 * not one InfiniBand link, but a switch reached from both is published once). */
static bool seen_before(const Walks *w, size_t k, uint64_t guid) {
        for (size_t i = 0; i < k; i++)
                if (ibnd_find_node_guid(w->fabrics[i], guid))
                        return true;
        return false;
}

int main(int argc, char **argv) {
        json_object *unanswered, *subnets;
        ibnd_config_t config = {};
        FabricLocalPort ports[UMAD_MAX_DEVICES];
        Walks w = {};
        unsigned total = 0, published = 0, mads = 0, skipped = 0;
        Options o;

        /* The document goes out in a few large writes (the daemon enlarges the pipe to hold it). */
        (void) setvbuf(stdout, NULL, _IOFBF, 64U << 10);
        parse_options(argc, argv, &o);
        if (probe_arm_deadline(PROBE_NAME, o.deadline_usec) < 0)
                probe_exit_error(PROBE_NAME, PROBE_EXIT_ERROR, "deadline", "Cannot arm the deadline: %s",
                                 strerror(errno));

        /* ibnetdiscover's defaults but for the outstanding SMPs (its default is 2; ours 16, the daemon's
         * [Fabric] OutstandingSmps=): more of them in flight is what makes a walk of a large fabric fast
         * (each switch answers on its own). */
        config.max_smps = o.max_smps;
        config.timeout_ms = o.timeout_ms;
        config.retries = o.retries;
        if (o.ca || o.port) {
                /* Asked for one: that subnet only. */
                w.fabrics[w.n++] = walk(o.ca, o.port, &config);
        } else {
                /* Each subnet the node is on, once (fabric-subnets.c). No port libibumad calls active:
                 * it picks, as ibnetdiscover does, and says why it cannot. */
                size_t n = local_ports(ports, ELEMENTSOF(ports));
                ssize_t i;

                if (n == 0)
                        w.fabrics[w.n++] = walk(NULL, 0, &config);
                for (size_t from = 0; (i = fabric_next_subnet_port(ports, n, from, walked, &w)) >= 0;
                     from = (size_t) i + 1) {
                        if (w.n == FABRIC_SUBNETS_MAX) {
                                skipped++;
                                continue;
                        }
                        w.from[w.n] = ports[i];
                        w.fabrics[w.n] = walk(ports[i].ca, ports[i].port, &config);
                        w.n++;
                }
        }

        /* The switches first, as they are walked: the daemon parses what arrives while the rest is
         * formatted; the counts that need the whole walk follow them. */
        printf("{\"probe\":\"%s\",\"version\":%d,\"status\":\"ok\",\"switches\":[", PROBE_NAME, PROBE_JSON_VERSION);
        unanswered = json_object_new_array();
        subnets = json_object_new_array();
        for (size_t k = 0; k < w.n; k++) {
                json_object *subnet = json_object_new_object();
                unsigned found = 0;

                for (ibnd_node_t *n = w.fabrics[k]->switches; n; n = n->type_next) {
                        if (seen_before(&w, k, n->guid))
                                continue;
                        total++;
                        found++;
                        if (published >= o.max_switches)
                                continue;
                        print_switch(stdout, n, published == 0, unanswered);
                        published++;
                }
                mads += (unsigned) w.fabrics[k]->total_mads_used;
                json_object_object_add(subnet, "ca", json_object_new_string(w.from[k].ca[0] ? w.from[k].ca :
                                                                            (o.ca ?: "")));
                json_object_object_add(subnet, "port", json_object_new_int((int) (w.from[k].port ?: o.port)));
                json_object_object_add(subnet, "switches", json_object_new_int((int) found));
                json_object_array_add(subnets, subnet);
        }
        fputs("],\"unanswered\":", stdout);
        print_json(stdout, unanswered);
        printf(",\"total_switches\":%u,\"truncated\":%s,\"mads\":%u,\"subnets\":", total,
               total > published ? "true" : "false", mads);
        print_json(stdout, subnets);
        printf(",\"subnets_not_walked\":%u}\n", skipped);
        /* Out before the walk's memory is given back: the daemon has the document while this exits. */
        if (fflush(stdout) == EOF || ferror(stdout))
                return PROBE_EXIT_ERROR;
        if (skipped > 0)
                fprintf(stderr, "%u more subnet(s) not walked: at most %u per sweep\n", skipped, FABRIC_SUBNETS_MAX);
        json_object_put(unanswered);
        json_object_put(subnets);
        for (size_t k = 0; k < w.n; k++)
                ibnd_destroy_fabric(w.fabrics[k]);
        return PROBE_EXIT_OK;
}
