/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-pump.h — the DATA of a test over several streams, sent (download) or taken in and dropped
 * (upload) by a few threads while the responder's loop goes on serving everyone else */
#pragma once

#include "net-host.h"
#include "proto-bulk.h"
#include "proto.h"

typedef struct Pump Pump;

/* What one test asks of the pump; the grant is for all of its streams together. */
typedef struct PumpConfig {
        bool receive;            /* an upload: DATA frames come in until each stream's UPLOAD_END */
        uint32_t frame_size;     /* sending */
        uint32_t max_frame;      /* receiving: the largest frame a header may announce */
        uint64_t granted_bytes, granted_usec;
        uint64_t start_usec;     /* CLOCK_MONOTONIC, when the test started */
        uint64_t deadline_usec;  /* the latest any thread may go on, CLOCK_MONOTONIC */
        const NetHost *host;     /* the CPUs the threads run on, and how many of them there are */
        int payload_fd;          /* net_payload_fd(), or -EBADF to send from buffer */
        const uint8_t *buffer;   /* sending: frame_size bytes of filler */
        int done_fd;             /* an eventfd the last thread to finish signals */
} PumpConfig;

/* How one stream ended. */
typedef struct PumpStream {
        int fd;                  /* set by the caller; the pump only writes to it, or only reads from it */
        uint64_t bytes;          /* whole frames sent, or payload received */
        uint64_t last_usec;      /* receiving: when its last payload byte came (0: none came) */
        uint32_t lowat;          /* receiving: SO_RCVLOWAT as set on the socket, as the caller had it at the start */
        bool answer;             /* receiving: a joined stream, which hears its own UPLOAD_RESULT at its end */
        size_t answered;         /* of that UPLOAD_RESULT (pump_stream_result()), the bytes that left */
        /* 0; -errno of the socket (-ECONNRESET: closed); -ETIME when the deadline or an abort cut it;
         * receiving, what the client did wrong: -EBADMSG a malformed header, -EMSGSIZE a frame size
         * out of bounds, -EPROTO a frame other than DATA or UPLOAD_END, -ENOSPC more than granted. */
        int error;
} PumpStream;

/**
 * pump_start() - move a test's frames over streams on min(n, CPUs) threads
 * @cfg: copied (host and buffer must stay valid until pump_join())
 * @streams: n streams, the fds (and lowat) set; they stay the caller's, and must not be used until pump_join()
 * @n: 1..PROTO_STREAMS_MAX
 * @ret: the pump
 *
 * Sending, each thread sends whole frames on its streams (epoll, non-blocking) until the grant is used
 * up or the granted time has passed: the streams end together, as a client reads all of them at once.
 * Receiving, each thread takes DATA frames on its streams, dropped in the kernel (MSG_TRUNC), until
 * each stream's UPLOAD_END, and wakes per NET_RCVLOWAT_MAX of a payload as the loop does. The last
 * thread to finish signals done_fd. A stream that breaks (or, receiving, breaks the protocol or the
 * grant) stops every thread.
 * Return: 0 or -errno (no thread runs then).
 */
int pump_start(const PumpConfig *cfg, PumpStream *streams, unsigned n, Pump **ret);
/* A joined stream's own UPLOAD_RESULT: what it carried, from the test's start to its last byte. */
ProtoTestResult pump_stream_result(uint64_t bytes, uint64_t start_usec, uint64_t last_usec);
bool pump_finished(const Pump *p);
/* The bytes the threads took from the grant (frames sent or being sent). */
uint64_t pump_assigned(const Pump *p);
/* Stops the threads, waits for them and frees p; the streams hold their outcome. NULL is fine. */
Pump *pump_join(Pump *p);
