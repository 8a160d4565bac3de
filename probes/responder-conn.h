/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-conn.h — the responder's connections, shared by its files (not an API) */
#pragma once

#include "net-host.h"
#include "responder-echo.h"
#include "responder-identity.h"
#include "responder-pump.h"
#include "responder-rdma.h"
#include "responder.h"
#include "source-table.h"

/* One buffer serves every connection: received DATA is discarded into it and sent DATA comes from it,
 * so bulk tests cost no memory per connection. */
#define SCRATCH_SIZE PROTO_FRAME_MAX_DEFAULT
/* How much one wake-up may move before other connections get their turn. */
#define PUMP_BUDGET (8U * 1024U * 1024U)

typedef enum ConnState {
        CONN_HELLO,
        CONN_AUTH,
        CONN_READY,
        CONN_JOINED,    /* a stream of another connection's group, between its tests */
        CONN_UPLOAD,
        CONN_UPLOAD_WAIT, /* the asking connection's upload ended; the other streams' have not yet */
        CONN_DOWNLOAD,
        CONN_RDMA,      /* handed to an RDMA session thread */
        CONN_ECHO,      /* answering round trips on the echo thread (responder-echo.c) */
        CONN_CLOSING,   /* flushing a final error */
} ConnState;

typedef struct Conn Conn;

/* One bulk test, held by the connection that asked for it (stream 0), carried by it and the first
 * streams - 1 connections of its group. The grant is for all of them together. */
typedef struct BulkTest {
        bool upload;
        bool sending;            /* READY has left, so DATA may follow on every stream */
        unsigned streams;
        unsigned finished;       /* streams whose UPLOAD_END came or whose DOWNLOAD_END was queued */
        uint64_t granted_bytes, granted_usec;
        uint64_t bytes;          /* upload: received on all streams; download: put into frames */
        uint64_t start_usec, last_usec;
        uint32_t frame_size;
        /* The responder's side, for a client that asked for it (PROTO_CAP_TEST_STATS). */
        uint64_t cpu_start_usec;
        NetHost host;            /* the interface to the client, and the CPUs the loop runs on */
        NetCounters counters;    /* the interface's counters at the start */
        uint64_t retrans_start;  /* the streams' TCP retransmitted bytes at the start; UINT64_MAX unknown */
        unsigned threads;        /* that moved the data: the loop's, or the pump's */
} BulkTest;

/* The connections a client joined to one of its connections (STREAMS_REQUEST, JOIN). */
typedef struct StreamGroup {
        uint8_t token[PROTO_STREAMS_TOKEN_SIZE];
        unsigned granted;                  /* streams allowed, the owner included */
        Conn *members[PROTO_STREAMS_MAX];  /* [0] the owner, then the joined ones in order */
        unsigned n_members;
} StreamGroup;

struct Conn {
        Responder *responder;
        Conn *prev, *next;
        int fd;
        sd_event_source *io, *timer;
        SourceEntry *source;
        struct in6_addr address;
        uint16_t port;
        char name[INET6_ADDRSTRLEN + 16];
        ConnState state;
        uint64_t accepted_usec;
        uint64_t last_frame_usec;   /* when the last complete frame arrived (idle timeout) */

