/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"
#include "memory.h"
#include "node-bus.h"
#include "node.h"
#include "shared/bus-names.h"
#include "shared/string-util.h"

/* Packages a(usuau): each package's id, its online CPUs (a CPU list), its cores, its NUMA nodes. */
static int get_packages(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const SysfsCpuTopology *t = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(usuau)");
        for (size_t i = 0; r >= 0 && i < t->n_packages; i++) {
                const SysfsCpuPackage *p = &t->packages[i];
                r = sd_bus_message_open_container(reply, 'r', "usuau");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "usu", p->id, strempty(p->cpus), p->cores);
                if (r >= 0)
                        r = sd_bus_message_append_array(reply, 'u', p->numa_nodes, p->n_numa_nodes * sizeof(uint32_t));
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* NumaNodes a(us): each NUMA node's id and its cpulist as the kernel wrote it. */
static int get_numa_nodes(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const SysfsCpuTopology *t = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(us)");
        for (size_t i = 0; r >= 0 && i < t->n_numa_nodes; i++)
                r = sd_bus_message_append(reply, "(us)", t->numa_nodes[i].id, strempty(t->numa_nodes[i].cpus));
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

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
        SD_BUS_PROPERTY("Packages", "a(usuau)", get_packages, offsetof(Node, topology), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NumaNodes", "a(us)", get_numa_nodes, offsetof(Node, topology), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
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
