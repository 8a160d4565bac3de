/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <stdarg.h>

#include "rdma-config.h"
#include "rdma-verbs.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

static const char *const availability_names[_RDMA_VERBS_AVAILABILITY_MAX] = {
        [RDMA_VERBS_AVAILABLE] = "available",
        [RDMA_VERBS_NO_DEVICES] = "no RDMA device: the kernel has RDMA but no device is registered",
        [RDMA_VERBS_NO_SUBSYSTEM] = "no RDMA device: the kernel has no RDMA subsystem",
};

static const char *const event_type_names[_RDMA_VERBS_EVENT_TYPE_MAX] = {
        [RDMA_VERBS_EVENT_PORT_ACTIVE] = "port-active",
        [RDMA_VERBS_EVENT_PORT_ERR] = "port-error",
        [RDMA_VERBS_EVENT_LID_CHANGE] = "lid-change",
        [RDMA_VERBS_EVENT_PKEY_CHANGE] = "pkey-change",
        [RDMA_VERBS_EVENT_SM_CHANGE] = "sm-change",
        [RDMA_VERBS_EVENT_GID_CHANGE] = "gid-change",
        [RDMA_VERBS_EVENT_CLIENT_REREGISTER] = "client-reregister",
        [RDMA_VERBS_EVENT_DEVICE_FATAL] = "device-fatal",
        [RDMA_VERBS_EVENT_OTHER] = "other",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_verbs_availability, RdmaVerbsAvailability, availability_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_verbs_event_type, RdmaVerbsEventType, event_type_names)

/* libibverbs encodes speeds and widths as single bits (IB spec PortInfo), not as the kernel's
 * sysfs words; ibv_devinfo's tables are the reference. XDR only exists in active_speed_ex. */
RdmaSpeed rdma_speed_from_ibv(uint8_t active_speed, uint32_t active_speed_ex) {
        switch (active_speed_ex ?: active_speed) {
        case 1:
                return RDMA_SPEED_SDR;
        case 2:
                return RDMA_SPEED_DDR;
        case 4:
                return RDMA_SPEED_QDR;
        case 8:
                return RDMA_SPEED_FDR10;
        case 16:
                return RDMA_SPEED_FDR;
        case 32:
                return RDMA_SPEED_EDR;
        case 64:
                return RDMA_SPEED_HDR;
        case 128:
                return RDMA_SPEED_NDR;
        case 256:
                return RDMA_SPEED_XDR;
        }
        return RDMA_SPEED_UNKNOWN;
}

RdmaWidth rdma_width_from_ibv(uint8_t active_width) {
        switch (active_width) {
        case 1:
                return RDMA_WIDTH_1X;
        case 2:
                return RDMA_WIDTH_4X;
        case 4:
                return RDMA_WIDTH_8X;
        case 8:
                return RDMA_WIDTH_12X;
        case 16:
                return RDMA_WIDTH_2X;
        }
        return RDMA_WIDTH_UNKNOWN;
}

RdmaPortState rdma_port_state_from_ibv(int state) {
        /* IBV_PORT_NOP = 0 ... IBV_PORT_ACTIVE_DEFER = 5; our enum starts with UNKNOWN. */
        if (state < IBV_PORT_NOP || state > IBV_PORT_ACTIVE_DEFER)
                return RDMA_PORT_STATE_UNKNOWN;
        return (RdmaPortState) (state + 1);
}

RdmaPhysState rdma_phys_state_from_ibv(uint8_t phys_state) {
        /* The same numbers as the kernel's sysfs; 0 is "no state change", i.e. unknown. */
        if (phys_state >= _RDMA_PHYS_STATE_MAX)
                return RDMA_PHYS_STATE_UNKNOWN;
        return (RdmaPhysState) phys_state;
}

RdmaLinkLayer rdma_link_layer_from_ibv(uint8_t link_layer) {
        switch (link_layer) {
        case IBV_LINK_LAYER_INFINIBAND:
                return RDMA_LINK_LAYER_INFINIBAND;
        case IBV_LINK_LAYER_ETHERNET:
                return RDMA_LINK_LAYER_ETHERNET;
        }
        return RDMA_LINK_LAYER_UNKNOWN;
}

RdmaNodeType rdma_node_type_from_ibv(int node_type) {
        /* IBV_NODE_CA = 1 ... IBV_NODE_UNSPECIFIED = 7, the kernel's numbers and ours. */
        if (node_type < IBV_NODE_CA || node_type >= _RDMA_NODE_TYPE_MAX)
                return RDMA_NODE_TYPE_UNKNOWN;
        return (RdmaNodeType) node_type;
}

