/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <signal.h>
#include <stdarg.h>
#include <sys/time.h>

#include "probe-util.h"
#include "shared/time-util.h"

/* The deadline handler must not allocate or take stdio locks, so its document is formatted when the
 * deadline is armed and written with write(2). Process-wide by nature: a probe has one deadline. */
static char deadline_document[512];
static size_t deadline_document_len;
static uint64_t deadline_at;

void probe_warnv(json_object *warnings, const char *format, va_list ap) {
        char text[512];

        vsnprintf(text, sizeof(text), format, ap);
        json_object_array_add(warnings, json_object_new_string(text));
}

void probe_warn(json_object *warnings, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        probe_warnv(warnings, format, ap);
        va_end(ap);
}

json_object *probe_result_new(const char *probe) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "probe", json_object_new_string(probe));
        json_object_object_add(o, "version", json_object_new_int(PROBE_JSON_VERSION));
        json_object_object_add(o, "status", json_object_new_string("ok"));
        return o;
}

int probe_write_json(FILE *f, json_object *value) {
        const char *s = json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        return fputs(s, f) == EOF ? -errno : 0;
}

int probe_print(json_object *result) {
        int r = probe_write_json(stdout, result);
        if (r < 0)
                return r;
        if (fputc('\n', stdout) == EOF || fflush(stdout) == EOF)
                return -errno;
        return 0;
}

static json_object *envelope(const char *probe, const char *status) {
        json_object *o = probe_result_new(probe);
        if (o)
                json_object_object_add(o, "status", json_object_new_string(status));
        return o;
}

void probe_exit_error(const char *probe, int exit_code, const char *error_name, const char *format, ...) {
        char message[1024];
        va_list ap;

        va_start(ap, format);
        vsnprintf(message, sizeof(message), format, ap);
        va_end(ap);

        json_object *o = envelope(probe, "error");
        json_object *e = json_object_new_object();
        if (o && e) {
                json_object_object_add(e, "name", json_object_new_string(error_name));
                json_object_object_add(e, "message", json_object_new_string(message));
                json_object_object_add(o, "error", e);
                (void) probe_print(o);
        }
        fprintf(stderr, "%s: %s: %s\n", probe, error_name, message);
        exit(exit_code);
}

void probe_exit_unsupported(const char *probe, const char *format, ...) {
        char reason[1024];
        va_list ap;

        va_start(ap, format);
        vsnprintf(reason, sizeof(reason), format, ap);
        va_end(ap);

        json_object *o = envelope(probe, "unsupported");
        if (o) {
                json_object_object_add(o, "reason", json_object_new_string(reason));
                (void) probe_print(o);
        }
        exit(PROBE_EXIT_OK);
}

static void on_deadline(int sig) {
        ssize_t k = write(STDOUT_FILENO, deadline_document, deadline_document_len);
        (void) k;
        _exit(PROBE_EXIT_ERROR);
}

int probe_arm_deadline(const char *probe, uint64_t usec) {
        struct sigaction sa = { .sa_handler = on_deadline };
        struct itimerval it = {};

        if (usec == 0) {
                deadline_at = 0;
                return RET_NERRNO(setitimer(ITIMER_REAL, &it, NULL));
        }

        int n = snprintf(deadline_document, sizeof(deadline_document),
                         "{\"probe\":\"%s\",\"version\":%d,\"status\":\"error\",\"error\":{\"name\":\"deadline\","
                         "\"message\":\"deadline of %.3f s reached\"}}\n",
                         probe, PROBE_JSON_VERSION, (double) usec / USEC_PER_SEC);
        if (n < 0 || (size_t) n >= sizeof(deadline_document))
                return -ENAMETOOLONG;
        deadline_document_len = (size_t) n;

        if (sigaction(SIGALRM, &sa, NULL) < 0)
                return -errno;
        it.it_value.tv_sec = (time_t) (usec / USEC_PER_SEC);
        it.it_value.tv_usec = (suseconds_t) (usec % USEC_PER_SEC);
        deadline_at = now_usec(CLOCK_MONOTONIC) + usec;
        return RET_NERRNO(setitimer(ITIMER_REAL, &it, NULL));
}

uint64_t probe_deadline_left_usec(void) {
        if (deadline_at == 0)
                return UINT64_MAX;
        uint64_t n = now_usec(CLOCK_MONOTONIC);
        return n >= deadline_at ? 0 : deadline_at - n;
}
