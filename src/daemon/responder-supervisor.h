/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-supervisor.h — linkprobe-responder run and restarted by the daemon on sockets it owns */
#pragma once

#include <systemd/sd-event.h>

#include "shared/macros.h"

typedef struct DaemonStatus DaemonStatus;
typedef struct PeersConfig PeersConfig;
typedef struct ResponderSupervisor ResponderSupervisor;

/* How long the responder must run before a crash counts as new (the back-off starts over). */
#define RESPONDER_RESTART_MIN_USEC (1 * USEC_PER_SEC)
#define RESPONDER_RESTART_MAX_USEC (60 * USEC_PER_SEC)

/*
 * Serves the probes of other nodes when [Responder] Listen= names addresses or systemd passed
 * listening sockets named "responder" (FileDescriptorName=responder; passed_fds, taken over). The
 * daemon binds the sockets itself and keeps them, so the port stays open while the responder
 * restarts: linkprobe-responder gets them as fds 3.. with LISTEN_FDS/LISTEN_PID. A responder that
 * dies is started again after 1 s, doubling to 60 s; exit status 1 (bad configuration, such as an
 * unreadable key file) or 2 (bad arguments) stops that and sets the daemon degraded
 * ("responder-failed"), as does a socket that cannot be bound. Nothing configured or passed: *ret
 * is NULL. identity_file (may be NULL) is where the node's identity is kept for the handshake;
 * measure_lock (may be NULL) the lock it shares with the node's probes (--lock-file=).
 */
int responder_supervisor_start(sd_event *event, const PeersConfig *config, DaemonStatus *status, int *passed_fds,
                               size_t n_passed, const char *identity_file, const char *measure_lock,
                               ResponderSupervisor **ret);
/* Stops the responder (SIGTERM, bounded wait) and closes the sockets. */
ResponderSupervisor *responder_supervisor_free(ResponderSupervisor *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(ResponderSupervisor *, responder_supervisor_free);

