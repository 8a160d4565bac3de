/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-pump.h — the DATA of a download over several streams, sent by a few threads while the
 * responder's loop goes on serving everyone else */
#pragma once

#include "net-host.h"
#include "proto.h"

typedef struct Pump Pump;

/* What one download asks of the pump; the grant is for all of its streams together. */
typedef struct PumpConfig {
        uint32_t frame_size;
        uint64_t granted_bytes, granted_usec;
        uint64_t start_usec;     /* CLOCK_MONOTONIC, when the test started */
        uint64_t deadline_usec;  /* the latest any thread may go on, CLOCK_MONOTONIC */
        const NetHost *host;     /* the CPUs the threads run on, and how many of them there are */
        int payload_fd;          /* net_payload_fd(), or -EBADF to send from buffer */
        const uint8_t *buffer;   /* frame_size bytes of filler */
        int done_fd;             /* an eventfd the last thread to finish signals */
} PumpConfig;

/* How one stream ended. */
typedef struct PumpStream {
        int fd;                  /* set by the caller; the pump only writes to it */
        uint64_t bytes;          /* whole frames sent */
        int error;               /* 0, -errno of the socket, or -ETIME when the deadline or an abort cut a frame */
} PumpStream;

/**
 * pump_start() - send a download's frames over streams on min(n, CPUs) threads
 * @cfg: copied (host and buffer must stay valid until pump_join())
 * @streams: n streams, the fds set; they stay the caller's, and must not be used until pump_join()
 * @n: 1..PROTO_STREAMS_MAX
 * @ret: the pump
 *
 * Each thread sends whole frames on its streams (epoll, non-blocking) until the grant is used up or
 * the granted time has passed, then signals done_fd when it is the last. The streams end together:
 * a client reads all of them at once. A stream that breaks stops every thread.
 * Return: 0 or -errno (no thread runs then).
 */
int pump_start(const PumpConfig *cfg, PumpStream *streams, unsigned n, Pump **ret);
bool pump_finished(const Pump *p);
/* The bytes the threads took from the grant (frames sent or being sent). */
uint64_t pump_assigned(const Pump *p);
/* Stops the threads, waits for them and frees p; the streams hold their outcome. NULL is fine. */
Pump *pump_join(Pump *p);
