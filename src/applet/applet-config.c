/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-config.c — the applet's key file, read with inih: one section, a switch per notification class. */
#include <glib.h>
#include <ini.h>

#include "applet-config.h"
#include "shared/log.h"
#include "shared/macros.h"

void applet_config_defaults(AppletConfig *c) {
        *c = (AppletConfig) {
                .thunderbolt = true,
                .health = true,
                .recovered = true,
                .interval_sec = 60,
        };
}

typedef struct Parse {
        AppletConfig *config;
        const char *path;
        int error;
} Parse;

static int parse_yes_no(const char *value, bool *ret) {
        if (g_ascii_strcasecmp(value, "yes") == 0 || g_ascii_strcasecmp(value, "true") == 0 ||
            streq(value, "1") || g_ascii_strcasecmp(value, "on") == 0)
                *ret = true;
        else if (g_ascii_strcasecmp(value, "no") == 0 || g_ascii_strcasecmp(value, "false") == 0 ||
                 streq(value, "0") || g_ascii_strcasecmp(value, "off") == 0)
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

static int on_entry(void *userdata, const char *section, const char *key, const char *value) {
        Parse *p = userdata;
        AppletConfig *c = p->config;
        int r;

        if (!streq(section, "Notifications")) {
                log_warning("%s: unknown section [%s], ignored.", p->path, section);
                return 1;
        }
        if (streq(key, "Thunderbolt"))
                r = parse_yes_no(value, &c->thunderbolt);
        else if (streq(key, "Health"))
                r = parse_yes_no(value, &c->health);
        else if (streq(key, "Recovered"))
                r = parse_yes_no(value, &c->recovered);
        else if (streq(key, "IntervalSec")) {
                char *end;
                unsigned long v = strtoul(value, &end, 10);
                r = *value && !*end && v <= 86400 ? 0 : -EINVAL;
                if (r == 0)
                        c->interval_sec = (unsigned) v;
        } else {
                log_warning("%s: unknown key %s= in [%s], ignored.", p->path, key, section);
                return 1;
        }
        if (r == 0)
                return 1;
        log_error("%s: %s=%s is not valid (yes or no; IntervalSec= a number of seconds up to 86400).", p->path,
                  key, value);
        p->error = -EINVAL;
        return 0;
}

int applet_config_load(AppletConfig *c, const char *path) {
        g_autofree char *fallback = NULL;
        FILE *f;
        int r;

        if (!path)
                path = fallback = g_build_filename(g_get_user_config_dir(), "linkprobe", "applet.conf", NULL);
        f = fopen(path, "re");
        if (!f) {
                if (errno == ENOENT && fallback)
                        return 0;
                return log_error_errno(errno, "Cannot read %s: %m", path);
        }
        Parse p = { .config = c, .path = path };
        r = ini_parse_file(f, on_entry, &p);
        fclose(f);
        if (p.error < 0)
                return p.error;
        if (r != 0)
                return log_error_errno(EINVAL, "%s: line %d cannot be read.", path, r);
        return 0;
}