RdmaVerbsEventType rdma_verbs_event_type_from_ibv(int event_type) {
        switch (event_type) {
        case IBV_EVENT_PORT_ACTIVE:
                return RDMA_VERBS_EVENT_PORT_ACTIVE;
        case IBV_EVENT_PORT_ERR:
                return RDMA_VERBS_EVENT_PORT_ERR;
        case IBV_EVENT_LID_CHANGE:
                return RDMA_VERBS_EVENT_LID_CHANGE;
        case IBV_EVENT_PKEY_CHANGE:
                return RDMA_VERBS_EVENT_PKEY_CHANGE;
        case IBV_EVENT_SM_CHANGE:
                return RDMA_VERBS_EVENT_SM_CHANGE;
        case IBV_EVENT_GID_CHANGE:
                return RDMA_VERBS_EVENT_GID_CHANGE;
        case IBV_EVENT_CLIENT_REREGISTER:
                return RDMA_VERBS_EVENT_CLIENT_REREGISTER;
        case IBV_EVENT_DEVICE_FATAL:
                return RDMA_VERBS_EVENT_DEVICE_FATAL;
        }
        return RDMA_VERBS_EVENT_OTHER;
}

static bool event_type_has_port(RdmaVerbsEventType t) {
        switch (t) {
        case RDMA_VERBS_EVENT_PORT_ACTIVE:
        case RDMA_VERBS_EVENT_PORT_ERR:
        case RDMA_VERBS_EVENT_LID_CHANGE:
        case RDMA_VERBS_EVENT_PKEY_CHANGE:
        case RDMA_VERBS_EVENT_SM_CHANGE:
        case RDMA_VERBS_EVENT_GID_CHANGE:
        case RDMA_VERBS_EVENT_CLIENT_REREGISTER:
                return true;
        case RDMA_VERBS_EVENT_DEVICE_FATAL:
        case RDMA_VERBS_EVENT_OTHER:
        case _RDMA_VERBS_EVENT_TYPE_MAX:
        case _RDMA_VERBS_EVENT_TYPE_INVALID:
                break;
        }
        return false;
}

uint32_t rdma_mtu_from_ibv(int mtu) {
        if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
                return 0;
        return UINT32_C(128) << mtu;
}

void rdma_port_status_from_ibv(const struct ibv_port_attr *attr, uint32_t active_speed_ex, RdmaPortStatus *ret) {
        RdmaPortStatus s = {
                .known = RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_PHYS_STATE | RDMA_PORT_FIELD_LINK_LAYER |
                         RDMA_PORT_FIELD_LID | RDMA_PORT_FIELD_SM_LID | RDMA_PORT_FIELD_LMC |
                         RDMA_PORT_FIELD_SM_SL | RDMA_PORT_FIELD_CAP_MASK,
                .state = rdma_port_state_from_ibv(attr->state),
                .phys_state = rdma_phys_state_from_ibv(attr->phys_state),
                .link_layer = rdma_link_layer_from_ibv(attr->link_layer),
                .rate.width = rdma_width_from_ibv(attr->active_width),
                .rate.speed = rdma_speed_from_ibv(attr->active_speed, active_speed_ex),
                .lid = attr->lid,
                .sm_lid = attr->sm_lid,
                .lmc = attr->lmc,
                .sm_sl = attr->sm_sl,
                .cap_mask = attr->port_cap_flags,
        };

        if (s.rate.width != RDMA_WIDTH_UNKNOWN)
                s.known |= RDMA_PORT_FIELD_WIDTH;
        if (s.rate.speed != RDMA_SPEED_UNKNOWN)
                s.known |= RDMA_PORT_FIELD_SPEED;
        /* The same lanes x per-lane figure the kernel prints in sysfs, so the two compare. */
        s.rate.mgbps = rdma_rate_mgbps(s.rate.speed, s.rate.width);
        if (s.rate.mgbps > 0)
                s.known |= RDMA_PORT_FIELD_RATE;
        *ret = s;
}

