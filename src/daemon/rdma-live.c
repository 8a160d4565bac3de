/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sys/epoll.h>

#include "manager.h"
#include "rdma-live.h"
#include "rdma-verbs.h"
#include "shared/log.h"
#include "sysfs/sysfs.h"

static bool sysfs_root_is_ours(const Manager *m) {
        const char *root = m->options.sysfs_root;
        return !root || streq(root, "/sys") || streq(root, "/sys/");
}

static void rdma_device_reread_ports(Manager *m, const char *name) {
        RdmaPort *p;

        TABLE_FOREACH(p, &m->rdma_ports)
                if (streq(p->device, name))
                        rdma_port_request_reread(p);
}

void rdma_device_close_verbs(RdmaDevice *dev) {
        dev->verbs_source = sd_event_source_disable_unref(dev->verbs_source);
        dev->verbs = rdma_verbs_device_free(dev->verbs);
        dev->uverbs = mfree(dev->uverbs);
}

/* Drops libibverbs for the device and publishes what sysfs says. */
static void rdma_device_fall_back_to_sysfs(RdmaDevice *dev) {
        rdma_device_close_verbs(dev);
        rdma_device_reread_ports(dev->manager, dev->name);
}

/* The class/infiniband_verbs entry whose ibdev is the device, or NULL. */
static char *rdma_find_uverbs(Manager *m, const char *name) {
        _cleanup_(strv_freep) char **entries = NULL;

        if (sysfs_list_dir(m->sysfs_fd, "class/infiniband_verbs", &entries) < 0)
                return NULL;
        STRV_FOREACH(e, entries) {
                _cleanup_(freep) char *dir = NULL, *ibdev = NULL;

                if (sysfs_path_join("class/infiniband_verbs", *e, &dir) < 0)
                        return NULL;
                if (sysfs_read_string(m->sysfs_fd, dir, "ibdev", &ibdev) >= 0 && streq(ibdev, name))
                        return strdup(*e);
        }
        return NULL;
}

void rdma_uverbs_removed(Manager *m, const char *uverbs) {
        RdmaDevice *dev;

        TABLE_FOREACH(dev, &m->rdma_devices)
                if (dev->verbs && dev->uverbs && streq(dev->uverbs, uverbs)) {
                        log_debug("RDMA device %s: %s is going away, closing it.", dev->name, uverbs);
                        rdma_device_fall_back_to_sysfs(dev);
                }
}

static int on_verbs_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RdmaDevice *dev = userdata;
        Manager *m = dev->manager;
        RdmaVerbsEvent ev;
        RdmaPort *p;
        int r;

        for (;;) {
                r = rdma_verbs_device_read_event(dev->verbs, &ev);
                if (r == -EAGAIN)
                        break;
                if (r < 0) {
                        log_debug_errno(r, "RDMA device %s: cannot read an async event, using sysfs only: %m", dev->name);
                        rdma_device_fall_back_to_sysfs(dev);
                        return 0;
                }
                log_debug("RDMA device %s: %s (%d) on port %u.", dev->name, rdma_verbs_event_type_to_string(ev.type),
                          ev.raw, ev.port);

                if (ev.type == RDMA_VERBS_EVENT_DEVICE_FATAL) {
                        log_warning("RDMA device %s: the driver reported a fatal error; publishing sysfs values "
                                    "until the device is added again.", dev->name);
                        rdma_device_fall_back_to_sysfs(dev);
                        return 0;
                }
                /* rdma-verbs names a port only for the events about one: re-read that port. */
                p = ev.port > 0 ? rdma_port_get(m, dev->name, ev.port) : NULL;
                if (p)
                        rdma_port_request_reread(p);
        }

        if (revents & (EPOLLHUP | EPOLLERR)) {
                log_debug("RDMA device %s: the async event file was closed, using sysfs only.", dev->name);
                rdma_device_fall_back_to_sysfs(dev);
        }
        return 0;
}

int rdma_device_open_verbs(RdmaDevice *dev) {
        _cleanup_(rdma_verbs_device_freep) RdmaVerbsDevice *v = NULL;
        Manager *m = dev->manager;
        int r;

        if (dev->verbs)
                return 0;
        if (!sysfs_root_is_ours(m))
                return -EXDEV;

        r = rdma_verbs_device_open(dev->name, &v);
        if (r < 0) {
                if (r != dev->verbs_error) {
                        if (r == -ENODEV)
                                log_debug("RDMA device %s: not known to libibverbs, publishing sysfs values.", dev->name);
                        else
                                log_info_errno(r, "RDMA device %s: cannot open it with libibverbs, publishing sysfs "
                                                  "values: %m", dev->name);
                }
                dev->verbs_error = r;
                return r;
        }

        r = sd_event_add_io(m->event, &dev->verbs_source, rdma_verbs_device_get_event_fd(v), EPOLLIN,
                            on_verbs_event, dev);
        if (r < 0)
                return log_warning_errno(r, "RDMA device %s: cannot watch its async events: %m", dev->name);
        (void) sd_event_source_set_description(dev->verbs_source, "rdma-verbs");
        dev->uverbs = rdma_find_uverbs(m, dev->name);
        dev->verbs = TAKE_PTR(v);
        dev->verbs_error = 0;
        log_debug("RDMA device %s: live port state from libibverbs (%zu ports).", dev->name, dev->verbs->n_ports);
        return 0;
}

const RdmaPortStatus *rdma_device_verbs_status(RdmaDevice *dev, const InfinibandPort *sysfs) {
        _cleanup_(freep) char *difference = NULL;
        RdmaVerbsPort *vp;
        int r;

        if (!dev || !dev->verbs)
                return NULL;
        r = rdma_verbs_device_query_port(dev->verbs, sysfs->number);
        if (r < 0) {
                log_debug_errno(r, "RDMA device %s port %u: ibv_query_port() failed, publishing sysfs values: %m",
                                dev->name, sysfs->number);
                return NULL;
        }
        vp = rdma_verbs_device_get_port(dev->verbs, sysfs->number);
        if (!vp)
                return NULL;
        if (rdma_verbs_port_compare(vp, sysfs, &difference) != 0)
                log_debug("RDMA device %s port %u: libibverbs and sysfs disagree, publishing libibverbs: %s",
                          dev->name, sysfs->number, strna(difference));
        return &vp->status;
}
