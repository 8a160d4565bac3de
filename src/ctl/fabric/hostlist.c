/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Slurm's hostlist expressions, as topology.conf and slurm.conf use them (Slurm's hostlist.c is the
 * reference: a comma-separated list of names, each with bracketed ranges of numbers that keep the width
 * of their lower end). `fabric topology` writes them so that a leaf of 40 nodes takes one short line;
 * `fabric verify` reads an administrator's file with them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "shared/macros.h"

bool slurm_name_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;

        if (n == 0 || n > HOSTLIST_NAME_MAX)
                return false;
        if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= '0' && name[0] <= '9')))
                return false;
        for (const char *p = name; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                      *p == '_' || *p == '.'))
                        return false;
        return true;
}

void hostlist_done(HostList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->names[i]);
        free(l->names);
        *l = (HostList) {};
}

static int hostlist_take(HostList *l, char *name) {
        if (l->n >= HOSTLIST_NAMES_MAX) {
                free(name);
                return -E2BIG;
        }
        if (l->n == l->allocated) {
                size_t a = l->allocated ? l->allocated * 2 : 16;
                char **names = reallocarray(l->names, a, sizeof(char *));
                if (!names) {
                        free(name);
                        return -ENOMEM;
                }
                l->names = names;
                l->allocated = a;
        }
        l->names[l->n++] = name;
        return 0;
}

int hostlist_add(HostList *l, const char *name) {
        char *copy = strdup(name);
        return copy ? hostlist_take(l, copy) : -ENOMEM;
}

/* A number of at most 18 digits (what a range may hold), and how many digits it had. */
static int parse_number(const char *s, size_t len, uint64_t *ret, unsigned *ret_width) {
        uint64_t v = 0;

        if (len == 0 || len > 18)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        *ret = v;
        *ret_width = (unsigned) len;
        return 0;
}

/* The names of head + item, item still holding brackets: the first bracket's ranges, each value
 * followed by whatever the rest expands into. */
static int expand_item(const char *head, size_t head_len, const char *item, size_t len, HostList *l, const char **ret_error) {
        const char *lb = memchr(item, '[', len), *rb;
        int r;

        if (!lb) {
                char *name;

                if (memchr(item, ']', len)) {
                        *ret_error = "a ']' with no '[' before it";
                        return -EINVAL;
                }
                if (head_len + len == 0) {
                        *ret_error = "an empty name";
                        return -EINVAL;
                }
                if (head_len + len > HOSTLIST_NAME_MAX) {
                        *ret_error = "a name longer than 255 characters";
                        return -EINVAL;
                }
                name = malloc(head_len + len + 1);
                if (!name)
                        return -ENOMEM;
                memcpy(name, head, head_len);
                memcpy(name + head_len, item, len);
                name[head_len + len] = '\0';
                return hostlist_take(l, name);
        }
        rb = memchr(lb, ']', len - (size_t) (lb - item));
        if (!rb) {
                *ret_error = "a '[' that is not closed";
                return -EINVAL;
        }
        if (memchr(lb + 1, '[', (size_t) (rb - lb - 1))) {
                *ret_error = "a '[' inside brackets";
                return -EINVAL;
        }
        if (memchr(item, ']', (size_t) (lb - item))) {
                *ret_error = "a ']' with no '[' before it";
                return -EINVAL;
        }
        if (rb == lb + 1) {
                *ret_error = "empty brackets";
                return -EINVAL;
        }
        /* The head grows by the text before the bracket and one number. */
        size_t prefix_len = head_len + (size_t) (lb - item);
        char buf[HOSTLIST_NAME_MAX + 32];
        if (prefix_len > HOSTLIST_NAME_MAX) {
                *ret_error = "a name longer than 255 characters";
                return -EINVAL;
        }
        memcpy(buf, head, head_len);
        memcpy(buf + head_len, item, (size_t) (lb - item));
        for (const char *p = lb + 1; p < rb;) {
                const char *comma = memchr(p, ',', (size_t) (rb - p)) ?: rb, *dash = memchr(p, '-', (size_t) (comma - p));
                uint64_t lo, hi;
                unsigned width, hi_width;

                if (parse_number(p, (size_t) ((dash ?: comma) - p), &lo, &width) < 0 ||
                    (dash && parse_number(dash + 1, (size_t) (comma - dash - 1), &hi, &hi_width) < 0)) {
                        *ret_error = "a range that is not NUMBER or NUMBER-NUMBER";
                        return -EINVAL;
                }
                if (!dash)
                        hi = lo;
                if (hi < lo) {
                        *ret_error = "a range whose end is below its start";
                        return -EINVAL;
                }
                if (hi - lo >= HOSTLIST_NAMES_MAX || l->n + (hi - lo) >= HOSTLIST_NAMES_MAX)
                        return -E2BIG;
                for (uint64_t v = lo; v <= hi; v++) {
                        int n = snprintf(buf + prefix_len, sizeof(buf) - prefix_len, "%0*" PRIu64, (int) width, v);
                        r = expand_item(buf, prefix_len + (size_t) n, rb + 1, len - (size_t) (rb + 1 - item), l, ret_error);
                        if (r < 0)
                                return r;
                }
                p = comma < rb ? comma + 1 : rb;
                if (comma < rb && p == rb) {
                        *ret_error = "a ',' before ']'";
                        return -EINVAL;
                }
        }
        return 0;
}

