/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-text.c — names read from the bus reach a menu, a tooltip and a notification daemon that
 * each interpret them (mnemonics, Pango markup, terminal-like control characters): everything the
 * daemon publishes is cleaned here first, then escaped for where it goes. */
#include <glib.h>
#include <math.h>

#include "applet-text.h"
#include "shared/macros.h"

HealthRank health_rank(const char *health) {
        if (!health || !*health)
                return HEALTH_NONE;
        if (streq(health, "ok"))
                return HEALTH_OK;
        if (streq(health, "degraded"))
                return HEALTH_DEGRADED;
        if (streq(health, "flapping"))
                return HEALTH_FLAPPING;
        if (streq(health, "errors"))
                return HEALTH_ERRORS;
        /* "unknown" and whatever a newer daemon may add: not a reason to alarm anyone. */
        return HEALTH_UNKNOWN;
}

static bool char_is_hostile(gunichar c) {
        if (c < 0x20 || (c >= 0x7f && c < 0xa0))
                return true;
        /* Bidirectional embeddings, overrides and isolates, and the line/paragraph separators. */
        return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

char *text_clean(const char *s, unsigned max_chars) {
        GString *out = g_string_new(NULL);
        const char *p = s ?: "";
        const char *end = p + strlen(p);
        unsigned n = 0;

        while (p < end) {
                gunichar c = g_utf8_get_char_validated(p, end - p);

                if (max_chars > 0 && n == max_chars) {
                        g_string_append(out, "…");
                        break;
                }
                if (c == (gunichar) -1 || c == (gunichar) -2) {
                        g_string_append_unichar(out, 0xfffd);
                        p++;
                } else {
                        g_string_append_unichar(out, char_is_hostile(c) ? 0xfffd : c);
                        p = g_utf8_next_char(p);
                }
                n++;
        }
        return g_string_free(out, FALSE);
}

char *text_markup(const char *s, unsigned max_chars) {
        g_autofree char *clean = text_clean(s, max_chars);

        return g_markup_escape_text(clean, -1);
}

char *text_menu_label(const char *s, unsigned max_chars) {
        g_autofree char *clean = text_clean(s, max_chars);
        GString *out = g_string_sized_new(strlen(clean) + 8);

        for (const char *p = clean; *p; p++) {
                if (*p == '_')
                        g_string_append_c(out, '_');
                g_string_append_c(out, *p);
        }
        return g_string_free(out, FALSE);
}

char *format_mbps(uint64_t mbps) {
        if (mbps == 0)
                return g_strdup("speed unknown");
        if (mbps < 1000)
                return g_strdup_printf("%" PRIu64 " Mb/s", mbps);
        return format_gbps((double) mbps / 1000.0);
}

char *format_gbps(double gbps) {
        if (!(gbps > 0) || !isfinite(gbps))
                return g_strdup("rate unknown");
        /* Whole figures without a decimal: "40 Gb/s", not "40.0 Gb/s" (printf rounds, no libm needed). */
        g_autofree char *tenths = g_strdup_printf("%.1f", gbps);
        if (g_str_has_suffix(tenths, ".0"))
                return g_strdup_printf("%.0f Gb/s", gbps);
        return g_strdup_printf("%s Gb/s", tenths);
}

char *text_markup_lines(const char *s) {
        g_auto(GStrv) lines = g_strsplit(s ?: "", "\n", -1);

        for (char **l = lines; *l; l++) {
                char *escaped = text_markup(*l, 0);
                g_free(*l);
                *l = escaped;
        }
        return g_strjoinv("\n", lines);
}

char *text_clean_lines(const char *s, size_t len) {
        g_autofree char *copy = g_strndup(s ?: "", len);
        g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);

        for (char **l = lines; *l; l++) {
                char *clean = text_clean(*l, 0);
                g_free(*l);
                *l = clean;
        }
        return g_strjoinv("\n", lines);
}
