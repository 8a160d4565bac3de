/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* net-streams.h — bulk tests over one connection or several parallel streams (the probe's side) */
#pragma once

#include "net-client.h"
#include "net-host.h"
#include "proto-bulk.h"

/*
 * A connection (the control, stream 0) and the connections joined to it. Without PROTO_CAP_STREAMS
 * (a version 1 responder) there is only the control, and every test runs over it alone.
 */
typedef struct NetStreams {
        NetClient *control;
        NetClient joined[PROTO_STREAMS_MAX - 1];
        unsigned n_joined;
        unsigned granted;  /* streams the responder allows, the control included */
        uint8_t token[PROTO_STREAMS_TOKEN_SIZE];
        /* The interface and CPUs of our end (NULL: unknown, the threads run anywhere). */
        const NetHost *host;
        int payload_fd;    /* what uploads send (net_payload_fd()); -EBADF: the client's buffer */
} NetStreams;

/* What one bulk test moved, all streams together. */
typedef struct NetTransfer {
        uint64_t bytes;
        uint64_t usec;         /* upload: the responder's receive time; download: ours */
        uint64_t remote_usec;  /* download: the longest any stream took the responder to send */
        unsigned streams;
        unsigned threads;      /* that moved the data here */
        uint64_t cpu_usec;     /* this process's CPU time during the test */
        uint64_t wall_usec;    /* from READY to the end of the last stream here */
        ProtoTestResult remote;/* the responder's result: remote.have_stats when it sent its side */
        uint64_t retrans_bytes;/* payload our streams sent again during the test; UINT64_MAX unknown */
        /* With slices: the median of the goodput of each slice of the granted time, as the receiver's
         * TCP took the data (net_host_tcp_bytes()); 0 when the sockets do not say. */
        double steady_gbps;
        unsigned slices;
        bool counters_valid;   /* our interface's counters, as deltas over the whole test */
        uint64_t if_rx_bytes, if_tx_bytes, if_rx_packets, if_tx_packets;
} NetTransfer;

/**
 * net_streams_open() - ask the responder for parallel streams
 * @s: receives the group (net_streams_done() frees it)
 * @control: the connected control connection
 * @wanted: 1..PROTO_STREAMS_MAX
 * @deadline: CLOCK_MONOTONIC usec
 *
 * s->granted may be less than wanted (the responder's limits); it is 1, and nothing is asked, with
 * wanted 1 or a responder without PROTO_CAP_STREAMS.
 * Return: 0, or what net_client_request() returns.
 */
int net_streams_open(NetStreams *s, NetClient *control, unsigned wanted, uint64_t deadline);

/* Connects and joins connections until streams (at most s->granted) are there, from t with key. */
int net_streams_join(NetStreams *s, const NetTarget *t, const ProtoKey *key, unsigned streams, uint64_t deadline);

/*
 * Upload and download over the first streams streams (at most 1 + s->n_joined): every stream sends
 * (or receives) at once, from one grant for all of them, on at most one thread per CPU of s->host. A stream's
 * failure fails the test: the error of the control connection is reported when it has one (the
 * responder says there why the test ended), else the stream's, copied into the control's
 * remote_error for net_client_error_name(). With slice_usec > 0 the receiver's progress is also read
 * every slice_usec (ret->steady_gbps).
 */
int net_streams_upload(NetStreams *s, unsigned streams, uint64_t max_bytes, uint64_t max_usec, uint64_t slice_usec,
                       uint64_t deadline, NetTransfer *ret);
int net_streams_download(NetStreams *s, unsigned streams, uint64_t max_bytes, uint64_t max_usec, uint64_t slice_usec,
                         uint64_t deadline, NetTransfer *ret);

void net_streams_done(NetStreams *s);
