/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-sni.c — org.kde.StatusNotifierItem over sd-bus.
 *
 * The item owns org.kde.StatusNotifierItem-<pid>-1 and registers that name with the watcher; when
 * the watcher (the tray host's side) comes or comes back, it registers again; when there is none, it
 * says so once and waits. The icon goes by name (IconThemePath points at our icons where they are not
 * installed in the theme) and as pixmaps rendered from the same SVG, which every host can draw. */
#include <cairo.h>
#include <glib.h>
#include <librsvg/rsvg.h>
#include <unistd.h>

#include "applet-menu.h"
#include "applet-sni.h"
#include "applet-text.h"
#include "shared/log.h"
#include "shared/macros.h"

#define SNI_INTERFACE "org.kde.StatusNotifierItem"
#define WATCHER_NAME "org.kde.StatusNotifierWatcher"
#define WATCHER_PATH "/StatusNotifierWatcher"

static const int pixmap_sizes[] = { 16, 22, 24, 32, 48 };

struct Sni {
        sd_bus *bus;
        sd_bus_slot *vtable_slot;
        char *name;
        char *icon_dir;
        char *icon_name;
        char *tooltip_title;     /* markup-escaped */
        char *tooltip_body;      /* markup-escaped */
        GHashTable *pixmaps;     /* icon name → GPtrArray of GBytes (width, height, ARGB) */
        bool said_no_watcher;
        void (*activate)(void *userdata);
        void *userdata;
};

/* One ARGB32 image in network byte order, not premultiplied, as the protocol wants. */
static GBytes *render_pixmap(RsvgHandle *svg, int size) {
        cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, size, size);
        cairo_t *cr = cairo_create(surface);
        RsvgRectangle viewport = { 0, 0, size, size };
        GBytes *out = NULL;

        if (rsvg_handle_render_document(svg, cr, &viewport, NULL)) {
                cairo_surface_flush(surface);
                const uint8_t *data = cairo_image_surface_get_data(surface);
                int stride = cairo_image_surface_get_stride(surface);
                uint8_t *argb = g_malloc((size_t) size * size * 4);
                for (int y = 0; y < size; y++)
                        for (int x = 0; x < size; x++) {
                                uint32_t px = *(const uint32_t *) (const void *) (data + y * stride + x * 4);
                                uint8_t a = px >> 24, *o = argb + ((size_t) y * size + x) * 4;
                                uint32_t rgb[3] = { (px >> 16) & 0xff, (px >> 8) & 0xff, px & 0xff };
                                o[0] = a;
                                for (int c = 0; c < 3; c++)
                                        o[1 + c] = a ? (uint8_t) MIN(255u, rgb[c] * 255u / a) : 0;
                        }
                out = g_bytes_new_take(argb, (size_t) size * size * 4);
        }
        cairo_destroy(cr);
        cairo_surface_destroy(surface);
        return out;
}

static GPtrArray *sni_pixmaps(Sni *s, const char *icon_name) {
        GPtrArray *list = g_hash_table_lookup(s->pixmaps, icon_name);
        g_autofree char *file = NULL;
        g_autoptr(GError) error = NULL;
        RsvgHandle *svg;

        if (list)
                return list;
        list = g_ptr_array_new_with_free_func((GDestroyNotify) g_bytes_unref);
        g_hash_table_insert(s->pixmaps, g_strdup(icon_name), list);
        file = g_strdup_printf("%s/%s.svg", s->icon_dir, icon_name);
        svg = rsvg_handle_new_from_file(file, &error);
        if (!svg) {
                log_warning("Cannot load the icon %s: %s", file, error->message);
                return list;
        }
        for (size_t k = 0; k < ELEMENTSOF(pixmap_sizes); k++) {
                GBytes *b = render_pixmap(svg, pixmap_sizes[k]);
                if (b)
                        g_ptr_array_add(list, b);
        }
        g_object_unref(svg);
        return list;
}

