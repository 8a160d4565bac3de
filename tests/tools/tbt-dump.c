/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tbt-dump: prints what the Thunderbolt reader and topology see below a sysfs root, as JSON. A test and
 * debugging aid (not installed): the boltd side-by-side tests and a person comparing with /sys use it. */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>

#include "shared/log.h"
#include "shared/string-util.h"
#include "sysfs/sysfs.h"
#include "sysfs/thunderbolt.h"
#include "daemon/tbt-topology.h"

static const char *arg_root = "/sys";
static bool arg_compact = false;

static void add(json_object *o, const char *key, json_object *v) {
        json_object_object_add(o, key, v); /* NULL is JSON null */
}

static json_object *str_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

static json_object *uint_or_null(bool known, uint64_t v) {
        return known ? json_object_new_int64((int64_t) v) : NULL;
}

static json_object *tristate(int v) {
        return v < 0 ? NULL : json_object_new_boolean(v);
}

static json_object *direction(const TbtLinkDirection *d) {
        json_object *o = json_object_new_object();
        add(o, "lanes", uint_or_null(d->lanes > 0, d->lanes));
        add(o, "lane_gbps", uint_or_null(d->lane_gbps > 0, d->lane_gbps));
        return o;
}

static json_object *link_info(const TbtTopology *t, size_t i) {
        const TbtNode *n = &t->nodes[i];
        json_object *o;

        if (!n->has_link)
                return NULL;
        o = json_object_new_object();
        add(o, "rx_gbps", uint_or_null(n->link.rx_gbps > 0, n->link.rx_gbps));
        add(o, "tx_gbps", uint_or_null(n->link.tx_gbps > 0, n->link.tx_gbps));
        add(o, "path_rx_gbps", uint_or_null(n->path_rx_gbps > 0, n->path_rx_gbps));
        add(o, "path_tx_gbps", uint_or_null(n->path_tx_gbps > 0, n->path_tx_gbps));
        add(o, "class", str_or_null(tbt_link_class_to_string(n->link.link_class)));
        add(o, "degraded", json_object_new_boolean(n->link.degraded));
        add(o, "degraded_reason", str_or_null(n->link.degraded_reason));
        add(o, "path_generation",
            uint_or_null(tbt_topology_path_generation(t, i) > 0, tbt_topology_path_generation(t, i)));
        return o;
}

static json_object *problem_flags(unsigned problems) {
        static const struct {
                TbtProblem flag;
                const char *name;
        } names[] = {
                { TBT_PROBLEM_LOOP, "loop" },
                { TBT_PROBLEM_TOO_DEEP, "too-deep" },
                { TBT_PROBLEM_ORPHAN, "orphan" },
                { TBT_PROBLEM_ROUTE_MISMATCH, "route-mismatch" },
        };
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (problems & names[i].flag)
                        json_object_array_add(a, json_object_new_string(names[i].name));
        return a;
}

static void add_identity(json_object *o, const TbtDevice *d) {
        add(o, "vendor_id", uint_or_null(d->has_vendor_id, d->vendor_id));
        add(o, "device_id", uint_or_null(d->has_device_id, d->device_id));
        add(o, "vendor_name", str_or_null(d->vendor_name));
        add(o, "device_name", str_or_null(d->device_name));
        add(o, "unique_id", str_or_null(d->unique_id));
        add(o, "nvm_version", str_or_null(d->nvm_version));
}

static void add_router(json_object *o, const TbtDevice *d) {
        json_object *ports = json_object_new_array();

        add(o, "router_type", str_or_null(tbt_router_type_to_string(d->router_type)));
        add(o, "generation", uint_or_null(d->generation > 0, d->generation));
        add(o, "usb4_version", uint_or_null(d->usb4_version > 0, d->usb4_version));
        add(o, "authorized", uint_or_null(d->authorized >= 0, (uint64_t) d->authorized));
        add(o, "boot", tristate(d->boot));
        for (size_t i = 0; i < d->n_ports; i++) {
                json_object *p = json_object_new_object();
                add(p, "number", json_object_new_int64(d->ports[i].number));
                add(p, "link", str_or_null(tbt_port_link_to_string(d->ports[i].link)));
                json_object_array_add(ports, p);
        }
        add(o, "ports", ports);
}

static void add_domain(json_object *o, const TbtDevice *d) {
        json_object *acl = NULL;

        add(o, "controller", str_or_null(d->controller));
        add(o, "security", str_or_null(tbt_security_to_string(d->security)));
        add(o, "iommu_dma_protection", tristate(d->iommu_dma_protection));
        add(o, "deauthorization", tristate(d->deauthorization));
        if (d->boot_acl) {
                acl = json_object_new_array();
                STRV_FOREACH(e, d->boot_acl)
                        json_object_array_add(acl, json_object_new_string(*e));
        }
        add(o, "boot_acl", acl);
}

static void add_service(json_object *o, const TbtDevice *d) {
        add(o, "key", str_or_null(d->service_key));
        add(o, "protocol_id", uint_or_null(d->protocol_id >= 0, (uint64_t) d->protocol_id));
        add(o, "protocol_version", uint_or_null(d->protocol_version >= 0, (uint64_t) d->protocol_version));
        add(o, "protocol_revision", uint_or_null(d->protocol_revision >= 0, (uint64_t) d->protocol_revision));
        add(o, "protocol_settings", uint_or_null(d->protocol_settings >= 0, (uint64_t) d->protocol_settings));
        add(o, "driver", str_or_null(d->driver));
        add(o, "net_interface", str_or_null(d->net_interface));
}

