/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-notify.c — what is worth a notification, and no more of them than a person can read.
 *
 * Events wait until nothing new has come for a moment (the merge window), so that what happens together
 * is told together: a dock and the devices behind it are one notification, and so are links the daemon
 * judges at consecutive watch samples. The window is MERGE_MSEC, or one and a half of linkprobed's
 * Manager.WatchIntervalUSec where that is longer (what the watch sees is judged at its samples, one
 * interval apart); no event waits more than MERGE_MAX_WINDOWS windows. Each object then has at most one notification per
 * IntervalSec=: what happens to it within that time is counted and told in the next one, which
 * replaces the previous bubble (replaces_id), or is not told at all when the object ended where the
 * last notification left it. Many objects at once (a switch rebooting under a hundred links) are one
 * notification that names the first few. No daemon: said once, then the events are dropped. */
#include <glib.h>

#include "applet-notify.h"
#include "applet-text.h"
#include "shared/log.h"
#include "shared/macros.h"

#define NOTIFY_NAME "org.freedesktop.Notifications"
#define NOTIFY_PATH "/org/freedesktop/Notifications"
#define MERGE_MSEC 700
#define MERGE_MAX_WINDOWS 4
#define MAX_SEPARATE 3

typedef struct HealthState {
        bool pending;
        bool bad;               /* the latest state */
        char *what, *text;
        unsigned changes;       /* since the last notification */
        bool told_bad;          /* what the last notification said */
        bool told;
        uint64_t told_at;       /* monotonic µs */
        uint32_t id;            /* the notification's, for replaces_id */
} HealthState;

typedef struct TbtEvent {
        int depth;
        bool degraded;
        char *title, *body, *line;
} TbtEvent;

struct Notifier {
        sd_bus *bus;
        AppletConfig config;
        char *icon_dir;
        GHashTable *health;     /* path → HealthState */
        GPtrArray *tbt;         /* TbtEvent waiting for the flush */
        guint flush_timer;
        uint64_t merge_started;  /* monotonic µs of the first event the pending timer merges; 0 none */
        uint64_t watch_usec;     /* linkprobed's Manager.WatchIntervalUSec; 0 unknown or off */
        bool markup;            /* the daemon reads Pango-like markup in bodies */
        bool said_no_daemon;
};

static void health_state_free(gpointer p) {
        HealthState *h = p;

        g_free(h->what);
        g_free(h->text);
        g_free(h);
}

static void tbt_event_free(gpointer p) {
        TbtEvent *e = p;

        g_free(e->title);
        g_free(e->body);
        g_free(e->line);
        g_free(e);
}

static int on_notified(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Notifier *n = userdata;
        uint32_t id;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                if (!n->said_no_daemon)
                        log_notice("No notification daemon (%s: %s); notifications are not shown until one starts.",
                                   NOTIFY_NAME, e->message ?: e->name);
                n->said_no_daemon = true;
                return 0;
        }
        n->said_no_daemon = false;
        if (sd_bus_message_read(reply, "u", &id) > 0)
                log_debug("Notification %" PRIu32 " shown.", id);
        return 0;
}

typedef struct NotifyReply {
        Notifier *n;
        char *path;     /* the HealthState that waits for its id, or NULL */
} NotifyReply;

static int on_notified_health(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        NotifyReply *r = userdata;
        HealthState *h = r->path ? g_hash_table_lookup(r->n->health, r->path) : NULL;
        uint32_t id;

        if (h && !sd_bus_message_is_method_error(reply, NULL) && sd_bus_message_read(reply, "u", &id) > 0)
                h->id = id;
        on_notified(reply, r->n, error);
        g_free(r->path);
        g_free(r);
        return 0;
}

/* Sends one notification; title and body are raw text (body lines joined by \n). */
static void notify(Notifier *n, uint32_t replaces, const char *icon, const char *category, uint8_t urgency,
                   const char *title, const char *body, const char *path) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        g_autofree char *clean_title = text_clean(title, 200);
        g_autofree char *clean_body = NULL;
        g_autofree char *icon_file = g_strdup_printf("%s/%s.svg", n->icon_dir, icon);
        NotifyReply *reply = g_new0(NotifyReply, 1);
        int r;

        if (n->markup)
                clean_body = text_markup_lines(body);
        else
                clean_body = text_clean_lines(body, strlen(body));
        log_info("Notification: %s: %s", clean_title, clean_body);
        reply->n = n;
        reply->path = g_strdup(path);

        r = sd_bus_message_new_method_call(n->bus, &m, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_NAME, "Notify");
        if (r >= 0)
                r = sd_bus_message_append(m, "susss", "linkprobe", replaces, icon_file, clean_title, clean_body);
        if (r >= 0)
                r = sd_bus_message_append(m, "as", 0);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}i", 3, "urgency", "y", urgency, "category", "s", category,
                                          "desktop-entry", "s", "linkprobe-applet", -1);
        if (r >= 0)
                r = sd_bus_call_async(n->bus, NULL, m, on_notified_health, reply, 0);
        if (r < 0) {
                log_warning_errno(r, "Cannot send a notification: %m");
                g_free(reply->path);
                g_free(reply);
        }
}