        /* Input: a header, then a control payload into payload[] or DATA bytes into the scratch. */
        uint8_t header[PROTO_HEADER_SIZE];
        size_t header_len;
        bool have_header;
        ProtoHeader frame;
        uint8_t payload[PROTO_CONTROL_MAX];
        size_t payload_len;
        uint32_t data_left;
        uint32_t lowat;             /* SO_RCVLOWAT set on the socket; 0: the default (1) */
        /* Read ahead with a header, not yet taken (conn_recv()). */
        uint8_t ahead[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        size_t ahead_start, ahead_len;

        /* Output: at most one control frame is pending; nothing is read until it has left. */
        uint8_t out[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        size_t out_len, out_sent;

        bool echoed;                /* the last frame served was an echo request */

        uint8_t nonce[PROTO_NONCE_SIZE];
        uint8_t client_nonce[PROTO_CLIENT_NONCE_SIZE];
        bool want_stats;            /* the client's HELLO asked for PROTO_CAP_TEST_STATS */

        /* Streams: the group this connection owns, or the one it joined (owner, index). */
        StreamGroup *group;
        Conn *owner;
        unsigned stream_index;

        /* The bulk test this connection asked for, and what this stream of a test moved. */
        BulkTest test;
        uint64_t stream_bytes, stream_start_usec, stream_last_usec;
        uint8_t data_header[PROTO_HEADER_SIZE];
        uint32_t data_frame_len, data_frame_sent;

        RdmaSession *rdma;
};

struct Responder {
        sd_event *event;
        ResponderLimits limits;
        bool have_key;
        ProtoKey key;
        ResponderRdma rdma;
        ResponderIdentity identity;
        SourceTable *sources;
        sd_event_source **listeners;
        size_t n_listeners;
        sd_event_source *accept_pause;
        int rdma_done_fd;
        sd_event_source *rdma_done;
        Conn *conns, *conns_tail;
        Conn *bulk_owner;
        ResponderStats stats;
        uint8_t *scratch;
        int sysfs_fd;               /* for the local CPUs of a test's interface; -EBADF: unknown */
        cpu_set_t allowed_cpus;     /* the affinity the responder started with */
        int payload_fd;             /* net_payload_fd() of SCRATCH_SIZE: DATA sent without copying; -EBADF */
        int lock_fd;                /* the node's measure lock; -EBADF: none */
        /* The lock is held for a client's whole measurement (its tests follow each other within
         * LOCK_LINGER_USEC, or until its connection goes), so the node's probe cannot slip in between
         * an upload and a download. */
        bool lock_held;
        Conn *lock_conn;
        sd_event_source *lock_linger;
        /* A download's threads (responder-pump.h): at most one, for the bulk owner. */
        Pump *pump;
        Conn *pump_owner;
        PumpStream pump_streams[PROTO_STREAMS_MAX];
        int pump_done_fd;
        sd_event_source *pump_done;
        /* The echo thread (responder-echo.c): at most one, for echo_conn. */
        EchoSession *echo;
        Conn *echo_conn;
        int echo_done_fd;
        sd_event_source *echo_done;
};

/* The connection whose test c carries: c itself, or the one it joined. */
static inline Conn *owner_of(Conn *c) {
        return c->owner ?: c;
}

/* Stream i of the test c holds: c itself, then its group's joined connections in order. */
static inline Conn *test_stream(Conn *c, unsigned i) {
        return i == 0 ? c : c->group->members[i];
}

/* responder-conn.c: output, events, timers and the end of connections. */
uint64_t now_mono(void);
int timer_arm(Conn *c, uint64_t usec_from_now);
int conn_queue(Conn *c, ssize_t n);
void conn_fail(Conn *c, ProtoErrorCode code, const char *message);
void conn_reply_error(Conn *c, ProtoErrorCode code, const char *message);
void conn_enter_ready(Conn *c);
bool conn_kick(Conn *c);
/* The responder's one bulk test is no longer c's. */
void conn_release_bulk(Conn *c);
/* Takes the node's measure lock for c's session: false when the node's probe holds it. */
bool responder_lock_take(Conn *c);
/* Whether the connection takes frames in its state; whether it may send DATA now. */
bool conn_reads(const Conn *c);
bool conn_may_send(const Conn *c);
/* Frees c and what it owns; releases the test it holds and leaves or dissolves its group (a stream
 * that goes while it carries a test fails the test). */
void conn_free(Conn *c);
/* The test c carries failed (a stream closed, broke a limit or ran out of time): every stream goes. */
void bulk_fail(Conn *c, ProtoErrorCode code, const char *message);
void conn_update_events(Conn *c);

/* A connection whose last request was an echo goes to the echo thread (responder-echo.c) when the
 * thread is free; conn_echo_finished() takes it back once the thread is done with it (NULL while it
 * is not), and conn_free() at once. */
void conn_echo_begin(Conn *c);
Conn *conn_echo_finished(Responder *r);
/* The eventfds the RDMA and echo threads signal, and their event sources (on_echo_done is the loop's:
 * it serves what the echo thread left). */
int responder_threads_init(Responder *r, sd_event_io_handler_t on_echo_done);
void responder_threads_done(Responder *r);

/* responder-bulk.c: upload and download over one or more streams, and the groups of streams. */
void bulk_streams_request(Conn *c);
void bulk_join(Conn *c);
bool bulk_may_start(Conn *c);
void bulk_start(Conn *c);
/* A DATA payload's k bytes arrived on stream c; false when the test failed for it. */
bool bulk_received(Conn *c, size_t k);
void bulk_upload_end(Conn *c);
/* Sends DATA frames; false when c was freed. */
bool bulk_pump_download(Conn *c);
/* Hands an upload over several streams to the pump's threads once c's READY has left. */
void bulk_upload_begin(Conn *c);
/* The pump's threads have finished the test of r->pump_owner: its streams end or fail. */
void bulk_pump_done(Responder *r);
/* The eventfd the pump's last thread signals, and its event source. */
int responder_pump_init(Responder *r);
void responder_pump_done(Responder *r);
