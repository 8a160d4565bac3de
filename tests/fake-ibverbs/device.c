/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* device.c — the device list, contexts, device and port queries, async events, the string helpers */
#include <endian.h>
#include <fcntl.h>

#include "fake-ibverbs.h"

/* One record on the async event pipe. */
typedef struct FakeEventRecord {
        uint32_t type;
        uint64_t element;
} FakeEventRecord;

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

static FakeDevice *device_ref(FakeDevice *d) {
        pthread_mutex_lock(&devices_lock);
        d->refs++;
        pthread_mutex_unlock(&devices_lock);
        return d;
}

static void device_unref(FakeDevice *d) {
        bool last;

        pthread_mutex_lock(&devices_lock);
        last = --d->refs == 0;
        pthread_mutex_unlock(&devices_lock);
        if (last)
                free(d);
}

FAKE_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices) {
        _cleanup_(freep) char(*names)[64] = NULL;
        struct ibv_device **list;
        size_t n = 0;
        int r;

        if (num_devices)
                *num_devices = 0;
        /* As libibverbs: no RDMA subsystem at all is NULL with ENOSYS, no device an empty list. */
        r = fake_sysfs_list(&names, &n);
        if (r < 0) {
                errno = -r;
                return NULL;
        }
        list = calloc(n + 1, sizeof(*list));
        if (!list) {
                errno = ENOMEM;
                return NULL;
        }
        for (size_t i = 0; i < n; i++) {
                FakeDevice *d = calloc(1, sizeof(FakeDevice));
                FakeDeviceInfo info;
                if (!d) {
                        ibv_free_device_list(list);
                        errno = ENOMEM;
                        return NULL;
                }
                d->refs = 1;
                (void) fake_sysfs_read_device(names[i], &info);
                d->ibv.node_type = info.node_type;
                d->ibv.transport_type = info.node_type == IBV_NODE_RNIC ? IBV_TRANSPORT_IWARP : IBV_TRANSPORT_IB;
                snprintf(d->ibv.name, sizeof(d->ibv.name), "%s", names[i]);
                snprintf(d->ibv.dev_name, sizeof(d->ibv.dev_name), "uverbs%zu", i);
                snprintf(d->ibv.dev_path, sizeof(d->ibv.dev_path), "%s/class/infiniband_verbs/uverbs%zu",
                         fake_sysfs_root(), i);
                snprintf(d->ibv.ibdev_path, sizeof(d->ibv.ibdev_path), "%s/class/infiniband/%s", fake_sysfs_root(),
                         names[i]);
                list[i] = &d->ibv;
        }
        if (num_devices)
                *num_devices = (int) n;
        return list;
}

FAKE_EXPORT void ibv_free_device_list(struct ibv_device **list) {
        if (!list)
                return;
        for (size_t i = 0; list[i]; i++)
                device_unref(container_of(list[i], FakeDevice, ibv));
        free(list);
}

FAKE_EXPORT const char *ibv_get_device_name(struct ibv_device *device) {
        return device->name;
}

FAKE_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device) {
        FakeDeviceInfo info;

        if (fake_sysfs_read_device(device->name, &info) < 0)
                return 0;
        return htobe64(info.node_guid);
}

static int unsupported_poll(struct ibv_cq *cq, int solicited_only) {
        return EOPNOTSUPP;
}

FAKE_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device) {
        FakeContext *c;
        int r;

        if (!fake_fabric())
                return NULL; /* errno set */
        c = calloc(1, sizeof(FakeContext));
        if (!c) {
                errno = ENOMEM;
                return NULL;
        }
        r = fake_sysfs_read_device(device->name, &c->info);
        if (r < 0) {
                free(c);
                errno = -r;
                return NULL;
        }
        if (pipe2(c->event_pipe, O_CLOEXEC) < 0) {
                free(c);
                return NULL;
        }
        c->device = device_ref(container_of(device, FakeDevice, ibv));
        pthread_mutex_init(&c->lock, NULL);
        c->ibv.device = device;
        c->ibv.cmd_fd = -1;
        c->ibv.async_fd = c->event_pipe[0];
        c->ibv.num_comp_vectors = 1;
        pthread_mutex_init(&c->ibv.mutex, NULL);
        /* Not an extended context: the inline helpers fall back to the exported functions. */
        c->ibv.abi_compat = NULL;
        c->ibv.ops.poll_cq = fake_poll_cq;
        c->ibv.ops.post_send = fake_post_send;
        c->ibv.ops.post_recv = fake_post_recv;
        c->ibv.ops.req_notify_cq = unsupported_poll;
        c->next_refresh = fake_now_usec() + FAKE_REFRESH_USEC;
        return &c->ibv;
}

