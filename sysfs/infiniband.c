/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "infiniband.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "sysfs.h"

#define CLASS_DIR "class/infiniband"
/* IB_DEVICE_NAME_MAX in the kernel, with the NUL. */
#define DEVICE_NAME_MAX 64

static const char *const netdev_source_names[_INFINIBAND_NETDEV_SOURCE_MAX] = {
        [INFINIBAND_NETDEV_GID_TABLE] = "gid-table",
        [INFINIBAND_NETDEV_PARENT] = "parent",
        [INFINIBAND_NETDEV_DEVICE_NET] = "device-net",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(infiniband_netdev_source, InfinibandNetdevSource, netdev_source_names)

/* What every port read needs to know about its device. */
typedef struct DeviceContext {
        char *dir;     /* "class/infiniband/NAME" */
        char *parent;  /* rxe's "parent" attribute */
        char **net;    /* entries of device/net/ */
        int *net_port; /* their dev_port + 1 (0 = unknown) */
        size_t n_ports;
} DeviceContext;

static void device_context_done(DeviceContext *c) {
        free(c->dir);
        free(c->parent);
        strv_free(c->net);
        free(c->net_port);
}

static _printf_(2, 3) int add_warning(char ***warnings, const char *format, ...) {
        size_t n = strv_length(*warnings);
        char **l, *s;
        va_list ap;
        int k;

        va_start(ap, format);
        k = vasprintf(&s, format, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        l = reallocarray(*warnings, n + 2, sizeof(char *));
        if (!l) {
                free(s);
                return -ENOMEM;
        }
        l[n] = s;
        l[n + 1] = NULL;
        *warnings = l;
        return 0;
}

static bool device_name_is_valid(const char *name) {
        return !isempty(name) && !strchr(name, '/') && !streq(name, ".") && !streq(name, "..") &&
               strlen(name) < DEVICE_NAME_MAX;
}

/* Reads an optional text attribute: NULL when the file is missing or empty. Other read errors are
 * warnings, -ENOMEM is returned. */
static int read_optional(int root_fd, const char *dir, const char *attr, char **ret, char ***warnings) {
        _cleanup_(freep) char *s = NULL;
        int r;

        r = sysfs_read_string(root_fd, dir, attr, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret = NULL;
                if (errno_is_absent(r))
                        return 0;
                return add_warning(warnings, "%s: cannot read: %s", attr, strerror(-r));
        }
        *ret = isempty(s) ? NULL : TAKE_PTR(s);
        return 0;
}

/* Reads an attribute that every port or device has: a missing file is a warning too. */
static int read_required(int root_fd, const char *dir, const char *attr, char **ret, char ***warnings) {
        int r = sysfs_read_string(root_fd, dir, attr, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret = NULL;
                return add_warning(warnings, "%s: cannot read: %s", attr, strerror(-r));
        }
        return 0;
}

static int read_number(int root_fd, const char *dir, const char *attr, bool hex, uint32_t *ret, char ***warnings) {
        char buf[64];
        int r;

        r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return add_warning(warnings, "%s: cannot read: %s", attr, strerror(r == -ENOBUFS ? EINVAL : -r)) ?: 0;
        r = hex ? parse_hex_u32(buf, ret) : parse_u32(buf, ret);
        if (r < 0)
                return add_warning(warnings, "%s: cannot parse \"%s\"", attr, buf) ?: 0;
        return 1;
}

/* The gid_attrs files fail with EINVAL for an empty table slot (and, for ndevs, for an entry
 * without an interface); older kernels return an empty string instead, ENODATA has been seen in
 * between, and kernels before 4.9 have no gid_attrs at all. All of them mean "no entry". */
static bool gid_attr_absent(int r) {
        return r == -EINVAL || r == -ENODATA || errno_is_absent(r);
}

static int read_gid_attrs(int root_fd, const char *port_dir, const char *entry, InfinibandGid *gid,
                          char ***warnings) {
        _cleanup_(freep) char *types_dir = NULL, *ndevs_dir = NULL, *type = NULL, *ndev = NULL;
        int r;

        if (asprintf(&types_dir, "%s/gid_attrs/types", port_dir) < 0 ||
            asprintf(&ndevs_dir, "%s/gid_attrs/ndevs", port_dir) < 0)
                return -ENOMEM;

        r = sysfs_read_string(root_fd, types_dir, entry, &type);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !isempty(type)) {
                if (rdma_parse_gid_type(type, &gid->type) < 0) {
                        r = add_warning(warnings, "gid_attrs/types/%s: unknown GID type \"%s\"", entry, type);
                        if (r < 0)
                                return r;
                }
        } else if (r < 0 && !gid_attr_absent(r)) {
                r = add_warning(warnings, "gid_attrs/types/%s: cannot read: %s", entry, strerror(-r));
                if (r < 0)
                        return r;
        }

        r = sysfs_read_string(root_fd, ndevs_dir, entry, &ndev);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !isempty(ndev))
                gid->netdev = TAKE_PTR(ndev);
        else if (r < 0 && !gid_attr_absent(r)) {
                r = add_warning(warnings, "gid_attrs/ndevs/%s: cannot read: %s", entry, strerror(-r));
                if (r < 0)
                        return r;
        }
        return 0;
}

