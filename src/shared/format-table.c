/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "format-table.h"
#include "string-util.h"

struct TextTable {
        size_t n_columns;
        char **headers;
        bool *right;
        char **cells; /* n_rows * n_columns */
        size_t n_rows;
};

TextTable *text_table_new(const char *header, ...) {
        TextTable *t = new0(TextTable, 1);
        va_list ap;
        size_t n = 0;

        if (!t)
                return NULL;
        va_start(ap, header);
        for (const char *h = header; h; h = va_arg(ap, const char *))
                n++;
        va_end(ap);

        t->n_columns = n;
        t->headers = new0(char *, n);
        t->right = new0(bool, n);
        if (!t->headers || !t->right)
                return text_table_free(t);

        va_start(ap, header);
        size_t i = 0;
        for (const char *h = header; h; h = va_arg(ap, const char *), i++) {
                t->right[i] = h[0] == '>';
                t->headers[i] = strdup(t->right[i] ? h + 1 : h);
        }
        va_end(ap);
        for (i = 0; i < n; i++)
                if (!t->headers[i])
                        return text_table_free(t);
        return t;
}

TextTable *text_table_free(TextTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; t->headers && i < t->n_columns; i++)
                free(t->headers[i]);
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
                free(t->cells[i]);
        free(t->headers);
        free(t->right);
        free(t->cells);
        return mfree(t);
}

int text_table_add_row(TextTable *t, ...) {
        va_list ap;
        char **grown = reallocarray(t->cells, (t->n_rows + 1) * t->n_columns, sizeof(char *));
        if (!grown)
                return -ENOMEM;
        t->cells = grown;

        va_start(ap, t);
        for (size_t i = 0; i < t->n_columns; i++) {
                const char *s = va_arg(ap, const char *);
                t->cells[t->n_rows * t->n_columns + i] = escape_for_terminal(s ?: "-");
        }
        va_end(ap);
        t->n_rows++;

        for (size_t i = 0; i < t->n_columns; i++)
                if (!t->cells[(t->n_rows - 1) * t->n_columns + i])
                        return -ENOMEM;
        return 0;
}

size_t text_table_rows(const TextTable *t) {
        return t->n_rows;
}

/* Display width in code points: good enough for names and numbers, which is what tables hold. */
static size_t display_width(const char *s) {
        size_t n = 0;
        for (; *s; s++)
                n += ((unsigned char) *s & 0xC0) != 0x80;
        return n;
}

static void print_cell(FILE *f, const char *s, size_t width, bool right, bool last) {
        size_t w = display_width(s);
        size_t pad = width > w ? width - w : 0;

        if (right)
                fprintf(f, "%*s%s", (int) pad, "", s);
        else if (last)
                fputs(s, f);
        else
                fprintf(f, "%s%*s", s, (int) pad, "");
        if (!last)
                fputs("  ", f);
}

int text_table_print(TextTable *t, FILE *f, bool legend) {
        _cleanup_(freep) size_t *width = new0(size_t, t->n_columns);
        if (!width)
                return -ENOMEM;

        for (size_t c = 0; c < t->n_columns; c++) {
                width[c] = legend ? display_width(t->headers[c]) : 0;
                for (size_t r = 0; r < t->n_rows; r++)
                        width[c] = MAX(width[c], display_width(t->cells[r * t->n_columns + c]));
        }

        if (legend) {
                for (size_t c = 0; c < t->n_columns; c++)
                        print_cell(f, t->headers[c], width[c], t->right[c], c + 1 == t->n_columns);
                fputc('\n', f);
        }
        for (size_t r = 0; r < t->n_rows; r++) {
                for (size_t c = 0; c < t->n_columns; c++)
                        print_cell(f, t->cells[r * t->n_columns + c], width[c], t->right[c], c + 1 == t->n_columns);
                fputc('\n', f);
        }
        return ferror(f) ? -EIO : 0;
}
