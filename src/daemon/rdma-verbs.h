/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-verbs.h — libibverbs for the daemon: device list, live port attributes, the async event fd, and how verbs and sysfs differ */
#pragma once

#include <stdint.h>

#include "shared/macros.h"
#include "sysfs/infiniband.h"

struct ibv_context;
struct ibv_port_attr;

/*
 * Verbs see what the driver reports right now (ibv_query_port() asks the device); sysfs shows the
 * same through the kernel's formatting. The daemon publishes the verbs view and logs at debug level
 * where the two disagree (rdma_verbs_port_compare()).
 *
 * No RDMA at all is a normal state, not an error: rdma_verbs_list() then returns 0 with an empty
 * list and says why in its availability, without printing anything.
 */

typedef enum RdmaVerbsAvailability {
        RDMA_VERBS_AVAILABLE,
        RDMA_VERBS_NO_DEVICES,   /* the kernel has uverbs, but no device is registered */
        RDMA_VERBS_NO_SUBSYSTEM, /* ENOSYS: the kernel has no RDMA (no class/infiniband_verbs) */
        _RDMA_VERBS_AVAILABILITY_MAX,
        _RDMA_VERBS_AVAILABILITY_INVALID = -EINVAL,
} RdmaVerbsAvailability;

typedef enum RdmaVerbsEventType {
        RDMA_VERBS_EVENT_PORT_ACTIVE,
        RDMA_VERBS_EVENT_PORT_ERR,
        RDMA_VERBS_EVENT_LID_CHANGE,
        RDMA_VERBS_EVENT_PKEY_CHANGE,
        RDMA_VERBS_EVENT_SM_CHANGE,
        RDMA_VERBS_EVENT_GID_CHANGE,
        RDMA_VERBS_EVENT_CLIENT_REREGISTER,
        RDMA_VERBS_EVENT_DEVICE_FATAL, /* the device is unusable: close it and wait for udev */
        RDMA_VERBS_EVENT_OTHER,        /* QP/CQ/SRQ/WQ events; the daemon creates none of those */
        _RDMA_VERBS_EVENT_TYPE_MAX,
        _RDMA_VERBS_EVENT_TYPE_INVALID = -EINVAL,
} RdmaVerbsEventType;

typedef struct RdmaVerbsEvent {
        RdmaVerbsEventType type;
        uint32_t port; /* for port events, else 0 */
        int raw;       /* enum ibv_event_type, for the log */
} RdmaVerbsEvent;

typedef struct RdmaVerbsPort {
        uint32_t number;
        RdmaPortStatus status;
        uint32_t active_mtu; /* bytes, 0 = unknown */
        uint32_t max_mtu;
        int gid_tbl_len;
} RdmaVerbsPort;

typedef struct RdmaVerbsDevice {
        char *name;
        RdmaNodeType node_type;
        uint64_t node_guid;      /* host order */
        uint64_t sys_image_guid; /* host order */
        char *fw_ver;            /* NULL when the driver reports none */
        uint32_t vendor_id;
        uint32_t vendor_part_id;
        uint32_t hw_ver;
        RdmaVerbsPort *ports; /* ports[i].number == i + 1 */
        size_t n_ports;
        struct ibv_context *context;
} RdmaVerbsDevice;

const char *rdma_verbs_availability_to_string(RdmaVerbsAvailability a) _const_;
const char *rdma_verbs_event_type_to_string(RdmaVerbsEventType t) _const_;

/**
 * rdma_verbs_list() - the names of the RDMA devices libibverbs can open
 * @ret_names: NULL-terminated, possibly empty, to be freed with strv_free()
 * @ret_availability: why the list is empty, or RDMA_VERBS_AVAILABLE
 *
 * Return: 0 (also for no RDMA subsystem and for no devices), -errno for real failures.
 */
int rdma_verbs_list(char ***ret_names, RdmaVerbsAvailability *ret_availability);

/**
 * rdma_verbs_device_open() - open a device and query it and all its ports
 * @name: the kernel device name ("mlx5_0")
 * @ret: the device, to be freed with rdma_verbs_device_free()
 *
 * The async event fd is switched to non-blocking, ready for sd_event_add_io(EPOLLIN).
 *
 * Return: 0, -ENODEV when there is no such device (or no RDMA at all), -errno from the provider
 * (e.g. -EACCES without permission on /dev/infiniband/uverbsN).
 */
int rdma_verbs_device_open(const char *name, RdmaVerbsDevice **ret);
RdmaVerbsDevice *rdma_verbs_device_free(RdmaVerbsDevice *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(RdmaVerbsDevice *, rdma_verbs_device_free);

/* Queries one port again (after a port event). Return: 0, -ENOENT for a port number outside the
 * device, -errno from ibv_query_port(). */
int rdma_verbs_device_query_port(RdmaVerbsDevice *d, uint32_t port);
/* Queries every port again. */
int rdma_verbs_device_query_ports(RdmaVerbsDevice *d);
RdmaVerbsPort *rdma_verbs_device_get_port(const RdmaVerbsDevice *d, uint32_t port) _pure_;

/* The async event fd (non-blocking). Owned by the device: do not close it. */
int rdma_verbs_device_get_event_fd(const RdmaVerbsDevice *d) _pure_;

/**
 * rdma_verbs_device_read_event() - take one async event, acknowledged already
 * @d: the device
 * @ret: the event
 *
 * Call it until it returns -EAGAIN whenever the event fd is readable.
 *
 * Return: 0, -EAGAIN when no event is pending, -errno.
 */
int rdma_verbs_device_read_event(RdmaVerbsDevice *d, RdmaVerbsEvent *ret);

/**
 * rdma_verbs_port_compare() - which fields differ between verbs and sysfs for one port
 * @verbs: the port as ibv_query_port() saw it
 * @sysfs: the same port as infiniband_port_read() saw it
 * @ret_description: "rate: verbs 200 Gb/s (4X HDR), sysfs 100 Gb/s (2X HDR); ..." or NULL when
 *                   equal (may be NULL); to be freed
 *
 * Only fields known to both sides count.
 *
 * Return: the RDMA_PORT_FIELD_* bits that differ (0 when they agree).
 */
unsigned rdma_verbs_port_compare(const RdmaVerbsPort *verbs, const InfinibandPort *sysfs, char **ret_description);

/* Conversions from libibverbs' numbers, exported for the tests. */
RdmaSpeed rdma_speed_from_ibv(uint8_t active_speed, uint32_t active_speed_ex) _const_;
RdmaWidth rdma_width_from_ibv(uint8_t active_width) _const_;
RdmaPortState rdma_port_state_from_ibv(int state) _const_;
RdmaPhysState rdma_phys_state_from_ibv(uint8_t phys_state) _const_;
RdmaLinkLayer rdma_link_layer_from_ibv(uint8_t link_layer) _const_;
RdmaNodeType rdma_node_type_from_ibv(int node_type) _const_;
RdmaVerbsEventType rdma_verbs_event_type_from_ibv(int event_type) _const_;
uint32_t rdma_mtu_from_ibv(int mtu) _const_;
/* active_speed_ex (XDR and faster) is passed separately: older headers, such as Debian 12's rdma-core 44,
 * do not have it. */
void rdma_port_status_from_ibv(const struct ibv_port_attr *attr, uint32_t active_speed_ex, RdmaPortStatus *ret);