static void notifier_schedule(Notifier *n, unsigned msec);

static gint tbt_by_depth(gconstpointer a, gconstpointer b) {
        const TbtEvent *x = *(TbtEvent * const *) a, *y = *(TbtEvent * const *) b;

        return x->depth - y->depth;
}

static void flush_thunderbolt(Notifier *n) {
        g_autoptr(GString) body = NULL;
        const TbtEvent *first;

        if (n->tbt->len == 0)
                return;
        g_ptr_array_sort(n->tbt, tbt_by_depth);
        first = g_ptr_array_index(n->tbt, 0);
        body = g_string_new(first->body);
        if (n->tbt->len > 1) {
                g_string_append_printf(body, "\nand %u more behind it:", n->tbt->len - 1);
                for (unsigned k = 1; k < MIN(n->tbt->len, 6u); k++) {
                        const TbtEvent *e = g_ptr_array_index(n->tbt, k);
                        g_string_append_printf(body, "\n%s", e->line);
                }
                if (n->tbt->len > 6)
                        g_string_append_printf(body, "\n…");
        }
        bool degraded = false;
        for (unsigned k = 0; k < n->tbt->len; k++)
                degraded |= ((const TbtEvent *) g_ptr_array_index(n->tbt, k))->degraded;
        notify(n, 0, degraded ? "linkprobe-degraded" : "linkprobe-ok", "device.added", 1, first->title, body->str,
               NULL);
        g_ptr_array_set_size(n->tbt, 0);
}

static char *health_body(const HealthState *h) {
        if (h->changes > 1)
                return g_strdup_printf("%s\n(%u changes since the last notice)", h->text, h->changes);
        return g_strdup(h->text);
}

static void flush_health(Notifier *n) {
        uint64_t now = (uint64_t) g_get_monotonic_time(), interval = (uint64_t) n->config.interval_sec * G_USEC_PER_SEC;
        g_autoptr(GPtrArray) due = g_ptr_array_new();
        uint64_t next_due = UINT64_MAX;
        GHashTableIter iter;
        gpointer key, value;

        g_hash_table_iter_init(&iter, n->health);
        while (g_hash_table_iter_next(&iter, &key, &value)) {
                HealthState *h = value;
                if (!h->pending)
                        continue;
                if (h->told && now < h->told_at + interval) {
                        next_due = MIN(next_due, h->told_at + interval);
                        continue;
                }
                h->pending = false;
                /* Back where the last notification left it: nothing new to tell. */
                if (h->told && h->told_bad == h->bad) {
                        h->changes = 0;
                        continue;
                }
                if ((h->bad && !n->config.health) || (!h->bad && !n->config.recovered) || (!h->told && !h->bad)) {
                        h->changes = 0;
                        continue;
                }
                g_ptr_array_add(due, key);
        }
        g_ptr_array_sort(due, (GCompareFunc) g_strcmp0);

        if (due->len > MAX_SEPARATE) {
                g_autoptr(GString) body = g_string_new(NULL);
                unsigned bad = 0;
                for (unsigned k = 0; k < due->len; k++) {
                        HealthState *h = g_hash_table_lookup(n->health, g_ptr_array_index(due, k));
                        bad += h->bad;
                        if (k < 5)
                                g_string_append_printf(body, "%s%s: %s", k ? "\n" : "", h->what, h->text);
                        h->told = true, h->told_bad = h->bad, h->told_at = now, h->changes = 0;
                }
                if (due->len > 5)
                        g_string_append_printf(body, "\nand %u more (linkprobectl health)", due->len - 5);
                g_autofree char *title = g_strdup_printf("Health changed for %u objects (%u bad)", due->len, bad);
                notify(n, 0, bad ? "linkprobe-bad" : "linkprobe-ok", "device", bad ? 2 : 1, title, body->str, NULL);
        } else
                for (unsigned k = 0; k < due->len; k++) {
                        const char *path = g_ptr_array_index(due, k);
                        HealthState *h = g_hash_table_lookup(n->health, path);
                        g_autofree char *title = g_strdup_printf(h->bad ? "%s: health went bad" : "%s recovered",
                                                                 h->what);
                        g_autofree char *body = health_body(h);
                        notify(n, h->id, h->bad ? "linkprobe-bad" : "linkprobe-ok", h->bad ? "device.error" : "device",
                               h->bad ? 2 : 1, title, body, path);
                        h->told = true, h->told_bad = h->bad, h->told_at = now, h->changes = 0;
                }
        if (next_due != UINT64_MAX)
                notifier_schedule(n, (unsigned) MIN((next_due - now) / 1000 + 1, (uint64_t) G_MAXUINT));
}

static gboolean on_flush(gpointer userdata) {
        Notifier *n = userdata;

        n->flush_timer = 0;
        n->merge_started = 0;
        flush_thunderbolt(n);
        flush_health(n);
        return G_SOURCE_REMOVE;
}

