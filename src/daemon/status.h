/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* status.h — the daemon's own state (starting, running, degraded) and why, on the Manager interface */
#pragma once

#include "bus-object.h"

typedef enum DaemonState {
        DAEMON_STARTING,
        DAEMON_RUNNING,
        DAEMON_DEGRADED, /* a source of facts is unavailable; see DegradedReasons */
        _DAEMON_STATE_MAX,
        _DAEMON_STATE_INVALID = -EINVAL,
} DaemonState;

/*
 * The Manager interface's changing properties that are about the daemon itself. Any source of facts
 * that finds itself unable to work (netlink resync failed, udev monitor unavailable, the GPU probe
 * failing, the responder not starting) says so here under a stable reason; State follows.
 */
typedef struct DaemonStatus {
        BusObject bus; /* the Manager interface of the root object */
        DaemonState state;
        char **degraded_reasons;
} DaemonStatus;

int daemon_status_init(DaemonStatus *s, BusPublisher *p);
void daemon_status_done(DaemonStatus *s);

void daemon_status_set_degraded(DaemonStatus *s, const char *reason, bool on);
/* Recomputes State: "starting" until the bus name is ours, then running or degraded. */
void daemon_status_update(DaemonStatus *s);

const char *daemon_state_to_string(DaemonState s) _const_;
