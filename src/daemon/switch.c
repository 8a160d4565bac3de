/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The switches this node is cabled to, as their sources (LLDP, InfiniBand MADs) describe them: each
 * source adds and removes its own ports; a switch lives while any source sees a port of it. */
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "switch.h"

const BusObjectType switch_bus_type = {
        .interface = SWITCH_INTERFACE,
};

static const char *const switch_source_table[_SWITCH_SOURCE_MAX] = {
        [SWITCH_SOURCE_LLDP] = "lldp",
        [SWITCH_SOURCE_INFINIBAND] = "infiniband",
        [SWITCH_SOURCE_SWEEP] = "sweep",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(switch_source, SwitchSource, switch_source_table);

static int switch_compare_key(const void *key, const void *object) {
        return strcmp(key, ((const Switch *) object)->key);
}

void switches_init(Switches *s, BusPublisher *p) {
        *s = (Switches) {
                .table = TABLE_INIT(switch_compare_key),
                .publisher = p,
        };
}

static void switch_port_done(SwitchPort *p) {
        free(p->local_path);
        free(p->port_id);
        free(p->description);
}

static Switch *switch_free(Switch *sw) {
        if (!sw)
                return NULL;
        bus_object_done(&sw->bus);
        for (size_t i = 0; i < sw->n_ports; i++)
                switch_port_done(&sw->ports[i]);
        free(sw->ports);
        free(sw->links);
        free(sw->key);
        free(sw->chassis_id);
        free(sw->node_guid);
        free(sw->name);
        free(sw->description);
        strv_free(sw->capabilities);
        strv_free(sw->management_addresses);
        strv_free(sw->sources);
        return mfree(sw);
}

void switches_done(Switches *s) {
        Switch *sw;

        TABLE_FOREACH(sw, &s->table)
                switch_free(sw);
        table_done(&s->table);
}

Switch *switch_get(Switches *s, const char *key) {
        return table_get(&s->table, key);
}

int switch_object_path(const char *key, char **ret) {
        return sd_bus_path_encode(SWITCH_PATH_PREFIX, key, ret);
}

static int switch_new(Switches *s, const char *key, bool swept, Switch **ret) {
        _cleanup_(freep) char *path = NULL;
        Switch *sw;
        int r;

        /* The sweep is bounded by its own cap ([Fabric] MaxSwitches=); the bound here is for the
         * sources anybody on a segment can talk to. */
        if (!swept && table_size(&s->table) - s->n_swept >= SWITCHES_MAX) {
                if (!s->warned_full)
                        log_warning("More than %d switches seen; ignoring switch %s and any other new one "
                                    "(a flood of LLDP chassis?).", SWITCHES_MAX, key);
                s->warned_full = true;
                return -E2BIG;
        }
        r = switch_object_path(key, &path);
        if (r < 0)
                return r;
        sw = new0(Switch, 1);
        if (!sw)
                return -ENOMEM;
        sw->owner = s;
        sw->key = strdup(key);
        if (!sw->key) {
                switch_free(sw);
                return -ENOMEM;
        }
        r = table_put(&s->table, sw->key, sw);
        if (r < 0) {
                switch_free(sw);
                return r;
        }
        bus_object_init(&sw->bus, s->publisher, &switch_bus_type, TAKE_PTR(path));
        log_switch_debug(sw, "New switch.");
        *ret = sw;
        return 0;
}

static void switch_remove(Switch *sw) {
        Switches *s = sw->owner;

        log_switch_debug(sw, "Switch gone.");
        bus_object_remove(&sw->bus);
        table_remove(&s->table, sw->key);
        switch_free(sw);
        s->changed = true;
        /* Below the bound again: a later flood is worth a warning of its own. */
        if (table_size(&s->table) < SWITCHES_MAX / 2)
                s->warned_full = false;
}

static SwitchPort *switch_find_port(Switch *sw, SwitchSource source, const char *local_path, const char *port_id) {
        for (size_t i = 0; i < sw->n_ports; i++) {
                SwitchPort *p = &sw->ports[i];
                if (p->source == source && streq(p->local_path, local_path) && streq(p->port_id, port_id))
                        return p;
        }
        return NULL;
}

/* Source and LastSeen follow the ports. */
static int switch_update_from_ports(Switch *sw) {
        _cleanup_(strv_freep) char **sources = NULL;
        uint64_t last = 0;
        int r;

        for (SwitchSource src = 0; src < _SWITCH_SOURCE_MAX; src++)
                for (size_t i = 0; i < sw->n_ports; i++)
                        if (sw->ports[i].source == src) {
                                r = strv_extend_unique(&sources, switch_source_to_string(src));
                                if (r < 0)
                                        return r;
                        }
        if (sw->swept) {
                r = strv_extend_unique(&sources, switch_source_to_string(SWITCH_SOURCE_SWEEP));
                if (r < 0)
                        return r;
                last = sw->swept_at;
        }
        for (size_t i = 0; i < sw->n_ports; i++)
                last = MAX(last, sw->ports[i].last_seen);
        bus_object_set(&sw->bus, sw->last_seen, last, "LastSeen");
        return bus_object_set_strv(&sw->bus, &sw->sources, &sources, "Source");
}

static int strv_copy(char *const *l, char ***ret) {
        _cleanup_(strv_freep) char **copy = NULL;
        int r;

        for (size_t i = 0; l && l[i]; i++) {
                r = strv_extend_unique(&copy, l[i]);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(copy);
        return 0;
}

static int switch_record_info(Switch *sw, const SwitchInfo *info) {
        char **copy = NULL;
        int r = 0;

        if (info->chassis_id && r >= 0)
                r = bus_object_set_string(&sw->bus, &sw->chassis_id, info->chassis_id, "ChassisId");
        if (info->node_guid && r >= 0)
                r = bus_object_set_string(&sw->bus, &sw->node_guid, info->node_guid, "NodeGuid");
        if (info->name && r >= 0)
                r = bus_object_set_string(&sw->bus, &sw->name, info->name, "Name");
        if (info->description && r >= 0)
                r = bus_object_set_string(&sw->bus, &sw->description, info->description, "Description");
        if (info->capabilities && r >= 0) {
                r = strv_copy(info->capabilities, &copy);
                if (r >= 0)
                        r = bus_object_set_strv(&sw->bus, &sw->capabilities, &copy, "Capabilities");
        }
        if (info->management_addresses && r >= 0) {
                r = strv_copy(info->management_addresses, &copy);
                if (r >= 0)
                        r = bus_object_set_strv(&sw->bus, &sw->management_addresses, &copy, "ManagementAddresses");
        }
        return r < 0 ? r : 0;
}

static bool switch_port_ethernet_equal(const SwitchPortEthernet *a, const SwitchPortEthernet *b) {
        return a->mac_phy == b->mac_phy && a->autoneg_supported == b->autoneg_supported &&
               a->autoneg_enabled == b->autoneg_enabled && a->mau_type == b->mau_type &&
               a->n_speeds == b->n_speeds && memcmp(a->speeds_mbps, b->speeds_mbps, sizeof(a->speeds_mbps)) == 0 &&
               a->max_frame_size == b->max_frame_size && a->port_vlan_id == b->port_vlan_id;
}

int switch_port_set(Switches *s, SwitchSource source, const char *key, const SwitchInfo *info,
                    const SwitchPort *port, uint64_t now) {
        Switch *sw;
        SwitchPort *p;
        bool created = false;
        int r;

        if (isempty(key) || !port->local_path || !sd_bus_object_path_is_valid(port->local_path) || !port->port_id)
                return -EINVAL;
        sw = switch_get(s, key);
        if (!sw) {
                r = switch_new(s, key, false, &sw);
                if (r < 0)
                        return r;
        }

        p = switch_find_port(sw, source, port->local_path, port->port_id);
        if (!p) {
                if (sw->n_ports >= SWITCH_PORTS_MAX) {
                        log_switch_full_errno(sw, LOG_WARNING, 0,
                                              "More than %d of our ports on one switch; ignoring %s's port %s.",
                                              SWITCH_PORTS_MAX, port->local_path, port->port_id);
                        r = -E2BIG;
                        goto fail;
                }
                SwitchPort *grown = reallocarray(sw->ports, sw->n_ports + 1, sizeof(SwitchPort));
                if (!grown) {
                        r = -ENOMEM;
                        goto fail;
                }
                sw->ports = grown;
                p = &sw->ports[sw->n_ports];
                *p = (SwitchPort) {
                        .source = source,
                        .local_path = strdup(port->local_path),
                        .port_id = strdup(port->port_id),
                };
                if (!p->local_path || !p->port_id) {
                        switch_port_done(p);
                        r = -ENOMEM;
                        goto fail;
                }
                sw->n_ports++;
                created = true;
                bus_object_changed(&sw->bus, "Ports");
                s->changed = true;
        }

        r = free_and_strdup(&p->description, port->description);
        if (r < 0)
                return r;
        if (r > 0)
                bus_object_changed(&sw->bus, "Ports");
        if (!switch_port_ethernet_equal(&p->ethernet, &port->ethernet)) {
                p->ethernet = port->ethernet;
                /* Links read their partner's speeds from here. */
                s->changed = true;
        }
        p->last_seen = now;

        r = switch_record_info(sw, info);
        if (r >= 0)
                r = switch_update_from_ports(sw);
        if (r < 0)
                return r;
        return created;

fail:
        if (sw->n_ports == 0 && !sw->swept)
                switch_remove(sw);
        return r;
}

static void switch_drop_port(Switch *sw, size_t i) {
        switch_port_done(&sw->ports[i]);
        memmove(sw->ports + i, sw->ports + i + 1, (sw->n_ports - i - 1) * sizeof(SwitchPort));
        sw->n_ports--;
        bus_object_changed(&sw->bus, "Ports");
        sw->owner->changed = true;
}

int switch_port_remove(Switches *s, SwitchSource source, const char *key, const char *local_path,
                       const char *port_id) {
        Switch *sw = switch_get(s, key);
        SwitchPort *p;

        if (!sw)
                return 0;
        p = switch_find_port(sw, source, local_path, port_id);
        if (!p)
                return 0;
        switch_drop_port(sw, (size_t) (p - sw->ports));
        if (sw->n_ports == 0 && !sw->swept)
                switch_remove(sw);
        else
                (void) switch_update_from_ports(sw);
        return 1;
}

void switches_remove_local(Switches *s, SwitchSource source, const char *local_path) {
        Switch *sw;

        TABLE_FOREACH_SAFE(sw, &s->table) {
                bool dropped = false;
                for (size_t i = sw->n_ports; i > 0; i--) {
                        SwitchPort *p = &sw->ports[i - 1];
                        if (p->source == source && streq(p->local_path, local_path)) {
                                switch_drop_port(sw, i - 1);
                                dropped = true;
                        }
                }
                if (!dropped)
                        continue;
                if (sw->n_ports == 0 && !sw->swept)
                        switch_remove(sw);
                else
                        (void) switch_update_from_ports(sw);
        }
}

/* ---- The subnet sweep ---- */

static int switch_set_links(Switch *sw, const SwitchLink *links, size_t n) {
        SwitchLink *copy = NULL;

        if (n == sw->n_links && (n == 0 || memcmp(sw->links, links, n * sizeof(SwitchLink)) == 0))
                return 0;
        if (n > 0) {
                copy = new0(SwitchLink, n);
                if (!copy)
                        return -ENOMEM;
                memcpy(copy, links, n * sizeof(SwitchLink));
        }
        free(sw->links);
        sw->links = copy;
        sw->n_links = n;
        bus_object_changed(&sw->bus, "Links");
        bus_object_changed(&sw->bus, "LinkJudgements");
        sw->owner->changed = true;
        return 1;
}

static int switch_apply_swept(Switches *s, const SweptSwitch *v, uint64_t now) {
        Switch *sw = switch_get(s, v->node_guid);
        int r;

        if (!sw) {
                r = switch_new(s, v->node_guid, true, &sw);
                if (r < 0)
                        return r;
        }
        if (!sw->swept)
                s->n_swept++;
        sw->swept = true;
        sw->swept_at = now;
        sw->sweep_generation = s->sweep_generation;
        r = switch_record_info(sw, &(SwitchInfo) {
                                       .node_guid = v->node_guid,
                                       .name = v->name ?: v->description,
                                       .description = v->description,
                               });
        if (r >= 0)
                r = switch_set_links(sw, v->links, v->n_links);
        if (r >= 0)
                r = switch_update_from_ports(sw);
        return r < 0 ? r : 0;
}

int switches_sweep_apply(Switches *s, const SweptSwitch *swept, size_t n, uint64_t now) {
        Switch *sw;
        int r = 0;

        s->sweep_generation++;
        for (size_t i = 0; i < n; i++) {
                int k = switch_apply_swept(s, &swept[i], now);
                if (k < 0 && r == 0)
                        r = k;
        }
        if (r < 0)
                return r; /* keep the rest as it was: nothing is dropped on a failure */
        /* What the sweep no longer finds: not marked by this one. */
        TABLE_FOREACH_SAFE(sw, &s->table) {
                if (!sw->swept || sw->sweep_generation == s->sweep_generation)
                        continue;
                log_switch_debug(sw, "The sweep no longer finds it.");
                sw->swept = false;
                sw->swept_at = 0;
                s->n_swept--;
                (void) switch_set_links(sw, NULL, 0);
                if (sw->n_ports == 0)
                        switch_remove(sw);
                else
                        (void) switch_update_from_ports(sw);
        }
        return 0;
}

size_t switches_sweep_links(const Switches *s) {
        const Switch *sw;
        size_t n = 0;

        TABLE_FOREACH(sw, &s->table)
                n += sw->n_links;
        return n;
}
