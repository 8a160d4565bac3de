/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <linux/if_addr.h>

#include "link.h"
#include "manager-bus.h"
#include "bus-access.h"
#include "bus-util.h"
#include "gpu-bus.h"
#include "inhibit-bus.h"
#include "manager.h"
#include "metrics.h"
#include "summary.h"
#include "shared/bus-error.h"

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", VERSION);
}

BUS_DEFINE_PROPERTY_GET_ENUM(property_get_state, ManagerState, manager_state_to_string)

static int method_refresh(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = bus_verify_rate(&m->read_ratelimit, message, error);
        if (r < 0)
                return r;

        r = manager_refresh(m);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "Refresh failed: %s", strerror(-r));
        return sd_bus_reply_method_return(message, NULL);
}

static int method_get_metrics(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(freep) char *text = NULL;
        Manager *m = userdata;
        int r;

        r = bus_verify_rate(&m->read_ratelimit, message, error);
        if (r < 0)
                return r;
        r = metrics_render_string(m, &text, NULL);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "Cannot render metrics: %s", strerror(-r));
        return sd_bus_reply_method_return(message, "s", text);
}

typedef struct RankEntry {
        const Link *link;
        const LinkAddress *address;
        AddressClass class;
        int type_order;
        int class_order;
} RankEntry;

static int rank_entry_compare(const void *a, const void *b) {
        const RankEntry *x = a, *y = b;
        uint32_t sx = x->link->speed_mbps ?: x->link->thunderbolt_speed_mbps;
        uint32_t sy = y->link->speed_mbps ?: y->link->thunderbolt_speed_mbps;

        /* Interface type first, address class second; then the faster link, IPv4 (needs no scope
         * id), and finally a stable order. */
        if (x->type_order != y->type_order)
                return x->type_order - y->type_order;
        if (x->class_order != y->class_order)
                return x->class_order - y->class_order;
        if (sx != sy)
                return sx > sy ? -1 : 1;
        if (x->address->family != y->address->family)
                return x->address->family == AF_INET ? -1 : 1;
        if (x->link->ifindex != y->link->ifindex)
                return x->link->ifindex - y->link->ifindex;
        return memcmp(x->address->address, y->address->address, sizeof(x->address->address));
}

