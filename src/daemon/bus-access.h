/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-access.h — who may call what: privileged callers from bus-verified credentials, rate limits */
#pragma once

#include <systemd/sd-bus.h>

#include "shared/ratelimit.h"


#define PRIVILEGED_GROUP_DEFAULT "linkprobe"

/*
 * Allows the call if the sender is root or a member of the privileged group (linkprobed.conf
 * [Daemon] PrivilegedGroup=; NULL means PRIVILEGED_GROUP_DEFAULT). The uid and groups come from the bus daemon's
 * GetConnectionCredentials (taken from the socket when the client connected), never from /proc,
 * which a client could race. Returns 0 when allowed; otherwise sets AccessDenied naming action and
 * returns -EACCES.
 */
int bus_verify_privileged(const char *group, sd_bus_message *message, const char *action, sd_bus_error *error);

/* Takes a token from rl for the message's sender; otherwise sets Error.RateLimited (saying when to
 * try again) and returns -EBUSY. */
int bus_verify_rate(RateLimit *rl, sd_bus_message *message, sd_bus_error *error);

/* A privileged method's checks in their order: the rate limit rl first (cheap, and it shields the
 * credential lookup from floods; NULL for none), then bus_verify_privileged(). */
int bus_verify_caller(const char *group, RateLimit *rl, sd_bus_message *message, const char *action,
                      sd_bus_error *error);
