/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infiniband-port.c — one port of an RDMA device: its status, its GID table and the network
 * interfaces that carry it. infiniband.c reads the device and calls in here for each port. */
#include <stdarg.h>

#include "infiniband-port.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "sysfs.h"

static const char *const netdev_source_names[_INFINIBAND_NETDEV_SOURCE_MAX] = {
        [INFINIBAND_NETDEV_GID_TABLE] = "gid-table",
        [INFINIBAND_NETDEV_PARENT] = "parent",
        [INFINIBAND_NETDEV_DEVICE_NET] = "device-net",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(infiniband_netdev_source, InfinibandNetdevSource, netdev_source_names)

_printf_(2, 3) int infiniband_add_warning(char ***warnings, const char *format, ...) {
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

/* Reads an attribute that every port or device has: a missing file is a warning too. */
int infiniband_read_required(int root_fd, const char *dir, const char *attr, char **ret, char ***warnings) {
        int r = sysfs_read_string(root_fd, dir, attr, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret = NULL;
                return infiniband_add_warning(warnings, "%s: cannot read: %s", attr, strerror(-r));
        }
        return 0;
}

static int read_number(int root_fd, const char *dir, const char *attr, bool hex, uint32_t *ret, char ***warnings) {
        char buf[64];
        int r;

        r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return infiniband_add_warning(warnings, "%s: cannot read: %s", attr, strerror(r == -ENOBUFS ? EINVAL : -r)) ?: 0;
        r = hex ? parse_hex_u32(buf, ret) : parse_u32(buf, ret);
        if (r < 0)
                return infiniband_add_warning(warnings, "%s: cannot parse \"%s\"", attr, buf) ?: 0;
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
                        r = infiniband_add_warning(warnings, "gid_attrs/types/%s: unknown GID type \"%s\"", entry, type);
                        if (r < 0)
                                return r;
                }
        } else if (r < 0 && !gid_attr_absent(r)) {
                r = infiniband_add_warning(warnings, "gid_attrs/types/%s: cannot read: %s", entry, strerror(-r));
                if (r < 0)
                        return r;
        }

        r = sysfs_read_string(root_fd, ndevs_dir, entry, &ndev);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !isempty(ndev))
                gid->netdev = TAKE_PTR(ndev);
        else if (r < 0 && !gid_attr_absent(r)) {
                r = infiniband_add_warning(warnings, "gid_attrs/ndevs/%s: cannot read: %s", entry, strerror(-r));
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
                return infiniband_add_warning(&p->warnings, "gids: cannot list: %s", strerror(-r));

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
                        r = infiniband_add_warning(&p->warnings, "gids/%s: not a GID table index", *e);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = sysfs_read_buffer(root_fd, gids_dir, *e, buf, sizeof(buf));
                if (r < 0) {
                        /* show_port_gid() never fails for an index inside the table; treat a failure
                         * like an empty slot but say so. */
                        r = infiniband_add_warning(&p->warnings, "gids/%s: cannot read: %s", *e, strerror(r == -ENOBUFS ? EINVAL : -r));
                        if (r < 0)
                                return r;
                        continue;
                }
                if (rdma_parse_gid(buf, gid->gid) < 0) {
                        r = infiniband_add_warning(&p->warnings, "gids/%s: cannot parse \"%s\"", *e, buf);
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

static int port_collect_netdevs(InfinibandPort *p, const InfinibandDeviceContext *c) {
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

        r = infiniband_read_required(root_fd, dir, "state", &p->state_text, &p->warnings);
        if (r < 0)
                return r;
        if (p->state_text) {
                if (rdma_parse_port_state(p->state_text, &s->state) >= 0)
                        s->known |= RDMA_PORT_FIELD_STATE;
                else if ((r = infiniband_add_warning(&p->warnings, "state: cannot parse \"%s\"", p->state_text)) < 0)
                        return r;
        }

        r = infiniband_read_required(root_fd, dir, "phys_state", &p->phys_state_text, &p->warnings);
        if (r < 0)
                return r;
        if (p->phys_state_text) {
                if (rdma_parse_phys_state(p->phys_state_text, &s->phys_state) >= 0)
                        s->known |= RDMA_PORT_FIELD_PHYS_STATE;
                else if ((r = infiniband_add_warning(&p->warnings, "phys_state: cannot parse \"%s\"", p->phys_state_text)) < 0)
                        return r;
        }

        /* link_layer arrived in 2.6.37; before that every port was InfiniBand, but a tree that old is
         * better reported as unknown than guessed. */
        r = infiniband_read_required(root_fd, dir, "link_layer", &p->link_layer_text, &p->warnings);
        if (r < 0)
                return r;
        if (p->link_layer_text) {
                if (rdma_parse_link_layer(p->link_layer_text, &s->link_layer) >= 0)
                        s->known |= RDMA_PORT_FIELD_LINK_LAYER;
                else if ((r = infiniband_add_warning(&p->warnings, "link_layer: cannot parse \"%s\"", p->link_layer_text)) < 0)
                        return r;
        }

        r = infiniband_read_required(root_fd, dir, "rate", &p->rate_text, &p->warnings);
        if (r < 0)
                return r;
        if (p->rate_text) {
                if (rdma_parse_rate(p->rate_text, &s->rate) >= 0) {
                        s->known |= RDMA_PORT_FIELD_RATE | RDMA_PORT_FIELD_WIDTH;
                        if (s->rate.speed != RDMA_SPEED_UNKNOWN)
                                s->known |= RDMA_PORT_FIELD_SPEED;
                } else if ((r = infiniband_add_warning(&p->warnings, "rate: cannot parse \"%s\"", p->rate_text)) < 0)
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
        } else if (r > 0 && (r = infiniband_add_warning(&p->warnings, "lid_mask_count: %u is out of range", v)) < 0)
                return r;
        r = read_number(root_fd, dir, "sm_sl", false, &v, &p->warnings);
        if (r < 0)
                return r;
        if (r > 0 && v <= 15) { /* a service level is 4 bits */
                s->sm_sl = (uint8_t) v;
                s->known |= RDMA_PORT_FIELD_SM_SL;
        } else if (r > 0 && (r = infiniband_add_warning(&p->warnings, "sm_sl: %u is out of range", v)) < 0)
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

int infiniband_port_read_in(int root_fd, const InfinibandDeviceContext *c, unsigned number, InfinibandPort **ret) {
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
