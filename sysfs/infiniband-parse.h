/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infiniband-parse.h — the RDMA port vocabulary (state, speed, width, link layer, GIDs) and strict parsers of the kernel's class/infiniband text formats */
#pragma once

#include <stdint.h>

#include "shared/macros.h"

/*
 * Every enum has an _UNKNOWN member 0, so a zeroed struct means "nothing known", and the _to_string()
 * functions return "unknown" for it (NULL only for values outside the enum). The names are the
 * kernel's own words ("ACTIVE", "LinkUp", "InfiniBand", "HDR", "4X"), which is what RDMA users read
 * in ibstat, ibv_devinfo and sysfs.
 */

typedef enum RdmaNodeType {
        RDMA_NODE_TYPE_UNKNOWN,
        RDMA_NODE_TYPE_CA,          /* 1: host channel adapter (InfiniBand, RoCE) */
        RDMA_NODE_TYPE_SWITCH,      /* 2 */
        RDMA_NODE_TYPE_ROUTER,      /* 3 */
        RDMA_NODE_TYPE_RNIC,        /* 4: iWARP */
        RDMA_NODE_TYPE_USNIC,       /* 5 */
        RDMA_NODE_TYPE_USNIC_UDP,   /* 6 */
        RDMA_NODE_TYPE_UNSPECIFIED, /* 7: e.g. AWS EFA */
        _RDMA_NODE_TYPE_MAX,
        _RDMA_NODE_TYPE_INVALID = -EINVAL,
} RdmaNodeType;

typedef enum RdmaPortState {
        RDMA_PORT_STATE_UNKNOWN,
        RDMA_PORT_STATE_NOP,          /* 0 */
        RDMA_PORT_STATE_DOWN,         /* 1 */
        RDMA_PORT_STATE_INIT,         /* 2: link up, no subnet manager has configured it yet */
        RDMA_PORT_STATE_ARMED,        /* 3 */
        RDMA_PORT_STATE_ACTIVE,       /* 4 */
        RDMA_PORT_STATE_ACTIVE_DEFER, /* 5 */
        _RDMA_PORT_STATE_MAX,
        _RDMA_PORT_STATE_INVALID = -EINVAL,
} RdmaPortState;

/* The enum values are the kernel's numbers (IB spec PortPhysicalState). */
typedef enum RdmaPhysState {
        RDMA_PHYS_STATE_UNKNOWN,
        RDMA_PHYS_STATE_SLEEP,
        RDMA_PHYS_STATE_POLLING,
        RDMA_PHYS_STATE_DISABLED,
        RDMA_PHYS_STATE_PORT_CONFIGURATION_TRAINING,
        RDMA_PHYS_STATE_LINK_UP,
        RDMA_PHYS_STATE_LINK_ERROR_RECOVERY,
        RDMA_PHYS_STATE_PHY_TEST,
        _RDMA_PHYS_STATE_MAX,
        _RDMA_PHYS_STATE_INVALID = -EINVAL,
} RdmaPhysState;

typedef enum RdmaLinkLayer {
        RDMA_LINK_LAYER_UNKNOWN, /* also the kernel's own "Unknown" */
        RDMA_LINK_LAYER_INFINIBAND,
        RDMA_LINK_LAYER_ETHERNET, /* RoCE, and iWARP devices */
        _RDMA_LINK_LAYER_MAX,
        _RDMA_LINK_LAYER_INVALID = -EINVAL,
} RdmaLinkLayer;

typedef enum RdmaWidth {
        RDMA_WIDTH_UNKNOWN,
        RDMA_WIDTH_1X,
        RDMA_WIDTH_2X,
        RDMA_WIDTH_4X,
        RDMA_WIDTH_8X,
        RDMA_WIDTH_12X,
        _RDMA_WIDTH_MAX,
        _RDMA_WIDTH_INVALID = -EINVAL,
} RdmaWidth;

typedef enum RdmaSpeed {
        RDMA_SPEED_UNKNOWN,
        RDMA_SPEED_SDR,   /*   2.5 Gb/s per lane */
        RDMA_SPEED_DDR,   /*   5   */
        RDMA_SPEED_QDR,   /*  10   */
        RDMA_SPEED_FDR10, /*  10 (the kernel's figure; the signalling rate is 10.3125) */
        RDMA_SPEED_FDR,   /*  14   */
        RDMA_SPEED_EDR,   /*  25   */
        RDMA_SPEED_HDR,   /*  50   */
        RDMA_SPEED_NDR,   /* 100   */
        RDMA_SPEED_XDR,   /* 200   */
        _RDMA_SPEED_MAX,
        _RDMA_SPEED_INVALID = -EINVAL,
} RdmaSpeed;

