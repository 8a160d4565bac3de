/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"
#include "memory.h"
#include "node-bus.h"
#include "node.h"
#include "shared/bus-names.h"

static const sd_bus_vtable node_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Hostname", "s", bus_property_get_string, offsetof(Node, hostname),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("MachineId", "s", bus_property_get_string, offsetof(Node, machine_id),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("BootId", "s", bus_property_get_string, offsetof(Node, boot_id), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("KernelRelease", "s", bus_property_get_string, offsetof(Node, kernel_release),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Architecture", "s", bus_property_get_string, offsetof(Node, architecture),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CpuModel", "s", bus_property_get_string, offsetof(Node, cpu_model),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CpuCount", "u", NULL, offsetof(Node, cpu_count), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("NodeId", "s", bus_property_get_string, offsetof(Node, node_id), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ThunderboltHostUuids", "as", bus_property_get_strv, offsetof(Node, derived.thunderbolt_host_uuids),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RdmaNodeGuids", "as", bus_property_get_strv, offsetof(Node, derived.rdma_node_guids),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("HardwareAddresses", "as", bus_property_get_strv, offsetof(Node, derived.hardware_addresses),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable memory_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("TotalBytes", "t", NULL, offsetof(Memory, total_bytes), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("AvailableBytes", "t", NULL, offsetof(Memory, available_bytes),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END,
};

int node_bus_register(sd_bus *bus, Node *n, Memory *mem) {
        int r;

        r = sd_bus_add_object_vtable(bus, NULL, BUS_PATH, NODE_INTERFACE, node_vtable, n);
        if (r < 0)
                return r;
        return sd_bus_add_object_vtable(bus, NULL, BUS_PATH, MEMORY_INTERFACE, memory_vtable, mem);
}
