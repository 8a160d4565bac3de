/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "inhibit.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "status.h"
#include "unit-watch.h"

#define SYSTEMD_NAME "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER SYSTEMD_NAME ".Manager"
#define SYSTEMD_UNIT SYSTEMD_NAME ".Unit"
#define DEGRADED_REASON "inhibit-units-unknown"

typedef struct WatchedUnit {
        UnitWatch *owner;
        char *name;
        char *path;         /* the unit's object while systemd has it loaded */
        char *active_state; /* NULL until known */
        sd_bus_slot *call;  /* the GetUnit() or Get() in flight */
} WatchedUnit;

struct UnitWatch {
        sd_bus *bus;
        Inhibitors *inhibitors;
        DaemonStatus *status;
        unsigned what;
        WatchedUnit *units;
        size_t n_units;
        sd_bus_slot *properties_match;
        sd_bus_slot *unit_new_match;
        sd_bus_slot *unit_removed_match;
        sd_bus_slot *owner_match;
        sd_bus_slot *subscribe;
        Inhibitor *hold;
        bool systemd_away; /* systemd left the bus (a re-execution): the states stand, unconfirmed */
};

bool unit_active_state_is_running(const char *state) {
        /* "refreshing" is what newer systemd says while a unit reloads its mount namespace. */
        return state && (streq(state, "active") || streq(state, "activating") || streq(state, "reloading") ||
                         streq(state, "deactivating") || streq(state, "refreshing"));
}

/* Holds, renames or drops the inhibitor to match the units' states. */
static void unit_watch_update(UnitWatch *w) {
        _cleanup_(freep) char *why = NULL;
        size_t len = 0, running = 0;
        bool known = true;
        FILE *f;
        int r;

        for (size_t i = 0; i < w->n_units; i++) {
                known = known && w->units[i].active_state;
                running += unit_active_state_is_running(w->units[i].active_state);
        }
        daemon_status_set_degraded(w->status, DEGRADED_REASON, !known || w->systemd_away);
        if (running == 0) {
                w->hold = inhibitor_drop(w->hold, "no watched unit runs");
                return;
        }

        /* "while inference.service, batch.service run" */
        f = open_memstream(&why, &len);
        if (!f) {
                log_oom();
                return;
        }
        fputs("while", f);
        for (size_t i = 0, listed = 0; i < w->n_units; i++)
                if (unit_active_state_is_running(w->units[i].active_state))
                        fprintf(f, "%s %s", listed++ > 0 ? "," : "", w->units[i].name);
        fputs(running == 1 ? " runs" : " run", f);
        if (fclose(f) != 0) {
                log_oom();
                return;
        }

        r = w->hold ? inhibitor_set_why(w->hold, why) : inhibitor_hold(w->inhibitors, w->what, "linkprobed", why, &w->hold);
        if (r < 0)
                log_warning_errno(r, "Cannot hold probes off %s: %m", why);
}

static void unit_set_state(WatchedUnit *u, const char *state) {
        if (streq_ptr(u->active_state, state))
                return;
        log_debug("Unit %s is %s.", u->name, strna(state));
        if (free_and_strdup(&u->active_state, state) < 0)
                log_oom();
        unit_watch_update(u->owner);
}

static int on_active_state(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        WatchedUnit *u = userdata;
        const char *state;
        int r;

        u->call = sd_bus_slot_unref(u->call);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                log_warning("Cannot read %s's ActiveState: %s", u->name, sd_bus_message_get_error(reply)->message);
                return 0;
        }
        r = sd_bus_message_read(reply, "v", "s", &state);
        if (r < 0) {
                log_warning_errno(r, "Cannot read %s's ActiveState: %m", u->name);
                return 0;
        }
        unit_set_state(u, state);
        return 0;
}

static void unit_get_state(WatchedUnit *u) {
        int r;

        u->call = sd_bus_slot_unref(u->call);
        r = sd_bus_call_method_async(u->owner->bus, &u->call, SYSTEMD_NAME, u->path, "org.freedesktop.DBus.Properties",
                                     "Get", on_active_state, u, "ss", SYSTEMD_UNIT, "ActiveState");
        if (r < 0)
                log_warning_errno(r, "Cannot ask for %s's ActiveState: %m", u->name);
}