int hostlist_expand(const char *expr, HostList *l, const char **ret_error) {
        const char *p = expr, *dummy;
        int r;

        if (!ret_error)
                ret_error = &dummy;
        if (!expr || !*expr) {
                *ret_error = "an empty list";
                return -EINVAL;
        }
        for (;;) {
                /* The item ends at the first comma outside brackets. */
                const char *end = p;
                bool inside = false;
                for (; *end && (inside || *end != ','); end++)
                        if (*end == '[')
                                inside = true;
                        else if (*end == ']')
                                inside = false;
                r = expand_item("", 0, p, (size_t) (end - p), l, ret_error);
                if (r < 0)
                        return r;
                if (!*end)
                        return 0;
                p = end + 1;
        }
}

/* ---- compression ---- */

typedef struct Entry {
        const char *name;
        size_t prefix_len; /* the name up to its trailing digits */
        uint64_t value;
        unsigned width;    /* the trailing digits, 0 none */
} Entry;

static int entry_compare(const void *a, const void *b) {
        const Entry *x = a, *y = b;
        size_t n = MIN(x->prefix_len, y->prefix_len);
        int c = strncmp(x->name, y->name, n);

        if (c != 0)
                return c;
        if (x->prefix_len != y->prefix_len)
                return x->prefix_len < y->prefix_len ? -1 : 1;
        if (x->width != y->width)
                return x->width < y->width ? -1 : 1;
        return x->value < y->value ? -1 : x->value > y->value ? 1 : 0;
}

static bool same_prefix(const Entry *a, const Entry *b) {
        return a->prefix_len == b->prefix_len && strncmp(a->name, b->name, a->prefix_len) == 0;
}

char *hostlist_compress(char *const *names, size_t n) {
        _cleanup_(freep) Entry *e = calloc(n ?: 1, sizeof(Entry));
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        if (!e)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(names[i]), k = len;
                while (k > 0 && names[i][k - 1] >= '0' && names[i][k - 1] <= '9')
                        k--;
                e[i].name = names[i];
                if (len - k == 0 || parse_number(names[i] + k, len - k, &e[i].value, &e[i].width) < 0) {
                        /* No trailing number (or one too long for a range): the name as it is. */
                        e[i].prefix_len = len;
                        e[i].width = 0;
                } else
                        e[i].prefix_len = k;
        }
        qsort(e, n, sizeof(Entry), entry_compare);
        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; i < n;) {
                size_t j = i;

                /* The group: one prefix with a number (a width 0 entry is a whole name, alone). */
                while (j + 1 < n && e[i].width > 0 && e[j + 1].width > 0 && same_prefix(&e[i], &e[j + 1]))
                        j++;
                if (j == i && i > 0 && strcmp(e[i].name, e[i - 1].name) == 0) {
                        i++; /* a name given twice is written once */
                        continue;
                }
                if (i > 0)
                        fputc(',', f);
                if (j == i) {
                        fputs(e[i].name, f);
                        i++;
                        continue;
                }
                fprintf(f, "%.*s[", (int) e[i].prefix_len, e[i].name);
                for (size_t k = i; k <= j;) {
                        size_t m = k;
                        /* A range: consecutive numbers of one width (the width Slurm gives the whole range
                         * is its lower end's); a name given twice is written once. */
                        while (m + 1 <= j && e[m + 1].width == e[k].width &&
                               (e[m + 1].value == e[m].value + 1 || e[m + 1].value == e[m].value))
                                m++;
                        if (k > i)
                                fputc(',', f);
                        if (e[m].value == e[k].value)
                                fprintf(f, "%0*" PRIu64, (int) e[k].width, e[k].value);
                        else
                                fprintf(f, "%0*" PRIu64 "-%0*" PRIu64, (int) e[k].width, e[k].value, (int) e[m].width, e[m].value);
                        k = m + 1;
                }
                fputc(']', f);
                i = j + 1;
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}
