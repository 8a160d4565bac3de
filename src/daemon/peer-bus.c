/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-access.h"
#include "bus-registry.h"
#include "bus-util.h"
#include "inhibit.h"
#include "link.h"
#include "manager.h"
#include "peer-bus.h"
#include "peer.h"
#include "persist.h"
#include "reconcile.h"
#include "shared/bus-error.h"
#include "shared/bus-names.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

/* ---- the Peer objects ---- */

BUS_DEFINE_PROPERTY_GET_ENUM(property_get_transport, PeerTransport, peer_transport_to_string)
BUS_DEFINE_PROPERTY_GET_ENUM(property_get_state, PeerProbeState, peer_probe_state_to_string)

static int property_get_source_interface(sd_bus *bus, const char *path, const char *interface,
                                         const char *property, sd_bus_message *reply, void *userdata,
                                         sd_bus_error *error) {
        _cleanup_(freep) char *link_path = NULL;
        Peer *p = userdata;

        if (p->derived.source_ifindex > 0 && link_object_path(p->derived.source_ifindex, &link_path) >= 0)
                return sd_bus_message_append(reply, "o", link_path);
        return sd_bus_message_append(reply, "o", "/");
}

static int property_get_connection_type(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        Peer *p = userdata;
        return sd_bus_message_append(reply, "s", p->m.connection_type ?: "Unknown");
}

static int property_get_ttl(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Peer *p = userdata;
        return sd_bus_message_append(reply, "u", (uint32_t) MIN(peer_ttl_usec(p) / USEC_PER_SEC, (uint64_t) UINT32_MAX));
}

static int property_get_origins(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        static const struct {
                PeerOrigin origin;
                const char *name;
        } names[] = {
                { PEER_ORIGIN_CONFIG, "config" },
                { PEER_ORIGIN_ADDED, "added" },
                { PEER_ORIGIN_DISCOVERED, "discovered" },
                { PEER_ORIGIN_PROBED, "probed" },
        };
        Peer *p = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(names); i++)
                if (p->origins & names[i].origin)
                        r = sd_bus_message_append(reply, "s", names[i].name);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* Which node the sink reached, as its responder said at the last measurement ("" when unknown). */
static int property_get_remote_node_id(sd_bus *bus, const char *path, const char *interface, const char *property,
                                       sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        char id[NODE_ID_STRING_MAX];
        Peer *p = userdata;
        return sd_bus_message_append(reply, "s", p->remote ? node_id_to_string(p->remote->node_id, id) : "");
}

static int property_get_remote_hostname(sd_bus *bus, const char *path, const char *interface, const char *property,
                                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Peer *p = userdata;
        return sd_bus_message_append(reply, "s", p->remote ? p->remote->hostname : "");
}

/* The parallel TCP streams of the last measurement, upload and download (0, 0 for RDMA and before). */
static int property_get_streams(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Peer *p = userdata;
        return sd_bus_message_append(reply, "(uu)", p->m.upload_streams, p->m.download_streams);
}

#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define CONST SD_BUS_VTABLE_PROPERTY_CONST

