/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-config.h — $XDG_CONFIG_HOME/linkprobe/applet.conf, see linkprobe-applet(1) */
#pragma once

#include <stdbool.h>

typedef struct AppletConfig {
        bool thunderbolt;       /* [Notifications] Thunderbolt= a dock, device or peer host connected */
        bool health;            /* [Notifications] Health= an object's Health went bad */
        bool recovered;         /* [Notifications] Recovered= and came back to ok */
        unsigned interval_sec;  /* [Notifications] IntervalSec= at most one per object in this time */
} AppletConfig;

void applet_config_defaults(AppletConfig *c);
/* path NULL: the default place; a missing file is no error. Returns -errno or -EINVAL with a message
 * logged naming the file and the line. */
int applet_config_load(AppletConfig *c, const char *path);