FAKE_EXPORT int ibv_close_device(struct ibv_context *context) {
        FakeContext *c = fake_context(context);

        /* The kernel would clean up behind a careless application; say so, a test should not be one. */
        if (c->qps || c->n_cqs > 0 || c->n_pds > 0)
                fprintf(stderr, "fake-ibverbs: %s closed with resources still open (%s%s%s)\n", c->info.name,
                        c->qps ? "QPs " : "", c->n_cqs ? "CQs " : "", c->n_pds ? "PDs" : "");
        close(c->event_pipe[0]);
        close(c->event_pipe[1]);
        device_unref(c->device);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return 0;
}

FAKE_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr) {
        FakeContext *c = fake_context(context);

        if (c->vanished)
                return ENODEV;
        *attr = (struct ibv_device_attr) {
                .node_guid = htobe64(c->info.node_guid),
                .sys_image_guid = htobe64(c->info.sys_image_guid),
                .max_mr_size = UINT64_C(1) << 40,
                .page_size_cap = 4096,
                .vendor_id = c->info.vendor_id,
                .vendor_part_id = c->info.vendor_part_id,
                .hw_ver = c->info.hw_ver,
                .max_qp = FAKE_QPS_MAX,
                .max_qp_wr = FAKE_WR_MAX,
                .max_sge = FAKE_SGE_MAX,
                .max_sge_rd = FAKE_SGE_MAX,
                .max_cq = FAKE_CQS_MAX,
                .max_cqe = FAKE_CQE_MAX,
                .max_mr = FAKE_MRS_MAX,
                .max_pd = FAKE_PDS_MAX,
                .max_qp_rd_atom = FAKE_RD_ATOMIC_MAX,
                .max_qp_init_rd_atom = FAKE_RD_ATOMIC_MAX,
                .max_res_rd_atom = FAKE_RD_ATOMIC_MAX * FAKE_QPS_MAX,
                .atomic_cap = IBV_ATOMIC_NONE,
                .max_pkeys = 1,
                .phys_port_cnt = (uint8_t) c->info.n_ports,
        };
        snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%s", c->info.fw_ver);
        return 0;
}

/* The exported symbol the inline ibv_query_port() falls back to for a context that is not extended;
 * it returns an errno value, as libibverbs does. */
#undef ibv_query_port
FAKE_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *port_attr) {
        FakeContext *c = fake_context(context);
        struct ibv_port_attr *attr = (struct ibv_port_attr *) port_attr;
        FakePortInfo p;

        if (c->vanished || !fake_sysfs_device_exists(c->info.name))
                return ENODEV;
        if (port_num < 1 || port_num > c->info.n_ports)
                return EINVAL;
        /* Asked of the device every time, as the kernel asks the HCA: the state may have changed. */
        p = c->info.ports[port_num - 1];
        (void) fake_sysfs_read_port_state(c->info.name, port_num, &p.attr.state);
        *attr = p.attr;
        return 0;
}

FAKE_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid) {
        FakeContext *c = fake_context(context);

        if (c->vanished || port_num < 1 || port_num > c->info.n_ports || index < 0 ||
            (unsigned) index >= c->info.ports[port_num - 1].n_gids)
                return -1;
        /* Read again: addresses come and go on RoCE ports. */
        if (fake_sysfs_read_gid(c->info.name, port_num, (unsigned) index, gid->raw) < 0)
                return -1;
        return 0;
}

/* What the inline ibv_query_gid_ex() calls: the GID with its type (0 or an errno value). */
FAKE_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
                                  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size) {
        FakeContext *c = fake_context(context);
        union ibv_gid gid;
        static const union ibv_gid zero;

        if (c->vanished)
                return ENODEV;
        if (flags != 0 || entry_size < sizeof(struct ibv_gid_entry) || port_num < 1 || port_num > c->info.n_ports ||
            gid_index >= c->info.ports[port_num - 1].n_gids)
                return EINVAL;
        if (fake_sysfs_read_gid(c->info.name, port_num, gid_index, gid.raw) < 0 || memcmp(&gid, &zero, 16) == 0)
                return ENODATA;
        *entry = (struct ibv_gid_entry) {
                .gid = gid,
                .gid_index = gid_index,
                .port_num = port_num,
                .gid_type = c->info.ports[port_num - 1].gid_types[gid_index],
        };
        return 0;
}

FAKE_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey) {
        FakeContext *c = fake_context(context);

        if (port_num < 1 || port_num > c->info.n_ports || index != 0)
                return -1;
        *pkey = htobe16(0xffff);
        return 0;
}

void fake_context_event(FakeContext *c, enum ibv_event_type type, uint64_t element) {
        FakeEventRecord e = { .type = type, .element = element };
        int flags = fcntl(c->event_pipe[1], F_GETFL);

        /* Never block the data path: a full pipe loses the event, as an unread event queue would. */
        if (flags >= 0 && !(flags & O_NONBLOCK))
                (void) fcntl(c->event_pipe[1], F_SETFL, flags | O_NONBLOCK);
        (void) !write(c->event_pipe[1], &e, sizeof(e));
}

