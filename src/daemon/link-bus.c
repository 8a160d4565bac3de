/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/if.h>

#include "bus-registry.h"
#include "bus-util.h"
#include "health-bus.h"
#include "link-bus.h"
#include "link.h"
#include "shared/bus-names.h"
#include "shared/parse-util.h"

static int property_get_name_bytes(sd_bus *bus, const char *path, const char *interface,
                                   const char *property, sd_bus_message *reply, void *userdata,
                                   sd_bus_error *error) {
        Link *l = userdata;
        return sd_bus_message_append_array(reply, 'y', strempty(l->name), strlen(strempty(l->name)));
}

BUS_DEFINE_PROPERTY_GET_ENUM(property_get_kind, LinkKind, link_kind_to_string)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_connection_type, ConnectionType, connection_type_to_string)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_operstate, uint8_t, link_operstate_to_string)

/* The getters append with sd_bus_message_append_basic(), never a format string, and what is valid UTF-8
 * by construction without sd-bus checking it again: GetManagedObjects calls them for every link. */
static int property_get_admin_state(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error) {
        Link *l = userdata;
        return bus_message_append_valid_string(reply, (l->flags & IFF_UP) ? "up" : "down");
}

static int property_get_carrier(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Link *l = userdata;
        int carrier = !!(l->flags & IFF_LOWER_UP);
        return sd_bus_message_append_basic(reply, 'b', &carrier);
}

/* Duplex is "full" or "half" (sysfs_net_read() takes nothing else) or unknown. */
static int property_get_duplex(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Link *l = userdata;
        return bus_message_append_valid_string(reply, l->duplex ?: "unknown");
}

static int property_get_addresses(sd_bus *bus, const char *path, const char *interface,
                                  const char *property, sd_bus_message *reply, void *userdata,
                                  sd_bus_error *error) {
        Link *l = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(suss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < l->addrs.n_addresses; i++) {
                const LinkAddress *a = &l->addrs.addresses[i];
                uint32_t prefixlen = a->prefixlen;

                /* Every string here was made when the address arrived (address_from_netlink()). */
                r = sd_bus_message_open_container(reply, 'r', "suss");
                if (r >= 0)
                        r = bus_message_append_valid_string(reply, a->text);
                if (r >= 0)
                        r = sd_bus_message_append_basic(reply, 'u', &prefixlen);
                if (r >= 0)
                        r = bus_message_append_valid_string(reply, a->scope_text);
                if (r >= 0)
                        r = bus_message_append_valid_string(reply, address_class_to_string(a->class));
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_lldp_partner_speeds(sd_bus *bus, const char *path, const char *interface,
                                            const char *property, sd_bus_message *reply, void *userdata,
                                            sd_bus_error *error) {
        Link *l = userdata;
        return sd_bus_message_append_array(reply, 'u', l->derived.lldp_partner_speeds_mbps,
                                           l->derived.n_lldp_partner_speeds * sizeof(uint32_t));
}

/* Both ends' speeds (derive-link.c, link-capability.c), ascending, in Mb/s as SpeedMbps. */
static int property_get_supported_speeds(sd_bus *bus, const char *path, const char *interface,
                                         const char *property, sd_bus_message *reply, void *userdata,
                                         sd_bus_error *error) {
        const LinkCapability *c = &((Link *) userdata)->derived.capability;
        return sd_bus_message_append_array(reply, 'u', c->supported_speeds, c->n_supported * sizeof(uint32_t));
}

static int property_get_partner_speeds(sd_bus *bus, const char *path, const char *interface,
                                       const char *property, sd_bus_message *reply, void *userdata,
                                       sd_bus_error *error) {
        const LinkCapability *c = &((Link *) userdata)->derived.capability;
        return sd_bus_message_append_array(reply, 'u', c->partner_speeds, c->n_partner * sizeof(uint32_t));
}

static const sd_bus_vtable link_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Index", "i", NULL, offsetof(Link, ifindex), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Name", "s", bus_property_get_valid_string, offsetof(Link, name_utf8), /* escaped */
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NameBytes", "ay", property_get_name_bytes, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Kind", "s", property_get_kind, offsetof(Link, kind),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ConnectionType", "s", property_get_connection_type, offsetof(Link, derived.connection_type),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("OperState", "s", property_get_operstate, offsetof(Link, operstate),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("AdminState", "s", property_get_admin_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Carrier", "b", property_get_carrier, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("CarrierChanges", "u", NULL, offsetof(Link, carrier_changes),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Mtu", "u", NULL, offsetof(Link, mtu), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("HardwareAddress", "s", bus_property_get_valid_string, offsetof(Link, hw_address), /* hex */
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("SpeedMbps", "u", NULL, offsetof(Link, derived.speed_mbps), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Duplex", "s", property_get_duplex, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Driver", "s", bus_property_get_string, offsetof(Link, driver),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Addresses", "a(suss)", property_get_addresses, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ThunderboltPeer", "o", bus_property_get_object_path,
                        offsetof(Link, derived.thunderbolt_peer_path), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RdmaPort", "o", bus_property_get_object_path, offsetof(Link, derived.rdma_port_path),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("PciDevice", "o", bus_property_get_object_path, offsetof(Link, derived.pci_device_path),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RxGbps", "d", NULL, offsetof(Link, watch.rx_gbps), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("TxGbps", "d", NULL, offsetof(Link, watch.tx_gbps), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RxErrors", "t", NULL, offsetof(Link, watch.now.rx_errors), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("TxErrors", "t", NULL, offsetof(Link, watch.now.tx_errors), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RxCrcErrors", "t", NULL, offsetof(Link, watch.now.rx_crc_errors),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RxDropped", "t", NULL, offsetof(Link, watch.now.rx_dropped), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("SupportedSpeedsMbps", "au", property_get_supported_speeds, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("PartnerSpeedsMbps", "au", property_get_partner_speeds, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("BestCommonSpeedMbps", "u", NULL, offsetof(Link, derived.capability.best_common_mbps),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        HEALTH_BUS_DEGRADED_PROPERTIES(Link, derived.health_state),
        SD_BUS_PROPERTY("LinkDownReason", "s", bus_property_get_valid_string,
                        offsetof(Link, derived.capability.link_down_reason), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        HEALTH_BUS_PROPERTIES(Link, derived.health_state),
        SD_BUS_PROPERTY("Switch", "o", bus_property_get_object_path, offsetof(Link, derived.switch_path),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LldpPartnerSpeedsMbps", "au", property_get_lldp_partner_speeds, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LldpWarning", "s", bus_property_get_escaped, offsetof(Link, lldp_warning),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END,
};

static void *link_lookup(void *collection, const char *label) {
        int ifindex;
        return parse_int(label, &ifindex) >= 0 && ifindex > 0 ? link_get(collection, ifindex) : NULL;
}

static const BusKind link_bus_kind = {
        .prefix = LINK_PATH_PREFIX,
        .interface = LINK_INTERFACE,
        .vtable = link_vtable,
        .bus_offset = offsetof(Link, bus),
        .lookup = link_lookup,
};

int link_bus_register(BusRegistry *registry, Links *links) {
        return bus_registry_add(registry, &link_bus_kind, &links->table, links);
}
