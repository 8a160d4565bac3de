/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-sni.h — the StatusNotifierItem: the icon, its tooltip and the Menu property, registered with
 * org.kde.StatusNotifierWatcher whenever one is on the session bus */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#define SNI_PATH "/StatusNotifierItem"

typedef struct Sni Sni;

/* icon_dir: where linkprobe-*.svg are (the item's IconThemePath, and the pixmaps sent to hosts that
 * cannot look the name up); activate: a click on the icon itself. */
Sni *sni_new(sd_bus *session, const char *icon_dir, void (*activate)(void *userdata), void *userdata);
void sni_free(Sni *s);

/* Icon name and the tooltip's text (raw: it is escaped here). Signals only what changed. */
void sni_update(Sni *s, const char *icon_name, const char *tooltip_title, const char *tooltip_body);