int rdma_verbs_list(char ***ret_names, RdmaVerbsAvailability *ret_availability) {
        _cleanup_(strv_freep) char **names = NULL;
        struct ibv_device **list;
        int n = 0;

        errno = 0;
        list = ibv_get_device_list(&n);
        if (!list) {
                /* ENOSYS: no uverbs in the kernel. libibverbs leaves errno alone in some versions
                 * when there simply is nothing to find, so 0 counts as "nothing" too. */
                if (errno != 0 && errno != ENOSYS && !errno_is_absent(errno))
                        return -errno;
                names = calloc(1, sizeof(char *));
                if (!names)
                        return -ENOMEM;
                *ret_names = TAKE_PTR(names);
                *ret_availability = RDMA_VERBS_NO_SUBSYSTEM;
                return 0;
        }

        names = calloc((size_t) MAX(n, 0) + 1, sizeof(char *));
        if (!names) {
                ibv_free_device_list(list);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                names[i] = strdup(ibv_get_device_name(list[i]));
                if (!names[i]) {
                        ibv_free_device_list(list);
                        return -ENOMEM;
                }
        }
        ibv_free_device_list(list);

        *ret_names = TAKE_PTR(names);
        *ret_availability = n > 0 ? RDMA_VERBS_AVAILABLE : RDMA_VERBS_NO_DEVICES;
        return 0;
}

RdmaVerbsPort *rdma_verbs_device_get_port(const RdmaVerbsDevice *d, uint32_t port) {
        if (port < 1 || port > d->n_ports)
                return NULL;
        return &d->ports[port - 1];
}

int rdma_verbs_device_query_port(RdmaVerbsDevice *d, uint32_t port) {
        struct ibv_port_attr attr = {};
        RdmaVerbsPort *p;
        uint32_t speed_ex = 0;
        int r;

        p = rdma_verbs_device_get_port(d, port);
        if (!p)
                return -ENOENT;

        /* Returns the errno value itself, not -1. */
        r = ibv_query_port(d->context, (uint8_t) port, &attr);
        if (r != 0)
                return r > 0 ? -r : -EIO;
#if HAVE_IBV_PORT_ATTR_ACTIVE_SPEED_EX
        speed_ex = attr.active_speed_ex;
#endif
        p->number = port;
        rdma_port_status_from_ibv(&attr, speed_ex, &p->status);
        p->active_mtu = rdma_mtu_from_ibv(attr.active_mtu);
        p->max_mtu = rdma_mtu_from_ibv(attr.max_mtu);
        p->gid_tbl_len = attr.gid_tbl_len;
        return 0;
}

