/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-menu.c — com.canonical.dbusmenu over sd-bus.
 *
 * The menu is rebuilt whole on every change (debounced by the caller) and announced with one
 * LayoutUpdated: hosts re-read the layout then. Ids are never reused across rebuilds, so a click on a
 * layout the host has not re-read yet finds no item, rather than the wrong one. */
#include <glib.h>

#include "applet-menu.h"
#include "shared/log.h"
#include "shared/macros.h"

#define MENU_INTERFACE "com.canonical.dbusmenu"

typedef struct MenuItem {
        int32_t id;
        char *label;            /* already a dbusmenu label: "_" doubled, cleaned */
        bool enabled;
        bool separator;
        MenuAction action;
        char *path;
        GPtrArray *children;    /* MenuItem, NULL for a leaf */
} MenuItem;

struct Menu {
        sd_bus *bus;
        sd_bus_slot *slot;
        MenuActivated activated;
        void *userdata;
        uint32_t revision;
        int32_t next_id;
        MenuItem *root;
        GHashTable *by_id;      /* id → MenuItem (borrowed from the tree) */
};

static void menu_item_free(gpointer p) {
        MenuItem *i = p;

        if (!i)
                return;
        g_free(i->label);
        g_free(i->path);
        if (i->children)
                g_ptr_array_unref(i->children);
        g_free(i);
}

static MenuItem *menu_add(Menu *m, MenuItem *parent, const char *raw_label, MenuAction action, const char *path) {
        MenuItem *i = g_new0(MenuItem, 1);

        /* Past INT32_MAX the ids start again above the root's: by then no host holds an old layout. */
        if (m->next_id == INT32_MAX)
                m->next_id = 1;
        i->id = parent ? m->next_id++ : 0;
        i->label = raw_label ? text_menu_label(raw_label, 160) : NULL;
        i->enabled = action != MENU_ACTION_NONE;
        i->action = action;
        i->path = g_strdup(path);
        if (parent) {
                if (!parent->children)
                        parent->children = g_ptr_array_new_with_free_func(menu_item_free);
                g_ptr_array_add(parent->children, i);
        }
        g_hash_table_insert(m->by_id, GINT_TO_POINTER(i->id), i);
        return i;
}

static void menu_add_separator(Menu *m, MenuItem *parent) {
        MenuItem *i = menu_add(m, parent, NULL, MENU_ACTION_NONE, NULL);

        i->separator = true;
}

void menu_update(Menu *m, const View *view, bool running, const char *status) {
        MenuItem *root;

        g_hash_table_remove_all(m->by_id);
        menu_item_free(m->root);
        m->root = root = menu_add(m, NULL, NULL, MENU_ACTION_NONE, NULL);

        if (!running) {
                menu_add(m, root, status, MENU_ACTION_NONE, NULL);
        } else {
                g_autofree char *fastest = g_strdup_printf("Fastest link: %s", view->fastest ?: "none");
                g_autofree char *worst = g_strdup_printf("Health: %s", view->worst_text ?: "nothing to judge");
                menu_add(m, root, fastest, MENU_ACTION_DETAILS, NULL);
                menu_add(m, root, worst, MENU_ACTION_DETAILS, NULL);
                menu_add_separator(m, root);
                for (unsigned g = 0; g < _VIEW_GROUP_MAX; g++) {
                        const ViewGroup *group = &view->groups[g];
                        g_autofree char *title = NULL;
                        MenuItem *sub;
                        unsigned n = group->items->len;

                        if (n == 0)
                                continue;
                        title = g_strdup_printf("%s (%u)", group->title, n);
                        sub = menu_add(m, root, title, MENU_ACTION_DETAILS, NULL);
                        for (unsigned k = 0; k < MIN(n, (unsigned) MENU_GROUP_MAX_ITEMS); k++) {
                                const ViewItem *item = g_ptr_array_index(group->items, k);
                                menu_add(m, sub, item->label, MENU_ACTION_DETAILS, item->path);
                        }
                        if (n > MENU_GROUP_MAX_ITEMS) {
                                g_autofree char *more = g_strdup_printf("… and %u more (%s)", n - MENU_GROUP_MAX_ITEMS,
                                                                        group->more_hint);
                                menu_add(m, sub, more, MENU_ACTION_DETAILS, NULL);
                        }
                }
        }
        menu_add_separator(m, root);
        menu_add(m, root, "Details…", MENU_ACTION_DETAILS, NULL);
        menu_add(m, root, "Quit", MENU_ACTION_QUIT, NULL);

        m->revision++;
        int r = sd_bus_emit_signal(m->bus, MENU_PATH, MENU_INTERFACE, "LayoutUpdated", "ui", m->revision, 0);
        if (r < 0)
                log_debug_errno(r, "Cannot send LayoutUpdated: %m");
}

