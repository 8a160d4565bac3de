/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <libudev.h>
#include <linux/if.h>
#include <math.h>

#include "rdma-port-state.h"
#include "rdma.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "switch.h"
#include "sysfs/net.h"
#include "udev.h"

static void rdma_port_prepare(BusObject *o);

const BusObjectType rdma_port_bus_type = {
        .interface = RDMA_PORT_INTERFACE,
        .prepare = rdma_port_prepare,
};

static inline RdmaPort *rdma_port_from_bus_object(BusObject *o) {
        return container_of(o, RdmaPort, bus);
}

static int rdma_port_compare(const void *key, const void *object) {
        return strcmp(key, ((const RdmaPort *) object)->key);
}

static int rdma_device_compare(const void *key, const void *object) {
        return strcmp(key, ((const RdmaDevice *) object)->name);
}

int rdma_port_object_path(const char *device, unsigned port, char **ret_key, char **ret_path) {
        _cleanup_(freep) char *key = NULL;
        int r;

        if (asprintf(&key, "%s_%u", device, port) < 0)
                return -ENOMEM;
        r = sd_bus_path_encode(RDMA_PATH_PREFIX, key, ret_path);
        if (r < 0)
                return r;
        *ret_key = TAKE_PTR(key);
        return 0;
}

/* ---- devices (the libibverbs handle lives there) ---- */

static RdmaDevice *rdma_device_free(RdmaDevice *dev) {
        if (!dev)
                return NULL;
        rdma_live_close(&dev->live);
        free(dev->name);
        return mfree(dev);
}

RdmaDevice *rdma_device_get(Rdma *rdma, const char *name) {
        return table_get(&rdma->devices, name);
}

/* Verbs saw something happen on a port (0: verbs were dropped, every port is read from sysfs). */
static void rdma_device_port_event(RdmaLive *live, unsigned number, void *userdata) {
        RdmaDevice *dev = userdata;
        RdmaPort *p;

        TABLE_FOREACH(p, &dev->owner->ports)
                if (streq(p->device, dev->name) && (number == 0 || p->number == number))
                        rdma_port_request_reread(p);
}

static RdmaDevice *rdma_device_get_or_new(Rdma *rdma, const char *name) {
        RdmaDevice *dev = rdma_device_get(rdma, name);

        if (dev)
                return dev;
        dev = new0(RdmaDevice, 1);
        if (!dev)
                return NULL;
        dev->owner = rdma;
        dev->name = strdup(name);
        dev->live = (RdmaLive) {
                .name = dev->name,
                .port_event = rdma_device_port_event,
                .userdata = dev,
        };
        if (!dev->name || table_put(&rdma->devices, dev->name, dev) < 0)
                return rdma_device_free(dev);
        return dev;
}

static void rdma_device_open_verbs(RdmaDevice *dev) {
        if (dev->owner->verbs_allowed)
                (void) rdma_live_open(&dev->live, dev->owner->event, dev->owner->sysfs_fd);
}

void rdma_uverbs_removed(Rdma *rdma, const char *uverbs) {
        RdmaDevice *dev;

        TABLE_FOREACH(dev, &rdma->devices)
                if (dev->live.verbs && dev->live.uverbs && streq(dev->live.uverbs, uverbs)) {
                        log_debug("RDMA device %s: %s is going away, closing it.", dev->name, uverbs);
                        rdma_live_close(&dev->live);
                        rdma_device_port_event(&dev->live, 0, dev);
                }
}

/* ---- ports ---- */

RdmaPort *rdma_port_get(Rdma *rdma, const char *device, unsigned number) {
        char key[128];

        if (snprintf(key, sizeof(key), "%s_%u", device, number) >= (int) sizeof(key))
                return NULL;
        return table_get(&rdma->ports, key);
}

bool rdma_port_is_active(const RdmaPort *p) {
        return p->status.state == RDMA_PORT_STATE_ACTIVE;
}

RdmaPort *rdma_find_active_port(Rdma *rdma, const char *device, unsigned port) {
        RdmaPort *p;

        TABLE_FOREACH(p, &rdma->ports)
                if (rdma_port_is_active(p) && (!device || streq(device, p->device)) && (port == 0 || port == p->number))
                        return p;
        return NULL;
}

static RdmaPort *rdma_port_free(RdmaPort *p) {
        if (!p)
                return NULL;
        bus_object_done(&p->bus);
        free(p->key);
        free(p->device);
        free(p->fw_ver);
        free(p->hca_type);
        free(p->board_id);
        free(p->device_path);
        free(p->derived.pci_device_path);
        rdma_port_gids_free(p->gids, p->n_gids);
        strv_free(p->netdevs);
        free(p->netdev_ifindexes);
        free(p->derived.net_interface_path);
        health_state_done(&p->derived.health_state);
        free(p->remote.description);
        free(p->remote.degraded_reason);
        free(p->remote.problem);
        free(p->remote.switch_key);
        free(p->derived.switch_path);
        return mfree(p);
}