static const sd_bus_vtable peer_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Address", "s", bus_property_get_string, offsetof(Peer, address), CONST),
        SD_BUS_PROPERTY("Transport", "s", property_get_transport, offsetof(Peer, transport), CONST),
        SD_BUS_PROPERTY("PeerAddress", "s", bus_property_get_string, offsetof(Peer, peer_address), CONST),
        SD_BUS_PROPERTY("SourceDevice", "s", bus_property_get_string, offsetof(Peer, source_device), CONST),
        SD_BUS_PROPERTY("SourcePort", "u", NULL, offsetof(Peer, source_port), CONST),
        SD_BUS_PROPERTY("SourceInterface", "o", property_get_source_interface, 0, EMITS),
        SD_BUS_PROPERTY("SourceInterfaceName", "s", bus_property_get_string, offsetof(Peer, m.source_interface), EMITS),
        SD_BUS_PROPERTY("SourceAddress", "s", bus_property_get_string, offsetof(Peer, m.source_address), EMITS),
        SD_BUS_PROPERTY("UploadGbps", "d", NULL, offsetof(Peer, m.upload_gbps), EMITS),
        SD_BUS_PROPERTY("DownloadGbps", "d", NULL, offsetof(Peer, m.download_gbps), EMITS),
        SD_BUS_PROPERTY("RttUsec", "d", NULL, offsetof(Peer, m.rtt_usec), EMITS),
        SD_BUS_PROPERTY("JitterUsec", "d", NULL, offsetof(Peer, m.jitter_usec), EMITS),
        SD_BUS_PROPERTY("JitterRfc3550Usec", "d", NULL, offsetof(Peer, m.jitter_rfc3550_usec), EMITS),
        SD_BUS_PROPERTY("Streams", "(uu)", property_get_streams, 0, EMITS),
        SD_BUS_PROPERTY("Warnings", "as", bus_property_get_strv, offsetof(Peer, m.warnings), EMITS),
        SD_BUS_PROPERTY("CrossTrafficGbps", "d", NULL, offsetof(Peer, m.cross_traffic_gbps), EMITS),
        SD_BUS_PROPERTY("ConnectionType", "s", property_get_connection_type, 0, EMITS),
        SD_BUS_PROPERTY("MeasuredAt", "t", NULL, offsetof(Peer, m.measured_at), EMITS),
        SD_BUS_PROPERTY("ProbeDurationUsec", "t", NULL, offsetof(Peer, m.probe_duration_usec), EMITS),
        SD_BUS_PROPERTY("Stale", "b", bus_property_get_bool, offsetof(Peer, derived.stale), EMITS),
        SD_BUS_PROPERTY("StaleReason", "s", bus_property_get_string, offsetof(Peer, derived.stale_reason), EMITS),
        SD_BUS_PROPERTY("TtlSec", "u", property_get_ttl, 0, CONST),
        SD_BUS_PROPERTY("NextProbeAt", "t", NULL, offsetof(Peer, next_probe_at), EMITS),
        SD_BUS_PROPERTY("LastAttemptAt", "t", NULL, offsetof(Peer, last_attempt_at), EMITS),
        SD_BUS_PROPERTY("ProbeState", "s", property_get_state, offsetof(Peer, state), EMITS),
        SD_BUS_PROPERTY("LastError", "s", bus_property_get_string, offsetof(Peer, last_error), EMITS),
        SD_BUS_PROPERTY("LastErrorMessage", "s", bus_property_get_string, offsetof(Peer, last_error_message), EMITS),
        SD_BUS_PROPERTY("Origins", "as", property_get_origins, 0, EMITS),
        SD_BUS_PROPERTY("PathLimitGbps", "d", NULL, offsetof(Peer, derived.path_limit_gbps), EMITS),
        SD_BUS_PROPERTY("PathLimitedBy", "s", bus_property_get_string, offsetof(Peer, derived.path_limited_by), EMITS),
        SD_BUS_PROPERTY("RemoteNodeId", "s", property_get_remote_node_id, 0, EMITS),
        SD_BUS_PROPERTY("RemoteHostname", "s", property_get_remote_hostname, 0, EMITS),
        SD_BUS_PROPERTY("RemoteAuthenticated", "b", bus_property_get_bool, offsetof(Peer, remote_authenticated), EMITS),
        SD_BUS_PROPERTY("Neighbor", "o", bus_property_get_object_path, offsetof(Peer, derived.neighbor_path), EMITS),
        SD_BUS_VTABLE_END,
};

/* ---- Manager methods ---- */

/* A sentence naming bad input: bounded, and valid UTF-8 whatever the caller sent. */
static int invalid_address(sd_bus_error *error, const char *address, const char *why) {
        char head[PEER_ADDRESS_INPUT_MAX + 1];
        _cleanup_(freep) char *shown = NULL;

        snprintf(head, sizeof(head), "%s", address);
        shown = escape_for_terminal(head);
        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid peer address \"%s%s\": %s.", strempty(shown),
                                 strlen(address) > PEER_ADDRESS_INPUT_MAX ? "..." : "", why);
}

/* Parses an address for a method; a zone must name an interface that exists now. */
static int parse_method_address(Manager *m, const char *address, PeerAddress *ret, sd_bus_error *error) {
        const char *why = NULL;

        if (peer_address_parse(address, 0, ret, &why) < 0)
                return invalid_address(error, address, why);
        if (ret->scope[0] && !link_find(&m->links, ret->scope))
                return invalid_address(error, address, "no interface has the name given as the zone");
        return 0;
}

static int check_caller(Manager *m, sd_bus_message *message, const char *action, sd_bus_error *error) {
        return bus_verify_caller(m->config.privileged_group, reconcile_rate_limit(m->reconciler), message, action,
                                 error);
}

typedef struct ProbeOptions {
        PeerTransport transport;
        const char *interface;
        const char *device;
        uint32_t port;
        uint64_t duration_usec;
        uint32_t samples;
        int streams; /* -1: not given */
} ProbeOptions;

static int option_type_error(sd_bus_error *error, const char *key, const char *type) {
        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Option \"%s\" must be of type %s.", key, type);
}

