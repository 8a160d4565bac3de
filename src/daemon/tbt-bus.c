/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>

#include "bus-registry.h"
#include "bus-util.h"
#include "health-bus.h"
#include "shared/bus-names.h"
#include "shared/string-util.h"
#include "tbt-bus.h"
#include "tbt.h"

#define DEFINE_GETTER(name, signature, expr)                                                                  \
        static int property_get_##name(sd_bus *bus, const char *path, const char *interface,                  \
                                       const char *property, sd_bus_message *reply, void *userdata,           \
                                       sd_bus_error *error) {                                                 \
                const TbtObject *o = userdata;                                                                \
                const TbtDevice *d = o->device;                                                               \
                (void) d;                                                                                     \
                return sd_bus_message_append(reply, signature, expr);                                         \
        }

BUS_DEFINE_PROPERTY_GET_ENUM(property_get_type, TbtNodeType, tbt_node_type_to_string)

/* Unknown strings are empty, unknown numbers 0, missing objects "/" (see org.linkprobe.LinkProbe1(5)). */
DEFINE_GETTER(name, "s", strempty(d->device_name))
DEFINE_GETTER(vendor, "s", strempty(d->vendor_name))
DEFINE_GETTER(vendor_id, "u", d->has_vendor_id ? d->vendor_id : 0)
DEFINE_GETTER(device_id, "u", d->has_device_id ? d->device_id : 0)
DEFINE_GETTER(unique_id, "s", strempty(d->unique_id))
DEFINE_GETTER(nvm_version, "s", strempty(d->nvm_version))
DEFINE_GETTER(generation, "u", d->kind == TBT_KIND_ROUTER ? d->generation : 0)
DEFINE_GETTER(authorized, "s", d->kind == TBT_KIND_ROUTER ? strempty(tbt_authorized_to_string(d->authorized)) : "")
DEFINE_GETTER(security_level, "s", d->kind == TBT_KIND_DOMAIN ? strempty(tbt_security_to_string(d->security)) : "")
DEFINE_GETTER(rx_lanes, "u", d->rx.lanes)
DEFINE_GETTER(tx_lanes, "u", d->tx.lanes)
DEFINE_GETTER(rx_lane_gbps, "u", d->rx.lane_gbps)
DEFINE_GETTER(tx_lane_gbps, "u", d->tx.lane_gbps)
DEFINE_GETTER(link_class, "s", o->has_link ? strempty(tbt_link_class_to_string(o->link_class)) : "")

static int property_get_route(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const TbtObject *o = userdata;
        const TbtDevice *d = o->device;
        char route[32] = "";

        /* The hex route as the kernel writes it in the name ("0-301" is route 301). */
        if (d->has_route && (d->kind == TBT_KIND_ROUTER || d->kind == TBT_KIND_PEER))
                snprintf(route, sizeof(route), "%" PRIx64, d->route);
        return sd_bus_message_append(reply, "s", route);
}

#define CONST SD_BUS_VTABLE_PROPERTY_CONST
#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static const sd_bus_vtable tbt_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("SysfsName", "s", bus_property_get_string, offsetof(TbtObject, sysname_utf8), CONST),
        SD_BUS_PROPERTY("Type", "s", property_get_type, offsetof(TbtObject, type), EMITS),
        SD_BUS_PROPERTY("Name", "s", property_get_name, 0, EMITS),
        SD_BUS_PROPERTY("Vendor", "s", property_get_vendor, 0, EMITS),
        SD_BUS_PROPERTY("VendorId", "u", property_get_vendor_id, 0, CONST),
        SD_BUS_PROPERTY("DeviceId", "u", property_get_device_id, 0, CONST),
        SD_BUS_PROPERTY("UniqueId", "s", property_get_unique_id, 0, CONST),
        SD_BUS_PROPERTY("NvmVersion", "s", property_get_nvm_version, 0, EMITS),
        SD_BUS_PROPERTY("Generation", "u", property_get_generation, 0, CONST),
        SD_BUS_PROPERTY("Usb4Version", "u", NULL, offsetof(TbtObject, usb4_version), EMITS),
        SD_BUS_PROPERTY("Authorized", "s", property_get_authorized, 0, EMITS),
        SD_BUS_PROPERTY("SecurityLevel", "s", property_get_security_level, 0, EMITS),
        SD_BUS_PROPERTY("Parent", "o", bus_property_get_object_path, offsetof(TbtObject, parent_path), EMITS),
        SD_BUS_PROPERTY("Depth", "i", NULL, offsetof(TbtObject, depth), EMITS),
        SD_BUS_PROPERTY("Route", "s", property_get_route, 0, CONST),
        SD_BUS_PROPERTY("RxLanes", "u", property_get_rx_lanes, 0, EMITS),
        SD_BUS_PROPERTY("TxLanes", "u", property_get_tx_lanes, 0, EMITS),
        SD_BUS_PROPERTY("RxLaneGbps", "u", property_get_rx_lane_gbps, 0, EMITS),
        SD_BUS_PROPERTY("TxLaneGbps", "u", property_get_tx_lane_gbps, 0, EMITS),
        SD_BUS_PROPERTY("RxGbps", "u", NULL, offsetof(TbtObject, rx_gbps), EMITS),
        SD_BUS_PROPERTY("TxGbps", "u", NULL, offsetof(TbtObject, tx_gbps), EMITS),
        SD_BUS_PROPERTY("LinkClass", "s", property_get_link_class, 0, EMITS),
        SD_BUS_PROPERTY("PathRxGbps", "u", NULL, offsetof(TbtObject, path_rx_gbps), EMITS),
        SD_BUS_PROPERTY("PathTxGbps", "u", NULL, offsetof(TbtObject, path_tx_gbps), EMITS),
        HEALTH_BUS_DEGRADED_PROPERTIES(TbtObject, derived.health_state),
        SD_BUS_PROPERTY("NetInterface", "o", bus_property_get_object_path, offsetof(TbtObject, derived.net_interface_path),
                        EMITS),
        SD_BUS_PROPERTY("Services", "as", bus_property_get_strv, offsetof(TbtObject, services), EMITS),
        SD_BUS_PROPERTY("Problems", "as", bus_property_get_strv, offsetof(TbtObject, problems), EMITS),
        SD_BUS_PROPERTY("PciDevice", "o", bus_property_get_object_path, offsetof(TbtObject, derived.pci_device_path),
                        EMITS),
        SD_BUS_PROPERTY("PathLimitGbps", "d", NULL, offsetof(TbtObject, derived.path_limit_gbps), EMITS),
        SD_BUS_PROPERTY("PathLimitedBy", "s", bus_property_get_string, offsetof(TbtObject, derived.path_limited_by),
                        EMITS),
        SD_BUS_PROPERTY("LinkChanges", "u", NULL, offsetof(TbtObject, link_changes.count), EMITS),
        HEALTH_BUS_PROPERTIES(TbtObject, derived.health_state),
        SD_BUS_VTABLE_END,
};

static void *tbt_lookup(void *collection, const char *label) {
        Thunderbolt *tbt = collection;
        return table_get(&tbt->objects, label);
}

static const BusKind tbt_bus_kind = {
        .prefix = TBT_PATH_PREFIX,
        .interface = TBT_INTERFACE,
        .vtable = tbt_vtable,
        .bus_offset = offsetof(TbtObject, bus),
        .lookup = tbt_lookup,
};

int tbt_bus_register(BusRegistry *registry, Thunderbolt *tbt) {
        return bus_registry_add(registry, &tbt_bus_kind, &tbt->objects, tbt);
}