void rdma_init(Rdma *rdma, BusPublisher *p, sd_event *event, int sysfs_fd, bool verbs_allowed) {
        *rdma = (Rdma) {
                .ports = TABLE_INIT(rdma_port_compare),
                .devices = TABLE_INIT(rdma_device_compare),
                .publisher = p,
                .event = event,
                .sysfs_fd = sysfs_fd,
                .verbs_allowed = verbs_allowed,
        };
}

void rdma_done(Rdma *rdma) {
        RdmaPort *p;
        RdmaDevice *dev;

        /* rdma-remote.c's worker is stopped by its owner before this: its answers name ports. */
        TABLE_FOREACH(p, &rdma->ports)
                rdma_port_free(p);
        table_done(&rdma->ports);
        TABLE_FOREACH(dev, &rdma->devices)
                rdma_device_free(dev);
        table_done(&rdma->devices);
}

/* A new port's counters are unknown until the watch samples them. */
static void rdma_port_counters_init(RdmaPort *p) {
        p->watch = (typeof(p->watch)) { .rx_gbps = NAN, .tx_gbps = NAN };
        for (InfinibandCounter i = 0; i < _INFINIBAND_COUNTER_MAX; i++) {
                bool data = i == INFINIBAND_PORT_RCV_DATA || i == INFINIBAND_PORT_XMIT_DATA;
                p->watch.value[i] = COUNTER_UNKNOWN;
                /* A port that appeared since the daemon started counted its errors since then. */
                p->watch.last[i] = p->owner->enumerated && !data ? 0 : COUNTER_UNKNOWN;
        }
}

static int rdma_port_new(Rdma *rdma, const InfinibandDevice *d, unsigned number, RdmaPort **ret) {
        _cleanup_(freep) char *key = NULL, *path = NULL;
        RdmaPort *p;
        int r;

        r = rdma_port_object_path(d->name, number, &key, &path);
        if (r < 0)
                return r;

        p = new0(RdmaPort, 1);
        if (!p)
                return -ENOMEM;
        *p = (RdmaPort) {
                .owner = rdma,
                .number = number,
                .node_type = d->node_type,
                .node_guid = d->node_guid,
                .sys_image_guid = d->sys_image_guid,
                .device = strdup(d->name),
                .fw_ver = strdup_or_null(d->fw_ver),
                .hca_type = strdup_or_null(d->hca_type),
                .board_id = strdup_or_null(d->board_id),
                .device_path = strdup_or_null(d->syspath),
                .derived.health_state = HEALTH_STATE_INIT,
                .derived.ip_rx_gbps = NAN,
                .derived.ip_tx_gbps = NAN,
        };
        rdma_port_counters_init(p);
        p->key = TAKE_PTR(key);
        if (!p->device || (d->fw_ver && !p->fw_ver) || (d->hca_type && !p->hca_type) ||
            (d->board_id && !p->board_id) || (d->syspath && !p->device_path)) {
                rdma_port_free(p);
                return -ENOMEM;
        }
        r = table_put(&rdma->ports, p->key, p);
        if (r < 0) {
                rdma_port_free(p);
                return r;
        }
        bus_object_init(&p->bus, rdma->publisher, &rdma_port_bus_type, TAKE_PTR(path));
        rdma->changed = true;
        log_rdma_debug(p, "Added.");
        *ret = p;
        return 0;
}

static bool rdma_port_identity_matches(const RdmaPort *p, const InfinibandDevice *d) {
        return p->node_type == d->node_type && p->node_guid == d->node_guid &&
               p->sys_image_guid == d->sys_image_guid && streq_ptr(p->fw_ver, d->fw_ver) &&
               streq_ptr(p->hca_type, d->hca_type) && streq_ptr(p->board_id, d->board_id);
}

/* Asks rdma-remote.c, at the end of this pass, for the port's neighbour (flags: it is called back by no one). */
static void rdma_port_want_remote(RdmaPort *p) {
        p->remote.wanted = true;
        p->owner->remote_wanted = true;
        bus_publisher_schedule(p->owner->publisher);
}

static void rdma_want_umad_list(Rdma *rdma) {
        rdma->umad_list_wanted = true;
        bus_publisher_schedule(rdma->publisher);
}

void rdma_port_request_reread(RdmaPort *p) {
        p->reread = true;
        bus_object_queue(&p->bus);
}