static int read_probe_options(sd_bus_message *message, ProbeOptions *o, sd_bus_error *error) {
        unsigned seen = 0;
        int r;

        r = sd_bus_message_enter_container(message, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(message, 'e', "sv")) > 0) {
                static const char *const known[] = { "Transport", "Interface", "Device", "Port", "DurationUsec", "Samples",
                                                     "Streams" };
                const char *key, *contents;
                size_t k;

                r = sd_bus_message_read(message, "s", &key);
                if (r < 0)
                        return r;
                for (k = 0; k < ELEMENTSOF(known); k++)
                        if (streq(key, known[k]))
                                break;
                if (k == ELEMENTSOF(known)) {
                        _cleanup_(freep) char *shown = escape_for_terminal(key);
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                                 "Unknown option \"%.64s\"; known: Transport, Interface, Device, Port, "
                                                 "DurationUsec, Samples, Streams.", strempty(shown));
                }
                if (seen & (1u << k))
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Option \"%s\" given twice.", key);
                seen |= 1u << k;

                r = sd_bus_message_peek_type(message, NULL, &contents);
                if (r < 0)
                        return r;
                const char *want = k <= 2 ? "s" : k == 4 ? "t" : "u";
                if (!streq(contents, want))
                        return option_type_error(error, key, want);
                r = sd_bus_message_enter_container(message, 'v', want);
                if (r < 0)
                        return r;
                switch (k) {
                case 0: {
                        const char *t;
                        r = sd_bus_message_read(message, "s", &t);
                        if (r >= 0) {
                                o->transport = peer_transport_from_string(t);
                                if (o->transport < 0)
                                        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                                                "Option \"Transport\" must be \"tcp\" or \"rdma\".");
                        }
                        break;
                }
                case 1:
                        r = sd_bus_message_read(message, "s", &o->interface);
                        break;
                case 2:
                        r = sd_bus_message_read(message, "s", &o->device);
                        if (r >= 0 && (isempty(o->device) || strlen(o->device) >= 64))
                                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                                        "Option \"Device\" must name an RDMA device.");
                        break;
                case 3:
                        r = sd_bus_message_read(message, "u", &o->port);
                        if (r >= 0 && (o->port == 0 || o->port > 255))
                                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                                        "Option \"Port\" must be an RDMA port number from 1 to 255.");
                        break;
                case 4:
                        r = sd_bus_message_read(message, "t", &o->duration_usec);
                        if (r >= 0 && (o->duration_usec < 10 * USEC_PER_MSEC || o->duration_usec > 60 * USEC_PER_SEC))
                                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                                        "Option \"DurationUsec\" must be from 10000 (10 ms) to "
                                                        "60000000 (60 s).");
                        break;
                case 5:
                        r = sd_bus_message_read(message, "u", &o->samples);
                        if (r >= 0 && (o->samples == 0 || o->samples > 10000))
                                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                                        "Option \"Samples\" must be from 1 to 10000.");
                        break;
                case 6: {
                        uint32_t v;
                        r = sd_bus_message_read(message, "u", &v);
                        if (r >= 0 && v > PEER_STREAMS_MAX)
                                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                                         "Option \"Streams\" must be from 0 (as many as raise goodput) "
                                                         "to %d.", PEER_STREAMS_MAX);
                        o->streams = (int) v;
                        break;
                }
                }
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(message);
                if (r >= 0)
                        r = sd_bus_message_exit_container(message);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(message);
}

static int method_probe_peer(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        ProbeOptions o = { .transport = PEER_TRANSPORT_TCP, .streams = -1 };
        char text[PEER_ADDRESS_STRING_MAX];
        RdmaPort *local = NULL;
        const char *address;
        PeerAddress a;
        Peer *p;
        int r;

        r = sd_bus_message_read(message, "s", &address);
        if (r < 0)
                return r;
        r = read_probe_options(message, &o, error);
        if (r < 0)
                return r;
        r = parse_method_address(m, address, &a, error);
        if (r < 0)
                return r;

        if (o.interface) {
                const char *why = NULL;

                if (!peer_address_is_link_local(&a))
                        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                                "Option \"Interface\" applies to IPv6 link-local addresses only; other "
                                                "addresses are reached as the routing table says.");
                if (a.scope[0] && !streq(a.scope, o.interface))
                        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                                "The address names one zone and option \"Interface\" another.");
                if (peer_address_set_scope(&a, o.interface, &why) < 0)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Option \"Interface\": %s.", why);
                if (!link_find(&m->links, a.scope))
                        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                                "Option \"Interface\" names no interface there is.");
        }
        if (peer_address_is_link_local(&a) && !a.scope[0])
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "A link-local address needs a zone (fe80::1%eth0) or option \"Interface\".");
        if (o.transport != PEER_TRANSPORT_RDMA && (o.device || o.port))
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "Options \"Device\" and \"Port\" apply to Transport \"rdma\" only.");
        if (o.transport == PEER_TRANSPORT_RDMA && o.streams >= 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "Option \"Streams\" applies to Transport \"tcp\" only.");

        r = check_caller(m, message, "probe peers", error);
        if (r < 0)
                return r;

        if (o.transport == PEER_TRANSPORT_RDMA) {
                if (inhibitors_cover(m->inhibitors, "rdma"))
                        return sd_bus_error_set(error, BUS_ERROR_BUSY, "RDMA probes are inhibited right now.");
                local = rdma_find_active_port(&m->rdma, o.device, o.port);
                if (!local)
                        return sd_bus_error_setf(error, BUS_ERROR_NOT_SUPPORTED, "No active local RDMA port%s%s.",
                                                 o.device ? " on " : "", strempty(o.device));
        }

        peer_address_format(&a, text);
        r = peer_ensure(&m->peers, o.transport, local ? local->device : NULL, local ? local->number : 0, &a, text, &p);
        if (r == -E2BIG)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED, "No more than %d peer paths.", PEER_PATHS_MAX);
        if (r < 0)
                return r;
        /* Nobody keeps this path measured: it is kept for its result until RemovePeer(). */
        if (!p->wanted)
                peer_set_adhoc(p, true);
        reconcile_request(m->reconciler, p, o.duration_usec, o.samples, o.streams);
        return sd_bus_reply_method_return(message, "o", p->bus.path);
}

