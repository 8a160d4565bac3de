/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "time-util.h"

char *format_iso8601(char buf[static ISO8601_MAX], uint64_t usec) {
        time_t sec = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (!gmtime_r(&sec, &tm)) {
                buf[0] = '\0';
                return buf;
        }
        size_t n = strftime(buf, ISO8601_MAX, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + n, ISO8601_MAX - n, ".%06uZ", (unsigned) (usec % USEC_PER_SEC));
        return buf;
}
