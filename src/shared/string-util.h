/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* string-util.h — UTF-8 validation and escaping, string lists, small string helpers */
#pragma once

#include "macros.h"

/* True when the n bytes at s are well-formed UTF-8 (no overlongs, surrogates or code points past
 * U+10FFFF), which is what D-Bus demands of every string. */
bool utf8_is_valid_n(const char *s, size_t n);
static inline bool utf8_is_valid(const char *s) {
        return utf8_is_valid_n(s, strlen(s));
}

/* Copies s, replacing every byte that is not part of a valid UTF-8 sequence with "\xNN", so bytes
 * chosen by whoever named a kernel object can always be published. */
char *utf8_escape_invalid(const char *s);

/* Copies s for a terminal: control characters and invalid UTF-8 become "\xNN". */
char *escape_for_terminal(const char *s);

bool strv_contains(char *const *l, const char *s);
bool strv_equal(char *const *a, char *const *b);
/* Appends s (taken over, freed on failure) to *l. */
int strv_consume(char ***l, char *s);
/* Appends a copy of s to *l unless it is there already. */
int strv_extend_unique(char ***l, const char *s);

static inline bool streq_ptr(const char *a, const char *b) {
        return a == b || (a && b && streq(a, b));
}

char *strdup_or_null(const char *s);

/* Replaces *p with a copy of s (NULL allowed). Returns 1 if the value changed, 0 if equal, -ENOMEM. */
int free_and_strdup(char **p, const char *s);

bool startswith(const char *s, const char *prefix);
