/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reads the devices of bus/thunderbolt through the sysfs root fd. Every attribute is optional: a
 * missing or malformed one leaves its field unknown, and only a vanished device or a lack of memory
 * fails a read. */
#include <limits.h>
#include <net/if.h>

#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "sysfs.h"
#include "thunderbolt.h"

#define BUS_DEVICES "bus/thunderbolt/devices"

TbtDevice *tbt_device_free(TbtDevice *d) {
        if (!d)
                return NULL;
        free(d->sysname);
        free(d->syspath);
        free(d->parent);
        free(d->vendor_name);
        free(d->device_name);
        free(d->unique_id);
        free(d->nvm_version);
        free(d->ports);
        free(d->service_key);
        free(d->driver);
        free(d->net_interface);
        free(d->controller);
        strv_free(d->boot_acl);
        free(d);
        return NULL;
}

TbtDevice **tbt_device_array_free(TbtDevice **devices, size_t n) {
        for (size_t i = 0; devices && i < n; i++)
                tbt_device_free(devices[i]);
        free(devices);
        return NULL;
}

static TbtDevice *device_new(void) {
        TbtDevice *d = calloc(1, sizeof(TbtDevice));
        if (!d)
                return NULL;
        d->kind = _TBT_KIND_INVALID;
        d->domain_index = -1;
        d->router_type = _TBT_ROUTER_TYPE_INVALID;
        d->authorized = _TBT_AUTHORIZED_INVALID;
        d->boot = -1;
        d->protocol_id = d->protocol_version = d->protocol_revision = d->protocol_settings = -1;
        d->security = _TBT_SECURITY_INVALID;
        d->iommu_dma_protection = -1;
        d->deauthorization = -1;
        return d;
}

/* Reads an attribute as text. Anything but a value (absent, unreadable, too long, NUL bytes) is
 * "no value": returns 0 with *ret = NULL. Only -ENOMEM is passed on. */
static int read_text(int root_fd, const char *dir, const char *attr, char **ret) {
        char *s = NULL;
        int r = sysfs_read_string(root_fd, dir, attr, &s);
        if (r == -ENOMEM)
                return r;
        *ret = r < 0 ? NULL : s;
        return 0;
}

/* A human-readable name: empty is unknown, invalid UTF-8 is escaped so it can always be published. */
static int read_name(int root_fd, const char *dir, const char *attr, char **ret) {
        _cleanup_(freep) char *s = NULL;
        int r = read_text(root_fd, dir, attr, &s);
        if (r < 0)
                return r;
        if (isempty(s)) {
                *ret = NULL;
                return 0;
        }
        if (utf8_is_valid(s)) {
                *ret = TAKE_PTR(s);
                return 0;
        }
        *ret = utf8_escape_invalid(s);
        return *ret ? 0 : -ENOMEM;
}

static void read_hex_id(int root_fd, const char *dir, const char *attr, uint32_t *ret, bool *ret_has) {
        uint32_t v;
        if (sysfs_read_hex_u32(root_fd, dir, attr, &v) >= 0) {
                *ret = v;
                *ret_has = true;
        }
}

/* Reads attr and runs parse on it; leaves the field untouched if either fails. */
#define READ_PARSED(root_fd, dir, attr, parse, out)                                \
        ({                                                                         \
                char _buf_[64];                                                    \
                int _r_ = sysfs_read_buffer(root_fd, dir, attr, _buf_, sizeof(_buf_)); \
                if (_r_ >= 0)                                                      \
                        (void) parse(_buf_, out);                                  \
        })

static int read_tristate(int root_fd, const char *dir, const char *attr) {
        int r = sysfs_read_bool(root_fd, dir, attr);
        return r < 0 ? -1 : r;
}

static int64_t read_u32_or_unknown(int root_fd, const char *dir, const char *attr, bool hex) {
        uint32_t v;
        int r = hex ? sysfs_read_hex_u32(root_fd, dir, attr, &v) : sysfs_read_u32(root_fd, dir, attr, &v);
        return r < 0 ? -1 : (int64_t) v;
}