static void rdma_port_remove(RdmaPort *p) {
        Rdma *rdma = p->owner;

        log_rdma_debug(p, "Removed.");
        if (p->remote.switch_key && rdma->switches)
                switches_remove_local(rdma->switches, SWITCH_SOURCE_INFINIBAND, p->bus.path);
        bus_object_remove(&p->bus);
        table_remove(&rdma->ports, p->key);
        /* Another port may carry the same interface (a bond); otherwise the link has none now. */
        rdma->changed = true;
        rdma_port_free(p);
}

/* ---- applying what was read ---- */

static void rdma_port_log_warnings(const char *what, char **warnings) {
        STRV_FOREACH(w, warnings)
                log_debug("%s: %s", what, *w);
}

/* Publishes the live facts of a port: from sysfs, with libibverbs' answers where it has any. */
static int rdma_port_apply_state(RdmaPort *p, const InfinibandPort *ip) {
        RdmaDevice *dev = rdma_device_get(p->owner, p->device);

        rdma_port_log_warnings(p->key, ip->warnings);
        /* Every read of an InfiniBand port follows an event (udev, verbs, Refresh()): its neighbour
         * may have changed too. */
        rdma_port_want_remote(p);
        return rdma_port_apply_read(p, ip, dev ? rdma_live_port_status(&dev->live, ip) : NULL);
}

static int rdma_port_apply(Rdma *rdma, const InfinibandDevice *d, const InfinibandPort *ip) {
        RdmaPort *p = rdma_port_get(rdma, d->name, ip->number);
        int r;

        if (p && !rdma_port_identity_matches(p, d)) {
                /* Identity properties are const: a different device under the same name is a new
                 * object. */
                log_rdma_debug(p, "The device's identity changed, replacing the object.");
                rdma_port_remove(p);
                p = NULL;
        }
        if (!p) {
                r = rdma_port_new(rdma, d, ip->number, &p);
                if (r < 0)
                        return r;
        }
        p->seen = true;
        p->reread = false;
        return rdma_port_apply_state(p, ip);
}

void rdma_device_apply(Rdma *rdma, const InfinibandDevice *d, bool try_verbs) {
        RdmaDevice *dev = rdma_device_get_or_new(rdma, d->name);
        RdmaPort *p;
        int r;

        if (!dev) {
                log_oom();
                return;
        }
        dev->seen = true;
        dev->from_umad = false; /* rdma-remote.c sets it again after this for its own */
        if (try_verbs)
                rdma_device_open_verbs(dev);
        rdma_port_log_warnings(d->name, d->warnings);

        TABLE_FOREACH(p, &rdma->ports)
                if (streq(p->device, d->name))
                        p->seen = false;
        for (size_t i = 0; i < d->n_ports; i++) {
                r = rdma_port_apply(rdma, d, d->ports[i]);
                if (r < 0)
                        log_warning_errno(r, "RDMA device %s port %u: cannot publish: %m", d->name, d->ports[i]->number);
        }
        TABLE_FOREACH_SAFE(p, &rdma->ports)
                if (streq(p->device, d->name) && !p->seen)
                        rdma_port_remove(p);
}

void rdma_device_remove(Rdma *rdma, const char *name) {
        _cleanup_(freep) char *copy = strdup(name); /* name may belong to what is freed below */
        RdmaDevice *dev;
        RdmaPort *p;

        if (!copy) {
                log_oom();
                return;
        }
        TABLE_FOREACH_SAFE(p, &rdma->ports)
                if (streq(p->device, copy))
                        rdma_port_remove(p);
        dev = table_remove(&rdma->devices, copy);
        rdma_device_free(dev);
}

void rdma_device_process(Rdma *rdma, const char *name, bool try_verbs) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;
        RdmaDevice *dev;
        int r;

        r = infiniband_device_read(rdma->sysfs_fd, name, &d);
        if ((r == -ENOENT || r == -EINVAL) && (dev = rdma_device_get(rdma, name)) && dev->from_umad) {
                /* Not in sysfs, and never was: libibumad's listing keeps it. */
                rdma_want_umad_list(rdma);
                return;
        }
        if (r == -ENOENT || r == -EINVAL) {
                /* Gone since the event was sent (or a name no device can have). */
                log_debug_errno(r, "RDMA device %s: not there (%m), removing its ports.", name);
                rdma_device_remove(rdma, name);
                return;
        }
        if (r < 0) {
                log_warning_errno(r, "RDMA device %s: cannot read: %m", name);
                return;
        }
        rdma_device_apply(rdma, d, try_verbs);
}

