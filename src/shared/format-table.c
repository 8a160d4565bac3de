/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "format-table.h"
#include "string-util.h"

#define ANSI_NORMAL "\033[0m"
/* Never ellipsize a column narrower than this (or its header), or nothing readable is left. */
#define COLUMN_WIDTH_MIN 4
#define COLUMN_WEIGHT_DEFAULT 100
#define SEPARATOR_WIDTH 2

typedef struct Cell {
        char *text;
        const char *colour;
} Cell;

struct TextTable {
        size_t n_columns;
        char **headers;
        bool *right;
        TextColumnFit *fit;
        Cell *cells; /* n_cells, row by row */
        size_t n_cells;
        size_t width; /* 0: no limit */
        bool colour;
        bool keep_rows;
};

TextTable *text_table_new(const char *const *headers, size_t n_columns) {
        TextTable *t = new0(TextTable, 1);

        if (!t)
                return NULL;
        t->n_columns = n_columns;
        t->headers = new0(char *, n_columns);
        t->right = new0(bool, n_columns);
        t->fit = new0(TextColumnFit, n_columns);
        if (!t->headers || !t->right || !t->fit)
                return text_table_free(t);
        for (size_t i = 0; i < n_columns; i++) {
                t->right[i] = headers[i][0] == '>';
                t->headers[i] = strdup(headers[i] + t->right[i]);
                if (!t->headers[i])
                        return text_table_free(t);
        }
        return t;
}

TextTable *text_table_free(TextTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; t->headers && i < t->n_columns; i++)
                free(t->headers[i]);
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i].text);
        free(t->headers);
        free(t->right);
        free(t->fit);
        free(t->cells);
        return mfree(t);
}

int text_table_add(TextTable *t, const char *text, const char *colour) {
        Cell *grown = reallocarray(t->cells, t->n_cells + 1, sizeof(Cell));
        if (!grown)
                return -ENOMEM;
        t->cells = grown;
        t->cells[t->n_cells] = (Cell) { .text = escape_for_terminal(text ?: "-"), .colour = colour };
        if (!t->cells[t->n_cells].text)
                return -ENOMEM;
        t->n_cells++;
        return 0;
}

void text_table_set_fit(TextTable *t, size_t column, TextColumnFit fit) {
        if (column < t->n_columns)
                t->fit[column] = fit;
}

void text_table_set_width(TextTable *t, size_t width) {
        t->width = width;
}

void text_table_set_keep_rows(TextTable *t, bool keep) {
        t->keep_rows = keep;
}

void text_table_set_colour(TextTable *t, bool colour) {
        t->colour = colour;
}

size_t text_table_rows(const TextTable *t) {
        return t->n_columns > 0 ? t->n_cells / t->n_columns : 0;
}

size_t text_display_width(const char *s) {
        size_t n = 0;
        for (; *s; s++)
                n += ((unsigned char) *s & 0xC0) != 0x80;
        return n;
}

char *text_ellipsize(const char *s, size_t width) {
        size_t n = 0;
        const char *p = s;

        if (text_display_width(s) <= width)
                return strdup(s);
        if (width == 0)
                return strdup("");
        /* Keep width - 1 code points, then the ellipsis. */
        for (; *p; p++) {
                if (((unsigned char) *p & 0xC0) != 0x80) {
                        if (n == width - 1)
                                break;
                        n++;
                }
        }
        char *r = NULL;
        return asprintf(&r, "%.*s…", (int) (p - s), s) < 0 ? NULL : r;
}

static void print_cell(TextTable *t, FILE *f, const Cell *cell, const char *text, size_t width, bool right,
                       bool last) {
        _cleanup_(freep) char *cut = NULL;
        size_t w = text_display_width(text);

        if (w > width) {
                cut = text_ellipsize(text, width);
                if (cut) {
                        text = cut;
                        w = text_display_width(cut);
                }
        }
        size_t pad = width > w ? width - w : 0;
        bool coloured = t->colour && cell && cell->colour;

        if (right)
                fprintf(f, "%*s", (int) pad, "");
        fprintf(f, "%s%s%s", coloured ? cell->colour : "", text, coloured ? ANSI_NORMAL : "");
        if (!right && !last)
                fprintf(f, "%*s", (int) pad, "");
        if (!last)
                fputs("  ", f);
}

/* What fitting needs to know of each column, and what it decides. */
typedef struct Layout {
        size_t *requested; /* the widest cell (and the header, with the legend) */
        size_t *floor;     /* never narrower than this */
        size_t *width;     /* what it gets */
        bool *shown;
} Layout;

