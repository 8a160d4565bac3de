/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-echo.h — a connection's round trips answered by a thread of its own, blocked in recv() */
#pragma once

#include "proto.h"

typedef struct EchoSession EchoSession;

/* What a session leaves to the connection when it ends. */
typedef struct EchoLeftover {
        /* Read but not answered: the frames after the last echo request (or a part of one). */
        uint8_t in[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        size_t in_len;
        /* A reply the socket did not take at once, and how much of it left. */
        uint8_t out[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        size_t out_len, out_sent;
        uint64_t echoes;          /* requests answered */
        uint64_t last_usec;       /* when the last of them came, CLOCK_MONOTONIC */
} EchoLeftover;

/**
 * echo_session_start() - answer a connection's echo requests on a thread
 * @fd: the connection (non-blocking, no receive threshold; the caller does not use it until the join)
 * @max_frame: the responder's largest frame, for decoding headers
 * @quiet_usec: how long the thread waits for the next request before it hands the connection back
 * @done_fd: an eventfd the thread signals when it has finished
 * @ret: receives the session
 *
 * The thread answers every well-formed echo request as it comes, and ends at anything else (kept in
 * the leftover for the caller to serve), after quiet_usec without a request, at the end of the
 * connection or when a reply does not fit into the socket at once.
 * Return: 0 or a negative errno (no thread runs then).
 */
int echo_session_start(int fd, uint32_t max_frame, uint64_t quiet_usec, int done_fd, EchoSession **ret);
bool echo_session_finished(const EchoSession *s);
/* Waits for the thread (stopping it first unless it finished: the socket is shut down then), gives
 * what it left in ret (may be NULL) and frees s. NULL is fine. Returns NULL. */
EchoSession *echo_session_join(EchoSession *s, EchoLeftover *ret);