static int method_rank_addresses(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(freep) RankEntry *entries = NULL;
        Manager *m = userdata;
        size_t n = 0, allocated = 0;
        const char *purpose_string;
        RankPurpose purpose;
        Link *l;
        int r;

        r = sd_bus_message_read(message, "s", &purpose_string);
        if (r < 0)
                return r;
        purpose = rank_purpose_from_string(purpose_string);
        if (purpose < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown purpose \"%.64s\": expected \"ring\" or \"coordinator\".",
                                         purpose_string);

        TABLE_FOREACH(l, &m->links) {
                int type_order = rank_type_order(purpose, l->connection_type);
                if (type_order < 0 || !link_is_up(l))
                        continue;
                for (size_t i = 0; i < l->n_addresses; i++) {
                        const LinkAddress *a = &l->addresses[i];
                        AddressClass class = address_class(a->family, a->address);
                        int class_order = rank_class_order(class);

                        /* Not yet usable, or no longer offered: not an address to hand out. */
                        if (class_order < 0 || (a->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED | IFA_F_DEPRECATED)))
                                continue;
                        if (n == allocated) {
                                allocated = MAX(allocated * 2, (size_t) 16);
                                RankEntry *grown = reallocarray(entries, allocated, sizeof(RankEntry));
                                if (!grown)
                                        return -ENOMEM;
                                entries = grown;
                        }
                        entries[n++] = (RankEntry) {
                                .link = l,
                                .address = a,
                                .class = class,
                                .type_order = type_order,
                                .class_order = class_order,
                        };
                }
        }
        if (n > 1)
                qsort(entries, n, sizeof(RankEntry), rank_entry_compare);

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char text[INET6_ADDRSTRLEN];
                if (!inet_ntop(entries[i].address->family, entries[i].address->address, text, sizeof(text)))
                        continue;
                r = sd_bus_message_append(reply, "(ssss)", text, entries[i].link->name_utf8,
                                          connection_type_to_string(entries[i].link->connection_type),
                                          address_class_to_string(entries[i].class));
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", property_get_state, offsetof(Manager, state),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("DegradedReasons", "as", bus_property_get_strv, offsetof(Manager, degraded_reasons),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Inhibited", "as", bus_property_get_inhibited, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD("Refresh", NULL, NULL, method_refresh, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetMetrics", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", text), method_get_metrics,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RankAddresses", SD_BUS_ARGS("s", purpose),
                                SD_BUS_RESULT("a(ssss)", addresses), method_rank_addresses,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inhibit", SD_BUS_ARGS("s", what, "s", who, "s", why), SD_BUS_RESULT("h", fd),
                                bus_method_inhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListInhibitors", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssuu)", inhibitors),
                                bus_method_list_inhibitors, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ProbeGpus", SD_BUS_NO_ARGS, SD_BUS_RESULT("ao", gpus), bus_method_probe_gpus,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable node_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Hostname", "s", bus_property_get_string, offsetof(Manager, node.hostname),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("MachineId", "s", bus_property_get_string, offsetof(Manager, node.machine_id),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("BootId", "s", bus_property_get_string, offsetof(Manager, node.boot_id),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("KernelRelease", "s", bus_property_get_string, offsetof(Manager, node.kernel_release),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Architecture", "s", bus_property_get_string, offsetof(Manager, node.architecture),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CpuModel", "s", bus_property_get_string, offsetof(Manager, node.cpu_model),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CpuCount", "u", NULL, offsetof(Manager, node.cpu_count), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable memory_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("TotalBytes", "t", NULL, offsetof(Manager, memory.total_bytes),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("AvailableBytes", "t", NULL, offsetof(Manager, memory.available_bytes),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END,
};

/* GetManagedObjects comes here before sd-bus's own object manager sees it: the answer is built straight
 * from our tables (see manager_append_managed_objects()). Everything else sd-bus handles as usual,
 * including InterfacesAdded/Removed, which it builds from the same vtables. */
static int on_root_message(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        if (!sd_bus_message_is_method_call(message, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects") ||
            !sd_bus_message_has_signature(message, ""))
                return 0;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = manager_append_managed_objects(m, reply, error);
        if (r < 0)
                return r;
        r = sd_bus_send(NULL, reply, NULL);
        return r < 0 ? r : 1;
}

static const BusObjectType manager_bus_type = { .interface = MANAGER_INTERFACE };
static const BusObjectType node_bus_type = { .interface = NODE_INTERFACE };
static const BusObjectType memory_bus_type = { .interface = MEMORY_INTERFACE };

int manager_root_object_init(Manager *m, BusObject *o, const BusObjectType *type) {
        char *path = strdup(BUS_PATH);
        if (!path)
                return -ENOMEM;
        bus_object_init(o, m, type, path);
        /* The root exists as long as we do; it only ever sends PropertiesChanged. */
        o->announced = true;
        return 0;
}

int manager_bus_register(Manager *m) {
        int r;

        r = sd_bus_add_object_manager(m->bus, NULL, BUS_PATH);
        if (r < 0)
                return r;
        r = sd_bus_add_object(m->bus, NULL, BUS_PATH, on_root_message, m);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(m->bus, NULL, BUS_PATH, MANAGER_INTERFACE, manager_vtable, m);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(m->bus, NULL, BUS_PATH, NODE_INTERFACE, node_vtable, m);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(m->bus, NULL, BUS_PATH, MEMORY_INTERFACE, memory_vtable, m);
        if (r < 0)
                return r;

        r = manager_root_object_init(m, &m->manager_object, &manager_bus_type);
        if (r >= 0)
                r = manager_root_object_init(m, &m->node_object, &node_bus_type);
        if (r >= 0)
                r = manager_root_object_init(m, &m->memory_object, &memory_bus_type);
        if (r >= 0)
                r = summary_bus_register(m);
        return r;
}