static void layout_done(Layout *l) {
        free(l->requested);
        free(l->floor);
        free(l->width);
        free(l->shown);
}

static size_t sum_shown(const TextTable *t, const Layout *l, const size_t *widths) {
        size_t total = 0, n = 0;

        for (size_t c = 0; c < t->n_columns; c++)
                if (l->shown[c]) {
                        total += widths[c];
                        n++;
                }
        return total + (n > 0 ? SEPARATOR_WIDTH * (n - 1) : 0);
}

/* Leaves out optional columns, highest rank first and the rightmost first among equals, until the
 * minimum widths of what is shown fit (or only essential columns are left). */
static void drop_optional(const TextTable *t, Layout *l) {
        while (sum_shown(t, l, l->floor) > t->width) {
                size_t victim = SIZE_MAX;
                for (size_t c = 0; c < t->n_columns; c++)
                        if (l->shown[c] && t->fit[c].optional > 0 &&
                            (victim == SIZE_MAX || t->fit[c].optional >= t->fit[victim].optional))
                                victim = c;
                if (victim == SIZE_MAX)
                        return;
                l->shown[victim] = false;
        }
}

static unsigned weight_of(const TextTable *t, size_t c) {
        return t->fit[c].weight ?: COLUMN_WEIGHT_DEFAULT;
}

/* Every shown column starts at its floor; the room left is shared by weight. A column whose share
 * would take it to what it asked for gets exactly that, and the sharing starts again without it, so
 * no room goes to a column that cannot use it. What integer division leaves goes one by one from the
 * left. */
static void share_room(const TextTable *t, Layout *l) {
        _cleanup_(freep) bool *settled = new0(bool, t->n_columns);
        size_t room = t->width - MIN(t->width, sum_shown(t, l, l->floor));

        if (!settled) { /* no memory: every column at its floor still fits */
                memcpy(l->width, l->floor, t->n_columns * sizeof(size_t));
                return;
        }
        for (size_t c = 0; c < t->n_columns; c++) {
                l->width[c] = l->floor[c];
                settled[c] = !l->shown[c] || l->floor[c] >= l->requested[c];
        }
        for (bool again = true; again;) {
                uint64_t weights = 0;

                again = false;
                for (size_t c = 0; c < t->n_columns; c++)
                        if (!settled[c])
                                weights += weight_of(t, c);
                if (weights == 0)
                        return;
                for (size_t c = 0; c < t->n_columns; c++) {
                        size_t share = (size_t) ((uint64_t) room * weight_of(t, c) / weights);
                        if (settled[c] || l->floor[c] + share < l->requested[c])
                                continue;
                        /* Each grant is at most its share: one round's grants never exceed the room. */
                        room -= l->requested[c] - l->floor[c];
                        l->width[c] = l->requested[c];
                        settled[c] = again = true;
                }
        }
        uint64_t weights = 0;
        size_t given = 0;
        for (size_t c = 0; c < t->n_columns; c++)
                if (!settled[c])
                        weights += weight_of(t, c);
        for (size_t c = 0; c < t->n_columns; c++)
                if (!settled[c]) {
                        l->width[c] = l->floor[c] + (size_t) ((uint64_t) room * weight_of(t, c) / weights);
                        given += l->width[c] - l->floor[c];
                }
        for (size_t c = 0; c < t->n_columns && given < room; c++)
                if (!settled[c] && l->width[c] < l->requested[c]) {
                        l->width[c]++;
                        given++;
                }
}

static size_t column_floor(const TextTable *t, size_t c, size_t requested) {
        size_t header = text_display_width(t->headers[c]);
        unsigned min = t->fit[c].min_width ?: COLUMN_WIDTH_MIN;

        /* Right-aligned columns hold numbers: a cut number would be a wrong one. */
        if (t->right[c] || min == TEXT_WIDTH_WHOLE)
                return requested;
        return MIN(requested, MAX(header, (size_t) min));
}

static int layout(const TextTable *t, bool legend, Layout *l) {
        size_t n_rows = text_table_rows(t);

        l->requested = new0(size_t, t->n_columns);
        l->floor = new0(size_t, t->n_columns);
        l->width = new0(size_t, t->n_columns);
        l->shown = new0(bool, t->n_columns);
        if (!l->requested || !l->floor || !l->width || !l->shown)
                return -ENOMEM;
        for (size_t c = 0; c < t->n_columns; c++) {
                l->requested[c] = legend ? text_display_width(t->headers[c]) : 0;
                for (size_t r = 0; r < n_rows; r++) {
                        size_t w = text_display_width(t->cells[r * t->n_columns + c].text);
                        l->requested[c] = MAX(l->requested[c], w);
                }
                l->floor[c] = column_floor(t, c, l->requested[c]);
                l->width[c] = l->requested[c];
                l->shown[c] = true;
        }
        if (t->width == 0 || sum_shown(t, l, l->requested) <= t->width)
                return 0;
        drop_optional(t, l);
        share_room(t, l);
        return 0;
}