static int read_identity(int root_fd, TbtDevice *d) {
        _cleanup_(freep) char *uuid = NULL, *nvm = NULL;
        int r;

        read_hex_id(root_fd, d->syspath, "vendor", &d->vendor_id, &d->has_vendor_id);
        read_hex_id(root_fd, d->syspath, "device", &d->device_id, &d->has_device_id);
        r = read_name(root_fd, d->syspath, "vendor_name", &d->vendor_name);
        if (r < 0)
                return r;
        r = read_name(root_fd, d->syspath, "device_name", &d->device_name);
        if (r < 0)
                return r;

        r = read_text(root_fd, d->syspath, "unique_id", &uuid);
        if (r < 0)
                return r;
        if (tbt_uuid_is_valid(uuid))
                d->unique_id = TAKE_PTR(uuid);

        /* nvm_version fails with EAGAIN/ENODATA while the NVM is busy or absent: unknown as well. */
        r = read_text(root_fd, d->syspath, "nvm_version", &nvm);
        if (r < 0)
                return r;
        if (nvm && tbt_parse_nvm_version(nvm) >= 0)
                d->nvm_version = TAKE_PTR(nvm);
        return 0;
}

static void read_link(int root_fd, TbtDevice *d) {
        READ_PARSED(root_fd, d->syspath, "rx_speed", tbt_parse_lane_speed, &d->rx.lane_gbps);
        READ_PARSED(root_fd, d->syspath, "tx_speed", tbt_parse_lane_speed, &d->tx.lane_gbps);
        READ_PARSED(root_fd, d->syspath, "rx_lanes", tbt_parse_lanes, &d->rx.lanes);
        READ_PARSED(root_fd, d->syspath, "tx_lanes", tbt_parse_lanes, &d->tx.lanes);
}

/* The usb4_portN/link attributes of a USB4 router: which kind of link each port runs. */
static int read_ports(int root_fd, TbtDevice *d) {
        _cleanup_(strv_freep) char **entries = NULL;
        size_t n = 0;
        int r;

        r = sysfs_list_dir(root_fd, d->syspath, &entries);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;

        STRV_FOREACH(e, entries) {
                _cleanup_(freep) char *dir = NULL;
                char value[32];
                uint32_t number;

                if (!startswith(*e, "usb4_port") || parse_u32(*e + strlen("usb4_port"), &number) < 0)
                        continue;
                if (number == 0 || number > 63)
                        continue;
                if (!d->ports) {
                        d->ports = calloc(strv_length(entries), sizeof(TbtPort));
                        if (!d->ports)
                                return -ENOMEM;
                }
                r = sysfs_path_join(d->syspath, *e, &dir);
                if (r < 0)
                        return r;
                d->ports[n].number = number;
                d->ports[n].link = _TBT_PORT_LINK_INVALID;
                if (sysfs_read_buffer(root_fd, dir, "link", value, sizeof(value)) >= 0)
                        d->ports[n].link = tbt_port_link_from_string(value);
                n++;
        }
        d->n_ports = n;
        return 0;
}

static int read_router(int root_fd, TbtDevice *d, char *const *uevent) {
        const char *v;
        int r;

        r = read_identity(root_fd, d);
        if (r < 0)
                return r;
        read_link(root_fd, d);
        READ_PARSED(root_fd, d->syspath, "generation", tbt_parse_generation, &d->generation);
        READ_PARSED(root_fd, d->syspath, "authorized", tbt_parse_authorized, &d->authorized);
        d->boot = read_tristate(root_fd, d->syspath, "boot");

        v = sysfs_uevent_get(uevent, "USB4_VERSION");
        if (v)
                (void) tbt_parse_usb4_version(v, &d->usb4_version);
        d->router_type = tbt_router_type_from_string(sysfs_uevent_get(uevent, "USB4_TYPE"));
        if (d->router_type < 0 && d->has_route && d->route == 0)
                d->router_type = TBT_ROUTER_HOST;

        return read_ports(root_fd, d);
}

static int read_peer(int root_fd, TbtDevice *d) {
        int r = read_identity(root_fd, d);
        if (r < 0)
                return r;
        read_link(root_fd, d);
        (void) sysfs_read_u32(root_fd, d->syspath, "maxhopid", &d->max_hop_id);
        return 0;
}

