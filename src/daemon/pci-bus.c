/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-registry.h"
#include "bus-util.h"
#include "health-bus.h"
#include "manager.h"
#include "pci-bus.h"
#include "pci.h"
#include "shared/bus-names.h"

#define DEFINE_GETTER(name, signature, expr)                                                                  \
        static int property_get_##name(sd_bus *bus, const char *path, const char *interface,                  \
                                       const char *property, sd_bus_message *reply, void *userdata,           \
                                       sd_bus_error *error) {                                                 \
                const PciObject *o = userdata;                                                                \
                const PciDevice *d = o->device;                                                               \
                (void) d;                                                                                     \
                return sd_bus_message_append(reply, signature, expr);                                         \
        }

/* Unknown strings are empty, unknown numbers 0, the NUMA node -1 (see org.linkprobe.LinkProbe1(5)). */
DEFINE_GETTER(vendor_id, "u", d->has_vendor_id ? d->vendor_id : 0)
DEFINE_GETTER(device_id, "u", d->has_device_id ? d->device_id : 0)
DEFINE_GETTER(subsystem_vendor_id, "u", d->has_subsystem ? d->subsystem_vendor_id : 0)
DEFINE_GETTER(subsystem_device_id, "u", d->has_subsystem ? d->subsystem_device_id : 0)
DEFINE_GETTER(class, "u", d->has_class ? d->class_code : 0)
DEFINE_GETTER(driver, "s", strempty(d->driver))
DEFINE_GETTER(numa_node, "i", d->numa_node)
DEFINE_GETTER(local_cpus, "s", strempty(d->local_cpus))
DEFINE_GETTER(current_speed, "d", d->current.gts)
DEFINE_GETTER(current_generation, "u", d->current.generation)
DEFINE_GETTER(current_width, "u", d->current.width)
DEFINE_GETTER(max_speed, "d", d->max.gts)
DEFINE_GETTER(max_generation, "u", d->max.generation)
DEFINE_GETTER(max_width, "u", d->max.width)
DEFINE_GETTER(port_type, "s", strempty(pci_port_type_to_string(o->derived.type)))

static int property_get_gpu_links(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const PciObject *o = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ossuudd)");
        for (size_t i = 0; r >= 0 && i < o->derived.n_gpu_links; i++) {
                const PciGpuLink *l = &o->derived.gpu_links[i];
                r = sd_bus_message_append(reply, "(ossuudd)", l->peer_path ?: "/", l->peer_address, l->type,
                                          (uint32_t) l->count, l->weight, l->min_gbytes, l->max_gbytes);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

#define CONST SD_BUS_VTABLE_PROPERTY_CONST
#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static const sd_bus_vtable pci_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Address", "s", bus_property_get_string, offsetof(PciObject, address), CONST),
        SD_BUS_PROPERTY("VendorId", "u", property_get_vendor_id, 0, CONST),
        SD_BUS_PROPERTY("DeviceId", "u", property_get_device_id, 0, CONST),
        SD_BUS_PROPERTY("SubsystemVendorId", "u", property_get_subsystem_vendor_id, 0, CONST),
        SD_BUS_PROPERTY("SubsystemDeviceId", "u", property_get_subsystem_device_id, 0, CONST),
        SD_BUS_PROPERTY("Class", "u", property_get_class, 0, CONST),
        SD_BUS_PROPERTY("Name", "s", bus_property_get_string, offsetof(PciObject, name), CONST),
        SD_BUS_PROPERTY("Driver", "s", property_get_driver, 0, EMITS),
        SD_BUS_PROPERTY("NumaNode", "i", property_get_numa_node, 0, EMITS),
        SD_BUS_PROPERTY("LocalCpus", "s", property_get_local_cpus, 0, EMITS),
        SD_BUS_PROPERTY("PortType", "s", property_get_port_type, 0, EMITS),
        SD_BUS_PROPERTY("CurrentLinkSpeed", "d", property_get_current_speed, 0, EMITS),
        SD_BUS_PROPERTY("CurrentLinkGeneration", "u", property_get_current_generation, 0, EMITS),
        SD_BUS_PROPERTY("CurrentLinkWidth", "u", property_get_current_width, 0, EMITS),
        SD_BUS_PROPERTY("MaxLinkSpeed", "d", property_get_max_speed, 0, EMITS),
        SD_BUS_PROPERTY("MaxLinkGeneration", "u", property_get_max_generation, 0, EMITS),
        SD_BUS_PROPERTY("MaxLinkWidth", "u", property_get_max_width, 0, EMITS),
        SD_BUS_PROPERTY("Gbps", "d", NULL, offsetof(PciObject, derived.gbps), EMITS),
        HEALTH_BUS_DEGRADED_PROPERTIES(PciObject, derived.health_state),
        SD_BUS_PROPERTY("Parent", "o", bus_property_get_object_path, offsetof(PciObject, derived.parent_path), EMITS),
        SD_BUS_PROPERTY("PathGbps", "d", NULL, offsetof(PciObject, derived.path_gbps), EMITS),
        SD_BUS_PROPERTY("PathLimitedBy", "s", bus_property_get_string, offsetof(PciObject, derived.path_limit), EMITS),
        SD_BUS_PROPERTY("GpuLinks", "a(ossuudd)", property_get_gpu_links, 0, EMITS),
        SD_BUS_PROPERTY("Problems", "as", bus_property_get_strv, offsetof(PciObject, derived.problems), EMITS),
        SD_BUS_PROPERTY("LinkChanges", "u", NULL, offsetof(PciObject, watch.link_changes), EMITS),
        SD_BUS_PROPERTY("LastLinkChangeAt", "t", NULL, offsetof(PciObject, watch.last_change_at), EMITS),
        SD_BUS_PROPERTY("AerCorrectable", "t", NULL, offsetof(PciObject, watch.aer[PCI_AER_CORRECTABLE]), EMITS),
        SD_BUS_PROPERTY("AerNonFatal", "t", NULL, offsetof(PciObject, watch.aer[PCI_AER_NONFATAL]), EMITS),
        SD_BUS_PROPERTY("AerFatal", "t", NULL, offsetof(PciObject, watch.aer[PCI_AER_FATAL]), EMITS),
        HEALTH_BUS_PROPERTIES(PciObject, derived.health_state),
        SD_BUS_VTABLE_END,
};

static void *pci_lookup(void *collection, const char *label) {
        PciObject *o = pci_object_get(collection, label);
        return o && o->published ? o : NULL;
}

static const BusKind pci_bus_kind = {
        .prefix = PCI_PATH_PREFIX,
        .interface = PCI_INTERFACE,
        .vtable = pci_vtable,
        .bus_offset = offsetof(PciObject, bus),
        .lookup = pci_lookup,
};

int pci_bus_register(BusRegistry *registry, Pci *pci) {
        return bus_registry_add(registry, &pci_bus_kind, &pci->functions, pci);
}

int bus_method_get_affinity(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        /* What the last events changed is derived before it is read. */
        bus_publisher_flush(&m->publisher);

        r = sd_bus_message_new_method_return(message, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ooss)");
        for (size_t i = 0; r >= 0 && i < m->pci.n_affinity; i++) {
                const PciAffinity *a = &m->pci.affinity[i];
                r = sd_bus_message_append(reply, "(ooss)", a->a, a->b, a->relation, a->through);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