FAKE_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event) {
        FakeEventRecord e;

        if (read(context->async_fd, &e, sizeof(e)) != (ssize_t) sizeof(e))
                return -1;
        *event = (struct ibv_async_event) { .event_type = (enum ibv_event_type) e.type };
        switch (e.type) {
        case IBV_EVENT_CQ_ERR:
                event->element.cq = (struct ibv_cq *) (uintptr_t) e.element;
                break;
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
                event->element.qp = (struct ibv_qp *) (uintptr_t) e.element;
                break;
        default:
                event->element.port_num = (int) e.element;
                break;
        }
        return 0;
}

FAKE_EXPORT void ibv_ack_async_event(struct ibv_async_event *event) {
        /* Nothing waits on the counts: objects are not destroyed behind an unacknowledged event here. */
}

void fake_context_vanish(FakeContext *c) {
        FakeFabric *f = fake_fabric();

        if (c->vanished)
                return;
        c->vanished = true;
        fake_fabric_lock(f);
        for (FakeQp *qp = c->qps; qp; qp = qp->next) {
                f->qps[qp->slot].vanished = 1;
                fake_qp_slot_error(&f->qps[qp->slot], FAKE_QP_EVENT_NONE);
        }
        fake_fabric_unlock(f);
        fake_context_event(c, IBV_EVENT_DEVICE_FATAL, 0);
}

void fake_context_refresh(FakeContext *c, uint64_t now) {
        FakeFabric *f = fake_fabric();

        if (now < c->next_refresh || c->vanished)
                return;
        c->next_refresh = now + FAKE_REFRESH_USEC;
        if (!fake_sysfs_device_exists(c->info.name)) {
                fake_context_vanish(c);
                return;
        }
        for (unsigned i = 0; i < c->info.n_ports; i++) {
                enum ibv_port_state state;
                if (fake_sysfs_read_port_state(c->info.name, i + 1, &state) < 0)
                        continue;
                bool was = c->info.ports[i].attr.state == IBV_PORT_ACTIVE, is = state == IBV_PORT_ACTIVE;
                c->info.ports[i].attr.state = state;
                if (was != is)
                        fake_context_event(c, is ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR, i + 1);
                fake_fabric_lock(f);
                for (FakeQp *qp = c->qps; qp; qp = qp->next)
                        if (f->qps[qp->slot].port == i + 1)
                                f->qps[qp->slot].port_active = is;
                fake_fabric_unlock(f);
        }
}

/* ---- the string helpers applications print with ---- */

FAKE_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status) {
        static const char *const names[] = {
                [IBV_WC_SUCCESS] = "success",
                [IBV_WC_LOC_LEN_ERR] = "local length error",
                [IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
                [IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
                [IBV_WC_LOC_PROT_ERR] = "local protection error",
                [IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
                [IBV_WC_MW_BIND_ERR] = "memory management operation error",
                [IBV_WC_BAD_RESP_ERR] = "bad response error",
                [IBV_WC_LOC_ACCESS_ERR] = "local access error",
                [IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
                [IBV_WC_REM_ACCESS_ERR] = "remote access error",
                [IBV_WC_REM_OP_ERR] = "remote operation error",
                [IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
                [IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
                [IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
                [IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
                [IBV_WC_REM_ABORT_ERR] = "aborted error",
                [IBV_WC_INV_EECN_ERR] = "invalid EE context number",
                [IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
                [IBV_WC_FATAL_ERR] = "fatal error",
                [IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
                [IBV_WC_GENERAL_ERR] = "general error",
        };
        if ((unsigned) status >= ELEMENTSOF(names) || !names[status])
                return "unknown";
        return names[status];
}

FAKE_EXPORT const char *ibv_port_state_str(enum ibv_port_state state) {
        static const char *const names[] = { "PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED", "PORT_ACTIVE",
                                             "PORT_ACTIVE_DEFER" };
        return (unsigned) state < ELEMENTSOF(names) ? names[state] : "unknown";
}

FAKE_EXPORT const char *ibv_event_type_str(enum ibv_event_type event) {
        static const char *const names[] = {
                [IBV_EVENT_CQ_ERR] = "CQ error", [IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
                [IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
                [IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
                [IBV_EVENT_PORT_ACTIVE] = "port active", [IBV_EVENT_PORT_ERR] = "port error",
                [IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
        };
        return (unsigned) event < ELEMENTSOF(names) && names[event] ? names[event] : "unknown";
}

FAKE_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type) {
        switch (node_type) {
        case IBV_NODE_CA:
                return "InfiniBand channel adapter";
        case IBV_NODE_SWITCH:
                return "InfiniBand switch";
        case IBV_NODE_ROUTER:
                return "InfiniBand router";
        case IBV_NODE_RNIC:
                return "iWARP NIC";
        case IBV_NODE_USNIC:
                return "usNIC";
        case IBV_NODE_USNIC_UDP:
                return "usNIC UDP";
        case IBV_NODE_UNSPECIFIED:
                return "unspecified";
        case IBV_NODE_UNKNOWN:
                break;
        }
        return "unknown";
}