static int read_service(int root_fd, TbtDevice *d, char *const *uevent) {
        _cleanup_(strv_freep) char **nets = NULL;
        _cleanup_(freep) char *net_dir = NULL;
        int r;

        r = read_name(root_fd, d->syspath, "key", &d->service_key);
        if (r < 0)
                return r;
        d->protocol_id = read_u32_or_unknown(root_fd, d->syspath, "prtcid", false);
        d->protocol_version = read_u32_or_unknown(root_fd, d->syspath, "prtcvers", false);
        d->protocol_revision = read_u32_or_unknown(root_fd, d->syspath, "prtcrevs", false);
        d->protocol_settings = read_u32_or_unknown(root_fd, d->syspath, "prtcstns", true);
        if (sysfs_uevent_get(uevent, "DRIVER")) {
                d->driver = strdup(sysfs_uevent_get(uevent, "DRIVER"));
                if (!d->driver)
                        return -ENOMEM;
        }

        r = sysfs_path_join(d->syspath, "net", &net_dir);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        r = sysfs_list_dir(root_fd, net_dir, &nets);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && nets[0]) {
                d->net_interface = strdup(nets[0]);
                if (!d->net_interface)
                        return -ENOMEM;
        }
        return 0;
}

static int read_retimer(int root_fd, TbtDevice *d) {
        _cleanup_(freep) char *router = NULL;
        unsigned domain;
        uint64_t route;

        if (tbt_parse_retimer_name(d->sysname, &router, &d->retimer_port, &d->retimer_index) >= 0 &&
            tbt_parse_router_name(router, &domain, &route) >= 0) {
                d->domain_index = (int) domain;
                d->has_route = true;
                d->route = route;
        }
        return read_identity(root_fd, d);
}

static int read_domain(int root_fd, TbtDevice *d) {
        _cleanup_(freep) char *security = NULL, *acl = NULL;
        const char *slash;
        int r;

        r = read_text(root_fd, d->syspath, "security", &security);
        if (r < 0)
                return r;
        d->security = tbt_security_from_string(security);
        d->iommu_dma_protection = read_tristate(root_fd, d->syspath, "iommu_dma_protection");
        d->deauthorization = read_tristate(root_fd, d->syspath, "deauthorization");

        r = read_text(root_fd, d->syspath, "boot_acl", &acl);
        if (r < 0)
                return r;
        if (acl) {
                r = tbt_parse_boot_acl(acl, &d->boot_acl);
                if (r == -ENOMEM)
                        return r;
        }

        /* The domain hangs below its host interface (the NHI PCI device). */
        slash = strrchr(d->syspath, '/');
        if (slash && slash != d->syspath) {
                const char *start = slash - 1;
                while (start > d->syspath && start[-1] != '/')
                        start--;
                d->controller = strndup(start, (size_t) (slash - start));
                if (!d->controller)
                        return -ENOMEM;
                if (streq(d->controller, "devices")) {
                        free(d->controller);
                        d->controller = NULL;
                }
        }
        return 0;
}

static bool sysname_is_valid(const char *s) {
        return !isempty(s) && !strchr(s, '/') && !streq(s, ".") && !streq(s, "..") && strlen(s) <= NAME_MAX;
}

/* A device directory belongs to the thunderbolt bus when its subsystem link says so; the usb4_portN
 * directories between a router and its retimers have no subsystem at all. */
static bool dir_is_on_bus(int root_fd, const char *dir) {
        _cleanup_(freep) char *subsystem = NULL;
        return sysfs_read_link_basename(root_fd, dir, "subsystem", &subsystem) >= 0 &&
               streq(subsystem, "thunderbolt");
}

/* The nearest ancestor of syspath on the bus: its sysname and its path. Returns 0 with NULLs when
 * there is none. */