static json_object *device_json(const TbtDevice *d, const TbtTopology *t, size_t i) {
        const TbtNode *n = &t->nodes[i];
        json_object *o = json_object_new_object();
        char route[32];

        snprintf(route, sizeof(route), "%" PRIx64, d->route);
        add(o, "sysname", json_object_new_string(d->sysname));
        add(o, "kind", str_or_null(tbt_kind_to_string(d->kind)));
        add(o, "type", str_or_null(tbt_node_type_to_string(n->type)));
        add(o, "syspath", str_or_null(d->syspath));
        add(o, "parent", str_or_null(d->parent));
        add(o, "domain", uint_or_null(d->domain_index >= 0, (uint64_t) d->domain_index));
        add(o, "route", d->has_route ? json_object_new_string(route) : NULL);
        add(o, "depth", uint_or_null(n->depth >= 0, (uint64_t) n->depth));
        add(o, "problems", problem_flags(n->problems));

        switch (d->kind) {
        case TBT_KIND_DOMAIN:
                add_domain(o, d);
                break;
        case TBT_KIND_ROUTER:
                add_identity(o, d);
                add_router(o, d);
                add(o, "rx", direction(&d->rx));
                add(o, "tx", direction(&d->tx));
                add(o, "link", link_info(t, i));
                break;
        case TBT_KIND_PEER:
                add_identity(o, d);
                add(o, "max_hop_id", uint_or_null(d->max_hop_id > 0, d->max_hop_id));
                add(o, "rx", direction(&d->rx));
                add(o, "tx", direction(&d->tx));
                add(o, "link", link_info(t, i));
                add(o, "net_interface", str_or_null(n->net_interface));
                break;
        case TBT_KIND_SERVICE:
                add_service(o, d);
                break;
        case TBT_KIND_RETIMER:
                add_identity(o, d);
                add(o, "port", json_object_new_int64(d->retimer_port));
                add(o, "index", json_object_new_int64(d->retimer_index));
                break;
        case _TBT_KIND_MAX:
        case _TBT_KIND_INVALID:
                break;
        }
        return o;
}

/* The tree as nested {"sysname", "children"} objects, built from the walk's levels. */
typedef struct TreeBuilder {
        json_object *levels[TBT_TOPOLOGY_DEPTH_MAX + 2]; /* the children array open at each level */
} TreeBuilder;

static int tree_visit(const TbtTopology *t, size_t index, unsigned level, void *userdata) {
        TreeBuilder *b = userdata;
        json_object *o = json_object_new_object(), *children = json_object_new_array();

        add(o, "sysname", json_object_new_string(t->nodes[index].sysname));
        add(o, "type", str_or_null(tbt_node_type_to_string(t->nodes[index].type)));
        add(o, "children", children);
        json_object_array_add(b->levels[level], o);
        b->levels[level + 1] = children;
        return 0;
}

static json_object *net_interfaces_json(int root_fd) {
        _cleanup_(strv_freep) char **names = NULL;
        json_object *o = json_object_new_object();

        if (sysfs_list_dir(root_fd, "class/net", &names) < 0)
                return o;
        STRV_FOREACH(name, names) {
                _cleanup_(freep) char *peer = NULL, *service = NULL;
                json_object *e;

                if (tbt_peer_for_net_interface(root_fd, *name, &peer, &service) < 0)
                        continue;
                e = json_object_new_object();
                add(e, "peer", json_object_new_string(peer));
                add(e, "service", json_object_new_string(service));
                add(o, *name, e);
        }
        return o;
}

static int dump(void) {
        _cleanup_(closep) int root_fd = -EBADF;
        _cleanup_(tbt_topology_freep) TbtTopology *t = NULL;
        TbtDevice **devices = NULL;
        json_object *out, *list, *problems;
        TreeBuilder tree = {};
        size_t n = 0;
        int r;

        root_fd = sysfs_root_open(arg_root);
        if (root_fd < 0)
                return log_error_errno(root_fd, "Cannot open sysfs root %s: %m", arg_root);
        r = tbt_enumerate(root_fd, &devices, &n);
        if (r < 0)
                return log_error_errno(r, "Cannot enumerate bus/thunderbolt: %m");
        r = tbt_topology_build(devices, n, &t);
        if (r < 0) {
                tbt_device_array_free(devices, n);
                return log_oom();
        }

        out = json_object_new_object();
        list = json_object_new_array();
        for (size_t i = 0; i < n; i++)
                json_object_array_add(list, device_json(devices[i], t, i));
        add(out, "sysfs_root", json_object_new_string(arg_root));
        add(out, "devices", list);

        tree.levels[0] = json_object_new_array();
        (void) tbt_topology_walk(t, tree_visit, &tree);
        add(out, "tree", tree.levels[0]);

        problems = json_object_new_array();
        STRV_FOREACH(p, t->problems) {
                log_warning("%s", *p);
                json_object_array_add(problems, json_object_new_string(*p));
        }
        add(out, "problems", problems);
        add(out, "net_interfaces", net_interfaces_json(root_fd));

        puts(json_object_to_json_string_ext(out, (arg_compact ? JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_PRETTY) |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(out);
        tbt_device_array_free(devices, n);
        return fflush(stdout) == 0 ? 0 : -EIO;
}

static void help(void) {
        printf("Usage: tbt-dump [OPTIONS]\n"
               "Print the Thunderbolt/USB4 devices, tree, link classes and path rates as JSON.\n\n"
               "  --sysfs-root=DIR  read DIR instead of /sys\n"
               "  --compact         one line of JSON\n"
               "  -h --help         show this help\n");
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "sysfs-root", required_argument, NULL, 'r' },
                { "compact", no_argument, NULL, 'c' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'r':
                        arg_root = optarg;
                        break;
                case 'c':
                        arg_compact = true;
                        break;
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                default:
                        return 2;
                }
        if (optind < argc) {
                log_error("Unexpected argument: %s", argv[optind]);
                return 2;
        }
        return dump() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
