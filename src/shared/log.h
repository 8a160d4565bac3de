/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.h — leveled logging to stderr (journald-aware), returning the error so callers can "return log_…" */
#pragma once

#include <syslog.h>

#include "macros.h"

void log_set_max_level(int level);
int log_get_max_level(void);
int log_level_from_string(const char *s);
const char *log_level_to_string(int level);

/* Logs "prefix: message" when prefix is set. Returns -abs(error), or 0 when error is 0.
 * The message may use %m for strerror(error). */
int log_internal(int level, int error, const char *prefix, const char *format, ...) _printf_(4, 5);

#define log_full_errno_prefix(level, error, prefix, ...)                                   \
        ({                                                                                 \
                int _level_ = (level), _e_ = (error);                                      \
                (log_get_max_level() >= _level_) ? log_internal(_level_, _e_, prefix, __VA_ARGS__) \
                                                 : -abs(_e_);                              \
        })

#define log_full_errno(level, error, ...) log_full_errno_prefix(level, error, NULL, __VA_ARGS__)
#define log_full(level, ...) (void) log_full_errno(level, 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_notice_errno(error, ...) log_full_errno(LOG_NOTICE, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)

#define log_oom() log_error_errno(ENOMEM, "Out of memory.")