static int find_parent(int root_fd, const char *syspath, char **ret_name, char **ret_path) {
        _cleanup_(freep) char *path = strdup(syspath);
        char *slash;

        if (!path)
                return -ENOMEM;
        while ((slash = strrchr(path, '/'))) {
                const char *base;

                *slash = '\0';
                if (isempty(path) || streq(path, "devices"))
                        break;
                if (!dir_is_on_bus(root_fd, path))
                        continue;

                base = strrchr(path, '/');
                base = base ? base + 1 : path;
                if (ret_name) {
                        *ret_name = strdup(base);
                        if (!*ret_name)
                                return -ENOMEM;
                }
                if (ret_path)
                        *ret_path = TAKE_PTR(path);
                return 0;
        }
        if (ret_name)
                *ret_name = NULL;
        if (ret_path)
                *ret_path = NULL;
        return 0;
}

/* Without a uevent file (never so on a real kernel, but fixtures and races happen) the kind follows
 * from the name the kernel gave the device and from attributes only routers or peers have. */
static TbtKind kind_from_name(int root_fd, const char *sysname, const char *syspath) {
        unsigned domain, port, index;
        uint64_t route;

        if (tbt_parse_domain_name(sysname, &domain) >= 0)
                return TBT_KIND_DOMAIN;
        if (tbt_parse_retimer_name(sysname, NULL, &port, &index) >= 0)
                return TBT_KIND_RETIMER;
        if (tbt_parse_service_name(sysname, NULL, &index) >= 0)
                return TBT_KIND_SERVICE;
        if (tbt_parse_router_name(sysname, &domain, &route) >= 0) {
                if (sysfs_exists(root_fd, syspath, "generation") > 0 ||
                    sysfs_exists(root_fd, syspath, "authorized") > 0)
                        return TBT_KIND_ROUTER;
                if (sysfs_exists(root_fd, syspath, "maxhopid") > 0)
                        return TBT_KIND_PEER;
                return TBT_KIND_ROUTER;
        }
        return _TBT_KIND_INVALID;
}

/* Domain index and route from the name; a service carries its peer's route. */
static void parse_name(TbtDevice *d) {
        _cleanup_(freep) char *peer = NULL;
        unsigned domain, index;
        uint64_t route;

        switch (d->kind) {
        case TBT_KIND_DOMAIN:
                if (tbt_parse_domain_name(d->sysname, &domain) >= 0)
                        d->domain_index = (int) domain;
                return;
        case TBT_KIND_ROUTER:
        case TBT_KIND_PEER:
                if (tbt_parse_router_name(d->sysname, &domain, &route) < 0)
                        return;
                break;
        case TBT_KIND_SERVICE:
                if (tbt_parse_service_name(d->sysname, &peer, &index) < 0 ||
                    tbt_parse_router_name(peer, &domain, &route) < 0)
                        return;
                break;
        case TBT_KIND_RETIMER: /* read_retimer() */
        case _TBT_KIND_MAX:
        case _TBT_KIND_INVALID:
                return;
        }
        d->domain_index = (int) domain;
        d->has_route = true;
        d->route = route;
}

int tbt_device_read(int root_fd, const char *sysname, TbtDevice **ret) {
        _cleanup_(tbt_device_freep) TbtDevice *d = NULL;
        _cleanup_(strv_freep) char **uevent = NULL;
        const char *devtype;
        int r;

        if (!sysname_is_valid(sysname))
                return -EINVAL;

        d = device_new();
        if (!d)
                return -ENOMEM;
        d->sysname = strdup(sysname);
        if (!d->sysname)
                return -ENOMEM;

        r = sysfs_resolve(root_fd, BUS_DEVICES, sysname, &d->syspath);
        if (r < 0)
                return errno_is_absent(r) ? -ENODEV : r;

        r = sysfs_read_uevent(root_fd, d->syspath, &uevent);
        if (r == -ENOMEM)
                return r;
        devtype = sysfs_uevent_get(uevent, "DEVTYPE");
        if (!isempty(devtype)) {
                d->kind = tbt_kind_from_devtype(devtype);
                if (d->kind < 0)
                        return -EPROTONOSUPPORT;
        } else {
                d->kind = kind_from_name(root_fd, sysname, d->syspath);
                if (d->kind < 0)
                        return sysfs_exists(root_fd, d->syspath, NULL) > 0 ? -EPROTONOSUPPORT : -ENODEV;
        }
        parse_name(d);

        switch (d->kind) {
        case TBT_KIND_DOMAIN:
                r = read_domain(root_fd, d);
                break;
        case TBT_KIND_ROUTER:
                r = read_router(root_fd, d, uevent);
                break;
        case TBT_KIND_PEER:
                r = read_peer(root_fd, d);
                break;
        case TBT_KIND_SERVICE:
                r = read_service(root_fd, d, uevent);
                break;
        case TBT_KIND_RETIMER:
                r = read_retimer(root_fd, d);
                break;
        case _TBT_KIND_MAX:
        case _TBT_KIND_INVALID:
                return -EPROTONOSUPPORT;
        }
        if (r < 0)
                return r;

        if (d->kind != TBT_KIND_DOMAIN) {
                r = find_parent(root_fd, d->syspath, &d->parent, NULL);
                if (r < 0)
                        return r;
        }

        /* Unplugged while we read: whatever was read is a mix of values and unknowns of a device
         * that is gone; the udev remove event follows. */
        if (sysfs_exists(root_fd, d->syspath, NULL) <= 0)
                return -ENODEV;

        *ret = TAKE_PTR(d);
        return 0;
}

