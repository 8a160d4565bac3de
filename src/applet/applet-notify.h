/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-notify.h — notifications through org.freedesktop.Notifications, rate-limited and merged */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "applet-config.h"

typedef struct Notifier Notifier;

/* icon_dir: where linkprobe-*.svg are, for the notification's icon. */
Notifier *notifier_new(sd_bus *session, const AppletConfig *config, const char *icon_dir);
void notifier_free(Notifier *n);

/* A Thunderbolt dock, device or peer host appeared. Those plugged together (a dock and what is behind
 * it) become one notification, named for the one nearest the host (the lowest depth). title: "Thunderbolt
 * dock connected: CalDigit TS4"; body: "Thunderbolt 4, 40 Gb/s" and the reason when degraded; line: the
 * same in one line, for the list of those behind it. */
void notifier_thunderbolt(Notifier *n, const char *path, int depth, bool degraded, const char *title,
                          const char *body, const char *line);

/* An object's Health went bad (bad=true) or came back to ok. what: "link flap0"; text: "flapping: 7
 * carrier changes in the last 2 min". One notification per object per IntervalSec=; the changes in
 * between are merged into the next, and dropped where it would say what the last one said. */
void notifier_health(Notifier *n, const char *path, const char *what, bool bad, const char *text);

/* linkprobed's Manager.WatchIntervalUSec (0: unknown, or the watch is off): events merge over one and a
 * half of it where that is longer than the applet's own window, as objects judged at two consecutive
 * samples are one change to a person. */
void notifier_set_watch_interval(Notifier *n, uint64_t usec);
/* The merge window now, in milliseconds. */
unsigned notifier_merge_msec(const Notifier *n);
