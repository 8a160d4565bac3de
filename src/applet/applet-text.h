/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-text.h — what the applet shows made safe for where it is shown, and its units */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Health values ordered by gravity, as the daemon orders them (unknown below ok: nothing found wrong yet
 * is no news); HEALTH_NONE is an object that publishes none. */
typedef enum HealthRank {
        HEALTH_NONE,
        HEALTH_UNKNOWN,
        HEALTH_OK,
        HEALTH_DEGRADED,
        HEALTH_FLAPPING,
        HEALTH_ERRORS,
} HealthRank;

HealthRank health_rank(const char *health);
/* Whether a person should be told: degraded, flapping or errors. */
static inline bool health_is_bad(HealthRank r) {
        return r >= HEALTH_DEGRADED;
}

/* A name from the bus as plain text a person can read: invalid UTF-8, control characters (C0, DEL,
 * C1) and the bidirectional overrides that would reorder the rest of a line become U+FFFD; at most
 * max_chars characters (then "…"), 0 for no limit. Never NULL (g_free() it). */
char *text_clean(const char *s, unsigned max_chars);
/* text_clean(), then escaped for Pango markup (the tooltip's and a notification's body). */
char *text_markup(const char *s, unsigned max_chars);
/* text_clean(), then with "_" doubled: dbusmenu labels read "_x" as a mnemonic. */
char *text_menu_label(const char *s, unsigned max_chars);

/* "10 Gb/s", "2.5 Gb/s", "100 Mb/s", "speed unknown" for 0. */
char *format_mbps(uint64_t mbps);
/* "40 Gb/s", "12.5 Gb/s"; "rate unknown" for 0 or less. */
char *format_gbps(double gbps);

/* text_markup() for each line of a text whose lines the caller made (names inside them still cleaned). */
char *text_markup_lines(const char *s);
/* text_clean() for each line of len bytes of s (not NUL-terminated; no limit on the lines). */
char *text_clean_lines(const char *s, size_t len);