typedef enum RdmaGidType {
        RDMA_GID_TYPE_UNKNOWN,
        RDMA_GID_TYPE_IB_ROCE_V1, /* "IB/RoCE v1": InfiniBand GIDs and RoCE v1 share one type */
        RDMA_GID_TYPE_ROCE_V2,    /* "RoCE v2": routable, carried in UDP/IP */
        _RDMA_GID_TYPE_MAX,
        _RDMA_GID_TYPE_INVALID = -EINVAL,
} RdmaGidType;

/* What a person calls the port's technology; derived from node type and link layer. */
typedef enum RdmaTransport {
        RDMA_TRANSPORT_UNKNOWN,
        RDMA_TRANSPORT_INFINIBAND,
        RDMA_TRANSPORT_ROCE,
        RDMA_TRANSPORT_IWARP,
        RDMA_TRANSPORT_USNIC,
        _RDMA_TRANSPORT_MAX,
        _RDMA_TRANSPORT_INVALID = -EINVAL,
} RdmaTransport;

/* A port's signalling rate as the kernel computes it: lanes x per-lane rate, in 1/1000 Gb/s so that
 * "2.5" and friends compare exactly. */
typedef struct RdmaRate {
        uint64_t mgbps; /* 0 = unknown */
        RdmaWidth width;
        RdmaSpeed speed;
} RdmaRate;

/* The fields of RdmaPortStatus, as bits: which ones hold a value, which ones differ. */
enum {
        RDMA_PORT_FIELD_STATE = 1u << 0,
        RDMA_PORT_FIELD_PHYS_STATE = 1u << 1,
        RDMA_PORT_FIELD_LINK_LAYER = 1u << 2,
        RDMA_PORT_FIELD_RATE = 1u << 3,
        RDMA_PORT_FIELD_WIDTH = 1u << 4,
        RDMA_PORT_FIELD_SPEED = 1u << 5,
        RDMA_PORT_FIELD_LID = 1u << 6,
        RDMA_PORT_FIELD_SM_LID = 1u << 7,
        RDMA_PORT_FIELD_LMC = 1u << 8,
        RDMA_PORT_FIELD_SM_SL = 1u << 9,
        RDMA_PORT_FIELD_CAP_MASK = 1u << 10,
        _RDMA_PORT_FIELD_ALL = (1u << 11) - 1,
};

/* The live attributes of one port, the same whether they come from sysfs or from ibv_query_port(),
 * so the two sources can be compared field by field. */
typedef struct RdmaPortStatus {
        unsigned known; /* RDMA_PORT_FIELD_* bits of the fields that hold a value */
        RdmaPortState state;
        RdmaPhysState phys_state;
        RdmaLinkLayer link_layer;
        RdmaRate rate;
        uint32_t lid;
        uint32_t sm_lid;
        uint8_t lmc;
        uint8_t sm_sl;
        uint32_t cap_mask;
} RdmaPortStatus;

const char *rdma_node_type_to_string(RdmaNodeType t) _const_;
const char *rdma_port_state_to_string(RdmaPortState s) _const_;
const char *rdma_phys_state_to_string(RdmaPhysState s) _const_;
const char *rdma_link_layer_to_string(RdmaLinkLayer l) _const_;
const char *rdma_width_to_string(RdmaWidth w) _const_;
const char *rdma_speed_to_string(RdmaSpeed s) _const_;
const char *rdma_gid_type_to_string(RdmaGidType t) _const_;
const char *rdma_transport_to_string(RdmaTransport t) _const_;
/* "state", "phys_state", "rate", ... for one RDMA_PORT_FIELD_* bit; NULL for anything else. */
const char *rdma_port_field_to_string(unsigned field) _const_;

RdmaWidth rdma_width_from_string(const char *s) _pure_;
RdmaSpeed rdma_speed_from_string(const char *s) _pure_;

/* Lanes of a width (1, 2, 4, 8, 12; 0 for unknown) and the kernel's per-lane rate of a speed in
 * 1/1000 Gb/s (0 for unknown). */