static void notifier_schedule(Notifier *n, unsigned msec) {
        if (n->flush_timer)
                return;
        n->flush_timer = g_timeout_add(msec, on_flush, n);
}

unsigned notifier_merge_msec(const Notifier *n) {
        uint64_t watch_msec = n->watch_usec / 1000;

        return (unsigned) MIN(MAX((uint64_t) MERGE_MSEC, watch_msec + watch_msec / 2), (uint64_t) 60000);
}

/* An event: the flush waits for the merge window after it, unless the first event it merges has already
 * waited MERGE_MAX_WINDOWS windows (a storm is told while it goes on, not after). */
static void notifier_merge(Notifier *n) {
        uint64_t now = (uint64_t) g_get_monotonic_time(), window = notifier_merge_msec(n);

        if (n->flush_timer && n->merge_started && now - n->merge_started >= MERGE_MAX_WINDOWS * window * 1000)
                return;
        if (n->flush_timer)
                g_source_remove(n->flush_timer);
        if (!n->merge_started)
                n->merge_started = now;
        n->flush_timer = g_timeout_add((guint) window, on_flush, n);
}

void notifier_set_watch_interval(Notifier *n, uint64_t usec) {
        if (n->watch_usec == usec)
                return;
        n->watch_usec = usec;
        log_info("linkprobed watches every %" PRIu64 " µs: notifications merge over %u ms.", usec,
                 notifier_merge_msec(n));
}

void notifier_thunderbolt(Notifier *n, const char *path, int depth, bool degraded, const char *title,
                          const char *body, const char *line) {
        TbtEvent *e;

        if (!n->config.thunderbolt)
                return;
        /* A hundred devices plugged at once are still one notification; keep what it can name. */
        if (n->tbt->len >= 1000)
                return;
        e = g_new0(TbtEvent, 1);
        e->depth = depth;
        e->degraded = degraded;
        e->title = g_strdup(title);
        e->body = g_strdup(body);
        e->line = g_strdup(line);
        g_ptr_array_add(n->tbt, e);
        notifier_merge(n);
}

void notifier_health(Notifier *n, const char *path, const char *what, bool bad, const char *text) {
        HealthState *h = g_hash_table_lookup(n->health, path);

        if (!h) {
                /* Bounded: past this many objects the oldest knowledge is not worth the memory. */
                if (g_hash_table_size(n->health) >= 10000)
                        g_hash_table_remove_all(n->health);
                h = g_new0(HealthState, 1);
                g_hash_table_insert(n->health, g_strdup(path), h);
        }
        g_free(h->what);
        h->what = g_strdup(what);
        g_free(h->text);
        h->text = g_strdup(text);
        h->bad = bad;
        h->changes++;
        h->pending = true;
        notifier_merge(n);
}

static int on_capabilities(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Notifier *n = userdata;
        g_auto(GStrv) caps = NULL;

        if (sd_bus_message_is_method_error(reply, NULL) || sd_bus_message_read_strv(reply, &caps) < 0)
                return 0;
        n->markup = g_strv_contains((const char * const *) caps, "body-markup");
        log_debug("The notification daemon %s markup.", n->markup ? "reads" : "does not read");
        return 0;
}

static void ask_capabilities(Notifier *n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

        if (sd_bus_message_new_method_call(n->bus, &m, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_NAME, "GetCapabilities") >= 0 &&
            sd_bus_message_set_auto_start(m, false) >= 0)
                (void) sd_bus_call_async(n->bus, NULL, m, on_capabilities, n, 0);
}

static int on_daemon_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Notifier *n = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(msg, "sss", &name, &old_owner, &new_owner) >= 0 && streq(name, NOTIFY_NAME) &&
            !isempty(new_owner))
                ask_capabilities(n);
        return 0;
}

Notifier *notifier_new(sd_bus *session, const AppletConfig *config, const char *icon_dir) {
        Notifier *n = g_new0(Notifier, 1);

        n->bus = sd_bus_ref(session);
        n->config = *config;
        n->icon_dir = g_strdup(icon_dir);
        n->health = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, health_state_free);
        n->tbt = g_ptr_array_new_with_free_func(tbt_event_free);
        /* Until the daemon says otherwise, escape: escaped text shown literally is ugly, markup
         * interpreted where it was a name is wrong. */
        n->markup = true;
        (void) sd_bus_add_match_async(session, NULL,
                                      "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                                      "member='NameOwnerChanged',arg0='" NOTIFY_NAME "'",
                                      on_daemon_owner_changed, NULL, n);
        ask_capabilities(n);
        return n;
}

void notifier_free(Notifier *n) {
        if (!n)
                return;
        if (n->flush_timer)
                g_source_remove(n->flush_timer);
        g_hash_table_unref(n->health);
        g_ptr_array_unref(n->tbt);
        sd_bus_unref(n->bus);
        g_free(n->icon_dir);
        g_free(n);
}
