/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-registry.h"
#include "bus-util.h"
#include "health-bus.h"
#include "rdma-bus.h"
#include "rdma-names.h"
#include "rdma.h"
#include "shared/bus-names.h"
#include "shared/string-util.h"

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

/* The neighbour's facts, "" (0) while it is not known. */
static int property_get_remote_type(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        RdmaPort *p = userdata;
        return sd_bus_message_append(reply, "s", p->remote.known ? rdma_node_type_to_bus(p->remote.node_type) : "");
}

static int property_get_best_width(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        RdmaPort *p = userdata;
        return sd_bus_message_append(reply, "s",
                                     p->remote.best_width != RDMA_WIDTH_UNKNOWN ? rdma_width_to_bus(p->remote.best_width) : "");
}

static int property_get_best_speed(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        RdmaPort *p = userdata;
        return sd_bus_message_append(reply, "s",
                                     p->remote.best_speed != RDMA_SPEED_UNKNOWN ? rdma_speed_to_bus(p->remote.best_speed) : "");
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
        SD_BUS_PROPERTY("NetInterface", "o", bus_property_get_object_path, offsetof(RdmaPort, derived.net_interface_path),
                        EMITS),
        SD_BUS_PROPERTY("NetDevices", "as", property_get_netdevs, 0, EMITS),
        SD_BUS_PROPERTY("Gids", "a(usss)", property_get_gids, 0, EMITS),
        SD_BUS_PROPERTY("PciDevice", "o", bus_property_get_object_path, offsetof(RdmaPort, derived.pci_device_path),
                        EMITS),
        SD_BUS_PROPERTY("SymbolErrors", "t", NULL, offsetof(RdmaPort, watch.value[INFINIBAND_SYMBOL_ERROR]), EMITS),
        SD_BUS_PROPERTY("LinkErrorRecoveries", "t", NULL, offsetof(RdmaPort, watch.value[INFINIBAND_LINK_ERROR_RECOVERY]),
                        EMITS),
        SD_BUS_PROPERTY("LinkDowned", "t", NULL, offsetof(RdmaPort, watch.value[INFINIBAND_LINK_DOWNED]), EMITS),
        SD_BUS_PROPERTY("RcvErrors", "t", NULL, offsetof(RdmaPort, watch.value[INFINIBAND_PORT_RCV_ERRORS]), EMITS),
        SD_BUS_PROPERTY("XmitDiscards", "t", NULL, offsetof(RdmaPort, watch.value[INFINIBAND_PORT_XMIT_DISCARDS]), EMITS),
        SD_BUS_PROPERTY("RxGbps", "d", NULL, offsetof(RdmaPort, watch.rx_gbps), EMITS),
        SD_BUS_PROPERTY("TxGbps", "d", NULL, offsetof(RdmaPort, watch.tx_gbps), EMITS),
        SD_BUS_PROPERTY("RemoteNodeGuid", "s", property_get_guid, offsetof(RdmaPort, remote.node_guid), EMITS),
        SD_BUS_PROPERTY("RemoteNodeType", "s", property_get_remote_type, 0, EMITS),
        SD_BUS_PROPERTY("RemoteNodeDescription", "s", bus_property_get_escaped, offsetof(RdmaPort, remote.description),
                        EMITS),
        SD_BUS_PROPERTY("RemotePort", "u", NULL, offsetof(RdmaPort, remote.port), EMITS),
        SD_BUS_PROPERTY("BestWidth", "s", property_get_best_width, 0, EMITS),
        SD_BUS_PROPERTY("BestSpeed", "s", property_get_best_speed, 0, EMITS),
        SD_BUS_PROPERTY("BestRateGbps", "d", NULL, offsetof(RdmaPort, remote.best_gbps), EMITS),
        HEALTH_BUS_DEGRADED_PROPERTIES(RdmaPort, remote), /* the structural fact, which is the verdict's */
        SD_BUS_PROPERTY("Switch", "o", bus_property_get_object_path, offsetof(RdmaPort, derived.switch_path), EMITS),
        HEALTH_BUS_PROPERTIES(RdmaPort, derived.health_state),
        SD_BUS_VTABLE_END,
};

static void *rdma_port_lookup(void *collection, const char *label) {
        Rdma *rdma = collection;
        return table_get(&rdma->ports, label);
}

static const BusKind rdma_port_bus_kind = {
        .prefix = RDMA_PATH_PREFIX,
        .interface = RDMA_PORT_INTERFACE,
        .vtable = rdma_port_vtable,
        .bus_offset = offsetof(RdmaPort, bus),
        .lookup = rdma_port_lookup,
};

int rdma_bus_register(BusRegistry *registry, Rdma *rdma) {
        return bus_registry_add(registry, &rdma_port_bus_kind, &rdma->ports, rdma);
}