unsigned rdma_width_lanes(RdmaWidth w) _const_;
uint64_t rdma_speed_lane_mgbps(RdmaSpeed s) _const_;
/* Lanes x per-lane rate, 0 when either is unknown: what the kernel's rate attribute shows. */
uint64_t rdma_rate_mgbps(RdmaSpeed s, RdmaWidth w) _const_;

/* InfiniBand for a CA on an InfiniBand link layer, RoCE for a CA on Ethernet, iWARP for an RNIC. */
RdmaTransport rdma_transport_from(RdmaNodeType node_type, RdmaLinkLayer link_layer) _const_;

/*
 * Parsers of one attribute each, as read by sysfs_read_*() (trailing newline already stripped).
 * They return 0 and write *ret only on success, -EINVAL for anything malformed. A well-formed value
 * the kernel may add later (an unknown number, an unknown speed name) parses as _UNKNOWN instead of
 * failing, so a newer kernel degrades to "unknown" rather than to an error.
 */
/* node_type "1: CA", "4: RNIC", ...: the number decides, the name only has to be there. */
int rdma_parse_node_type(const char *s, RdmaNodeType *ret);
/* state "4: ACTIVE". */
int rdma_parse_port_state(const char *s, RdmaPortState *ret);
/* phys_state "5: LinkUp", "2: Polling". */
int rdma_parse_phys_state(const char *s, RdmaPhysState *ret);
/* link_layer "InfiniBand", "Ethernet", "Unknown". */
int rdma_parse_link_layer(const char *s, RdmaLinkLayer *ret);
/* rate "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)", and the old form without a speed name
 * "10 Gb/sec (4X)", whose speed is inferred from the per-lane rate (QDR, never FDR10, for 10 Gb/s:
 * kernels that omitted the name predate FDR10). A named speed whose rate does not match lanes x
 * per-lane rate is -EINVAL: the kernel computes the figure from the name, so a mismatch is garbage. */
int rdma_parse_rate(const char *s, RdmaRate *ret);
/* node_guid and sys_image_guid "b8ce:f603:00a1:b2c3", to a host-order integer. */
int rdma_parse_guid(const char *s, uint64_t *ret);
/* A GID table entry "fe80:0000:0000:0000:b8ce:f603:00a1:b2c3" (the kernel's %pI6), 16 bytes in
 * network order. The compressed IPv6 form is accepted too. */
int rdma_parse_gid(const char *s, uint8_t ret[static 16]);
/* gid_attrs/types/N "IB/RoCE v1", "RoCE v2". */
int rdma_parse_gid_type(const char *s, RdmaGidType *ret);

/* "b8ce:f603:00a1:b2c3" */
#define RDMA_GUID_STRING_MAX 20
char *rdma_format_guid(uint64_t guid, char buf[static RDMA_GUID_STRING_MAX]);
/* A GID as an IPv6 address ("fe80::b8ce:f603:a1:b2c3", "::ffff:192.168.10.21"). */
#define RDMA_GID_STRING_MAX 46
char *rdma_format_gid(const uint8_t gid[static 16], char buf[static RDMA_GID_STRING_MAX]);
/* "200 Gb/s (4X HDR)", "2.5 Gb/s", "unknown". */
#define RDMA_RATE_STRING_MAX 48
char *rdma_format_rate(const RdmaRate *rate, char buf[static RDMA_RATE_STRING_MAX]);
/* The rate in Gb/s as a double, for RateGbps (0.0 when unknown). */
double rdma_rate_gbps(const RdmaRate *rate) _pure_;

bool rdma_gid_is_zero(const uint8_t gid[static 16]) _pure_;
/* ::ffff:a.b.c.d: the GID of a RoCE IPv4 address. */
bool rdma_gid_is_ipv4_mapped(const uint8_t gid[static 16]) _pure_;
/* fe80::/64: the default GID of every port (the port GUID in the lower half). */
bool rdma_gid_is_link_local(const uint8_t gid[static 16]) _pure_;

/* The RDMA_PORT_FIELD_* bits that both statuses know and in which they differ. */
unsigned rdma_port_status_diff(const RdmaPortStatus *a, const RdmaPortStatus *b) _pure_;
/* "state,rate,width" for a set of field bits ("" for none). Returns 0 or -ENOMEM. */
int rdma_port_fields_to_string(unsigned fields, char **ret);
