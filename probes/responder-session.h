/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-session.h — private to the responder: what responder.c arms on an accepted connection */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "responder-conn.h"

/* The connection's socket became readable or writable: reads, dispatches and sends what it can. */
int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);
/* The connection's timer: the handshake's, the idle or the test's deadline, or a closing socket's linger. */
int on_conn_timer(sd_event_source *s, uint64_t usec, void *userdata);
/* Sends what is pending and serves what was read ahead; false when c was freed. */
bool conn_continue(Conn *c);