static int on_unit_path(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        WatchedUnit *u = userdata;
        const char *path;
        int r;

        u->call = sd_bus_slot_unref(u->call);
        /* Not loaded: not running either. It is not loaded for the asking (LoadUnit() would keep a stub
         * of it in systemd); when it is loaded, UnitNew says so. */
        if (sd_bus_message_is_method_error(reply, "org.freedesktop.systemd1.NoSuchUnit")) {
                u->path = mfree(u->path);
                unit_set_state(u, "inactive");
                return 0;
        }
        if (sd_bus_message_is_method_error(reply, NULL)) {
                /* systemd not on the bus (yet): its arrival is watched and asks again. */
                log_warning("Cannot follow %s: %s", u->name, sd_bus_message_get_error(reply)->message);
                return 0;
        }
        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0 || free_and_strdup(&u->path, path) < 0) {
                log_warning_errno(r < 0 ? r : -ENOMEM, "Cannot follow %s: %m", u->name);
                return 0;
        }
        unit_get_state(u);
        return 0;
}

static int on_subscribed(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        UnitWatch *w = userdata;

        w->subscribe = sd_bus_slot_unref(w->subscribe);
        /* Without it systemd sends no PropertiesChanged: the states would stand still, unknown to us. */
        if (sd_bus_message_is_method_error(reply, NULL))
                log_warning("Cannot subscribe to systemd's unit signals: %s", sd_bus_message_get_error(reply)->message);
        else
                log_debug("Subscribed to systemd's unit signals.");
        return 0;
}

/* Asks systemd, from the start: for signals about units, then each unit's object and state. */
static void unit_watch_resolve(UnitWatch *w) {
        int r;

        w->subscribe = sd_bus_slot_unref(w->subscribe);
        r = sd_bus_call_method_async(w->bus, &w->subscribe, SYSTEMD_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER, "Subscribe",
                                     on_subscribed, w, NULL);
        if (r < 0)
                log_warning_errno(r, "Cannot subscribe to systemd's unit signals: %m");
        for (size_t i = 0; i < w->n_units; i++) {
                WatchedUnit *u = &w->units[i];

                u->call = sd_bus_slot_unref(u->call);
                r = sd_bus_call_method_async(w->bus, &u->call, SYSTEMD_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER, "GetUnit",
                                             on_unit_path, u, "s", u->name);
                if (r < 0)
                        log_warning_errno(r, "Cannot follow %s: %m", u->name);
        }
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UnitWatch *w = userdata;
        const char *path = sd_bus_message_get_path(m), *interface, *key;
        WatchedUnit *u = NULL;
        int r;

        for (size_t i = 0; path && i < w->n_units; i++)
                if (streq_ptr(w->units[i].path, path))
                        u = &w->units[i];
        if (!u)
                return 0;
        log_debug("systemd says %s changed.", u->name);
        r = sd_bus_message_read(m, "s", &interface);
        if (r < 0 || !streq(interface, SYSTEMD_UNIT))
                return 0;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &key);
                if (r >= 0 && streq(key, "ActiveState")) {
                        const char *state;
                        r = sd_bus_message_read(m, "v", "s", &state);
                        if (r >= 0)
                                unit_set_state(u, state);
                } else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r >= 0) {
                char **invalidated = NULL;
                r = sd_bus_message_read_strv(m, &invalidated);
                /* systemd may say only that the value changed: ask for it. */
                if (r >= 0 && strv_contains(invalidated, "ActiveState"))
                        unit_get_state(u);
                strv_free(invalidated);
        }
        if (r < 0)
                log_debug_errno(r, "Ignoring a malformed PropertiesChanged of %s: %m", u->name);
        return 0;
}

static WatchedUnit *unit_watch_find(UnitWatch *w, const char *name) {
        for (size_t i = 0; name && i < w->n_units; i++)
                if (streq(w->units[i].name, name))
                        return &w->units[i];
        return NULL;
}

/* systemd announces a unit it (re)loads with UnitNew and sends no PropertiesChanged for what happened
 * before that signal went out: a transient unit (systemd-run) may be active by then, so ask. */
static int on_unit_new(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UnitWatch *w = userdata;
        const char *name, *path;
        WatchedUnit *u;

        if (sd_bus_message_read(m, "so", &name, &path) < 0 || !(u = unit_watch_find(w, name)))
                return 0;
        log_debug("systemd loaded %s anew.", name);
        if (!streq_ptr(u->path, path) && free_and_strdup(&u->path, path) < 0) {
                log_oom();
                return 0;
        }
        unit_get_state(u);
        return 0;
}

