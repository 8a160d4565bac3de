/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-view.h — what the icon, the tooltip and the menu say, computed from the model's objects in one
 * place; the strings are raw (as the daemon published them), each consumer escapes for its medium */
#pragma once

#include <glib.h>
#include <json-c/json.h>

#include "applet-text.h"

typedef enum ViewGroupKind {
        VIEW_LINKS,
        VIEW_THUNDERBOLT,
        VIEW_RDMA,
        VIEW_COMPUTE,
        _VIEW_GROUP_MAX,
} ViewGroupKind;

typedef struct ViewItem {
        char *path;
        char *label;    /* "eth0 — Ethernet, 10 Gb/s — ok" */
        HealthRank rank;
        double sort_speed;
} ViewItem;

typedef struct ViewGroup {
        const char *title;      /* "Links" */
        const char *more_hint;  /* where the truncated rest is: "linkprobectl link" */
        GPtrArray *items;       /* ViewItem, worst health first, then fastest, then by label */
} ViewGroup;

typedef struct View {
        char *fastest;          /* "eth0 (Ethernet, 10 Gb/s)", NULL when none */
        HealthRank worst;
        char *worst_text;       /* "link flap0: flapping: 7 carrier changes in the last 2 min" */
        unsigned bad;           /* objects whose Health is bad */
        ViewGroup groups[_VIEW_GROUP_MAX];
} View;

View *view_build(json_object *objects);
void view_free(View *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(View, view_free)

/* The icon's name for a state: linkprobe-ok, linkprobe-degraded, linkprobe-bad, linkprobe-offline. */
const char *view_icon_name(const View *v, bool running);

/* One object as a single line (the notification's and the details window's header). */
char *view_describe(json_object *objects, const char *path);
/* The kind a person calls a Thunderbolt object: "dock", "device", "peer host"; NULL for domains, hosts
 * and retimers (nothing a person plugs). */
const char *view_thunderbolt_kind(const char *type);
