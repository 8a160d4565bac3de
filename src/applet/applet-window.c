/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-window.c — the details window.
 *
 * The picture comes from linkprobectl run as a child (the applet draws nothing of the topology
 * itself: one drawing, the CLI's, for people and for the window). A change of the objects redraws it
 * after REDRAW_DEBOUNCE_MS of quiet, one child at a time; a change during a run asks for one more
 * run after it. Where `topo --svg` fails (a linkprobectl without it, or an error), the text of
 * `topo` is shown instead, with what --svg said. */
#include <gtk/gtk.h>
#include <librsvg/rsvg.h>

#include "applet-text.h"
#include "applet-window.h"
#include "shared/log.h"
#include "shared/macros.h"

#define REDRAW_DEBOUNCE_MS 1000

struct DetailsWindow {
        char *ctl;
        char *bus_option;       /* --bus-address=ADDR or --system */
        GtkWidget *window, *header, *status, *stack, *drawing, *text;
        RsvgHandle *svg;
        GSubprocess *child;
        GCancellable *cancel;
        bool again;
        guint debounce;
};

static gboolean on_draw(GtkWidget *widget, cairo_t *cr, gpointer userdata) {
        DetailsWindow *w = userdata;
        double width, height;

        if (!w->svg)
                return FALSE;
        if (!rsvg_handle_get_intrinsic_size_in_pixels(w->svg, &width, &height))
                width = height = 600;
        RsvgRectangle viewport = { 0, 0, width, height };
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_paint(cr);
        rsvg_handle_render_document(w->svg, cr, &viewport, NULL);
        return FALSE;
}

static void show_text(DetailsWindow *w, const char *text) {
        gtk_text_buffer_set_text(gtk_text_view_get_buffer(GTK_TEXT_VIEW(w->text)), text, -1);
        gtk_stack_set_visible_child_name(GTK_STACK(w->stack), "text");
}

static void run_ctl(DetailsWindow *w, bool svg);

static void on_ctl_done(GObject *source, GAsyncResult *result, gpointer userdata) {
        DetailsWindow *w = userdata;
        GSubprocess *child = G_SUBPROCESS(source);
        g_autoptr(GBytes) out = NULL, err = NULL;
        g_autoptr(GError) error = NULL;
        bool svg = GPOINTER_TO_INT(g_object_get_data(source, "svg"));
        gsize len = 0;
        const char *data;

        if (!g_subprocess_communicate_finish(child, result, &out, &err, &error)) {
                if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                        return;
                log_warning("linkprobectl: %s", error->message);
        }
        g_clear_object(&w->child);
        data = out ? g_bytes_get_data(out, &len) : NULL;
        bool ok = !error && g_subprocess_get_if_exited(child) && g_subprocess_get_exit_status(child) == 0;

        if (svg && ok && len > 0) {
                g_autoptr(GError) svg_error = NULL;
                RsvgHandle *handle = rsvg_handle_new_from_data((const guint8 *) data, len, &svg_error);
                if (handle) {
                        double width = 600, height = 400;
                        g_clear_object(&w->svg);
                        w->svg = handle;
                        rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height);
                        gtk_widget_set_size_request(w->drawing, (int) MIN(width, 8000), (int) MIN(height, 8000));
                        gtk_stack_set_visible_child_name(GTK_STACK(w->stack), "picture");
                        gtk_widget_queue_draw(w->drawing);
                        log_info("Details window: the node's picture (%zu bytes of SVG).", (size_t) len);
                } else
                        log_warning("linkprobectl topo --svg wrote no SVG librsvg can read: %s", svg_error->message);
                ok = handle != NULL;
        }
        if (svg && !ok) {
                gsize err_len = 0;
                const char *err_data = err ? g_bytes_get_data(err, &err_len) : NULL;
                g_autofree char *why = text_clean_lines(err_data, MIN(err_len, (gsize) 300));
                log_info("linkprobectl topo --svg did not draw (%s); showing the text of linkprobectl topo.",
                         *g_strstrip(why) ? why : "no message");
                run_ctl(w, false);
                return;
        }
        if (!svg) {
                gsize err_len = 0;
                const char *err_data = err ? g_bytes_get_data(err, &err_len) : NULL;
                g_autofree char *text = text_clean_lines(ok ? data : err_data, ok ? len : err_len);
                show_text(w, *text ? text : "linkprobectl topo failed and said nothing");
                log_info("Details window: the text of linkprobectl topo%s.", ok ? "" : " (its error)");
        }
        if (w->again) {
                w->again = false;
                run_ctl(w, true);
        }
}

