/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The root object: ObjectManager, the Manager interface, and the registration of every interface. */

#include "bus-access.h"
#include "bus-util.h"
#include "gpu-bus.h"
#include "gpu-prober.h"
#include "inhibit-bus.h"
#include "link-bus.h"
#include "manager-bus.h"
#include "manager.h"
#include "neighbor-bus.h"
#include "switch-bus.h"
#include "node-bus.h"
#include "pci-bus.h"
#include "peer-bus.h"
#include "rank.h"
#include "rdma-bus.h"
#include "shared/bus-error.h"
#include "shared/bus-names.h"
#include "summary-bus.h"
#include "tbt-bus.h"

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", VERSION);
}

BUS_DEFINE_PROPERTY_GET_ENUM(property_get_state, DaemonState, daemon_state_to_string)

static int property_get_gpu_probe_error(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", m->gpu_prober ? strempty(m->gpu_prober->last_run_error) : "");
}

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
        r = manager_render_metrics(m, &text, NULL);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "Cannot render metrics: %s", strerror(-r));
        return sd_bus_reply_method_return(message, "s", text);
}

static int method_rank_addresses(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(freep) RankedAddress *ranked = NULL;
        Manager *m = userdata;
        const char *purpose_string;
        RankPurpose purpose;
        size_t n = 0;
        int r;

        r = sd_bus_message_read(message, "s", &purpose_string);
        if (r < 0)
                return r;
        purpose = rank_purpose_from_string(purpose_string);
        if (purpose < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown purpose \"%.64s\": expected \"ring\" or \"coordinator\".",
                                         purpose_string);
        r = rank_addresses(&m->links, purpose, &ranked, &n);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = sd_bus_message_append(reply, "(ssss)", ranked[i].address->text, ranked[i].link->name_utf8,
                                          connection_type_to_string(ranked[i].link->derived.connection_type),
                                          address_class_to_string(ranked[i].address->class));
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
        SD_BUS_PROPERTY("State", "s", property_get_state, offsetof(Manager, status.state),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("DegradedReasons", "as", bus_property_get_strv, offsetof(Manager, status.degraded_reasons),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Inhibited", "as", bus_property_get_inhibited, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("GpuProbeError", "s", property_get_gpu_probe_error, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("WatchIntervalUSec", "t", NULL, offsetof(Manager, config.watch_interval_usec),
                        SD_BUS_VTABLE_PROPERTY_CONST),
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
        SD_BUS_METHOD_WITH_ARGS("GetAffinity", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ooss)", affinity),
                                bus_method_get_affinity, SD_BUS_VTABLE_UNPRIVILEGED),
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
        r = bus_registry_append_managed_objects(&m->registry, reply, error);
        if (r < 0)
                return r;
        r = sd_bus_send(NULL, reply, NULL);
        return r < 0 ? r : 1;
}

/* The root object's handlers and interfaces, on one connection. */
static int attach_root(Manager *m, sd_bus *bus) {
        int r;

        r = sd_bus_add_object_manager(bus, NULL, BUS_PATH);
        if (r < 0)
                return r;
        r = sd_bus_add_object(bus, NULL, BUS_PATH, on_root_message, m);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(bus, NULL, BUS_PATH, MANAGER_INTERFACE, manager_vtable, m);
        if (r < 0)
                return r;
        r = node_bus_register(bus, &m->node, &m->memory);
        if (r < 0)
                return r;
        r = summary_bus_register(bus, &m->derive.summary);
        if (r < 0)
                return r;
        return peer_bus_attach_root(m, bus);
}

int manager_bus_register(Manager *m) {
        int r;

        r = attach_root(m, m->bus);
        if (r < 0)
                return r;

        /* The children, in the order GetManagedObjects lists them. */
        r = link_bus_register(&m->registry, &m->links);
        if (r < 0)
                return r;
        r = rdma_bus_register(&m->registry, &m->rdma);
        if (r < 0)
                return r;
        r = tbt_bus_register(&m->registry, &m->thunderbolt);
        if (r < 0)
                return r;
        r = pci_bus_register(&m->registry, &m->pci);
        if (r < 0)
                return r;
        r = peer_bus_register(m);
        if (r < 0)
                return r;
        r = neighbor_bus_register(&m->registry, &m->neighbors);
        if (r < 0)
                return r;
        r = switch_bus_register(&m->registry, &m->switches);
        if (r < 0)
                return r;
        return gpu_bus_register(&m->registry, &m->gpus, m->gpu_prober);
}

int manager_bus_attach(Manager *m, sd_bus *bus) {
        int r;

        r = attach_root(m, bus);
        if (r < 0)
                return r;
        return bus_registry_attach(&m->registry, bus);
}

static int attach_direct_client(sd_bus *bus, void *userdata) {
        return manager_bus_attach(userdata, bus);
}

int manager_bus_start_private(Manager *m) {
        int r;

        if (m->options.private_socket) {
                safe_close(m->private_fd);
                r = private_bus_listen(m->options.private_socket, &m->private_fd);
                if (r < 0)
                        return log_error_errno(r, "Failed to create the private socket %s: %m",
                                               m->options.private_socket);
        }
        if (m->private_fd < 0)
                return 0;
        r = private_bus_new(m->event, TAKE_FD(m->private_fd), &m->publisher, attach_direct_client, m, &m->private_bus);
        if (r < 0)
                return log_error_errno(r, "Failed to serve the private socket: %m");
        return 0;
}