static int append_pixmaps(sd_bus_message *reply, Sni *s, const char *icon_name) {
        GPtrArray *list = icon_name ? sni_pixmaps(s, icon_name) : NULL;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(iiay)");
        for (unsigned k = 0; r >= 0 && list && k < list->len; k++) {
                gsize len;
                const void *data = g_bytes_get_data(g_ptr_array_index(list, k), &len);
                int size = pixmap_sizes[k];
                r = sd_bus_message_open_container(reply, 'r', "iiay");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "ii", size, size);
                if (r >= 0)
                        r = sd_bus_message_append_array(reply, 'y', data, len);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Sni *s = userdata;

        if (streq(property, "Category"))
                return sd_bus_message_append(reply, "s", "Hardware");
        if (streq(property, "Id"))
                return sd_bus_message_append(reply, "s", "linkprobe-applet");
        if (streq(property, "Title"))
                return sd_bus_message_append(reply, "s", "linkprobe");
        if (streq(property, "Status"))
                return sd_bus_message_append(reply, "s", "Active");
        if (streq(property, "WindowId"))
                return sd_bus_message_append(reply, "i", 0);
        if (streq(property, "IconName"))
                return sd_bus_message_append(reply, "s", s->icon_name);
        if (streq(property, "IconThemePath"))
                return sd_bus_message_append(reply, "s", s->icon_dir);
        if (streq(property, "IconPixmap"))
                return append_pixmaps(reply, s, s->icon_name);
        if (streq(property, "OverlayIconName") || streq(property, "AttentionIconName") ||
            streq(property, "AttentionMovieName"))
                return sd_bus_message_append(reply, "s", "");
        if (streq(property, "OverlayIconPixmap") || streq(property, "AttentionIconPixmap"))
                return append_pixmaps(reply, s, NULL);
        if (streq(property, "ItemIsMenu"))
                return sd_bus_message_append(reply, "b", 0);
        if (streq(property, "Menu"))
                return sd_bus_message_append(reply, "o", MENU_PATH);
        if (streq(property, "ToolTip")) {
                int r = sd_bus_message_open_container(reply, 'r', "sa(iiay)ss");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "s", s->icon_name);
                if (r >= 0)
                        r = append_pixmaps(reply, s, NULL);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "ss", s->tooltip_title, s->tooltip_body);
                if (r < 0)
                        return r;
                return sd_bus_message_close_container(reply);
        }
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "No property %s.", property);
}

static int method_activate(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Sni *s = userdata;

        if (s->activate)
                s->activate(s->userdata);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_ignore(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        /* ContextMenu: hosts show the dbusmenu themselves; Scroll: nothing to scroll through. */
        return sd_bus_reply_method_return(msg, NULL);
}

#define SNI_PROPERTY(name, sig) SD_BUS_PROPERTY(name, sig, property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION)

static const sd_bus_vtable sni_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Category", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Id", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Title", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SNI_PROPERTY("Status", "s"),
        SD_BUS_PROPERTY("WindowId", "i", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SNI_PROPERTY("IconName", "s"),
        SNI_PROPERTY("IconPixmap", "a(iiay)"),
        SD_BUS_PROPERTY("IconThemePath", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SNI_PROPERTY("OverlayIconName", "s"),
        SNI_PROPERTY("OverlayIconPixmap", "a(iiay)"),
        SNI_PROPERTY("AttentionIconName", "s"),
        SNI_PROPERTY("AttentionIconPixmap", "a(iiay)"),
        SNI_PROPERTY("AttentionMovieName", "s"),
        SNI_PROPERTY("ToolTip", "(sa(iiay)ss)"),
        SD_BUS_PROPERTY("ItemIsMenu", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Menu", "o", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_METHOD("ContextMenu", "ii", "", method_ignore, 0),
        SD_BUS_METHOD("Activate", "ii", "", method_activate, 0),
        SD_BUS_METHOD("SecondaryActivate", "ii", "", method_activate, 0),
        SD_BUS_METHOD("Scroll", "is", "", method_ignore, 0),
        SD_BUS_SIGNAL("NewTitle", "", 0),
        SD_BUS_SIGNAL("NewIcon", "", 0),
        SD_BUS_SIGNAL("NewAttentionIcon", "", 0),
        SD_BUS_SIGNAL("NewOverlayIcon", "", 0),
        SD_BUS_SIGNAL("NewToolTip", "", 0),
        SD_BUS_SIGNAL("NewStatus", "s", 0),
        SD_BUS_VTABLE_END,
};

static int on_registered(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Sni *s = userdata;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                if (!s->said_no_watcher)
                        log_notice("No tray host (%s: %s); the icon appears when a panel with a "
                                   "StatusNotifierItem tray starts.", WATCHER_NAME, e->message ?: e->name);
                s->said_no_watcher = true;
                return 0;
        }
        log_info("Registered %s with %s.", s->name, WATCHER_NAME);
        s->said_no_watcher = false;
        return 0;
}

static void sni_register(Sni *s) {
        /* No auto-start: a watcher is a tray host's, starting one would show nothing. */
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(s->bus, &m, WATCHER_NAME, WATCHER_PATH, WATCHER_NAME,
                                           "RegisterStatusNotifierItem");
        if (r >= 0)
                r = sd_bus_message_set_auto_start(m, false);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", s->name);
        if (r >= 0)
                r = sd_bus_call_async(s->bus, NULL, m, on_registered, s, 0);
        if (r < 0)
                log_warning_errno(r, "Cannot register with %s: %m", WATCHER_NAME);
}

static int on_watcher_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Sni *s = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(msg, "sss", &name, &old_owner, &new_owner) < 0 || !streq(name, WATCHER_NAME))
                return 0;
        if (!isempty(new_owner))
                sni_register(s);
        else if (!s->said_no_watcher) {
                log_notice("The tray host went away (%s); waiting for another.", WATCHER_NAME);
                s->said_no_watcher = true;
        }
        return 0;
}

