/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "log-object.h"

/* Whether stderr is the journal's stream: systemd sets JOURNAL_STREAM to that stream's "device:inode".
 * A child or a test may inherit or fake the variable, so only the descriptor itself counts here. */
static bool stderr_is_journal_stream(void) {
        static int cached = -1;

        if (cached < 0) {
                const char *e = getenv("JOURNAL_STREAM");
                unsigned long long dev, ino;
                struct stat st;

                cached = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) >= 0 &&
                         (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
        }
        return cached;
}

int log_object_internal(int level, int error, const char *field, const char *object, const char *format, ...) {
        char message[2048];
        va_list ap;
        int saved = errno;

        if (error != 0)
                errno = abs(error);
        va_start(ap, format);
        vsnprintf(message, sizeof(message), format, ap);
        va_end(ap);
        errno = saved;

        object = strempty(object);
        if (stderr_is_journal_stream() &&
            sd_journal_send("MESSAGE=%s: %s", object, message, "PRIORITY=%i", level & LOG_PRIMASK, "%s=%s", field,
                            object, error != 0 ? "ERRNO=%i" : NULL, abs(error), NULL) >= 0)
                return -abs(error);
        /* Without the journal (or should it refuse), stderr with the object as the prefix. */
        (void) log_internal(level, 0, object, "%s", message);
        return -abs(error);
}
