/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-menu.h — the applet's menu, exported as com.canonical.dbusmenu (what every tray host reads
 * through the item's Menu property) */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "applet-view.h"

#define MENU_PATH "/MenuBar"
/* Items per group before "… and N more": a host draws a menu of a thousand lines taller than the screen. */
#define MENU_GROUP_MAX_ITEMS 25

typedef struct Menu Menu;

typedef enum MenuAction {
        MENU_ACTION_NONE,
        MENU_ACTION_DETAILS,    /* the details window, about the item's object (or the node) */
        MENU_ACTION_QUIT,
} MenuAction;

typedef void (*MenuActivated)(MenuAction action, const char *path, void *userdata);

Menu *menu_new(sd_bus *session, MenuActivated activated, void *userdata);
void menu_free(Menu *m);
/* Rebuilds the menu (new ids, a new revision) and tells the host with LayoutUpdated. status is the
 * model's when linkprobed is not running (view is then ignored). */
void menu_update(Menu *m, const View *view, bool running, const char *status);
