/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-dump — prints what the class/infiniband reader (and, with --verbs, libibverbs) sees as JSON.
 * A debugging and fixture-checking tool; not installed. */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>

#include "daemon/rdma-verbs.h"
#include "shared/string-util.h"
#include "sysfs/infiniband.h"
#include "sysfs/sysfs.h"

static const char *arg_root = "/sys";
static const char *arg_device = NULL;
static const char *arg_netdev = NULL;
static bool arg_verbs = false;

static void help(void) {
        printf("Usage: rdma-dump [OPTIONS]\n\n"
               "Prints the RDMA devices below SYSFS-ROOT/class/infiniband as JSON.\n\n"
               "  --sysfs-root=DIR   read DIR instead of /sys\n"
               "  --device=NAME      only this device (exit 1 if it does not exist)\n"
               "  --netdev=IFNAME    also say which RDMA port the interface belongs to\n"
               "  --verbs            also query libibverbs and show where it differs from sysfs\n"
               "  -h, --help         show this help\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_ROOT = 0x100, ARG_DEVICE, ARG_NETDEV, ARG_VERBS };
        static const struct option options[] = {
                { "sysfs-root", required_argument, NULL, ARG_ROOT },
                { "device", required_argument, NULL, ARG_DEVICE },
                { "netdev", required_argument, NULL, ARG_NETDEV },
                { "verbs", no_argument, NULL, ARG_VERBS },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_ROOT:
                        arg_root = optarg;
                        break;
                case ARG_DEVICE:
                        arg_device = optarg;
                        break;
                case ARG_NETDEV:
                        arg_netdev = optarg;
                        break;
                case ARG_VERBS:
                        arg_verbs = true;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "rdma-dump: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

/* Kernel strings may hold any bytes; JSON wants UTF-8. */
static json_object *string_or_null(const char *s) {
        _cleanup_(freep) char *escaped = NULL;

        if (!s)
                return NULL;
        escaped = utf8_escape_invalid(s);
        return escaped ? json_object_new_string(escaped) : NULL;
}

static json_object *guid_or_null(uint64_t guid) {
        char buf[RDMA_GUID_STRING_MAX];
        return guid != 0 ? json_object_new_string(rdma_format_guid(guid, buf)) : NULL;
}

static json_object *known_string(const RdmaPortStatus *s, unsigned field, const char *value) {
        return (s->known & field) ? json_object_new_string(value) : NULL;
}

static json_object *known_int(const RdmaPortStatus *s, unsigned field, int64_t value) {
        return (s->known & field) ? json_object_new_int64(value) : NULL;
}

static json_object *strv_to_json(char **l) {
        json_object *a = json_object_new_array();
        STRV_FOREACH(s, l)
                json_object_array_add(a, string_or_null(*s));
        return a;
}

static void add_status(json_object *o, const RdmaPortStatus *s) {
        char cap[16];

        snprintf(cap, sizeof(cap), "0x%08" PRIx32, s->cap_mask);
        json_object_object_add(o, "state", known_string(s, RDMA_PORT_FIELD_STATE, rdma_port_state_to_string(s->state)));
        json_object_object_add(o, "phys_state",
                               known_string(s, RDMA_PORT_FIELD_PHYS_STATE, rdma_phys_state_to_string(s->phys_state)));
        json_object_object_add(o, "link_layer",
                               known_string(s, RDMA_PORT_FIELD_LINK_LAYER, rdma_link_layer_to_string(s->link_layer)));
        json_object_object_add(o, "rate_gbps",
                               (s->known & RDMA_PORT_FIELD_RATE) ? json_object_new_double(rdma_rate_gbps(&s->rate)) : NULL);
        json_object_object_add(o, "width", known_string(s, RDMA_PORT_FIELD_WIDTH, rdma_width_to_string(s->rate.width)));
        json_object_object_add(o, "speed", known_string(s, RDMA_PORT_FIELD_SPEED, rdma_speed_to_string(s->rate.speed)));
        json_object_object_add(o, "lid", known_int(s, RDMA_PORT_FIELD_LID, s->lid));
        json_object_object_add(o, "sm_lid", known_int(s, RDMA_PORT_FIELD_SM_LID, s->sm_lid));
        json_object_object_add(o, "lmc", known_int(s, RDMA_PORT_FIELD_LMC, s->lmc));
        json_object_object_add(o, "sm_sl", known_int(s, RDMA_PORT_FIELD_SM_SL, s->sm_sl));
        json_object_object_add(o, "cap_mask", known_string(s, RDMA_PORT_FIELD_CAP_MASK, cap));
}

static json_object *port_to_json(const InfinibandDevice *d, const InfinibandPort *p) {
        json_object *o = json_object_new_object(), *gids = json_object_new_array(), *netdevs = json_object_new_array();
        char buf[RDMA_GID_STRING_MAX];

        json_object_object_add(o, "port", json_object_new_int64(p->number));
        json_object_object_add(o, "transport", json_object_new_string(rdma_transport_to_string(infiniband_port_transport(d, p))));
        add_status(o, &p->status);
        json_object_object_add(o, "netdev", p->n_netdevs > 0 ? string_or_null(p->netdevs[0].name) : NULL);
        for (size_t i = 0; i < p->n_netdevs; i++) {
                json_object *n = json_object_new_object();
                json_object_object_add(n, "name", string_or_null(p->netdevs[i].name));
                json_object_object_add(n, "source",
                                       json_object_new_string(infiniband_netdev_source_to_string(p->netdevs[i].source)));
                json_object_array_add(netdevs, n);
        }
        json_object_object_add(o, "netdevs", netdevs);
        for (size_t i = 0; i < p->n_gids; i++) {
                const InfinibandGid *g = &p->gids[i];
                json_object *n = json_object_new_object();
                json_object_object_add(n, "index", json_object_new_int64(g->index));
                json_object_object_add(n, "gid", json_object_new_string(rdma_format_gid(g->gid, buf)));
                json_object_object_add(n, "type", g->type != RDMA_GID_TYPE_UNKNOWN
                                                          ? json_object_new_string(rdma_gid_type_to_string(g->type))
                                                          : NULL);
                json_object_object_add(n, "netdev", string_or_null(g->netdev));
                json_object_array_add(gids, n);
        }
        json_object_object_add(o, "gids", gids);
        json_object_object_add(o, "raw", json_object_new_object());
        json_object *raw = json_object_object_get(o, "raw");
        json_object_object_add(raw, "state", string_or_null(p->state_text));
        json_object_object_add(raw, "phys_state", string_or_null(p->phys_state_text));
        json_object_object_add(raw, "link_layer", string_or_null(p->link_layer_text));
        json_object_object_add(raw, "rate", string_or_null(p->rate_text));
        json_object_object_add(o, "warnings", strv_to_json(p->warnings));
        return o;
}

static json_object *device_to_json(const InfinibandDevice *d) {
        json_object *o = json_object_new_object(), *ports = json_object_new_array();

        json_object_object_add(o, "name", string_or_null(d->name));
        json_object_object_add(o, "syspath", string_or_null(d->syspath));
        json_object_object_add(o, "node_type", d->node_type != RDMA_NODE_TYPE_UNKNOWN
                                                       ? json_object_new_string(rdma_node_type_to_string(d->node_type))
                                                       : NULL);
        json_object_object_add(o, "node_guid", guid_or_null(d->node_guid));
        json_object_object_add(o, "sys_image_guid", guid_or_null(d->sys_image_guid));
        json_object_object_add(o, "fw_ver", string_or_null(d->fw_ver));
        json_object_object_add(o, "hca_type", string_or_null(d->hca_type));
        json_object_object_add(o, "board_id", string_or_null(d->board_id));
        json_object_object_add(o, "hw_rev", string_or_null(d->hw_rev));
        json_object_object_add(o, "node_desc", string_or_null(d->node_desc));
        json_object_object_add(o, "parent", string_or_null(d->parent));
        for (size_t i = 0; i < d->n_ports; i++)
                json_object_array_add(ports, port_to_json(d, d->ports[i]));
        json_object_object_add(o, "ports", ports);
        json_object_object_add(o, "warnings", strv_to_json(d->warnings));
        return o;
}

static json_object *verbs_to_json(int root_fd) {
        _cleanup_(strv_freep) char **names = NULL;
        json_object *o = json_object_new_object(), *devices = json_object_new_array();
        RdmaVerbsAvailability availability;
        int r;

        r = rdma_verbs_list(&names, &availability);
        if (r < 0) {
                json_object_object_add(o, "error", json_object_new_string(strerror(-r)));
                json_object_put(devices);
                return o;
        }
        json_object_object_add(o, "availability", json_object_new_string(rdma_verbs_availability_to_string(availability)));

        STRV_FOREACH(name, names) {
                _cleanup_(rdma_verbs_device_freep) RdmaVerbsDevice *v = NULL;
                _cleanup_(infiniband_device_freep) InfinibandDevice *s = NULL;
                json_object *d = json_object_new_object(), *ports = json_object_new_array();

                if (arg_device && !streq(*name, arg_device))
                        continue;
                json_object_object_add(d, "name", string_or_null(*name));
                r = rdma_verbs_device_open(*name, &v);
                if (r < 0) {
                        json_object_object_add(d, "error", json_object_new_string(strerror(-r)));
                        json_object_array_add(devices, d);
                        json_object_put(ports);
                        continue;
                }
                (void) infiniband_device_read(root_fd, *name, &s);

                json_object_object_add(d, "node_guid", guid_or_null(v->node_guid));
                json_object_object_add(d, "fw_ver", string_or_null(v->fw_ver));
                for (size_t i = 0; i < v->n_ports; i++) {
                        const RdmaVerbsPort *vp = &v->ports[i];
                        const InfinibandPort *sp = s ? infiniband_device_get_port(s, vp->number) : NULL;
                        json_object *p = json_object_new_object();
                        _cleanup_(freep) char *differences = NULL;

                        json_object_object_add(p, "port", json_object_new_int64(vp->number));
                        add_status(p, &vp->status);
                        json_object_object_add(p, "active_mtu", json_object_new_int64(vp->active_mtu));
                        if (sp)
                                (void) rdma_verbs_port_compare(vp, sp, &differences);
                        json_object_object_add(p, "differences_from_sysfs", string_or_null(differences));
                        json_object_array_add(ports, p);
                }
                json_object_object_add(d, "ports", ports);
                json_object_array_add(devices, d);
        }
        json_object_object_add(o, "devices", devices);
        return o;
}

int main(int argc, char *argv[]) {
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **devices = NULL;
        _cleanup_(closep) int root_fd = -EBADF;
        json_object *out, *list;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        root_fd = sysfs_root_open(arg_root);
        if (root_fd < 0) {
                fprintf(stderr, "rdma-dump: cannot open %s: %s\n", arg_root, strerror(-root_fd));
                return 1;
        }

        if (arg_device) {
                devices = calloc(2, sizeof(InfinibandDevice *));
                if (!devices)
                        return 1;
                r = infiniband_device_read(root_fd, arg_device, &devices[0]);
                if (r < 0) {
                        fprintf(stderr, "rdma-dump: cannot read device %s: %s\n", arg_device, strerror(-r));
                        return 1;
                }
        } else {
                r = infiniband_enumerate(root_fd, &devices, NULL);
                if (r < 0) {
                        fprintf(stderr, "rdma-dump: cannot enumerate %s/class/infiniband: %s\n", arg_root, strerror(-r));
                        return 1;
                }
        }

        out = json_object_new_object();
        json_object_object_add(out, "sysfs_root", json_object_new_string(arg_root));
        r = infiniband_subsystem_present(root_fd);
        json_object_object_add(out, "subsystem", r >= 0 ? json_object_new_boolean(r > 0) : NULL);
        list = json_object_new_array();
        for (size_t i = 0; devices[i]; i++)
                json_object_array_add(list, device_to_json(devices[i]));
        json_object_object_add(out, "devices", list);

        if (arg_netdev) {
                InfinibandDevice *d = NULL;
                InfinibandPort *p = infiniband_find_netdev(devices, arg_netdev, &d);
                json_object *n = json_object_new_object();
                json_object_object_add(n, "name", string_or_null(arg_netdev));
                json_object_object_add(n, "device", p ? string_or_null(d->name) : NULL);
                json_object_object_add(n, "port", p ? json_object_new_int64(p->number) : NULL);
                json_object_object_add(n, "transport",
                                       p ? json_object_new_string(rdma_transport_to_string(infiniband_port_transport(d, p)))
                                         : NULL);
                json_object_object_add(out, "netdev", n);
        }
        if (arg_verbs)
                json_object_object_add(out, "verbs", verbs_to_json(root_fd));

        puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(out);
        return fflush(stdout) == 0 ? 0 : 1;
}
