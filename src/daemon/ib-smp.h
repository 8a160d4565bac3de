/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ib-smp.h — the subnet management answers about an InfiniBand port and its neighbour (NodeInfo, NodeDescription, PortInfo) decoded, and the best width and speed both ends support */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shared/macros.h"
#include "sysfs/infiniband-parse.h"

/*
 * Pure logic, no D-Bus, no MADs sent: rdma-mad.c asks, this file reads the 64-byte attribute payloads
 * (IBA 1.7 vol. 1, 14.2.5: NodeInfo, NodeDescription, PortInfo) bit by bit, so a neighbour's answer is
 * checked before anything of it is believed, and the judgement is the one iblinkinfo prints as
 * "Could be": the widest width and the fastest speed in both ends' supported sets.
 */

#define IB_SMP_DATA_SIZE 64
#define IB_NODE_DESCRIPTION_MAX 64

/* PortInfo:CapabilityMask bits that change how the speed fields are read. */
#define IB_PORT_CAP_HAS_EXT_SPEEDS 0x00004000u
#define IB_PORT_CAP_HAS_CAP_MASK2 0x00008000u
/* PortInfo:CapabilityMask2: LinkSpeedExt*2 (XDR) are valid. */
#define IB_PORT_CAP2_EXT_SPEEDS_2 0x0800u

/* LinkWidth* bits. */
enum {
        IB_WIDTH_1X = 0x01,
        IB_WIDTH_4X = 0x02,
        IB_WIDTH_8X = 0x04,
        IB_WIDTH_12X = 0x08,
        IB_WIDTH_2X = 0x10,
};

typedef struct IbNodeInfo {
        RdmaNodeType node_type; /* CA, switch or router: the only types an SMA may answer */
        unsigned num_ports;
        uint64_t sys_image_guid;
        uint64_t node_guid;
        uint64_t port_guid;
        unsigned local_port; /* the port the query came in through */
} IbNodeInfo;

typedef struct IbPortInfo {
        uint32_t cap_mask;
        uint16_t cap_mask2;
        uint16_t lid, sm_lid;
        uint8_t lmc;
        unsigned local_port;
        RdmaPortState state;
        RdmaPhysState phys_state;
        uint8_t width_enabled, width_supported, width_active;
        uint8_t speed_enabled, speed_supported, speed_active;    /* SDR 1, DDR 2, QDR 4 */
        uint8_t ext_enabled, ext_supported, ext_active;          /* FDR 1, EDR 2, HDR 4, NDR 8 */
        uint8_t ext2_enabled, ext2_supported, ext2_active;       /* XDR 1 */
} IbPortInfo;

/* The aggregated extended speeds, as libibnetdisc numbers them: FDR..NDR in bits 0-3, XDR in bit 5. */
enum {
        IB_EXT_FDR = 0x01,
        IB_EXT_EDR = 0x02,
        IB_EXT_HDR = 0x04,
        IB_EXT_NDR = 0x08,
        IB_EXT_XDR = 0x20,
};

/**
 * ib_smp_parse_node_info() - decode and check a NodeInfo answer
 * @data: the attribute payload (network byte order)
 * @ret: the decoded values
 * @ret_problem: what is wrong with an answer that is refused (a constant string)
 *
 * Return: 0, or -EBADMSG for a version, node type, port count or GUID no SMA can send.
 */
int ib_smp_parse_node_info(const uint8_t data[static IB_SMP_DATA_SIZE], IbNodeInfo *ret, const char **ret_problem);

/**
 * ib_smp_parse_node_description() - the NodeDescription as text
 * @data: the payload: up to 64 bytes, NUL-padded
 * @ret: the bytes before the first NUL (any other bytes kept: escape before publishing), trailing
 *       blanks removed; to be freed
 *
 * Return: 0 or -ENOMEM.
 */
int ib_smp_parse_node_description(const uint8_t data[static IB_SMP_DATA_SIZE], char **ret);

/* The name an NVIDIA/Mellanox switch's owners gave it, from its NodeDescription "MF0;NAME:MODEL/U1"
 * (NAME); NULL for a description of another shape, or out of memory. */
char *ib_node_description_name(const char *description);

/**
 * ib_smp_parse_port_info() - decode and check a PortInfo answer
 * @data: the attribute payload
 * @ret: the decoded values
 * @ret_problem: why an answer is refused
 *
 * The rate fields are checked only for a port whose link is up: a port that is down may leave
 * anything in its active fields.
 *
 * Return: 0, or -EBADMSG for a state, a width or a speed outside the specification.
 */
int ib_smp_parse_port_info(const uint8_t data[static IB_SMP_DATA_SIZE], IbPortInfo *ret, const char **ret_problem);

/* The port's active width and speed (XDR, then the extended speeds, then SDR..QDR). */
RdmaWidth ib_port_active_width(const IbPortInfo *p) _pure_;
RdmaSpeed ib_port_active_speed(const IbPortInfo *p) _pure_;

/**
 * ib_port_ext_speeds() - the aggregated extended speeds a port supports (IB_EXT_* bits)
 * @p: the port's PortInfo
 * @cap: the PortInfo whose capability masks count: the port itself, or port 0 of a switch (a switch's
 *       external ports do not carry the mask)
 */
unsigned ib_port_ext_speeds(const IbPortInfo *p, const IbPortInfo *cap) _pure_;

typedef struct IbLinkJudgement {
        RdmaWidth active_width, best_width;
        RdmaSpeed active_speed, best_speed;
        uint64_t best_mgbps; /* best_width x best_speed as the kernel computes a rate; 0 unknown */
        bool degraded;
        char reason[96]; /* "1X while both ends support 4X; EDR while both ends support HDR"; "" */
} IbLinkJudgement;

/**
 * ib_link_judge() - the best both ends of a link support, and whether it trained below that
 * @local: our port's PortInfo
 * @local_cap: the PortInfo holding our port's capability masks (the same port on a CA)
 * @remote: the neighbour's port's PortInfo
 * @remote_cap: the neighbour's capability masks (port 0 on a switch)
 * @ret: the judgement
 *
 * As iblinkinfo's "Could be": the widest width in both supported sets; the fastest extended speed
 * both support when both have extended speeds, else the fastest of SDR, DDR, QDR both support. A link
 * that is not up is never degraded. FDR10 is Mellanox's vendor attribute, not asked: an FDR10 link
 * reads as QDR both ways and is not judged by it.
 */
void ib_link_judge(const IbPortInfo *local, const IbPortInfo *local_cap, const IbPortInfo *remote,
                   const IbPortInfo *remote_cap, IbLinkJudgement *ret);
