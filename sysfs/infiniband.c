/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "infiniband.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "sysfs.h"

#define CLASS_DIR "class/infiniband"
/* IB_DEVICE_NAME_MAX in the kernel, with the NUL. */
#define DEVICE_NAME_MAX 64

static void device_context_done(InfinibandDeviceContext *c) {
        free(c->dir);
        free(c->parent);
        strv_free(c->net);
        free(c->net_port);
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
                return infiniband_add_warning(warnings, "%s: cannot read: %s", attr, strerror(-r));
        }
        *ret = isempty(s) ? NULL : TAKE_PTR(s);
        return 0;
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
                return infiniband_add_warning(warnings, "ports: cannot list: %s", strerror(-r));
        }

        numbers = calloc(strv_length(entries) + 1, sizeof(unsigned));
        if (!numbers)
                return -ENOMEM;
        STRV_FOREACH(e, entries) {
                uint32_t v;
                if (parse_u32(*e, &v) < 0) {
                        r = infiniband_add_warning(warnings, "ports/%s: not a port number", *e);
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

static int device_context_init(int root_fd, const char *name, InfinibandDeviceContext *c, char ***warnings) {
        _cleanup_(freep) char *net_dir = NULL;
        int r;

        *c = (InfinibandDeviceContext) {};
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
                return infiniband_add_warning(warnings, "device/net: cannot list: %s", strerror(-r));
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
        _cleanup_(device_context_done) InfinibandDeviceContext c = {};
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
        r = infiniband_port_read_in(root_fd, &c, port, &p);
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
                return infiniband_add_warning(warnings, "%s: cannot read: %s", attr, strerror(r == -ENOBUFS ? EINVAL : -r));
        if (rdma_parse_guid(buf, ret) < 0)
                return infiniband_add_warning(warnings, "%s: cannot parse \"%s\"", attr, buf);
        return 0;
}

int infiniband_device_read(int root_fd, const char *name, InfinibandDevice **ret) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        _cleanup_(device_context_done) InfinibandDeviceContext c = {};
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

        r = infiniband_read_required(root_fd, c.dir, "node_type", &d->node_type_text, &d->warnings);
        if (r < 0)
                return r;
        if (d->node_type_text && rdma_parse_node_type(d->node_type_text, &d->node_type) < 0) {
                r = infiniband_add_warning(&d->warnings, "node_type: cannot parse \"%s\"", d->node_type_text);
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
                r = infiniband_port_read_in(root_fd, &c, numbers[i], &d->ports[d->n_ports]);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = infiniband_add_warning(&d->warnings, "ports/%u: cannot read: %s", numbers[i], strerror(-r));
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