static int read_gids(int root_fd, const char *port_dir, InfinibandPort *p) {
        _cleanup_(strv_freep) char **entries = NULL;
        _cleanup_(freep) char *gids_dir = NULL;
        size_t n;
        int r;

        if (asprintf(&gids_dir, "%s/gids", port_dir) < 0)
                return -ENOMEM;
        r = sysfs_list_dir(root_fd, gids_dir, &entries);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return add_warning(&p->warnings, "gids: cannot list: %s", strerror(-r));

        n = strv_length(entries);
        if (n == 0)
                return 0;
        p->gids = calloc(n, sizeof(InfinibandGid));
        if (!p->gids)
                return -ENOMEM;

        STRV_FOREACH(e, entries) {
                InfinibandGid *gid = &p->gids[p->n_gids];
                char buf[64];
                uint32_t index;

                if (parse_u32(*e, &index) < 0) {
                        r = add_warning(&p->warnings, "gids/%s: not a GID table index", *e);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = sysfs_read_buffer(root_fd, gids_dir, *e, buf, sizeof(buf));
                if (r < 0) {
                        /* show_port_gid() never fails for an index inside the table; treat a failure
                         * like an empty slot but say so. */
                        r = add_warning(&p->warnings, "gids/%s: cannot read: %s", *e, strerror(r == -ENOBUFS ? EINVAL : -r));
                        if (r < 0)
                                return r;
                        continue;
                }
                if (rdma_parse_gid(buf, gid->gid) < 0) {
                        r = add_warning(&p->warnings, "gids/%s: cannot parse \"%s\"", *e, buf);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (rdma_gid_is_zero(gid->gid))
                        continue;

                gid->index = index;
                r = read_gid_attrs(root_fd, port_dir, *e, gid, &p->warnings);
                if (r < 0)
                        return r;
                p->n_gids++;
        }
        return 0;
}

static bool port_has_netdev(const InfinibandPort *p, const char *name) {
        for (size_t i = 0; i < p->n_netdevs; i++)
                if (streq(p->netdevs[i].name, name))
                        return true;
        return false;
}

static int port_add_netdev(InfinibandPort *p, const char *name, InfinibandNetdevSource source) {
        InfinibandNetdev *l;
        char *copy;

        if (port_has_netdev(p, name))
                return 0;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        l = reallocarray(p->netdevs, p->n_netdevs + 1, sizeof(InfinibandNetdev));
        if (!l) {
                free(copy);
                return -ENOMEM;
        }
        l[p->n_netdevs++] = (InfinibandNetdev) { .name = copy, .source = source };
        p->netdevs = l;
        return 0;
}

static int port_collect_netdevs(InfinibandPort *p, const DeviceContext *c) {
        int r;

        for (size_t i = 0; i < p->n_gids; i++)
                if (p->gids[i].netdev) {
                        r = port_add_netdev(p, p->gids[i].netdev, INFINIBAND_NETDEV_GID_TABLE);
                        if (r < 0)
                                return r;
                }
        if (c->parent) {
                r = port_add_netdev(p, c->parent, INFINIBAND_NETDEV_PARENT);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; c->net && c->net[i]; i++) {
                /* A single-port device owns every interface of its function (mlx5 gives each port
                 * its own PCI function); a multi-port one (mlx4) says which port in dev_port. */
                if (c->n_ports != 1 && (unsigned) c->net_port[i] != p->number)
                        continue;
                r = port_add_netdev(p, c->net[i], INFINIBAND_NETDEV_DEVICE_NET);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int port_read_status(int root_fd, const char *dir, InfinibandPort *p) {
        RdmaPortStatus *s = &p->status;
        uint32_t v;
        int r;

        r = read_required(root_fd, dir, "state", &p->state_text, &p->warnings);
        if (r < 0)
                return r;
        if (p->state_text) {
                if (rdma_parse_port_state(p->state_text, &s->state) >= 0)
                        s->known |= RDMA_PORT_FIELD_STATE;
                else if ((r = add_warning(&p->warnings, "state: cannot parse \"%s\"", p->state_text)) < 0)
                        return r;
        }

        r = read_required(root_fd, dir, "phys_state", &p->phys_state_text, &p->warnings);
        if (r < 0)
                return r;
        if (p->phys_state_text) {
                if (rdma_parse_phys_state(p->phys_state_text, &s->phys_state) >= 0)
                        s->known |= RDMA_PORT_FIELD_PHYS_STATE;
                else if ((r = add_warning(&p->warnings, "phys_state: cannot parse \"%s\"", p->phys_state_text)) < 0)
                        return r;
        }

        /* link_layer arrived in 2.6.37; before that every port was InfiniBand, but a tree that old is
         * better reported as unknown than guessed. */
        r = read_required(root_fd, dir, "link_layer", &p->link_layer_text, &p->warnings);
        if (r < 0)
                return r;
        if (p->link_layer_text) {
                if (rdma_parse_link_layer(p->link_layer_text, &s->link_layer) >= 0)
                        s->known |= RDMA_PORT_FIELD_LINK_LAYER;
                else if ((r = add_warning(&p->warnings, "link_layer: cannot parse \"%s\"", p->link_layer_text)) < 0)
                        return r;
        }

        r = read_required(root_fd, dir, "rate", &p->rate_text, &p->warnings);
        if (r < 0)
                return r;
        if (p->rate_text) {
                if (rdma_parse_rate(p->rate_text, &s->rate) >= 0) {
                        s->known |= RDMA_PORT_FIELD_RATE | RDMA_PORT_FIELD_WIDTH;
                        if (s->rate.speed != RDMA_SPEED_UNKNOWN)
                                s->known |= RDMA_PORT_FIELD_SPEED;
                } else if ((r = add_warning(&p->warnings, "rate: cannot parse \"%s\"", p->rate_text)) < 0)
                        return r;
        }

        r = read_number(root_fd, dir, "lid", true, &v, &p->warnings);
        if (r < 0)
                return r;
        if (r > 0) {
                s->lid = v;
                s->known |= RDMA_PORT_FIELD_LID;
        }
        r = read_number(root_fd, dir, "sm_lid", true, &v, &p->warnings);
        if (r < 0)
                return r;
        if (r > 0) {
                s->sm_lid = v;
                s->known |= RDMA_PORT_FIELD_SM_LID;
        }
        r = read_number(root_fd, dir, "lid_mask_count", false, &v, &p->warnings);
        if (r < 0)
                return r;
        if (r > 0 && v <= 7) { /* LMC is a 3-bit field */
                s->lmc = (uint8_t) v;
                s->known |= RDMA_PORT_FIELD_LMC;
        } else if (r > 0 && (r = add_warning(&p->warnings, "lid_mask_count: %u is out of range", v)) < 0)
                return r;
        r = read_number(root_fd, dir, "sm_sl", false, &v, &p->warnings);
        if (r < 0)
                return r;
        if (r > 0 && v <= 15) { /* a service level is 4 bits */
                s->sm_sl = (uint8_t) v;
                s->known |= RDMA_PORT_FIELD_SM_SL;
        } else if (r > 0 && (r = add_warning(&p->warnings, "sm_sl: %u is out of range", v)) < 0)
                return r;
        r = read_number(root_fd, dir, "cap_mask", true, &v, &p->warnings);
        if (r < 0)
                return r;
        if (r > 0) {
                s->cap_mask = v;
                s->known |= RDMA_PORT_FIELD_CAP_MASK;
        }
        return 0;
}

static int port_read(int root_fd, const DeviceContext *c, unsigned number, InfinibandPort **ret) {
        _cleanup_(infiniband_port_freep) InfinibandPort *p = NULL;
        _cleanup_(freep) char *dir = NULL;
        int r;

        if (asprintf(&dir, "%s/ports/%u", c->dir, number) < 0)
                return -ENOMEM;
        r = sysfs_exists(root_fd, dir, NULL);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOENT;

        p = calloc(1, sizeof(InfinibandPort));
        if (!p)
                return -ENOMEM;
        p->number = number;

        r = port_read_status(root_fd, dir, p);
        if (r < 0)
                return r;
        r = read_gids(root_fd, dir, p);
        if (r < 0)
                return r;
        r = port_collect_netdevs(p, c);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(p);
        return 0;
}

InfinibandPort *infiniband_port_free(InfinibandPort *p) {
        if (!p)
                return NULL;
        free(p->state_text);
        free(p->phys_state_text);
        free(p->link_layer_text);
        free(p->rate_text);
        for (size_t i = 0; i < p->n_gids; i++)
                free(p->gids[i].netdev);
        free(p->gids);
        for (size_t i = 0; i < p->n_netdevs; i++)
                free(p->netdevs[i].name);
        free(p->netdevs);
        strv_free(p->warnings);
        free(p);
        return NULL;
}

/* The port numbers under ports/, sorted. Non-numeric entries become warnings. */
static int list_ports(int root_fd, const char *dir, unsigned **ret, size_t *ret_n, char ***warnings) {
        _cleanup_(strv_freep) char **entries = NULL;
        _cleanup_(freep) char *ports_dir = NULL;
        _cleanup_(freep) unsigned *numbers = NULL;
        size_t n = 0;
        int r;

        if (asprintf(&ports_dir, "%s/ports", dir) < 0)
                return -ENOMEM;
        r = sysfs_list_dir(root_fd, ports_dir, &entries);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret = NULL;
                *ret_n = 0;
                return add_warning(warnings, "ports: cannot list: %s", strerror(-r));
        }

        numbers = calloc(strv_length(entries) + 1, sizeof(unsigned));
        if (!numbers)
                return -ENOMEM;
        STRV_FOREACH(e, entries) {
                uint32_t v;
                if (parse_u32(*e, &v) < 0) {
                        r = add_warning(warnings, "ports/%s: not a port number", *e);
                        if (r < 0)
                                return r;
                        continue;
                }
                numbers[n++] = v;
        }
        *ret = TAKE_PTR(numbers);
        *ret_n = n;
        return 0;
}

static int device_context_init(int root_fd, const char *name, DeviceContext *c, char ***warnings) {
        _cleanup_(freep) char *net_dir = NULL;
        int r;

        *c = (DeviceContext) {};
        if (asprintf(&c->dir, CLASS_DIR "/%s", name) < 0)
                return -ENOMEM;

        r = read_optional(root_fd, c->dir, "parent", &c->parent, warnings);
        if (r < 0)
                return r;

        /* Soft devices (rxe, siw) have no device link; that is not an error. */
        if (asprintf(&net_dir, "%s/device/net", c->dir) < 0)
                return -ENOMEM;
        r = sysfs_list_dir(root_fd, net_dir, &c->net);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && !errno_is_absent(r))
                return add_warning(warnings, "device/net: cannot list: %s", strerror(-r));
        if (r < 0)
                return 0;

        c->net_port = calloc(strv_length(c->net) + 1, sizeof(int));
        if (!c->net_port)
                return -ENOMEM;
        for (size_t i = 0; c->net[i]; i++) {
                _cleanup_(freep) char *if_dir = NULL;
                uint32_t v;

                if (asprintf(&if_dir, "%s/%s", net_dir, c->net[i]) < 0)
                        return -ENOMEM;
                /* dev_port (3.15+) numbers the ports of one function from 0; before it, IPoIB and
                 * mlx4_en put the same number into dev_id, in hex. */
                if (sysfs_read_u32(root_fd, if_dir, "dev_port", &v) >= 0 ||
                    sysfs_read_hex_u32(root_fd, if_dir, "dev_id", &v) >= 0)
                        c->net_port[i] = v < INT32_MAX ? (int) v + 1 : 0;
        }
        return 0;
}

int infiniband_port_read(int root_fd, const char *device, unsigned port, InfinibandPort **ret) {
        _cleanup_(device_context_done) DeviceContext c = {};
        _cleanup_(strv_freep) char **warnings = NULL;
        _cleanup_(freep) unsigned *numbers = NULL;
        InfinibandPort *p;
        int r;

        if (!device_name_is_valid(device))
                return -EINVAL;
        r = device_context_init(root_fd, device, &c, &warnings);
        if (r < 0)
                return r;
        r = list_ports(root_fd, c.dir, &numbers, &c.n_ports, &warnings);
        if (r < 0)
                return r;
        r = port_read(root_fd, &c, port, &p);
        if (r < 0)
                return r;
        /* As in infiniband_device_read(): a port of a device unplugged meanwhile is no port. */
        r = sysfs_exists(root_fd, CLASS_DIR, device);
        if (r <= 0) {
                infiniband_port_free(p);
                return r < 0 ? r : -ENOENT;
        }
        *ret = p;
        return 0;
}

static int read_guid(int root_fd, const char *dir, const char *attr, uint64_t *ret, char ***warnings) {
        char buf[64];
        int r;

        r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return add_warning(warnings, "%s: cannot read: %s", attr, strerror(r == -ENOBUFS ? EINVAL : -r));
        if (rdma_parse_guid(buf, ret) < 0)
                return add_warning(warnings, "%s: cannot parse \"%s\"", attr, buf);
        return 0;
}

int infiniband_device_read(int root_fd, const char *name, InfinibandDevice **ret) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        _cleanup_(device_context_done) DeviceContext c = {};
        _cleanup_(freep) unsigned *numbers = NULL;
        int r;

        if (!device_name_is_valid(name))
                return -EINVAL;
        r = sysfs_exists(root_fd, CLASS_DIR, name);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOENT;

        d = calloc(1, sizeof(InfinibandDevice));
        if (!d)
                return -ENOMEM;
        d->name = strdup(name);
        if (!d->name)
                return -ENOMEM;

        r = device_context_init(root_fd, name, &c, &d->warnings);
        if (r < 0)
                return r;
        r = sysfs_resolve(root_fd, CLASS_DIR, name, &d->syspath);
        if (r == -ENOMEM)
                return r;

        r = read_required(root_fd, c.dir, "node_type", &d->node_type_text, &d->warnings);
        if (r < 0)
                return r;
        if (d->node_type_text && rdma_parse_node_type(d->node_type_text, &d->node_type) < 0) {
                r = add_warning(&d->warnings, "node_type: cannot parse \"%s\"", d->node_type_text);
                if (r < 0)
                        return r;
        }
        r = read_guid(root_fd, c.dir, "node_guid", &d->node_guid, &d->warnings);
        if (r < 0)
                return r;
        r = read_guid(root_fd, c.dir, "sys_image_guid", &d->sys_image_guid, &d->warnings);
        if (r < 0)
                return r;

        const struct {
                const char *attr;
                char **value;
        } strings[] = {
                { "fw_ver", &d->fw_ver },     { "hca_type", &d->hca_type },   { "board_id", &d->board_id },
                { "hw_rev", &d->hw_rev },     { "node_desc", &d->node_desc },
        };
        for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
                r = read_optional(root_fd, c.dir, strings[i].attr, strings[i].value, &d->warnings);
                if (r < 0)
                        return r;
        }
        if (c.parent) {
                d->parent = strdup(c.parent);
                if (!d->parent)
                        return -ENOMEM;
        }

        r = list_ports(root_fd, c.dir, &numbers, &c.n_ports, &d->warnings);
        if (r < 0)
                return r;
        if (c.n_ports > 0) {
                d->ports = calloc(c.n_ports, sizeof(InfinibandPort *));
                if (!d->ports)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < c.n_ports; i++) {
                r = port_read(root_fd, &c, numbers[i], &d->ports[d->n_ports]);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = add_warning(&d->warnings, "ports/%u: cannot read: %s", numbers[i], strerror(-r));
                        if (r < 0)
                                return r;
                        continue;
                }
                d->n_ports++;
        }

        /* Unplugged while we read: what we have is half a device with its reads failing one after
         * another (warnings, not errors), not a device. */
        r = sysfs_exists(root_fd, CLASS_DIR, name);
        if (r <= 0)
                return r < 0 ? r : -ENOENT;

        *ret = TAKE_PTR(d);
        return 0;
}

