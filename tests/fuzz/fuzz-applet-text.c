/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes what linkprobe-applet does to names from the bus before a menu, a tooltip or a notification
 * daemon sees them: whatever the bytes, the result is valid UTF-8 without control characters (but the
 * newlines the *_lines variants keep), markup has no tag left, and menu labels no lone "_". */
#include <glib.h>

#include "applet/applet-text.h"
#include "shared/macros.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_clean(const char *s, bool newlines) {
        if (!g_utf8_validate(s, -1, NULL))
                abort();
        for (const char *p = s; *p; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);
                if ((c < 0x20 && !(newlines && c == '\n')) || (c >= 0x7f && c < 0xa0) || (c >= 0x202a && c <= 0x202e) ||
                    (c >= 0x2066 && c <= 0x2069))
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        g_autofree char *s = NULL, *clean = NULL, *short_clean = NULL, *markup = NULL, *label = NULL, *lines = NULL,
                        *markup_lines = NULL;

        if (size > 4096)
                return 0;
        s = g_strndup((const char *) data, size);       /* up to the first NUL, as a bus string can be */

        clean = text_clean(s, 0);
        check_clean(clean, false);
        short_clean = text_clean(s, 7);
        check_clean(short_clean, false);
        if (g_utf8_strlen(short_clean, -1) > 8)
                abort();
        markup = text_markup(s, 0);
        check_clean(markup, false);
        if (strchr(markup, '<') || strchr(markup, '>'))
                abort();
        label = text_menu_label(s, 0);
        check_clean(label, false);
        for (const char *p = label; *p; p++)
                if (*p == '_' && *++p != '_')
                        abort();
        lines = text_clean_lines((const char *) data, size);
        check_clean(lines, true);
        markup_lines = text_markup_lines(s);
        check_clean(markup_lines, true);
        if (strchr(markup_lines, '<'))
                abort();
        return 0;
}
