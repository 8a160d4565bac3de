/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "log.h"
#include "string-table.h"

static int max_level = LOG_INFO;
static int journal_stream = -1; /* -1: not checked yet */

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg",   [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit",
        [LOG_ERR] = "err",       [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",     [LOG_DEBUG] = "debug",
};

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

int log_level_from_string(const char *s) {
        int level = string_table_lookup_from_string(level_names, ELEMENTSOF(level_names), s);

        if (level >= 0 || !s)
                return level;
        if (streq(s, "error"))
                return LOG_ERR;
        if (streq(s, "warn"))
                return LOG_WARNING;
        return -EINVAL;
}

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(log_level, int, level_names)

/* When stderr is connected to journald (systemd sets JOURNAL_STREAM to its device:inode), a "<N>"
 * prefix carries the priority; on a terminal it would only be noise. */
static bool stderr_is_journal(void) {
        if (journal_stream < 0) {
                const char *e = getenv("JOURNAL_STREAM");
                journal_stream = !isempty(e);
        }
        return journal_stream;
}

int log_internal(int level, int error, const char *prefix, const char *format, ...) {
        char buf[2048];
        va_list ap;
        int saved = errno;

        if (error != 0)
                errno = abs(error);

        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);

        if (stderr_is_journal())
                fprintf(stderr, "<%d>%s%s%s\n", level & LOG_PRIMASK, strempty(prefix), prefix ? ": " : "", buf);
        else
                fprintf(stderr, "%s%s%s\n", strempty(prefix), prefix ? ": " : "", buf);

        errno = saved;
        return -abs(error);
}
