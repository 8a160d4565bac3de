/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-registry.h"
#include "bus-util.h"
#include "shared/bus-names.h"
#include "switch-bus.h"
#include "switch.h"

/* Ports a(oss): our Link or RdmaPort, the switch's port ID, its description. The IDs and descriptions
 * are the switch's bytes, escaped by their source; appended checked all the same, since another
 * source may fill them. */
static int property_get_ports(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Switch *sw = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(oss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < sw->n_ports; i++) {
                const SwitchPort *p = &sw->ports[i];
                r = sd_bus_message_open_container(reply, 'r', "oss");
                if (r >= 0)
                        r = sd_bus_message_append_basic(reply, 'o', p->local_path);
                if (r >= 0)
                        r = bus_message_append_escaped(reply, p->port_id);
                if (r >= 0)
                        r = bus_message_append_escaped(reply, p->description);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* Links a(uosussd): the sweep's switch-to-switch cables: our port, the other switch's object and node
 * GUID, its port, width, speed, rate in Gb/s. */
static int property_get_links(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Switch *sw = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(uosussd)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < sw->n_links; i++) {
                const SwitchLink *l = &sw->links[i];
                _cleanup_(freep) char *remote = NULL;

                r = switch_object_path(l->remote_guid, &remote);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(uosussd)", l->port, remote, l->remote_guid, l->remote_port,
                                          l->width, l->speed, l->rate_gbps);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* LinkJudgements a(ussdbs): one entry per Links entry, in its order: our port, the best width, speed
 * and rate (Gb/s) both ends support, and whether the link trained below that, with the reason ("" and
 * 0 where the far end was not in the sweep). */
static int property_get_link_judgements(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        Switch *sw = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ussdbs)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < sw->n_links; i++) {
                const SwitchLink *l = &sw->links[i];

                r = sd_bus_message_append(reply, "(ussdbs)", l->port, l->best_width, l->best_speed,
                                          l->best_rate_gbps, (int) l->degraded, l->degraded_reason);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static const sd_bus_vtable switch_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Source", "as", bus_property_get_strv, offsetof(Switch, sources), EMITS),
        SD_BUS_PROPERTY("ChassisId", "s", bus_property_get_escaped, offsetof(Switch, chassis_id), EMITS),
        SD_BUS_PROPERTY("NodeGuid", "s", bus_property_get_escaped, offsetof(Switch, node_guid), EMITS),
        SD_BUS_PROPERTY("Name", "s", bus_property_get_escaped, offsetof(Switch, name), EMITS),
        SD_BUS_PROPERTY("Description", "s", bus_property_get_escaped, offsetof(Switch, description), EMITS),
        SD_BUS_PROPERTY("Capabilities", "as", bus_property_get_strv, offsetof(Switch, capabilities), EMITS),
        SD_BUS_PROPERTY("ManagementAddresses", "as", bus_property_get_strv, offsetof(Switch, management_addresses),
                        EMITS),
        SD_BUS_PROPERTY("Ports", "a(oss)", property_get_ports, 0, EMITS),
        SD_BUS_PROPERTY("Links", "a(uosussd)", property_get_links, 0, EMITS),
        SD_BUS_PROPERTY("LinkJudgements", "a(ussdbs)", property_get_link_judgements, 0, EMITS),
        SD_BUS_PROPERTY("LastSeen", "t", NULL, offsetof(Switch, last_seen), EMITS),
        SD_BUS_VTABLE_END,
};

static void *switch_lookup(void *collection, const char *label) {
        return switch_get(collection, label);
}

static const BusKind switch_bus_kind = {
        .prefix = SWITCH_PATH_PREFIX,
        .interface = SWITCH_INTERFACE,
        .vtable = switch_vtable,
        .bus_offset = offsetof(Switch, bus),
        .lookup = switch_lookup,
};

int switch_bus_register(BusRegistry *registry, Switches *switches) {
        return bus_registry_add(registry, &switch_bus_kind, &switches->table, switches);
}