static void run_ctl(DetailsWindow *w, bool svg) {
        g_autoptr(GError) error = NULL;
        const char *argv_svg[] = { w->ctl, w->bus_option, "--no-pager", "topo", "--svg", NULL };
        const char *argv_text[] = { w->ctl, w->bus_option, "--no-pager", "topo", NULL };

        if (w->child) {
                w->again = true;
                return;
        }
        w->child = g_subprocess_newv(svg ? argv_svg : argv_text,
                                     G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
        if (!w->child) {
                g_autofree char *msg = g_strdup_printf("Cannot run %s: %s", w->ctl, error->message);
                log_warning("Details window: %s", msg);
                show_text(w, msg);
                return;
        }
        g_object_set_data(G_OBJECT(w->child), "svg", GINT_TO_POINTER(svg));
        g_subprocess_communicate_async(w->child, NULL, w->cancel, on_ctl_done, w);
}

static gboolean on_debounce(gpointer userdata) {
        DetailsWindow *w = userdata;

        w->debounce = 0;
        if (gtk_widget_get_visible(w->window))
                run_ctl(w, true);
        return G_SOURCE_REMOVE;
}

DetailsWindow *details_window_new(const char *ctl, const char *bus_address) {
        DetailsWindow *w = g_new0(DetailsWindow, 1);
        GtkWidget *box, *scroll_picture, *scroll_text;

        w->ctl = g_strdup(ctl);
        w->bus_option = bus_address ? g_strdup_printf("--bus-address=%s", bus_address) : g_strdup("--system");
        w->cancel = g_cancellable_new();
        w->window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
        gtk_window_set_title(GTK_WINDOW(w->window), "linkprobe — details");
        gtk_window_set_default_size(GTK_WINDOW(w->window), 720, 480);
        gtk_window_move(GTK_WINDOW(w->window), 40, 60);
        gtk_window_set_icon_name(GTK_WINDOW(w->window), "linkprobe");
        /* Closing hides: the applet lives on, and the next click shows it again. */
        g_signal_connect(w->window, "delete-event", G_CALLBACK(gtk_widget_hide_on_delete), NULL);

        box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
        gtk_container_set_border_width(GTK_CONTAINER(box), 8);
        w->header = gtk_label_new(NULL);
        gtk_label_set_xalign(GTK_LABEL(w->header), 0);
        gtk_label_set_selectable(GTK_LABEL(w->header), TRUE);
        /* Selectable for copying, but not focused: a first focus would select the whole line. */
        gtk_widget_set_can_focus(w->header, FALSE);
        gtk_label_set_line_wrap(GTK_LABEL(w->header), TRUE);
        w->status = gtk_label_new(NULL);
        gtk_label_set_xalign(GTK_LABEL(w->status), 0);

        w->drawing = gtk_drawing_area_new();
        g_signal_connect(w->drawing, "draw", G_CALLBACK(on_draw), w);
        scroll_picture = gtk_scrolled_window_new(NULL, NULL);
        gtk_container_add(GTK_CONTAINER(scroll_picture), w->drawing);

        w->text = gtk_text_view_new();
        gtk_text_view_set_editable(GTK_TEXT_VIEW(w->text), FALSE);
        gtk_text_view_set_monospace(GTK_TEXT_VIEW(w->text), TRUE);
        scroll_text = gtk_scrolled_window_new(NULL, NULL);
        gtk_container_add(GTK_CONTAINER(scroll_text), w->text);

        w->stack = gtk_stack_new();
        gtk_stack_add_named(GTK_STACK(w->stack), scroll_picture, "picture");
        gtk_stack_add_named(GTK_STACK(w->stack), scroll_text, "text");
        gtk_widget_set_vexpand(w->stack, TRUE);

        gtk_box_pack_start(GTK_BOX(box), w->header, FALSE, FALSE, 0);
        gtk_box_pack_start(GTK_BOX(box), w->status, FALSE, FALSE, 0);
        gtk_box_pack_start(GTK_BOX(box), w->stack, TRUE, TRUE, 0);
        gtk_container_add(GTK_CONTAINER(w->window), box);
        gtk_widget_show_all(box);
        return w;
}

void details_window_free(DetailsWindow *w) {
        if (!w)
                return;
        g_cancellable_cancel(w->cancel);
        if (w->debounce)
                g_source_remove(w->debounce);
        g_clear_object(&w->child);
        g_clear_object(&w->cancel);
        g_clear_object(&w->svg);
        gtk_widget_destroy(w->window);
        g_free(w->ctl);
        g_free(w->bus_option);
        g_free(w);
}

void details_window_present(DetailsWindow *w, const char *header, const char *status) {
        g_autofree char *clean = text_clean(header, 400);

        gtk_label_set_text(GTK_LABEL(w->header), clean);
        gtk_label_set_text(GTK_LABEL(w->status), status ?: "");
        gtk_window_present(GTK_WINDOW(w->window));
        run_ctl(w, true);
}

void details_window_objects_changed(DetailsWindow *w, const char *status) {
        gtk_label_set_text(GTK_LABEL(w->status), status ?: "");
        if (!gtk_widget_get_visible(w->window) || w->debounce)
                return;
        w->debounce = g_timeout_add(REDRAW_DEBOUNCE_MS, on_debounce, w);
}
