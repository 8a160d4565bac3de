/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/uio.h>
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

/* More than any caller sends. */
#define LOG_FIELDS_MAX 16

int log_object_structured(int level, const char *field, const char *object, char *const *fields, const char *format,
                          ...) {
        _cleanup_(freep) char *text = NULL, *message = NULL, *priority = NULL, *object_field = NULL;
        size_t n = 0;
        va_list ap;
        int r;

        if (log_get_max_level() < level)
                return 0;
        va_start(ap, format);
        r = vasprintf(&text, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        object = strempty(object);
        if (stderr_is_journal_stream()) {
                if (asprintf(&message, "MESSAGE=%s: %s", object, text) < 0 ||
                    asprintf(&priority, "PRIORITY=%i", level & LOG_PRIMASK) < 0 ||
                    asprintf(&object_field, "%s=%s", field, object) < 0)
                        return -ENOMEM;
                struct iovec iov[3 + LOG_FIELDS_MAX];
                for (char *const *f = fields; f && *f && n < LOG_FIELDS_MAX; f++)
                        n++;
                iov[0] = (struct iovec) { .iov_base = message, .iov_len = strlen(message) };
                iov[1] = (struct iovec) { .iov_base = priority, .iov_len = strlen(priority) };
                iov[2] = (struct iovec) { .iov_base = object_field, .iov_len = strlen(object_field) };
                for (size_t i = 0; i < n; i++)
                        iov[3 + i] = (struct iovec) { .iov_base = fields[i], .iov_len = strlen(fields[i]) };
                if (sd_journal_sendv(iov, (int) n + 3) >= 0)
                        return 0;
        }
        (void) log_internal(level, 0, object, "%s", text);
        return 0;
}
