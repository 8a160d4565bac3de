/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "format-table.h"
#include "string-util.h"

#define ANSI_NORMAL "\033[0m"
/* Never ellipsize a column narrower than this (or its header), or nothing readable is left. */
#define COLUMN_WIDTH_MIN 4

typedef struct Cell {
        char *text;
        const char *colour;
} Cell;

struct TextTable {
        size_t n_columns;
        char **headers;
        bool *right;
        Cell *cells; /* n_cells, row by row */
        size_t n_cells;
        size_t width; /* 0: no limit */
        bool colour;
};

TextTable *text_table_new(const char *const *headers, size_t n_columns) {
        TextTable *t = new0(TextTable, 1);

        if (!t)
                return NULL;
        t->n_columns = n_columns;
        t->headers = new0(char *, n_columns);
        t->right = new0(bool, n_columns);
        if (!t->headers || !t->right)
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

void text_table_set_width(TextTable *t, size_t width) {
        t->width = width;
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

/* Shrinks the widest column by one until the table fits, none below its floor. */
static void fit(TextTable *t, size_t *width, const size_t *floor) {
        size_t total = 2 * (t->n_columns - 1);

        for (size_t c = 0; c < t->n_columns; c++)
                total += width[c];
        while (total > t->width) {
                size_t widest = SIZE_MAX;
                for (size_t c = 0; c < t->n_columns; c++)
                        if (width[c] > floor[c] && (widest == SIZE_MAX || width[c] > width[widest]))
                                widest = c;
                if (widest == SIZE_MAX)
                        return; /* as narrow as it gets */
                width[widest]--;
                total--;
        }
}

int text_table_print(TextTable *t, FILE *f, bool legend) {
        _cleanup_(freep) size_t *width = new0(size_t, t->n_columns), *floor = new0(size_t, t->n_columns);
        size_t n_rows = text_table_rows(t);

        if (!width || !floor)
                return -ENOMEM;
        for (size_t c = 0; c < t->n_columns; c++) {
                size_t header = text_display_width(t->headers[c]);
                width[c] = legend ? header : 0;
                for (size_t r = 0; r < n_rows; r++)
                        width[c] = MAX(width[c], text_display_width(t->cells[r * t->n_columns + c].text));
                /* Right-aligned columns hold numbers: a cut number would be a wrong one. */
                floor[c] = t->right[c] ? width[c] : MIN(width[c], MAX(header, (size_t) COLUMN_WIDTH_MIN));
        }
        if (t->width > 0 && t->n_columns > 0)
                fit(t, width, floor);

        if (legend) {
                for (size_t c = 0; c < t->n_columns; c++)
                        print_cell(t, f, NULL, t->headers[c], width[c], t->right[c], c + 1 == t->n_columns);
                fputc('\n', f);
        }
        for (size_t r = 0; r < n_rows; r++) {
                for (size_t c = 0; c < t->n_columns; c++) {
                        const Cell *cell = &t->cells[r * t->n_columns + c];
                        print_cell(t, f, cell, cell->text, width[c], t->right[c], c + 1 == t->n_columns);
                }
                fputc('\n', f);
        }
        return ferror(f) ? -EIO : 0;
}
