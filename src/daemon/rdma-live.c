/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sys/epoll.h>

#include "rdma-live.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "sysfs/sysfs.h"

void rdma_live_close(RdmaLive *live) {
        live->source = sd_event_source_disable_unref(live->source);
        live->verbs = rdma_verbs_device_free(live->verbs);
        live->uverbs = mfree(live->uverbs);
}

/* Drops libibverbs for the device and has sysfs read again. */
static void rdma_live_fall_back_to_sysfs(RdmaLive *live) {
        rdma_live_close(live);
        live->port_event(live, 0, live->userdata);
}

/* The class/infiniband_verbs entry whose ibdev is the device, or NULL. */
static char *find_uverbs(int sysfs_fd, const char *name) {
        _cleanup_(strv_freep) char **entries = NULL;

        if (sysfs_list_dir(sysfs_fd, "class/infiniband_verbs", &entries) < 0)
                return NULL;
        STRV_FOREACH(e, entries) {
                _cleanup_(freep) char *dir = NULL, *ibdev = NULL;

                if (sysfs_path_join("class/infiniband_verbs", *e, &dir) < 0)
                        return NULL;
                if (sysfs_read_string(sysfs_fd, dir, "ibdev", &ibdev) >= 0 && streq(ibdev, name))
                        return strdup(*e);
        }
        return NULL;
}

static int on_verbs_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RdmaLive *live = userdata;
        RdmaVerbsEvent ev;
        int r;

        for (;;) {
                r = rdma_verbs_device_read_event(live->verbs, &ev);
                if (r == -EAGAIN)
                        break;
                if (r < 0) {
                        log_debug_errno(r, "RDMA device %s: cannot read an async event, using sysfs only: %m", live->name);
                        rdma_live_fall_back_to_sysfs(live);
                        return 0;
                }
                log_debug("RDMA device %s: %s (%d) on port %u.", live->name, rdma_verbs_event_type_to_string(ev.type),
                          ev.raw, ev.port);
                if (ev.type == RDMA_VERBS_EVENT_DEVICE_FATAL) {
                        log_warning("RDMA device %s: the driver reported a fatal error; publishing sysfs values "
                                    "until the device is added again.", live->name);
                        rdma_live_fall_back_to_sysfs(live);
                        return 0;
                }
                /* rdma-verbs names a port only for the events about one: re-read that port. */
                if (ev.port > 0)
                        live->port_event(live, ev.port, live->userdata);
        }
        if (revents & (EPOLLHUP | EPOLLERR)) {
                log_debug("RDMA device %s: the async event file was closed, using sysfs only.", live->name);
                rdma_live_fall_back_to_sysfs(live);
        }
        return 0;
}

int rdma_live_open(RdmaLive *live, sd_event *event, int sysfs_fd) {
        _cleanup_(rdma_verbs_device_freep) RdmaVerbsDevice *v = NULL;
        int r;

        if (live->verbs)
                return 0;
        r = rdma_verbs_device_open(live->name, &v);
        if (r < 0) {
                if (r != live->error) {
                        if (r == -ENODEV)
                                log_debug("RDMA device %s: not known to libibverbs, publishing sysfs values.", live->name);
                        else
                                log_info_errno(r, "RDMA device %s: cannot open it with libibverbs, publishing sysfs "
                                                  "values: %m", live->name);
                }
                live->error = r;
                return r;
        }
        r = sd_event_add_io(event, &live->source, rdma_verbs_device_get_event_fd(v), EPOLLIN, on_verbs_event, live);
        if (r < 0)
                return log_warning_errno(r, "RDMA device %s: cannot watch its async events: %m", live->name);
        (void) sd_event_source_set_description(live->source, "rdma-verbs");
        live->uverbs = find_uverbs(sysfs_fd, live->name);
        live->verbs = TAKE_PTR(v);
        live->error = 0;
        log_debug("RDMA device %s: live port state from libibverbs (%zu ports).", live->name, live->verbs->n_ports);
        return 0;
}

const RdmaPortStatus *rdma_live_port_status(RdmaLive *live, const InfinibandPort *sysfs) {
        _cleanup_(freep) char *difference = NULL;
        RdmaVerbsPort *vp;
        int r;

        if (!live->verbs)
                return NULL;
        r = rdma_verbs_device_query_port(live->verbs, sysfs->number);
        if (r < 0) {
                log_debug_errno(r, "RDMA device %s port %u: ibv_query_port() failed, publishing sysfs values: %m",
                                live->name, sysfs->number);
                return NULL;
        }
        vp = rdma_verbs_device_get_port(live->verbs, sysfs->number);
        if (!vp)
                return NULL;
        if (rdma_verbs_port_compare(vp, sysfs, &difference) != 0)
                log_debug("RDMA device %s port %u: libibverbs and sysfs disagree, publishing libibverbs: %s",
                          live->name, sysfs->number, strna(difference));
        return &vp->status;
}