InfinibandDevice *infiniband_device_free(InfinibandDevice *d) {
        if (!d)
                return NULL;
        free(d->name);
        free(d->syspath);
        free(d->node_type_text);
        free(d->fw_ver);
        free(d->hca_type);
        free(d->board_id);
        free(d->hw_rev);
        free(d->node_desc);
        free(d->parent);
        for (size_t i = 0; i < d->n_ports; i++)
                infiniband_port_free(d->ports[i]);
        free(d->ports);
        strv_free(d->warnings);
        free(d);
        return NULL;
}

InfinibandDevice **infiniband_device_list_free(InfinibandDevice **l) {
        for (size_t i = 0; l && l[i]; i++)
                infiniband_device_free(l[i]);
        free(l);
        return NULL;
}

int infiniband_subsystem_present(int root_fd) {
        return sysfs_exists(root_fd, CLASS_DIR, NULL);
}

int infiniband_enumerate(int root_fd, InfinibandDevice ***ret, size_t *ret_n) {
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **l = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        size_t n = 0;
        int r;

        r = sysfs_list_dir(root_fd, CLASS_DIR, &names);
        if (r < 0 && !errno_is_absent(r))
                return r;

        l = calloc(strv_length(names) + 1, sizeof(InfinibandDevice *));
        if (!l)
                return -ENOMEM;
        STRV_FOREACH(name, names) {
                r = infiniband_device_read(root_fd, *name, &l[n]);
                if (r == -ENOENT || r == -EINVAL)
                        continue; /* gone since the listing, or a name no device can have */
                if (r < 0)
                        return r;
                n++;
        }

        *ret = TAKE_PTR(l);
        if (ret_n)
                *ret_n = n;
        return 0;
}

