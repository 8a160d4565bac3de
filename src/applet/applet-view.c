/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-view.c — the objects as menu groups and one-line summaries. */
#include "applet-view.h"
#include "shared/bus-names.h"
#include "shared/macros.h"

static json_object *get(json_object *o, const char *key) {
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *key) {
        json_object *v = get(o, key);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

static double get_num(json_object *o, const char *key) {
        json_object *v = get(o, key);

        return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                       ? json_object_get_double(v) : 0;
}

static bool get_bool(json_object *o, const char *key) {
        json_object *v = get(o, key);

        return v && json_object_get_boolean(v);
}

static void view_item_free(gpointer p) {
        ViewItem *i = p;

        g_free(i->path);
        g_free(i->label);
        g_free(i);
}

const char *view_thunderbolt_kind(const char *type) {
        if (streq(type, "hub"))
                return "dock";
        if (streq(type, "device"))
                return "device";
        if (streq(type, "peer"))
                return "peer host";
        return NULL;
}

/* Health and its reason; a GPU has none of its own and is judged by its PCI function. */
static const char *health_of(json_object *objects, json_object *iface, const char **reason) {
        json_object *source = iface;

        if (!*get_str(iface, "Health"))
                source = get(get(objects, get_str(iface, "PciDevice")), PCI_INTERFACE);
        *reason = get_str(source, "HealthReason");
        return get_str(source, "Health");
}

static char *health_suffix(json_object *objects, json_object *iface) {
        const char *reason, *health = health_of(objects, iface, &reason);

        if (!*health)
                return g_strdup("");
        if (health_is_bad(health_rank(health)) && *reason)
                return g_strdup_printf(" — %s: %s", health, reason);
        return g_strdup_printf(" — %s", health);
}

static char *link_label(json_object *objects, json_object *l, double *speed) {
        g_autofree char *rate = format_mbps((uint64_t) get_num(l, "SpeedMbps"));
        g_autofree char *health = health_suffix(objects, l);
        const char *type = get_str(l, "ConnectionType"), *oper = get_str(l, "OperState");

        *speed = get_num(l, "SpeedMbps") / 1000.0;
        return g_strdup_printf("%s — %s, %s%s%s", get_str(l, "Name"), *type ? type : get_str(l, "Kind"),
                               streq(oper, "up") || !*oper ? "" : "down, ", rate, health);
}

static char *tbt_label(json_object *objects, json_object *t, double *speed) {
        const char *name = get_str(t, "Name"), *class = get_str(t, "LinkClass");
        double rx = get_num(t, "PathRxGbps"), tx = get_num(t, "PathTxGbps");
        g_autofree char *rate = format_gbps(rx > 0 && tx > 0 ? MIN(rx, tx) : MAX(rx, tx));
        g_autofree char *generation = NULL, *degraded = NULL;
        g_autofree char *health = health_suffix(objects, t);

        if (!*class)
                generation = get_num(t, "Generation") > 0 ? g_strdup_printf("generation %.0f", get_num(t, "Generation"))
                                                          : g_strdup("Thunderbolt");
        /* The reason is in the Health suffix when Health says degraded; say it anyway where it does not. */
        if (get_bool(t, "Degraded") && !strstr(health, "degraded"))
                degraded = g_strdup_printf(", degraded: %s", get_str(t, "DegradedReason"));
        *speed = MAX(rx, tx);
        return g_strdup_printf("%s (%s) — %s, %s%s%s", *name ? name : get_str(t, "SysfsName"),
                               view_thunderbolt_kind(get_str(t, "Type")), class[0] ? class : generation, rate,
                               strempty(degraded), health);
}

static char *rdma_label(json_object *objects, json_object *r, double *speed) {
        g_autofree char *rate = format_gbps(get_num(r, "RateGbps"));
        g_autofree char *health = health_suffix(objects, r);

        *speed = get_num(r, "RateGbps");
        return g_strdup_printf("%s port %.0f — %s %s %s, %s, %s%s", get_str(r, "Device"), get_num(r, "Port"),
                               get_str(r, "LinkLayer"), get_str(r, "Width"), get_str(r, "Speed"), rate,
                               get_str(r, "State"), health);
}

static char *gpu_label(json_object *objects, json_object *g, double *speed) {
        g_autofree char *health = health_suffix(objects, g);
        g_autofree char *tflops = NULL;

        *speed = get_num(g, "Fp32Tflops");
        if (*speed > 0)
                tflops = g_strdup_printf(", %.1f TFLOPS FP32", *speed);
        return g_strdup_printf("%s — %s%s%s", get_str(g, "Name"), get_str(g, "DeviceType"), strempty(tflops),
                               health);
}

static gint item_compare(gconstpointer a, gconstpointer b) {
        const ViewItem *x = *(ViewItem * const *) a, *y = *(ViewItem * const *) b;

        if (x->rank != y->rank)
                return x->rank > y->rank ? -1 : 1;
        if (x->sort_speed != y->sort_speed)
                return x->sort_speed > y->sort_speed ? -1 : 1;
        return g_utf8_collate(x->label, y->label);
}

View *view_build(json_object *objects) {
        static const struct {
                const char *title, *hint;
        } groups[_VIEW_GROUP_MAX] = {
                [VIEW_LINKS] = { "Links", "linkprobectl link" },
                [VIEW_THUNDERBOLT] = { "Thunderbolt", "linkprobectl thunderbolt" },
                [VIEW_RDMA] = { "RDMA ports", "linkprobectl rdma" },
                [VIEW_COMPUTE] = { "Compute devices", "linkprobectl gpu" },
        };
        View *v = g_new0(View, 1);

        for (unsigned g = 0; g < _VIEW_GROUP_MAX; g++) {
                v->groups[g].title = groups[g].title;
                v->groups[g].more_hint = groups[g].hint;
                v->groups[g].items = g_ptr_array_new_with_free_func(view_item_free);
        }

        json_object_object_foreach(objects, path, ifaces) {
                json_object *iface;
                ViewGroupKind group;
                const char *kind_word, *reason;
                char *label;
                double speed = 0;

                if ((iface = get(ifaces, LINK_INTERFACE))) {
                        const char *kind = get_str(iface, "Kind");
                        if (streq(kind, "loopback"))
                                continue;
                        group = VIEW_LINKS, kind_word = "link";
                        label = link_label(objects, iface, &speed);
                } else if ((iface = get(ifaces, TBT_INTERFACE))) {
                        if (!view_thunderbolt_kind(get_str(iface, "Type")))
                                continue;
                        group = VIEW_THUNDERBOLT, kind_word = "Thunderbolt";
                        label = tbt_label(objects, iface, &speed);
                } else if ((iface = get(ifaces, RDMA_PORT_INTERFACE))) {
                        group = VIEW_RDMA, kind_word = "RDMA port";
                        label = rdma_label(objects, iface, &speed);
                } else if ((iface = get(ifaces, GPU_INTERFACE))) {
                        group = VIEW_COMPUTE, kind_word = "compute device";
                        label = gpu_label(objects, iface, &speed);
                } else
                        continue;

                ViewItem *item = g_new0(ViewItem, 1);
                item->path = g_strdup(path);
                item->label = label;
                const char *health = health_of(objects, iface, &reason);
                item->rank = health_rank(health);
                item->sort_speed = speed;
                g_ptr_array_add(v->groups[group].items, item);

                if (health_is_bad(item->rank))
                        v->bad++;
                if (item->rank > v->worst) {
                        const char *name = get_str(iface, "Name");
                        if (group == VIEW_THUNDERBOLT && !*name)
                                name = get_str(iface, "SysfsName");
                        if (group == VIEW_RDMA)
                                name = get_str(iface, "Device");
                        v->worst = item->rank;
                        g_free(v->worst_text);
                        v->worst_text = *reason && health_is_bad(item->rank)
                                                ? g_strdup_printf("%s %s: %s: %s", kind_word, name, health, reason)
                                                : g_strdup_printf("%s %s: %s", kind_word, name, health);
                }
        }
        /* Nothing wrong: the tooltip says so rather than naming one object that is fine. */
        if (!health_is_bad(v->worst)) {
                g_free(v->worst_text);
                v->worst_text = g_strdup(v->worst == HEALTH_OK ? "all ok" : "nothing judged yet");
        }
        for (unsigned g = 0; g < _VIEW_GROUP_MAX; g++)
                g_ptr_array_sort(v->groups[g].items, item_compare);

        /* The daemon's own answer to "what is the fastest link" (Summary.FastestLink, (ossu)). */
        json_object *fastest = get(get(get(objects, BUS_PATH), SUMMARY_INTERFACE), "FastestLink");
        if (fastest && json_object_is_type(fastest, json_type_array) && json_object_array_length(fastest) == 4 &&
            json_object_get_string(json_object_array_get_idx(fastest, 0))) {
                g_autofree char *rate = format_mbps((uint64_t) json_object_get_int64(json_object_array_get_idx(fastest, 3)));
                v->fastest = g_strdup_printf("%s (%s, %s)", json_object_get_string(json_object_array_get_idx(fastest, 1)),
                                             json_object_get_string(json_object_array_get_idx(fastest, 2)), rate);
        }
        return v;
}

void view_free(View *v) {
        if (!v)
                return;
        for (unsigned g = 0; g < _VIEW_GROUP_MAX; g++)
                g_ptr_array_unref(v->groups[g].items);
        g_free(v->fastest);
        g_free(v->worst_text);
        g_free(v);
}

const char *view_icon_name(const View *v, bool running) {
        if (!running)
                return "linkprobe-offline";
        switch (v->worst) {
        case HEALTH_DEGRADED:
                return "linkprobe-degraded";
        case HEALTH_FLAPPING:
        case HEALTH_ERRORS:
                return "linkprobe-bad";
        case HEALTH_NONE:
        case HEALTH_OK:
        case HEALTH_UNKNOWN:
                return "linkprobe-ok";
        }
        return "linkprobe-ok";
}

char *view_describe(json_object *objects, const char *path) {
        json_object *ifaces = get(objects, path), *iface;
        double speed;

        if ((iface = get(ifaces, LINK_INTERFACE)))
                return link_label(objects, iface, &speed);
        if ((iface = get(ifaces, TBT_INTERFACE)) && view_thunderbolt_kind(get_str(iface, "Type")))
                return tbt_label(objects, iface, &speed);
        if ((iface = get(ifaces, RDMA_PORT_INTERFACE)))
                return rdma_label(objects, iface, &speed);
        if ((iface = get(ifaces, GPU_INTERFACE)))
                return gpu_label(objects, iface, &speed);
        if ((iface = get(ifaces, PCI_INTERFACE)))
                return g_strdup_printf("PCI %s %s", get_str(iface, "Address"), get_str(iface, "Name"));
        return g_strdup(path);
}