static bool wanted(char **names, const char *name) {
        return !names || !names[0] || g_strv_contains((const char * const *) names, name);
}

static int append_properties(sd_bus_message *reply, const MenuItem *i, char **names) {
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        if (i->separator && wanted(names, "type"))
                r = sd_bus_message_append(reply, "{sv}", "type", "s", "separator");
        if (r >= 0 && i->label && wanted(names, "label"))
                r = sd_bus_message_append(reply, "{sv}", "label", "s", i->label);
        if (r >= 0 && !i->enabled && !i->separator && wanted(names, "enabled"))
                r = sd_bus_message_append(reply, "{sv}", "enabled", "b", 0);
        if (r >= 0 && i->children && i->id != 0 && wanted(names, "children-display"))
                r = sd_bus_message_append(reply, "{sv}", "children-display", "s", "submenu");
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* (ia{sv}av): the item, its properties, its children (each a variant of the same) to depth levels. */
static int append_layout(sd_bus_message *reply, const MenuItem *i, int depth, char **names) {
        int r;

        r = sd_bus_message_open_container(reply, 'r', "ia{sv}av");
        if (r >= 0)
                r = sd_bus_message_append(reply, "i", i->id);
        if (r >= 0)
                r = append_properties(reply, i, names);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "v");
        for (unsigned k = 0; r >= 0 && depth != 0 && i->children && k < i->children->len; k++) {
                r = sd_bus_message_open_container(reply, 'v', "(ia{sv}av)");
                if (r >= 0)
                        r = append_layout(reply, g_ptr_array_index(i->children, k), depth < 0 ? -1 : depth - 1, names);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static MenuItem *menu_find(Menu *m, int32_t id) {
        return g_hash_table_lookup(m->by_id, GINT_TO_POINTER(id));
}

static int method_get_layout(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Menu *m = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        g_auto(GStrv) names = NULL;
        int32_t parent, depth;
        MenuItem *i;
        int r;

        r = sd_bus_message_read(msg, "ii", &parent, &depth);
        if (r >= 0)
                r = sd_bus_message_read_strv(msg, &names);
        if (r < 0)
                return r;
        i = menu_find(m, parent);
        if (!i)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "No menu item %" PRIi32 ".", parent);
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "u", m->revision);
        if (r >= 0)
                r = append_layout(reply, i, depth, names);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_get_group_properties(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Menu *m = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        g_auto(GStrv) names = NULL;
        const int32_t *ids;
        size_t size;
        int r;

        r = sd_bus_message_read_array(msg, 'i', (const void **) &ids, &size);
        if (r >= 0)
                r = sd_bus_message_read_strv(msg, &names);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ia{sv})");
        for (size_t k = 0; r >= 0 && k < size / sizeof(int32_t); k++) {
                MenuItem *i = menu_find(m, ids[k]);
                if (!i)
                        continue;
                r = sd_bus_message_open_container(reply, 'r', "ia{sv}");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "i", i->id);
                if (r >= 0)
                        r = append_properties(reply, i, names);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_get_property(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Menu *m = userdata;
        int32_t id;
        const char *name;
        MenuItem *i;
        int r;

        r = sd_bus_message_read(msg, "is", &id, &name);
        if (r < 0)
                return r;
        i = menu_find(m, id);
        if (!i)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "No menu item %" PRIi32 ".", id);
        if (streq(name, "label") && i->label)
                return sd_bus_reply_method_return(msg, "v", "s", i->label);
        if (streq(name, "enabled"))
                return sd_bus_reply_method_return(msg, "v", "b", i->enabled);
        if (streq(name, "type") && i->separator)
                return sd_bus_reply_method_return(msg, "v", "s", "separator");
        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Menu item %" PRIi32 " has no property %s.", id,
                                 name);
}