/* The last column shown is not padded: no trailing blanks. */
static size_t last_shown(const TextTable *t, const Layout *l) {
        size_t last = 0;
        for (size_t c = 0; c < t->n_columns; c++)
                if (l->shown[c])
                        last = c;
        return last;
}

/* Writes text in lines of at most width code points (0: one line), every line after the first indented
 * by indent blanks. Whole values that do not fit are wrapped, never cut: a cut number is a wrong one. */
static void print_wrapped(TextTable *t, FILE *f, const Cell *cell, const char *text, size_t width,
                          size_t indent) {
        bool coloured = t->colour && cell && cell->colour;
        const char *p = text;

        for (bool first = true; first || *p; first = false) {
                const char *end = p;
                for (size_t n = 0; *end && (width == 0 || n < width); n++)
                        do
                                end++;
                        while (((unsigned char) *end & 0xC0) == 0x80);
                if (!first)
                        fprintf(f, "%*s", (int) indent, "");
                fprintf(f, "%s%.*s%s\n", coloured ? cell->colour : "", (int) (end - p), p,
                        coloured ? ANSI_NORMAL : "");
                p = end;
        }
}

/* The record layout, for a width in which not even the essential columns fit side by side: each row
 * becomes a block of "HEADER  value" lines, blocks apart by an empty line (psql's expanded display).
 * Every line then fits whatever the cells hold: a value that may be cut is cut to the room left, but
 * never below its column's minimum; one that may not (numbers, names, states) is wrapped. The columns
 * are the ones the table layout kept, so a narrower width never shows more. */
static void print_records(TextTable *t, FILE *f, const Layout *l) {
        size_t n_rows = text_table_rows(t), label = 0, room;

        for (size_t c = 0; c < t->n_columns; c++)
                if (l->shown[c])
                        label = MAX(label, text_display_width(t->headers[c]));
        /* Under a few characters a line per value helps nobody: then a value takes the line it needs. */
        room = t->width > label + SEPARATOR_WIDTH + COLUMN_WIDTH_MIN ? t->width - label - SEPARATOR_WIDTH : 0;
        for (size_t row = 0; row < n_rows; row++) {
                if (row > 0)
                        fputc('\n', f);
                for (size_t c = 0; c < t->n_columns; c++) {
                        const Cell *cell = &t->cells[row * t->n_columns + c];
                        _cleanup_(freep) char *cut = NULL;
                        const char *text = cell->text;

                        if (!l->shown[c])
                                continue;
                        if (room > 0 && text_display_width(text) > room && l->floor[c] <= room &&
                            l->floor[c] < l->requested[c]) {
                                cut = text_ellipsize(text, room);
                                if (cut)
                                        text = cut;
                        }
                        fprintf(f, "%s%*s", t->headers[c],
                                (int) (label + SEPARATOR_WIDTH - text_display_width(t->headers[c])), "");
                        print_wrapped(t, f, cell, text, room, label + SEPARATOR_WIDTH);
                }
        }
}

int text_table_print(TextTable *t, FILE *f, bool legend) {
        _cleanup_(layout_done) Layout l = {};
        size_t n_rows = text_table_rows(t), last;
        int r;

        r = layout(t, legend, &l);
        if (r < 0)
                return r;
        /* A table without its legend is read by programs, line by line: it keeps its rows, whatever the
         * width. One with a legend is read by a person, who gets records when columns cannot fit. */
        if (legend && !t->keep_rows && t->width > 0 && sum_shown(t, &l, l.floor) > t->width) {
                print_records(t, f, &l);
                return ferror(f) ? -EIO : 0;
        }
        last = last_shown(t, &l);
        if (legend) {
                for (size_t c = 0; c < t->n_columns; c++)
                        if (l.shown[c])
                                print_cell(t, f, NULL, t->headers[c], l.width[c], t->right[c], c == last);
                fputc('\n', f);
        }
        for (size_t row = 0; row < n_rows; row++) {
                for (size_t c = 0; c < t->n_columns; c++) {
                        const Cell *cell = &t->cells[row * t->n_columns + c];
                        if (l.shown[c])
                                print_cell(t, f, cell, cell->text, l.width[c], t->right[c], c == last);
                }
                fputc('\n', f);
        }
        return ferror(f) ? -EIO : 0;
}
