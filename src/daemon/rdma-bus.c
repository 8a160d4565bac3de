/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"
#include "manager.h"
#include "rdma-bus.h"
#include "rdma.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

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

static int property_get_guid(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        uint64_t *guid = userdata;
        char buf[RDMA_GUID_STRING_MAX];
        return sd_bus_message_append(reply, "s", *guid != 0 ? rdma_format_guid(*guid, buf) : "");
}

BUS_DEFINE_PROPERTY_GET_ENUM(property_get_node_type, RdmaNodeType, rdma_node_type_to_bus)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_transport, RdmaTransport, rdma_transport_to_bus)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_state, RdmaPortState, rdma_port_state_to_bus)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_phys_state, RdmaPhysState, rdma_phys_state_to_bus)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_link_layer, RdmaLinkLayer, rdma_link_layer_to_bus)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_width, RdmaWidth, rdma_width_to_bus)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_speed, RdmaSpeed, rdma_speed_to_bus)

static int property_get_rate(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        RdmaPort *p = userdata;
        return sd_bus_message_append(reply, "d", rdma_rate_gbps(&p->status.rate));
}

static int property_get_netdevs(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        RdmaPort *p = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        STRV_FOREACH(name, p->netdevs) {
                r = bus_message_append_escaped(reply, *name);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_gids(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        RdmaPort *p = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(usss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n_gids; i++) {
                _cleanup_(freep) char *netdev = p->gids[i].netdev ? utf8_escape_invalid(p->gids[i].netdev) : NULL;
                char gid[RDMA_GID_STRING_MAX];

                if (p->gids[i].netdev && !netdev)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(usss)", (uint32_t) p->gids[i].index,
                                          rdma_format_gid(p->gids[i].gid, gid),
                                          rdma_gid_type_to_bus(p->gids[i].type, p->transport), strempty(netdev));
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

#define CONST SD_BUS_VTABLE_PROPERTY_CONST
#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static const sd_bus_vtable rdma_port_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Device", "s", bus_property_get_escaped, offsetof(RdmaPort, device), CONST),
        SD_BUS_PROPERTY("Port", "u", NULL, offsetof(RdmaPort, number), CONST),
        SD_BUS_PROPERTY("NodeType", "s", property_get_node_type, offsetof(RdmaPort, node_type), CONST),
        SD_BUS_PROPERTY("NodeGuid", "s", property_get_guid, offsetof(RdmaPort, node_guid), CONST),
        SD_BUS_PROPERTY("SystemImageGuid", "s", property_get_guid, offsetof(RdmaPort, sys_image_guid), CONST),
        SD_BUS_PROPERTY("FirmwareVersion", "s", bus_property_get_escaped, offsetof(RdmaPort, fw_ver), CONST),
        SD_BUS_PROPERTY("HcaType", "s", bus_property_get_escaped, offsetof(RdmaPort, hca_type), CONST),
        SD_BUS_PROPERTY("BoardId", "s", bus_property_get_escaped, offsetof(RdmaPort, board_id), CONST),
        SD_BUS_PROPERTY("Transport", "s", property_get_transport, offsetof(RdmaPort, transport), EMITS),
        SD_BUS_PROPERTY("State", "s", property_get_state, offsetof(RdmaPort, status.state), EMITS),
        SD_BUS_PROPERTY("PhysState", "s", property_get_phys_state, offsetof(RdmaPort, status.phys_state), EMITS),
        SD_BUS_PROPERTY("LinkLayer", "s", property_get_link_layer, offsetof(RdmaPort, status.link_layer), EMITS),
        SD_BUS_PROPERTY("RateGbps", "d", property_get_rate, 0, EMITS),
        SD_BUS_PROPERTY("Width", "s", property_get_width, offsetof(RdmaPort, status.rate.width), EMITS),
        SD_BUS_PROPERTY("Speed", "s", property_get_speed, offsetof(RdmaPort, status.rate.speed), EMITS),
        SD_BUS_PROPERTY("Lid", "u", NULL, offsetof(RdmaPort, status.lid), EMITS),
        SD_BUS_PROPERTY("SmLid", "u", NULL, offsetof(RdmaPort, status.sm_lid), EMITS),
        SD_BUS_PROPERTY("NetInterface", "o", bus_property_get_object_path, offsetof(RdmaPort, net_interface_path),
                        EMITS),
        SD_BUS_PROPERTY("NetDevices", "as", property_get_netdevs, 0, EMITS),
        SD_BUS_PROPERTY("Gids", "a(usss)", property_get_gids, 0, EMITS),
        SD_BUS_VTABLE_END,
};

static void *rdma_port_lookup(Manager *m, const char *label) {
        return table_get(&m->rdma_ports, label);
}

static const BusObjectKind rdma_port_bus_kind = {
        .prefix = RDMA_PATH_PREFIX,
        .interface = RDMA_PORT_INTERFACE,
        .vtable = rdma_port_vtable,
        .table_offset = offsetof(Manager, rdma_ports),
        .bus_offset = offsetof(RdmaPort, bus),
        .lookup = rdma_port_lookup,
};

int rdma_bus_register(Manager *m) {
        return manager_add_bus_kind(m, &rdma_port_bus_kind);
}