static void menu_activate(Menu *m, int32_t id, const char *event) {
        MenuItem *i = menu_find(m, id);

        if (!i || !streq(event, "clicked") || !i->enabled || i->children)
                return;
        if (m->activated)
                m->activated(i->action, i->path, m->userdata);
}

static int method_event(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Menu *m = userdata;
        int32_t id;
        const char *event;
        int r;

        r = sd_bus_message_read(msg, "is", &id, &event);
        if (r < 0)
                return r;
        if (!menu_find(m, id))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "No menu item %" PRIi32 ".", id);
        menu_activate(m, id, event);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_event_group(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Menu *m = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        g_autoptr(GArray) unknown = g_array_new(FALSE, FALSE, sizeof(int32_t));
        int32_t id;
        const char *event;
        int r;

        r = sd_bus_message_enter_container(msg, 'a', "(isvu)");
        while (r >= 0 && (r = sd_bus_message_enter_container(msg, 'r', "isvu")) > 0) {
                r = sd_bus_message_read(msg, "is", &id, &event);
                if (r >= 0)
                        r = sd_bus_message_skip(msg, "vu");
                if (r >= 0)
                        r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        break;
                if (menu_find(m, id))
                        menu_activate(m, id, event);
                else
                        g_array_append_val(unknown, id);
        }
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'i', unknown->data, unknown->len * sizeof(int32_t));
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_about_to_show(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        /* The menu is always current: nothing to refresh before it opens. */
        return sd_bus_reply_method_return(msg, "b", 0);
}

static int method_about_to_show_group(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(msg, "aiai", 0, 0);
}

static int property_revision_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "u", 3);
}

static int property_icon_theme_path(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "as", 0);
}

static int property_fixed_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", streq(property, "TextDirection") ? "ltr" : "normal");
}

static const sd_bus_vtable menu_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "u", property_revision_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("TextDirection", "s", property_fixed_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Status", "s", property_fixed_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("IconThemePath", "as", property_icon_theme_path, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_METHOD("GetLayout", "iias", "u(ia{sv}av)", method_get_layout, 0),
        SD_BUS_METHOD("GetGroupProperties", "aias", "a(ia{sv})", method_get_group_properties, 0),
        SD_BUS_METHOD("GetProperty", "is", "v", method_get_property, 0),
        SD_BUS_METHOD("Event", "isvu", "", method_event, 0),
        SD_BUS_METHOD("EventGroup", "a(isvu)", "ai", method_event_group, 0),
        SD_BUS_METHOD("AboutToShow", "i", "b", method_about_to_show, 0),
        SD_BUS_METHOD("AboutToShowGroup", "ai", "aiai", method_about_to_show_group, 0),
        SD_BUS_SIGNAL("ItemsPropertiesUpdated", "a(ia{sv})a(ias)", 0),
        SD_BUS_SIGNAL("LayoutUpdated", "ui", 0),
        SD_BUS_SIGNAL("ItemActivationRequested", "iu", 0),
        SD_BUS_VTABLE_END,
};

Menu *menu_new(sd_bus *session, MenuActivated activated, void *userdata) {
        Menu *m = g_new0(Menu, 1);
        int r;

        m->bus = sd_bus_ref(session);
        m->activated = activated;
        m->userdata = userdata;
        m->next_id = 1;
        m->by_id = g_hash_table_new(g_direct_hash, g_direct_equal);
        r = sd_bus_add_object_vtable(session, &m->slot, MENU_PATH, MENU_INTERFACE, menu_vtable, m);
        if (r < 0)
                log_warning_errno(r, "Cannot export the menu: %m");
        menu_update(m, NULL, false, "starting");
        return m;
}

void menu_free(Menu *m) {
        if (!m)
                return;
        sd_bus_slot_unref(m->slot);
        g_hash_table_unref(m->by_id);
        menu_item_free(m->root);
        sd_bus_unref(m->bus);
        g_free(m);
}
