/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib-smp.h"
#include "shared/string-util.h"

/* A field of an attribute: width bits from bit offset off, counted from the first byte's most
 * significant bit, as the specification's tables (and libibmad's BITSOFFS) number them. */
static uint64_t bits(const uint8_t *data, unsigned off, unsigned width) {
        uint64_t v = 0;

        for (unsigned i = off; i < off + width; i++)
                v = (v << 1) | ((data[i / 8] >> (7 - i % 8)) & 1);
        return v;
}

static bool single_bit(unsigned v) {
        return v != 0 && (v & (v - 1)) == 0;
}

int ib_smp_parse_node_info(const uint8_t data[static IB_SMP_DATA_SIZE], IbNodeInfo *ret, const char **ret_problem) {
        IbNodeInfo n = {
                .num_ports = bits(data, 24, 8),
                .sys_image_guid = bits(data, 32, 64),
                .node_guid = bits(data, 96, 64),
                .port_guid = bits(data, 160, 64),
                .local_port = bits(data, 288, 8),
        };
        unsigned type = bits(data, 16, 8);
        const char *problem = NULL;

        if (bits(data, 0, 8) != 1)
                problem = "a NodeInfo of another base version than 1";
        else if (type < 1 || type > 3)
                problem = "a NodeInfo with a node type that is neither CA, switch nor router";
        else if (n.num_ports == 0)
                problem = "a NodeInfo with no ports";
        else if (n.local_port > n.num_ports || (n.local_port == 0 && type != 2))
                problem = "a NodeInfo whose local port is not one of its ports";
        else if (n.node_guid == 0)
                problem = "a NodeInfo with a zero node GUID";
        if (problem) {
                if (ret_problem)
                        *ret_problem = problem;
                return -EBADMSG;
        }
        n.node_type = type == 1 ? RDMA_NODE_TYPE_CA : type == 2 ? RDMA_NODE_TYPE_SWITCH : RDMA_NODE_TYPE_ROUTER;
        *ret = n;
        return 0;
}

int ib_smp_parse_node_description(const uint8_t data[static IB_SMP_DATA_SIZE], char **ret) {
        size_t n = strnlen((const char *) data, IB_NODE_DESCRIPTION_MAX);
        char *s;

        while (n > 0 && (data[n - 1] == ' ' || data[n - 1] == '\t'))
                n--;
        /* Not strndup(): 64 bytes without a NUL are a whole description, and nothing past them may be
         * read (ASan's strict string checks say strndup() may). */
        s = malloc(n + 1);
        if (!s)
                return -ENOMEM;
        memcpy(s, data, n);
        s[n] = '\0';
        *ret = s;
        return 0;
}

char *ib_node_description_name(const char *description) {
        const char *name, *end;

        /* "MF0;" then the name up to ':' (the model follows, then "/U1" and the like). */
        if (!description || !startswith(description, "MF0;"))
                return NULL;
        name = description + strlen("MF0;");
        end = strchr(name, ':');
        if (!end || end == name)
                return NULL;
        return strndup(name, (size_t) (end - name));
}

int ib_smp_parse_port_info(const uint8_t data[static IB_SMP_DATA_SIZE], IbPortInfo *ret, const char **ret_problem) {
        IbPortInfo p = {
                .lid = bits(data, 128, 16),
                .sm_lid = bits(data, 144, 16),
                .cap_mask = bits(data, 160, 32),
                .local_port = bits(data, 224, 8),
                .width_enabled = bits(data, 232, 8),
                .width_supported = bits(data, 240, 8),
                .width_active = bits(data, 248, 8),
                .speed_supported = bits(data, 256, 4),
                .lmc = bits(data, 277, 3),
                .speed_active = bits(data, 280, 4),
                .speed_enabled = bits(data, 284, 4),
                .ext2_active = bits(data, 449, 2),
                .ext2_supported = bits(data, 451, 2),
                .ext2_enabled = bits(data, 453, 3),
                .cap_mask2 = bits(data, 480, 16),
                .ext_active = bits(data, 496, 4),
                .ext_supported = bits(data, 500, 4),
                .ext_enabled = bits(data, 507, 5),
        };
        unsigned state = bits(data, 260, 4), phys = bits(data, 264, 4);
        const char *problem = NULL;

        if (state < 1 || state > 5)
                problem = "a PortInfo with a port state outside 1-5";
        else if (phys < 1 || phys > 7)
                problem = "a PortInfo with a physical state outside 1-7";
        else if (phys == RDMA_PHYS_STATE_LINK_UP) {
                if (!single_bit(p.width_active) || (p.width_active & ~0x1fu) != 0)
                        problem = "a PortInfo whose active width is not one width";
                else if ((p.width_supported & p.width_active) == 0)
                        problem = "a PortInfo whose active width is not among its supported widths";
                else if (p.ext2_active > 1)
                        problem = "a PortInfo with an active extended speed 2 other than XDR";
                else if (p.ext_active != 0 && (!single_bit(p.ext_active) || p.ext_active > 8))
                        problem = "a PortInfo whose active extended speed is not one speed";
                else if (p.ext_active == 0 && p.ext2_active == 0 && (!single_bit(p.speed_active) || p.speed_active > 4))
                        problem = "a PortInfo whose active speed is not one of SDR, DDR, QDR";
        }
        if (problem) {
                if (ret_problem)
                        *ret_problem = problem;
                return -EBADMSG;
        }
        /* The enums are the specification's numbers plus one (0 is our "unknown"). */
        p.state = (RdmaPortState) (state + 1);
        p.phys_state = (RdmaPhysState) phys;
        *ret = p;
        return 0;
}