Sni *sni_new(sd_bus *session, const char *icon_dir, void (*activate)(void *userdata), void *userdata) {
        Sni *s = g_new0(Sni, 1);
        int r;

        s->bus = sd_bus_ref(session);
        s->icon_dir = g_strdup(icon_dir);
        s->icon_name = g_strdup("linkprobe-offline");
        s->tooltip_title = g_strdup("linkprobe");
        s->tooltip_body = g_strdup("");
        s->pixmaps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
        s->activate = activate;
        s->userdata = userdata;
        s->name = g_strdup_printf("org.kde.StatusNotifierItem-%d-1", (int) getpid());

        r = sd_bus_add_object_vtable(session, &s->vtable_slot, SNI_PATH, SNI_INTERFACE, sni_vtable, s);
        if (r >= 0)
                r = sd_bus_request_name(session, s->name, 0);
        if (r >= 0)
                r = sd_bus_add_match_async(session, NULL,
                                           "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                                           "member='NameOwnerChanged',arg0='" WATCHER_NAME "'",
                                           on_watcher_owner_changed, NULL, s);
        if (r < 0)
                log_warning_errno(r, "Cannot publish the tray icon: %m");
        sni_register(s);
        return s;
}

void sni_free(Sni *s) {
        if (!s)
                return;
        sd_bus_slot_unref(s->vtable_slot);
        sd_bus_unref(s->bus);
        g_hash_table_unref(s->pixmaps);
        g_free(s->name);
        g_free(s->icon_dir);
        g_free(s->icon_name);
        g_free(s->tooltip_title);
        g_free(s->tooltip_body);
        g_free(s);
}

static bool replace(char **field, char *value) {
        if (streq(*field, value)) {
                g_free(value);
                return false;
        }
        g_free(*field);
        *field = value;
        return true;
}

void sni_update(Sni *s, const char *icon_name, const char *tooltip_title, const char *tooltip_body) {
        if (replace(&s->icon_name, g_strdup(icon_name))) {
                (void) sd_bus_emit_signal(s->bus, SNI_PATH, SNI_INTERFACE, "NewIcon", NULL);
                (void) sd_bus_emit_signal(s->bus, SNI_PATH, SNI_INTERFACE, "NewToolTip", NULL);
        }
        bool title = replace(&s->tooltip_title, text_markup(tooltip_title, 120));
        bool body = replace(&s->tooltip_body, text_markup_lines(tooltip_body));
        if (title || body)
                (void) sd_bus_emit_signal(s->bus, SNI_PATH, SNI_INTERFACE, "NewToolTip", NULL);
}