int rdma_verbs_device_query_ports(RdmaVerbsDevice *d) {
        for (uint32_t port = 1; port <= d->n_ports; port++) {
                int r = rdma_verbs_device_query_port(d, port);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int open_context(const char *name, RdmaVerbsDevice *d) {
        struct ibv_device **list;
        int n = 0, r = -ENODEV;

        errno = 0;
        list = ibv_get_device_list(&n);
        if (!list)
                return errno == ENOMEM ? -ENOMEM : -ENODEV;
        for (int i = 0; i < n; i++) {
                if (!streq(ibv_get_device_name(list[i]), name))
                        continue;
                d->node_type = rdma_node_type_from_ibv(list[i]->node_type);
                d->node_guid = be64toh(ibv_get_device_guid(list[i]));
                errno = 0;
                d->context = ibv_open_device(list[i]);
                r = d->context ? 0 : (errno > 0 ? -errno : -EIO);
                break;
        }
        ibv_free_device_list(list);
        return r;
}

int rdma_verbs_device_open(const char *name, RdmaVerbsDevice **ret) {
        _cleanup_(rdma_verbs_device_freep) RdmaVerbsDevice *d = NULL;
        struct ibv_device_attr attr = {};
        int r, flags;

        if (isempty(name))
                return -EINVAL;
        d = calloc(1, sizeof(RdmaVerbsDevice));
        if (!d)
                return -ENOMEM;
        d->name = strdup(name);
        if (!d->name)
                return -ENOMEM;

        r = open_context(name, d);
        if (r < 0)
                return r;

        r = ibv_query_device(d->context, &attr);
        if (r != 0)
                return r > 0 ? -r : -EIO;
        d->sys_image_guid = be64toh(attr.sys_image_guid);
        d->vendor_id = attr.vendor_id;
        d->vendor_part_id = attr.vendor_part_id;
        d->hw_ver = attr.hw_ver;
        if (!isempty(attr.fw_ver)) {
                d->fw_ver = strndup(attr.fw_ver, sizeof(attr.fw_ver));
                if (!d->fw_ver)
                        return -ENOMEM;
        }

        if (attr.phys_port_cnt > 0) {
                d->ports = calloc(attr.phys_port_cnt, sizeof(RdmaVerbsPort));
                if (!d->ports)
                        return -ENOMEM;
                d->n_ports = attr.phys_port_cnt;
        }
        r = rdma_verbs_device_query_ports(d);
        if (r < 0)
                return r;

        /* ibv_get_async_event(3): make the fd non-blocking and poll it. */
        flags = fcntl(d->context->async_fd, F_GETFL);
        if (flags < 0 || fcntl(d->context->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;

        *ret = TAKE_PTR(d);
        return 0;
}

RdmaVerbsDevice *rdma_verbs_device_free(RdmaVerbsDevice *d) {
        if (!d)
                return NULL;
        if (d->context)
                ibv_close_device(d->context);
        free(d->name);
        free(d->fw_ver);
        free(d->ports);
        free(d);
        return NULL;
}

int rdma_verbs_device_get_event_fd(const RdmaVerbsDevice *d) {
        return d->context ? d->context->async_fd : -EBADF;
}

int rdma_verbs_device_read_event(RdmaVerbsDevice *d, RdmaVerbsEvent *ret) {
        struct ibv_async_event event;
        RdmaVerbsEventType type;

        if (!d->context)
                return -EBADF;
        if (ibv_get_async_event(d->context, &event) < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : (errno > 0 ? -errno : -EIO);

        type = rdma_verbs_event_type_from_ibv(event.event_type);
        *ret = (RdmaVerbsEvent) {
                .type = type,
                .port = event_type_has_port(type) && event.element.port_num > 0 ? (uint32_t) event.element.port_num : 0,
                .raw = (int) event.event_type,
        };
        /* Nothing here holds on to the event's object, so it is acknowledged at once. */
        ibv_ack_async_event(&event);
        return 0;
}

static _printf_(2, 3) void append(char **s, const char *format, ...) {
        _cleanup_(freep) char *piece = NULL;
        char *joined;
        va_list ap;
        int k;

        if (!*s)
                return; /* out of memory earlier */
        va_start(ap, format);
        k = vasprintf(&piece, format, ap);
        va_end(ap);
        if (k < 0 || asprintf(&joined, "%s%s%s", *s, isempty(*s) ? "" : "; ", piece) < 0) {
                free(*s);
                *s = NULL;
                return;
        }
        free(*s);
        *s = joined;
}

unsigned rdma_verbs_port_compare(const RdmaVerbsPort *verbs, const InfinibandPort *sysfs, char **ret_description) {
        const RdmaPortStatus *v = &verbs->status, *s = &sysfs->status;
        unsigned diff = rdma_port_status_diff(v, s);
        char a[RDMA_RATE_STRING_MAX], b[RDMA_RATE_STRING_MAX];
        char *d;

        if (!ret_description)
                return diff;
        if (diff == 0) {
                *ret_description = NULL;
                return 0;
        }

        d = strdup("");
#define TEXT(field, bit, to_string)                                                                 \
        if (diff & (bit))                                                                           \
        append(&d, "%s: verbs %s, sysfs %s", rdma_port_field_to_string(bit), strna(to_string(v->field)), \
               strna(to_string(s->field)))
#define NUMBER(field, bit, format)                                                                  \
        if (diff & (bit))                                                                           \
        append(&d, "%s: verbs " format ", sysfs " format, rdma_port_field_to_string(bit), v->field, s->field)

        TEXT(state, RDMA_PORT_FIELD_STATE, rdma_port_state_to_string);
        TEXT(phys_state, RDMA_PORT_FIELD_PHYS_STATE, rdma_phys_state_to_string);
        TEXT(link_layer, RDMA_PORT_FIELD_LINK_LAYER, rdma_link_layer_to_string);
        if (diff & RDMA_PORT_FIELD_RATE)
                append(&d, "rate: verbs %s, sysfs %s", rdma_format_rate(&v->rate, a), rdma_format_rate(&s->rate, b));
        TEXT(rate.width, RDMA_PORT_FIELD_WIDTH, rdma_width_to_string);
        TEXT(rate.speed, RDMA_PORT_FIELD_SPEED, rdma_speed_to_string);
        NUMBER(lid, RDMA_PORT_FIELD_LID, "0x%" PRIx32);
        NUMBER(sm_lid, RDMA_PORT_FIELD_SM_LID, "0x%" PRIx32);
        NUMBER(lmc, RDMA_PORT_FIELD_LMC, "%u");
        NUMBER(sm_sl, RDMA_PORT_FIELD_SM_SL, "%u");
        NUMBER(cap_mask, RDMA_PORT_FIELD_CAP_MASK, "0x%08" PRIx32);
#undef TEXT
#undef NUMBER

        *ret_description = d; /* NULL if memory ran out: the mask is still right */
        return diff;
}