/* A unit is unloaded only when nothing keeps it, so never while it runs. */
static int on_unit_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UnitWatch *w = userdata;
        const char *name, *path;
        WatchedUnit *u;

        if (sd_bus_message_read(m, "so", &name, &path) < 0 || !(u = unit_watch_find(w, name)))
                return 0;
        unit_set_state(u, "inactive");
        return 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UnitWatch *w = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || !streq(name, SYSTEMD_NAME))
                return 0;
        /* A re-execution: the states (and the inhibitor) stand until systemd answers again, but
         * nothing can be learnt meanwhile. */
        w->systemd_away = isempty(new_owner);
        unit_watch_update(w);
        if (w->systemd_away) {
                log_debug("systemd left the bus.");
                return 0;
        }
        log_debug("systemd is on the bus (%s): asking for the watched units again.", new_owner);
        unit_watch_resolve(w);
        return 0;
}

int unit_watch_new(sd_bus *bus, char **units, unsigned what, Inhibitors *inhibitors, DaemonStatus *status,
                   UnitWatch **ret) {
        _cleanup_(unit_watch_freep) UnitWatch *w = NULL;
        char what_text[INHIBIT_WHAT_STRING_MAX];
        size_t n = strv_length(units);
        int r;

        w = new0(UnitWatch, 1);
        if (!w)
                return -ENOMEM;
        *w = (UnitWatch) { .bus = sd_bus_ref(bus), .inhibitors = inhibitors, .status = status, .what = what };
        w->units = new0(WatchedUnit, MAX(n, (size_t) 1));
        if (!w->units)
                return -ENOMEM;
        for (; w->n_units < n; w->n_units++) {
                WatchedUnit *u = &w->units[w->n_units];
                u->owner = w;
                u->name = strdup(units[w->n_units]);
                if (!u->name)
                        return -ENOMEM;
        }

        r = sd_bus_add_match(bus, &w->properties_match,
                             "type='signal',sender='" SYSTEMD_NAME "',interface='org.freedesktop.DBus.Properties',"
                             "member='PropertiesChanged',path_namespace='" SYSTEMD_PATH "/unit',arg0='" SYSTEMD_UNIT "'",
                             on_properties_changed, w);
        if (r >= 0)
                r = sd_bus_add_match(bus, &w->unit_new_match,
                                     "type='signal',sender='" SYSTEMD_NAME "',path='" SYSTEMD_PATH "',"
                                     "interface='" SYSTEMD_MANAGER "',member='UnitNew'",
                                     on_unit_new, w);
        if (r >= 0)
                r = sd_bus_add_match(bus, &w->unit_removed_match,
                                     "type='signal',sender='" SYSTEMD_NAME "',path='" SYSTEMD_PATH "',"
                                     "interface='" SYSTEMD_MANAGER "',member='UnitRemoved'",
                                     on_unit_removed, w);
        if (r >= 0)
                r = sd_bus_add_match(bus, &w->owner_match,
                                     "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                                     "member='NameOwnerChanged',arg0='" SYSTEMD_NAME "'",
                                     on_owner_changed, w);
        if (r < 0)
                return r;

        unit_watch_update(w); /* nothing known yet: degraded until systemd answers */
        unit_watch_resolve(w);
        inhibit_what_to_string(what, what_text);
        STRV_FOREACH(u, units)
                log_info("Following %s: %s probes wait while it runs.", *u, what_text);
        *ret = TAKE_PTR(w);
        return 0;
}

UnitWatch *unit_watch_free(UnitWatch *w) {
        if (!w)
                return NULL;
        for (size_t i = 0; i < w->n_units; i++) {
                sd_bus_slot_unref(w->units[i].call);
                free(w->units[i].name);
                free(w->units[i].path);
                free(w->units[i].active_state);
        }
        free(w->units);
        sd_bus_slot_unref(w->properties_match);
        sd_bus_slot_unref(w->unit_new_match);
        sd_bus_slot_unref(w->unit_removed_match);
        sd_bus_slot_unref(w->owner_match);
        sd_bus_slot_unref(w->subscribe);
        w->hold = inhibitor_drop(w->hold, "no longer watching units");
        sd_bus_unref(w->bus);
        return mfree(w);
}
