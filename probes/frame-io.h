/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frame-io.h — blocking frame I/O on a non-blocking socket, bounded by a CLOCK_MONOTONIC deadline */
#pragma once

#include <sys/uio.h>

#include "proto.h"

/* A deadline that never comes. */
#define FIO_NO_DEADLINE UINT64_MAX

/* Waits for events (POLLIN/POLLOUT) on fd. 0, -ETIME when the deadline passes, or -errno. */
int fio_wait(int fd, short events, uint64_t deadline);

/* Writes all of iov (modified) / buf. EOF-like errors come back as -EPIPE or -ECONNRESET. */
int fio_writev_all(int fd, struct iovec *iov, int n, uint64_t deadline);
int fio_write_all(int fd, const void *buf, size_t n, uint64_t deadline);

/* Reads exactly n bytes. -ECONNRESET when the peer closes before n bytes arrived. */
int fio_read_all(int fd, void *buf, size_t n, uint64_t deadline);

/**
 * fio_read_frame() - read one frame header and, unless it is DATA, its payload
 * @fd: the socket
 * @max_frame: the largest DATA payload accepted
 * @ret_header: receives the header
 * @payload: buffer of PROTO_CONTROL_MAX bytes for a control frame's payload
 * @deadline: CLOCK_MONOTONIC usec
 *
 * A DATA payload is left in the socket for the caller to drain.
 * Return: 0, -EBADMSG/-EMSGSIZE for a bad header, -ETIME, -ECONNRESET, or -errno.
 */
int fio_read_frame(int fd, uint32_t max_frame, ProtoHeader *ret_header, uint8_t payload[static PROTO_CONTROL_MAX],
                   uint64_t deadline);