InfinibandPort *infiniband_device_get_port(const InfinibandDevice *d, unsigned number) {
        for (size_t i = 0; i < d->n_ports; i++)
                if (d->ports[i]->number == number)
                        return d->ports[i];
        return NULL;
}

RdmaTransport infiniband_port_transport(const InfinibandDevice *d, const InfinibandPort *p) {
        return rdma_transport_from(d->node_type, p->status.link_layer);
}

InfinibandPort *infiniband_find_netdev(InfinibandDevice *const *devices, const char *ifname,
                                       InfinibandDevice **ret_device) {
        if (isempty(ifname))
                return NULL;
        for (InfinibandNetdevSource source = 0; source < _INFINIBAND_NETDEV_SOURCE_MAX; source++)
                for (size_t i = 0; devices && devices[i]; i++)
                        for (size_t j = 0; j < devices[i]->n_ports; j++) {
                                InfinibandPort *p = devices[i]->ports[j];
                                for (size_t k = 0; k < p->n_netdevs; k++)
                                        if (p->netdevs[k].source == source && streq(p->netdevs[k].name, ifname)) {
                                                if (ret_device)
                                                        *ret_device = devices[i];
                                                return p;
                                        }
                        }
        return NULL;
}

int infiniband_lookup_netdev(int root_fd, const char *ifname, char **ret_device, unsigned *ret_port) {
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **l = NULL;
        InfinibandDevice *d;
        InfinibandPort *p;
        int r;

        r = infiniband_enumerate(root_fd, &l, NULL);
        if (r < 0)
                return r;
        p = infiniband_find_netdev(l, ifname, &d);
        if (!p)
                return 0;
        if (ret_device) {
                *ret_device = strdup(d->name);
                if (!*ret_device)
                        return -ENOMEM;
        }
        if (ret_port)
                *ret_port = p->number;
        return 1;
}
