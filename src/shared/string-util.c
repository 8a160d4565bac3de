/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "string-util.h"

char **strv_free(char **l) {
        STRV_FOREACH(s, l)
                free(*s);
        free(l);
        return NULL;
}

size_t strv_length(char *const *l) {
        size_t n = 0;
        while (l && l[n])
                n++;
        return n;
}

bool strv_contains(char *const *l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (streq(l[i], s))
                        return true;
        return false;
}

bool strv_equal(char *const *a, char *const *b) {
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!streq(a[i], b[i]))
                        return false;
        return true;
}

int strv_consume(char ***l, char *s) {
        size_t n = strv_length(*l);
        char **grown;

        if (!s)
                return -ENOMEM;
        grown = reallocarray(*l, n + 2, sizeof(char *));
        if (!grown) {
                free(s);
                return -ENOMEM;
        }
        grown[n] = s;
        grown[n + 1] = NULL;
        *l = grown;
        return 0;
}

int strv_extend_unique(char ***l, const char *s) {
        if (strv_contains(*l, s))
                return 0;
        return strv_consume(l, strdup(s));
}

/* Length of the valid UTF-8 sequence starting at s (at most n bytes available), or 0 if invalid. */
static size_t utf8_sequence_length(const unsigned char *s, size_t n) {
        uint32_t cp;
        size_t len;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xC2 && s[0] <= 0xDF) {
                len = 2;
                cp = s[0] & 0x1F;
        } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
                len = 3;
                cp = s[0] & 0x0F;
        } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
                len = 4;
                cp = s[0] & 0x07;
        } else
                return 0;

        if (n < len)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3F);
        }

        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        return len;
}

bool utf8_is_valid_n(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;

        while (n > 0) {
                size_t len = utf8_sequence_length(p, n);
                if (len == 0)
                        return false;
                if (len == 1 && *p == '\0')
                        return false;
                p += len;
                n -= len;
        }
        return true;
}

static char *escape_bytes(const char *s, bool escape_control) {
        const unsigned char *p = (const unsigned char *) s;
        size_t n = strlen(s);
        char *ret, *t;

        /* Worst case every byte becomes four characters. */
        t = ret = malloc(n * 4 + 1);
        if (!ret)
                return NULL;

        while (n > 0) {
                size_t len = utf8_sequence_length(p, n);
                if (len == 0 || (escape_control && len == 1 && (*p < 0x20 || *p == 0x7F))) {
                        t += sprintf(t, "\\x%02x", *p);
                        len = 1;
                } else {
                        memcpy(t, p, len);
                        t += len;
                }
                p += len;
                n -= len;
        }
        *t = '\0';
        return ret;
}

char *utf8_escape_invalid(const char *s) {
        return escape_bytes(s, false);
}

char *escape_for_terminal(const char *s) {
        return escape_bytes(s, true);
}

char *strdup_or_null(const char *s) {
        return s ? strdup(s) : NULL;
}

int free_and_strdup(char **p, const char *s) {
        char *copy = NULL;

        if (!*p && !s)
                return 0;
        if (*p && s && streq(*p, s))
                return 0;
        if (s) {
                copy = strdup(s);
                if (!copy)
                        return -ENOMEM;
        }
        free(*p);
        *p = copy;
        return 1;
}

bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}