int rdma_enumerate(void *userdata) {
        Rdma *rdma = userdata;
        _cleanup_(infiniband_device_list_freep) InfinibandDevice **devices = NULL;
        RdmaDevice *dev;
        RdmaPort *p;
        int r;

        r = infiniband_enumerate(rdma->sysfs_fd, &devices, NULL);
        if (r < 0)
                return log_warning_errno(r, "Cannot list the RDMA devices in class/infiniband: %m");

        TABLE_FOREACH(p, &rdma->ports)
                p->seen = false;
        TABLE_FOREACH(dev, &rdma->devices)
                dev->seen = false;

        for (size_t i = 0; devices[i]; i++)
                rdma_device_apply(rdma, devices[i], true);
        /* libibumad's own CAs stay until its listing, asked for now, says otherwise. */
        TABLE_FOREACH(dev, &rdma->devices)
                if (dev->from_umad) {
                        dev->seen = true;
                        TABLE_FOREACH(p, &rdma->ports)
                                if (streq(p->device, dev->name))
                                        p->seen = true;
                }
        rdma_want_umad_list(rdma);

        TABLE_FOREACH_SAFE(p, &rdma->ports)
                if (!p->seen)
                        rdma_port_remove(p);
        TABLE_FOREACH_SAFE(dev, &rdma->devices)
                if (!dev->seen) {
                        table_remove(&rdma->devices, dev->name);
                        rdma_device_free(dev);
                }
        rdma->enumerated = true;
        return 0;
}

/* A port whose network interface changed, or that libibverbs reported an event for: only the port
 * is read again, once per flush however many events arrived. */
static void rdma_port_prepare(BusObject *o) {
        _cleanup_(infiniband_port_freep) InfinibandPort *ip = NULL;
        RdmaPort *p = rdma_port_from_bus_object(o);
        Rdma *rdma = p->owner;
        RdmaDevice *dev;
        int r;

        if (!p->reread)
                return;
        p->reread = false;

        dev = rdma_device_get(rdma, p->device);
        if (dev && dev->from_umad) {
                /* No sysfs to read: its PortInfo, asked with the neighbour's, is the port's state. */
                rdma_port_want_remote(p);
                return;
        }
        r = infiniband_port_read(rdma->sysfs_fd, p->device, p->number, &ip);
        if (r == -ENOENT || r == -EINVAL) {
                _cleanup_(freep) char *device = strdup(p->device);
                /* The port or its device is gone: read the whole device (which may free p). */
                if (device)
                        rdma_device_process(rdma, device, false);
                return;
        }
        if (r < 0) {
                log_rdma_warning_errno(p, r, "Cannot read: %m");
                return;
        }
        r = rdma_port_apply_state(p, ip);
        if (r < 0)
                log_rdma_warning_errno(p, r, "Cannot publish: %m");
}

/* ---- udev ---- */

static void rdma_udev_event(void *userdata, struct udev_device *d, const char *action) {
        Rdma *rdma = userdata;
        const char *name = udev_device_get_sysname(d);

        if (isempty(name))
                return;
        if (streq(action, "remove"))
                rdma_device_remove(rdma, name);
        else if (streq(action, "move"))
                /* Renamed ("rdma dev set NAME name NEW"): the ports' keys change; start over. */
                (void) rdma_enumerate(rdma);
        else
                rdma_device_process(rdma, name, streq(action, "add"));
}

/* A uverbs device appears after its RDMA device ("modprobe mlx5_ib" registers both, verbs last):
 * that is when libibverbs can open the device. It goes before the RDMA device does. */
static void rdma_verbs_udev_event(void *userdata, struct udev_device *d, const char *action) {
        Rdma *rdma = userdata;
        _cleanup_(freep) char *dir = NULL, *ibdev = NULL;
        const char *name = udev_device_get_sysname(d);

        if (isempty(name) || !sysfs_net_name_is_valid(name))
                return;
        if (streq(action, "remove")) {
                rdma_uverbs_removed(rdma, name);
                return;
        }
        if (!streq(action, "add"))
                return;
        if (sysfs_path_join("class/infiniband_verbs", name, &dir) < 0 ||
            sysfs_read_string(rdma->sysfs_fd, dir, "ibdev", &ibdev) < 0)
                return;
        if (rdma_device_get(rdma, ibdev))
                rdma_device_process(rdma, ibdev, true);
}

int rdma_watch(Rdma *rdma, UdevSource *udev) {
        int r;

        r = udev_source_add_subsystem(udev, "infiniband", rdma_udev_event, rdma_enumerate, rdma);
        if (r >= 0)
                r = udev_source_add_subsystem(udev, "infiniband_verbs", rdma_verbs_udev_event, NULL, rdma);
        if (r < 0)
                return log_error_errno(r, "Failed to watch udev's infiniband subsystem: %m");
        return 0;
}
