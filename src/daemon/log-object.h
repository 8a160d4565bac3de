/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log-object.h — logging about one object (a link, a Thunderbolt device, a port, a GPU, a peer path) */
#pragma once

#include "shared/log.h"

/*
 * Logs "object: message". Under systemd, where stderr is the journal, the message goes to the journal
 * natively with field=object beside it (INTERFACE=eth0, as networkd writes it; THUNDERBOLT_DEVICE=,
 * RDMA_PORT=, GPU=, PEER_PATH=), so `journalctl INTERFACE=eth0` finds every line about that link.
 * Returns -abs(error), or 0 when error is 0; %m is strerror(error).
 */
int log_object_internal(int level, int error, const char *field, const char *object, const char *format, ...)
        _printf_(5, 6);

#define log_object_full_errno(level, error, field, object, ...)                                            \
        ({                                                                                                 \
                int _level_ = (level), _e_ = (error);                                                      \
                (log_get_max_level() >= _level_) ? log_object_internal(_level_, _e_, field, object, __VA_ARGS__) \
                                                 : -abs(_e_);                                              \
        })

/*
 * The same with more journal fields: each of fields is "KEY=value" (NULL-terminated list), sent beside
 * MESSAGE and the object's field (a MESSAGE_ID= makes `journalctl -x` show the catalog's text). On
 * stderr only the message is written.
 */
int log_object_structured(int level, const char *field, const char *object, char *const *fields, const char *format,
                          ...) _printf_(5, 6);
