/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one printer: text is always rendered from the very JSON that --json would print, so the two
 * cannot disagree (iproute2's print_* idea, with the model built first). */
#include "linkprobectl-format.h"
#include "linkprobectl-options.h"
#include "linkprobectl-output.h"
#include "linkprobectl-terminal.h"
#include "shared/format-table.h"
#include "shared/json-util.h"
#include "shared/string-util.h"

static int json_flags(bool stream) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
        bool pretty = arg_json == JSON_PRETTY || (arg_json == JSON_AUTO && !stream && ctl_stdout_is_tty());

        return flags | (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);
}

static int print_json(json_object *doc, bool stream) {
        const char *text = json_object_to_json_string_ext(doc, json_flags(stream));
        if (!text || puts(text) == EOF || fflush(stdout) == EOF)
                return CTL_EXIT_FAILURE;
        return 0;
}

int ctl_output_json(json_object *doc) {
        return print_json(doc, false);
}

int ctl_output_json_line(json_object *doc) {
        return print_json(doc, true);
}

static char *format_cell(json_object *row, const char *key, CtlFormat format) {
        json_object *value = ctl_member(row, key);
        return (format ?: ctl_format_value)(row, key, value);
}

static const char *cell_colour(json_object *row, const char *key, CtlColour colour) {
        return colour ? colour(row, key, ctl_member(row, key)) : NULL;
}

static int add_row(TextTable *t, const CtlTableView *view, json_object *row, const char *prefix) {
        for (size_t c = 0; c < view->n_columns; c++) {
                const CtlColumn *col = &view->columns[c];
                _cleanup_(freep) char *text = format_cell(row, col->key, col->format), *full = NULL;

                if (c == 0 && !isempty(prefix)) {
                        if (asprintf(&full, "%s%s", prefix, text ?: "-") < 0)
                                return -ENOMEM;
                        free_and_replace(text, full);
                }
                int r = text_table_add(t, text, cell_colour(row, col->key, col->colour));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A tree's rows depth first: "├─ " / "└─ " before a child, "│  " or "   " for each open ancestor
 * below the roots. Returns the number of rows added, or -errno. */
static ssize_t add_rows(TextTable *t, const CtlTableView *view, json_object *rows, const char *prefix, bool root,
                        unsigned depth) {
        size_t n = json_object_array_length(rows);
        ssize_t added = 0;

        /* No real tree is this deep; this only bounds the work on a broken answer. */
        if (depth > 64)
                return 0;
        for (size_t i = 0; i < n; i++) {
                json_object *row = json_object_array_get_idx(rows, i), *children;
                bool last = i + 1 == n;
                _cleanup_(freep) char *own = NULL, *below = NULL;

                if (asprintf(&own, "%s%s", prefix, root ? "" : last ? "└─ " : "├─ ") < 0 ||
                    asprintf(&below, "%s%s", prefix, root ? "" : last ? "   " : "│  ") < 0)
                        return -ENOMEM;
                int r = add_row(t, view, row, own);
                if (r < 0)
                        return r;
                added++;
                children = view->children ? ctl_member(row, view->children) : NULL;
                if (children && json_object_is_type(children, json_type_array)) {
                        ssize_t k = add_rows(t, view, children, below, false, depth + 1);
                        if (k < 0)
                                return k;
                        added += k;
                }
        }
        return added;
}

int ctl_output_table(json_object *rows, const CtlTableView *view) {
        _cleanup_(text_table_freep) TextTable *t = NULL;
        _cleanup_(freep) const char **headers = NULL;
        ssize_t n;

        if (arg_json != JSON_OFF)
                return ctl_output_json(rows);

        if (json_object_array_length(rows) == 0) {
                if (arg_legend && view->empty)
                        printf("%s\n", view->empty);
                return fflush(stdout) == 0 ? 0 : CTL_EXIT_FAILURE;
        }

        headers = new0(const char *, view->n_columns);
        if (!headers)
                return log_oom_ctl();
        for (size_t c = 0; c < view->n_columns; c++)
                headers[c] = view->columns[c].header;
        t = text_table_new(headers, view->n_columns);
        if (!t)
                return log_oom_ctl();
        for (size_t c = 0; c < view->n_columns; c++)
                text_table_set_fit(t, c, view->columns[c].fit);
        text_table_set_width(t, ctl_table_width());
        text_table_set_colour(t, ctl_colour());
        text_table_set_keep_rows(t, view->matrix);

        n = add_rows(t, view, rows, "", true, 0);
        if (n < 0)
                return log_oom_ctl();
        text_table_print(t, stdout, arg_legend);
        if (view->notes)
                view->notes(rows, stdout);
        if (arg_legend) {
                _cleanup_(freep) char *footer = view->footer ? view->footer(rows) : NULL;
                if (footer)
                        printf("\n%s.\n", footer);
                else
                        printf("\n%zd %s listed.\n", n, n == 1 ? view->noun : view->nouns);
        }
        return fflush(stdout) == 0 ? 0 : CTL_EXIT_FAILURE;
}

static size_t label_width(const CtlDetailView *view) {
        size_t w = 0;
        for (size_t i = 0; i < view->n_fields; i++)
                w = MAX(w, text_display_width(view->fields[i].label));
        return w;
}

static void print_field(const char *label, size_t width, const char *text, const char *colour) {
        bool first = true;

        /* One line per line of the value; the label on the first only. */
        for (const char *line = text;; first = false) {
                const char *end = strchrnul(line, '\n');
                _cleanup_(freep) char *part = strndup(line, end - line), *escaped = NULL;

                escaped = part ? escape_for_terminal(part) : NULL;
                size_t pad = width - text_display_width(first ? label : "");
                printf("%*s%s%s %s%s%s\n", (int) pad, "", first ? label : "", first ? ":" : " ",
                       colour ? colour : "", strna(escaped), colour ? ANSI_NORMAL : "");
                if (*end == '\0')
                        break;
                line = end + 1;
        }
}

static void print_details(json_object *o, const CtlDetailView *view, size_t width) {
        if (view->title) {
                _cleanup_(freep) char *title = view->title(o, NULL, NULL), *escaped = NULL;
                escaped = escape_for_terminal(strna(title));
                printf("%s\n", strna(escaped));
        }
        for (size_t i = 0; i < view->n_fields; i++) {
                const CtlField *field = &view->fields[i];
                _cleanup_(freep) char *text = format_cell(o, field->key, field->format);

                if (!text && field->optional)
                        continue;
                print_field(field->label, width, text ?: "-",
                            ctl_colour() ? cell_colour(o, field->key, field->colour) : NULL);
        }
}

int ctl_output_details(json_object *doc, const CtlDetailView *view) {
        size_t width = label_width(view);

        if (arg_json != JSON_OFF)
                return ctl_output_json(doc);
        if (!json_object_is_type(doc, json_type_array))
                print_details(doc, view, width);
        else if (json_object_array_length(doc) == 0 && view->empty && arg_legend)
                printf("%s\n", view->empty);
        else
                for (size_t i = 0; i < json_object_array_length(doc); i++) {
                        if (i > 0)
                                putchar('\n');
                        print_details(json_object_array_get_idx(doc, i), view, width);
                }
        return fflush(stdout) == 0 ? 0 : CTL_EXIT_FAILURE;
}