int tbt_enumerate(int root_fd, TbtDevice ***ret, size_t *ret_n) {
        _cleanup_(strv_freep) char **names = NULL;
        TbtDevice **devices;
        size_t n = 0;
        int r;

        r = sysfs_list_dir(root_fd, BUS_DEVICES, &names);
        if (r < 0 && !errno_is_absent(r))
                return r;

        devices = calloc(strv_length(names) + 1, sizeof(TbtDevice *));
        if (!devices)
                return -ENOMEM;

        STRV_FOREACH(name, names) {
                r = tbt_device_read(root_fd, *name, &devices[n]);
                if (r == -ENOMEM) {
                        tbt_device_array_free(devices, n);
                        return r;
                }
                if (r < 0)
                        continue; /* vanished, or a kind of device this reader does not know */
                n++;
        }

        *ret = devices;
        *ret_n = n;
        return 0;
}

int tbt_peer_for_net_interface(int root_fd, const char *ifname, char **ret_peer, char **ret_service) {
        _cleanup_(freep) char *net = NULL, *service_path = NULL, *peer = NULL, *peer_path = NULL;
        _cleanup_(freep) char *service = NULL;
        _cleanup_(strv_freep) char **uevent = NULL, **peer_uevent = NULL;
        const char *base, *devtype;
        unsigned index;
        int r;

        if (!sysname_is_valid(ifname) || strlen(ifname) >= IFNAMSIZ)
                return -EINVAL;

        r = sysfs_path_join("class/net", ifname, &net);
        if (r < 0)
                return r;
        r = sysfs_exists(root_fd, net, NULL);
        if (r <= 0)
                return r == 0 ? -ENOENT : r;

        r = sysfs_resolve(root_fd, net, "device", &service_path);
        if (r < 0)
                return errno_is_absent(r) ? -ENXIO : r;
        if (!dir_is_on_bus(root_fd, service_path))
                return -ENXIO;

        base = strrchr(service_path, '/');
        base = base ? base + 1 : service_path;
        r = sysfs_read_uevent(root_fd, service_path, &uevent);
        if (r == -ENOMEM)
                return r;
        devtype = sysfs_uevent_get(uevent, "DEVTYPE");
        if (devtype ? tbt_kind_from_devtype(devtype) != TBT_KIND_SERVICE
                    : tbt_parse_service_name(base, NULL, &index) < 0)
                return -ENXIO;
        service = strdup(base);
        if (!service)
                return -ENOMEM;

        r = find_parent(root_fd, service_path, &peer, &peer_path);
        if (r < 0)
                return r;
        if (!peer)
                return -ENXIO;
        r = sysfs_read_uevent(root_fd, peer_path, &peer_uevent);
        if (r == -ENOMEM)
                return r;
        devtype = sysfs_uevent_get(peer_uevent, "DEVTYPE");
        if (devtype && tbt_kind_from_devtype(devtype) != TBT_KIND_PEER)
                return -ENXIO;

        if (ret_peer)
                *ret_peer = TAKE_PTR(peer);
        if (ret_service)
                *ret_service = TAKE_PTR(service);
        return 0;
}