static int method_add_peer(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const char *address;
        PeerAddress a;
        int r;

        r = sd_bus_message_read(message, "s", &address);
        if (r < 0)
                return r;
        r = parse_method_address(m, address, &a, error);
        if (r < 0)
                return r;
        r = check_caller(m, message, "add peers", error);
        if (r < 0)
                return r;

        r = peer_target_add(&m->peers, &a, PEER_ORIGIN_ADDED, NULL);
        if (r == -E2BIG)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED, "No more than %d peers.", PEER_TARGETS_MAX);
        if (r < 0)
                return r;
        /* The paths exist, and were announced, when the caller hears back. */
        bus_publisher_flush(&m->publisher);
        (void) persist_save(&m->persist);
        return sd_bus_reply_method_return(message, NULL);
}

static int method_remove_peer(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        char text[PEER_ADDRESS_STRING_MAX];
        const char *address, *why = NULL;
        bool removed = false;
        PeerTarget *t;
        PeerAddress a;
        Peer *p;
        int r;

        r = sd_bus_message_read(message, "s", &address);
        if (r < 0)
                return r;
        /* No check that a zone's interface exists: removing what belongs to a gone link is fine. */
        if (peer_address_parse(address, 0, &a, &why) < 0)
                return invalid_address(error, address, why);
        r = check_caller(m, message, "remove peers", error);
        if (r < 0)
                return r;

        peer_address_format(&a, text);
        t = peer_target_get(&m->peers, text);
        if (t && (t->origins & PEER_ORIGIN_ADDED)) {
                (void) peer_target_drop(&m->peers, t, PEER_ORIGIN_ADDED);
                removed = true;
        }
        TABLE_FOREACH(p, &m->peers.paths)
                if (p->adhoc && streq(p->peer_address, text)) {
                        peer_set_adhoc(p, false);
                        removed = true;
                }
        t = peer_target_get(&m->peers, text);
        if (!removed && t)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Peer %s %s; it cannot be removed here.", text,
                                         (t->origins & PEER_ORIGIN_CONFIG) ? "is configured in linkprobed.conf"
                                                                           : "was discovered and goes with its link");
        if (!removed)
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_PEER, "No peer %s was added or probed.", text);
        /* The paths are gone, and InterfacesRemoved went out, when the caller hears back. */
        bus_publisher_flush(&m->publisher);
        (void) persist_save(&m->persist);
        return sd_bus_reply_method_return(message, NULL);
}

static const sd_bus_vtable manager_peer_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("ProbePeer", SD_BUS_ARGS("s", address, "a{sv}", options), SD_BUS_RESULT("o", path),
                                method_probe_peer, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("AddPeer", SD_BUS_ARGS("s", address), SD_BUS_NO_RESULT, method_add_peer,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemovePeer", SD_BUS_ARGS("s", address), SD_BUS_NO_RESULT, method_remove_peer,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static void *peer_lookup(void *collection, const char *label) {
        return peer_get(collection, label);
}

static const BusKind peer_bus_kind = {
        .prefix = PEER_PATH_PREFIX,
        .interface = PEER_INTERFACE,
        .vtable = peer_vtable,
        .bus_offset = offsetof(Peer, bus),
        .lookup = peer_lookup,
};

int peer_bus_register(Manager *m) {
        return bus_registry_add(&m->registry, &peer_bus_kind, &m->peers.paths, &m->peers);
}

int peer_bus_attach_root(Manager *m, sd_bus *bus) {
        /* A second vtable for the same interface: sd-bus merges them, so Manager's methods stay in one
         * place for clients while the code stays with the peers. */
        return sd_bus_add_object_vtable(bus, NULL, BUS_PATH, MANAGER_INTERFACE, manager_peer_vtable, m);
}