static RdmaWidth width_from_bit(unsigned bit) {
        switch (bit) {
        case IB_WIDTH_1X:
                return RDMA_WIDTH_1X;
        case IB_WIDTH_2X:
                return RDMA_WIDTH_2X;
        case IB_WIDTH_4X:
                return RDMA_WIDTH_4X;
        case IB_WIDTH_8X:
                return RDMA_WIDTH_8X;
        case IB_WIDTH_12X:
                return RDMA_WIDTH_12X;
        }
        return RDMA_WIDTH_UNKNOWN;
}

/* The widest width in a set; 2X (a later addition, numbered after 12X) ranks between 1X and 4X. */
static RdmaWidth widest(unsigned set) {
        static const unsigned order[] = { IB_WIDTH_12X, IB_WIDTH_8X, IB_WIDTH_4X, IB_WIDTH_2X, IB_WIDTH_1X };

        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if (set & order[i])
                        return width_from_bit(order[i]);
        return RDMA_WIDTH_UNKNOWN;
}

static RdmaSpeed fastest_ext(unsigned set) {
        if (set & IB_EXT_XDR)
                return RDMA_SPEED_XDR;
        if (set & IB_EXT_NDR)
                return RDMA_SPEED_NDR;
        if (set & IB_EXT_HDR)
                return RDMA_SPEED_HDR;
        if (set & IB_EXT_EDR)
                return RDMA_SPEED_EDR;
        if (set & IB_EXT_FDR)
                return RDMA_SPEED_FDR;
        return RDMA_SPEED_UNKNOWN;
}

static RdmaSpeed fastest_basic(unsigned set) {
        if (set & 4)
                return RDMA_SPEED_QDR;
        if (set & 2)
                return RDMA_SPEED_DDR;
        if (set & 1)
                return RDMA_SPEED_SDR;
        return RDMA_SPEED_UNKNOWN;
}

RdmaWidth ib_port_active_width(const IbPortInfo *p) {
        return width_from_bit(p->width_active);
}

RdmaSpeed ib_port_active_speed(const IbPortInfo *p) {
        if (p->ext2_active & 1)
                return RDMA_SPEED_XDR;
        if (p->ext_active != 0)
                return fastest_ext(p->ext_active);
        return fastest_basic(p->speed_active);
}

unsigned ib_port_ext_speeds(const IbPortInfo *p, const IbPortInfo *cap) {
        unsigned set;

        if (!(cap->cap_mask & IB_PORT_CAP_HAS_EXT_SPEEDS))
                return 0;
        set = p->ext_supported & 0x0f;
        if ((cap->cap_mask & IB_PORT_CAP_HAS_CAP_MASK2) && (cap->cap_mask2 & IB_PORT_CAP2_EXT_SPEEDS_2))
                set |= (unsigned) (p->ext2_supported & 1) << 5;
        return set;
}

static void reason_append(IbLinkJudgement *j, const char *active, const char *best) {
        size_t n = strlen(j->reason);

        snprintf(j->reason + n, sizeof(j->reason) - n, "%s%s while both ends support %s", n > 0 ? "; " : "", active,
                 best);
}

void ib_link_judge(const IbPortInfo *local, const IbPortInfo *local_cap, const IbPortInfo *remote,
                   const IbPortInfo *remote_cap, IbLinkJudgement *ret) {
        unsigned ext_local = ib_port_ext_speeds(local, local_cap), ext_remote = ib_port_ext_speeds(remote, remote_cap);
        IbLinkJudgement j = {
                .active_width = ib_port_active_width(local),
                .active_speed = ib_port_active_speed(local),
                .best_width = widest(local->width_supported & remote->width_supported),
        };

        /* iblinkinfo's rule: the extended speeds decide when both ends have them, else SDR..QDR. */
        if (ext_local != 0 && ext_remote != 0)
                j.best_speed = fastest_ext(ext_local & ext_remote);
        else
                j.best_speed = fastest_basic(local->speed_supported & remote->speed_supported);
        j.best_mgbps = rdma_rate_mgbps(j.best_speed, j.best_width);

        if (local->phys_state == RDMA_PHYS_STATE_LINK_UP && remote->phys_state == RDMA_PHYS_STATE_LINK_UP) {
                if (j.best_width != RDMA_WIDTH_UNKNOWN && j.active_width != j.best_width) {
                        j.degraded = true;
                        reason_append(&j, rdma_width_to_string(j.active_width), rdma_width_to_string(j.best_width));
                }
                /* RdmaSpeed is ordered by rate (FDR10 aside, which is never read here). */
                if (j.best_speed != RDMA_SPEED_UNKNOWN && j.active_speed < j.best_speed) {
                        j.degraded = true;
                        reason_append(&j, rdma_speed_to_string(j.active_speed), rdma_speed_to_string(j.best_speed));
                }
        }
        *ret = j;
}
