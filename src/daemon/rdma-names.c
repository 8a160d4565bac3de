/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "rdma-names.h"
#include "shared/macros.h"
#include "shared/string-table.h"

/* D-Bus spellings: lower-case words for states (as a Link's OperState), the kernel's own words where
 * they are names (4X, HDR), and what a person says for the transport (as a Link's ConnectionType). */
static const char *const port_state_bus[_RDMA_PORT_STATE_MAX] = {
        [RDMA_PORT_STATE_UNKNOWN] = "unknown", [RDMA_PORT_STATE_NOP] = "nop",
        [RDMA_PORT_STATE_DOWN] = "down",       [RDMA_PORT_STATE_INIT] = "init",
        [RDMA_PORT_STATE_ARMED] = "armed",     [RDMA_PORT_STATE_ACTIVE] = "active",
        [RDMA_PORT_STATE_ACTIVE_DEFER] = "active-defer",
};

static const char *const phys_state_bus[_RDMA_PHYS_STATE_MAX] = {
        [RDMA_PHYS_STATE_UNKNOWN] = "unknown",
        [RDMA_PHYS_STATE_SLEEP] = "sleep",
        [RDMA_PHYS_STATE_POLLING] = "polling",
        [RDMA_PHYS_STATE_DISABLED] = "disabled",
        [RDMA_PHYS_STATE_PORT_CONFIGURATION_TRAINING] = "training",
        [RDMA_PHYS_STATE_LINK_UP] = "link-up",
        [RDMA_PHYS_STATE_LINK_ERROR_RECOVERY] = "error-recovery",
        [RDMA_PHYS_STATE_PHY_TEST] = "phy-test",
};

static const char *const link_layer_bus[_RDMA_LINK_LAYER_MAX] = {
        [RDMA_LINK_LAYER_UNKNOWN] = "unknown",
        [RDMA_LINK_LAYER_INFINIBAND] = "infiniband",
        [RDMA_LINK_LAYER_ETHERNET] = "ethernet",
};

static const char *const node_type_bus[_RDMA_NODE_TYPE_MAX] = {
        [RDMA_NODE_TYPE_UNKNOWN] = "unknown",     [RDMA_NODE_TYPE_CA] = "ca",
        [RDMA_NODE_TYPE_SWITCH] = "switch",       [RDMA_NODE_TYPE_ROUTER] = "router",
        [RDMA_NODE_TYPE_RNIC] = "rnic",           [RDMA_NODE_TYPE_USNIC] = "usnic",
        [RDMA_NODE_TYPE_USNIC_UDP] = "usnic-udp", [RDMA_NODE_TYPE_UNSPECIFIED] = "unspecified",
};

static const char *const transport_bus[_RDMA_TRANSPORT_MAX] = {
        [RDMA_TRANSPORT_UNKNOWN] = "Unknown", [RDMA_TRANSPORT_INFINIBAND] = "InfiniBand",
        [RDMA_TRANSPORT_ROCE] = "RoCE",       [RDMA_TRANSPORT_IWARP] = "iWARP",
        [RDMA_TRANSPORT_USNIC] = "usNIC",
};

#define LOOKUP(table, v, fallback) (string_table_lookup_to_string(table, ELEMENTSOF(table), (int) (v)) ?: (fallback))

const char *rdma_port_state_to_bus(RdmaPortState s) {
        return LOOKUP(port_state_bus, s, "unknown");
}

const char *rdma_phys_state_to_bus(RdmaPhysState s) {
        return LOOKUP(phys_state_bus, s, "unknown");
}

const char *rdma_link_layer_to_bus(RdmaLinkLayer l) {
        return LOOKUP(link_layer_bus, l, "unknown");
}

const char *rdma_node_type_to_bus(RdmaNodeType t) {
        return LOOKUP(node_type_bus, t, "unknown");
}

const char *rdma_transport_to_bus(RdmaTransport t) {
        return LOOKUP(transport_bus, t, "Unknown");
}

const char *rdma_width_to_bus(RdmaWidth w) {
        return rdma_width_to_string(w) ?: "unknown";
}

const char *rdma_speed_to_bus(RdmaSpeed s) {
        return rdma_speed_to_string(s) ?: "unknown";
}

const char *rdma_gid_type_to_bus(RdmaGidType t, RdmaTransport transport) {
        switch (t) {
        case RDMA_GID_TYPE_IB_ROCE_V1:
                if (transport == RDMA_TRANSPORT_INFINIBAND)
                        return "ib";
                if (transport == RDMA_TRANSPORT_ROCE)
                        return "roce-v1";
                break;
        case RDMA_GID_TYPE_ROCE_V2:
                return "roce-v2";
        case RDMA_GID_TYPE_UNKNOWN:
        case _RDMA_GID_TYPE_MAX:
        case _RDMA_GID_TYPE_INVALID:
                break;
        }
        return "unknown";
}
