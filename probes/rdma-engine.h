/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-engine.h — one RC queue pair over libibverbs: RDMA-write bandwidth and send/recv ping-pong */
#pragma once

#include <stdatomic.h>

#include "proto-bulk.h"
#include "proto.h"

typedef struct RdmaEndpoint RdmaEndpoint;

/* The largest buffer either side registers; RDMA writes cycle through the peer's buffer. */
#define RDMA_BUFFER_MAX (64U * 1024U * 1024U)
#define RDMA_BUFFER_DEFAULT (8U * 1024U * 1024U)
#define RDMA_MESSAGE_DEFAULT (64U * 1024U)
#define RDMA_LATENCY_MESSAGE_MAX 4096U
#define RDMA_LATENCY_ITERATIONS_MAX 100000U

/**
 * rdma_device_find() - look for a usable RDMA port
 * @want: a device name, or NULL/empty for the first device with an active @port
 * @port: the port number (1-based)
 * @ret_name: receives the device name (at least 64 bytes)
 * @reason: receives why nothing is usable (at least 128 bytes), for an "unsupported" answer
 *
 * iWARP devices are passed over: their queue pairs connect through the RDMA connection manager.
 *
 * Return: 0 when a device with an active port was found; -ENODEV (no device or no such device),
 * -ENETDOWN (port not active), -EPROTONOSUPPORT (iWARP) or -errno, with @reason filled.
 */
int rdma_device_find(const char *want, uint8_t port, char ret_name[static 64], char reason[static 128]);

/**
 * rdma_endpoint_open() - open a device and create an RC queue pair in INIT with a registered buffer
 * @device: the device name (from rdma_device_find())
 * @port: the port number
 * @gid_index: the GID table index, or -1 to choose (0 on InfiniBand; on RoCE the first IPv4-mapped GID)
 * @buffer_size: bytes to register (at most RDMA_BUFFER_MAX)
 * @ret: receives the endpoint
 *
 * Return: 0 or a negative errno.
 */
int rdma_endpoint_open(const char *device, uint8_t port, int gid_index, size_t buffer_size, RdmaEndpoint **ret);
RdmaEndpoint *rdma_endpoint_free(RdmaEndpoint *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(RdmaEndpoint *, rdma_endpoint_free);

/* Watches the control connection fd while waiting for completions: once it closes or the other end
 * sends an error frame, the waiting call returns -ECONNABORTED (the frame is left to be read). */
void rdma_endpoint_watch(RdmaEndpoint *e, int fd);

/* What the peer needs to reach this queue pair and buffer. */
void rdma_endpoint_info(const RdmaEndpoint *e, ProtoRdmaInfo *ret);
/* -EPROTOTYPE, with the reason, when the peer's port is InfiniBand and this one RoCE or the other way
 * round: the two cannot reach each other. */
int rdma_endpoint_check_peer(const RdmaEndpoint *e, const ProtoRdmaInfo *peer, char *reason, size_t size);
/* Moves the queue pair to RTR and RTS towards the peer described by remote. */
int rdma_endpoint_connect(RdmaEndpoint *e, const ProtoRdmaInfo *remote);

/**
 * rdma_endpoint_write_bw() - RDMA-write into the peer's buffer for a time or a byte count
 * @e: a connected endpoint
 * @max_bytes: stop after this many bytes
 * @max_usec: stop posting after this long
 * @message_size: bytes per RDMA write
 * @deadline: CLOCK_MONOTONIC usec after which the run fails with -ETIME
 * @cancel: set by another thread to stop early (-ECANCELED); may be NULL
 * @ret: bytes completed and usec from the first post to the last completion (sender-timed, as perftest)
 *
 * Return: 0 or a negative errno (-EIO for a failed work completion, rdma_endpoint_failure() says which;
 * -ECONNABORTED when the watched control connection ended the phase).
 */
int rdma_endpoint_write_bw(RdmaEndpoint *e, uint64_t max_bytes, uint64_t max_usec, uint32_t message_size,
                           uint64_t deadline, const atomic_bool *cancel, ProtoTestResult *ret);

/**
 * rdma_endpoint_failure() - why the last call returned -EIO
 * @e: the endpoint
 * @ret_name: receives a stable name: "remote-access", "retry-exceeded", "rnr-retry-exceeded",
 *            "qp-error", "device-failed", "cq-overrun" or "work-completion"
 * @message: receives what failed, for people, with libibverbs' name of the completion status
 * @size: of message
 *
 * Return: 0, or -ENOENT when no work completion failed.
 */
int rdma_endpoint_failure(const RdmaEndpoint *e, const char **ret_name, char *message, size_t size);

/* Posts one receive of size bytes (the ping-pong needs one posted before the peer sends). */
int rdma_endpoint_post_recv(RdmaEndpoint *e, uint32_t size);

/**
 * rdma_endpoint_pingpong() - send/recv round trips
 * @e: a connected endpoint with one receive posted
 * @initiator: true on the side that sends first and times (samples may then be non-NULL)
 * @iterations: round trips
 * @size: message bytes (at most RDMA_LATENCY_MESSAGE_MAX)
 * @deadline: CLOCK_MONOTONIC usec
 * @cancel: may be NULL
 * @samples: receives each round-trip time in usec on the initiator (room for @iterations), or NULL
 *
 * Return: 0 or a negative errno.
 */
int rdma_endpoint_pingpong(RdmaEndpoint *e, bool initiator, uint32_t iterations, uint32_t size, uint64_t deadline,
                           const atomic_bool *cancel, double *samples);

