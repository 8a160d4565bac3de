/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One thread of the responder's loop can send at most what one CPU copies and pushes through TCP, and
 * on a virtual link it also does the receiver's TCP work (veth delivers on the sending CPU): a download
 * over several streams is sent by a thread per CPU near the NIC instead, each serving its streams
 * with epoll, as the probe does for uploads (net-streams.c). An upload over several streams is taken
 * in the same way: a receiver's thread also answers for the window (it is opened as the data is
 * read) and for the sender's ACK processing, which veth runs in the receiver's context, and one loop
 * thread reading four streams held them to 32-35 Gbit/s where two processes reading two each took
 * 44-46 on this project's two-CPU machine, as much as a download over the same streams. */
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto-bulk.h"
#include "responder-pump.h"
#include "shared/time-util.h"

/* How long a thread waits for room at most before it looks at the clock and the abort flag again. */
#define WAIT_SLICE_MSEC 50
/* How much one stream may send before the other streams of its thread get their turn. */
#define STREAM_BUDGET (4U * 1024U * 1024U)

typedef struct PumpThread {
        Pump *pump;
        PumpStream *streams[PROTO_STREAMS_MAX];
        unsigned n_streams;
        /* Receiving: where a payload lands on a socket that ignores MSG_TRUNC (a test's socketpair);
         * TCP never writes to it, so its pages are never touched there. */
        uint8_t *buffer;
        pthread_t thread;
        bool started;
} PumpThread;

/* A stream's frame in progress. */
typedef struct Frame {
        uint8_t header[PROTO_HEADER_SIZE];
        uint32_t len;     /* sending: the payload, 0 none in progress; receiving: payload still to come */
        size_t sent;      /* sending: of header and payload; receiving: header bytes in */
        bool done;        /* nothing more to move: the grant or the time ran out, the end came, or it failed */
} Frame;

struct Pump {
        PumpConfig cfg;
        PumpThread threads[PROTO_STREAMS_MAX];
        unsigned n_threads;
        uint64_t assigned;   /* atomic */
        unsigned running;    /* atomic */
        bool abort;          /* atomic */
};

/* Receiving: takes n bytes from the grant; false when they are more than it has left. */
static bool take_bytes(Pump *p, uint32_t n) {
        return __atomic_add_fetch(&p->assigned, n, __ATOMIC_RELAXED) <= p->cfg.granted_bytes;
}

static uint32_t take_frame(Pump *p) {
        uint64_t old = __atomic_load_n(&p->assigned, __ATOMIC_RELAXED), want;

        do {
                if (old >= p->cfg.granted_bytes)
                        return 0;
                want = MIN((uint64_t) p->cfg.frame_size, p->cfg.granted_bytes - old);
        } while (!__atomic_compare_exchange_n(&p->assigned, &old, old + want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return (uint32_t) want;
}

/* Sends on s until the socket is full or the budget is spent: 1 when the stream is done, 0 to wait. */
static int stream_send(Pump *p, PumpStream *s, Frame *f) {
        size_t moved = 0;

        while (moved < STREAM_BUDGET) {
                size_t k = 0;
                ssize_t n;

                if (f->len == 0) {
                        if (now_usec(CLOCK_MONOTONIC) - p->cfg.start_usec >= p->cfg.granted_usec)
                                return 1;
                        f->len = take_frame(p);
                        if (f->len == 0)
                                return 1;
                        f->sent = 0;
                        proto_header_encode(f->header, PROTO_DATA, f->len);
                }
                if (p->cfg.payload_fd >= 0) {
                        int r = net_payload_send(s->fd, p->cfg.payload_fd, f->header, PROTO_HEADER_SIZE + f->len, f->sent, &k);
                        if (r < 0) {
                                s->error = r;
                                return 1;
                        }
                        if (r == 0)
                                return 0;
                } else {
                        struct iovec iov[2];
                        size_t i = 0;
                        if (f->sent < PROTO_HEADER_SIZE)
                                iov[i++] = (struct iovec) { .iov_base = f->header + f->sent, .iov_len = PROTO_HEADER_SIZE - f->sent };
                        size_t body = f->sent > PROTO_HEADER_SIZE ? f->sent - PROTO_HEADER_SIZE : 0;
                        iov[i++] = (struct iovec) { .iov_base = (void *) p->cfg.buffer, .iov_len = f->len - body };
                        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = i };
                        n = sendmsg(s->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
                        if (n < 0) {
                                if (errno == EAGAIN || errno == EINTR)
                                        return 0;
                                s->error = -errno;
                                return 1;
                        }
                        k = (size_t) n;
                }
                f->sent += k;
                moved += k;
                if (f->sent == PROTO_HEADER_SIZE + f->len) {
                        s->bytes += f->len;
                        f->len = 0;
                }
        }
        return 0;
}

ProtoTestResult pump_stream_result(uint64_t bytes, uint64_t start_usec, uint64_t last_usec) {
        return (ProtoTestResult) { .bytes = bytes, .usec = bytes > 0 ? last_usec - start_usec : 0 };
}

/* A joined stream hears what it carried as soon as it ends, as from the loop (responder-bulk.c): a
 * client may wait for it before it ends its other streams. What the socket does not take at once
 * (it never holds more than this frame) the loop sends when the pump is done. */
static void stream_answer(Pump *p, PumpStream *s) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        ProtoTestResult mine = pump_stream_result(s->bytes, p->cfg.start_usec, s->last_usec);
        ssize_t n, k;

        n = proto_encode_test_result(buf, sizeof(buf), PROTO_UPLOAD_RESULT, &mine);
        if (n < 0)
                return;
        k = send(s->fd, buf, (size_t) n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0)
                s->answered = (size_t) k;
}

static void stream_lowat(PumpStream *s, uint32_t want) {
        net_set_rcvlowat(s->fd, &s->lowat, want);
}

/* A complete header on s: the next payload, or the end. 1 when the stream is done (UPLOAD_END, or
 * what the client did wrong in s->error), 0 to go on. */
static int stream_header(Pump *p, PumpStream *s, Frame *f) {
        ProtoHeader h;
        int r;

        f->sent = 0;
        r = proto_header_decode(f->header, p->cfg.max_frame, &h);
        if (r < 0) {
                s->error = r == -EMSGSIZE ? -EMSGSIZE : -EBADMSG;
                return 1;
        }
        if (h.type == PROTO_UPLOAD_END) {
                if (s->answer)
                        stream_answer(p, s);
                return 1;
        }
        if (h.type != PROTO_DATA) {
                s->error = -EPROTO;
                return 1;
        }
        if (!take_bytes(p, h.length)) {
                s->error = -ENOSPC;
                return 1;
        }
        f->len = h.length;
        stream_lowat(s, MIN(f->len, NET_RCVLOWAT_MAX));
        return 0;
}

/* Takes what s has until the socket is empty or the budget is spent: 1 when the stream is done, 0 to wait. */
static int stream_receive(Pump *p, PumpThread *t, PumpStream *s, Frame *f) {
        size_t moved = 0;

        while (moved < STREAM_BUDGET) {
                bool header = f->len == 0;
                ssize_t k;

                if (header)
                        k = recv(s->fd, f->header + f->sent, PROTO_HEADER_SIZE - f->sent, MSG_DONTWAIT);
                else
                        /* Dropped in the kernel on TCP, as the loop does (responder.c). */
                        k = recv(s->fd, t->buffer, MIN((size_t) f->len, (size_t) PROTO_FRAME_MAX_DEFAULT),
                                 MSG_DONTWAIT | MSG_TRUNC);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        return 0;
                if (k < 0) {
                        s->error = -errno;
                        return 1;
                }
                if (k == 0) {
                        s->error = -ECONNRESET;
                        return 1;
                }
                if (header) {
                        f->sent += (size_t) k;
                        if (f->sent == PROTO_HEADER_SIZE && stream_header(p, s, f) > 0)
                                return 1;
                        continue;
                }
                k = MIN(k, (ssize_t) f->len);
                f->len -= (uint32_t) k;
                s->bytes += (uint64_t) k;
                s->last_usec = now_usec(CLOCK_MONOTONIC);
                moved += (size_t) k;
                /* The next header is small: it must wake us as it is. */
                if (f->len < s->lowat)
                        stream_lowat(s, f->len);
        }
        return 0;
}

static void thread_run(PumpThread *t) {
        Pump *p = t->pump;
        _cleanup_(closep) int epfd = epoll_create1(EPOLL_CLOEXEC);
        Frame frames[PROTO_STREAMS_MAX] = {};
        unsigned pending = 0;

        if (p->cfg.host)
                (void) net_host_pin_thread(p->cfg.host);
        for (unsigned i = 0; i < t->n_streams; i++) {
                struct epoll_event ev = { .events = p->cfg.receive ? EPOLLIN : EPOLLOUT, .data.u32 = i };
                if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, t->streams[i]->fd, &ev) < 0) {
                        t->streams[i]->error = epfd < 0 ? epfd : -errno;
                        frames[i].done = true;
                } else
                        pending++;
        }
        while (pending > 0 && !__atomic_load_n(&p->abort, __ATOMIC_RELAXED)) {
                struct epoll_event evs[PROTO_STREAMS_MAX];
                int n;

                if (now_usec(CLOCK_MONOTONIC) >= p->cfg.deadline_usec)
                        break;
                n = epoll_wait(epfd, evs, (int) ELEMENTSOF(evs), WAIT_SLICE_MSEC);
                if (n < 0 && errno != EINTR)
                        break;
                for (int i = 0; i < n; i++) {
                        unsigned j = evs[i].data.u32;
                        if (frames[j].done)
                                continue;
                        if ((p->cfg.receive ? stream_receive(p, t, t->streams[j], &frames[j])
                                            : stream_send(p, t->streams[j], &frames[j])) == 0)
                                continue;
                        /* A broken stream ends the test: the others stop rather than fill the grant. */
                        if (t->streams[j]->error < 0)
                                __atomic_store_n(&p->abort, true, __ATOMIC_RELAXED);
                        frames[j].done = true;
                        (void) epoll_ctl(epfd, EPOLL_CTL_DEL, t->streams[j]->fd, NULL);
                        pending--;
                }
        }
        /* A stream still sending, or cut in the middle of a frame, did not finish its part. */
        for (unsigned i = 0; i < t->n_streams; i++)
                if ((!frames[i].done || frames[i].len > 0) && t->streams[i]->error == 0)
                        t->streams[i]->error = -ETIME;
        if (__atomic_sub_fetch(&p->running, 1, __ATOMIC_ACQ_REL) == 0) {
                uint64_t one = 1;
                (void) write(p->cfg.done_fd, &one, sizeof(one));
        }
}

static void *thread_main(void *userdata) {
        thread_run(userdata);
        return NULL;
}

static Pump *pump_free(Pump *p) {
        for (unsigned i = 0; i < p->n_threads; i++)
                free(p->threads[i].buffer);
        free(p);
        return NULL;
}

int pump_start(const PumpConfig *cfg, PumpStream *streams, unsigned n, Pump **ret) {
        unsigned n_threads = MAX(MIN(n, cfg->host ? cfg->host->n_cpus : 1U), 1U);
        Pump *p;

        if (n < 1 || n > PROTO_STREAMS_MAX)
                return -EINVAL;
        p = new0(Pump, 1);
        if (!p)
                return -ENOMEM;
        p->cfg = *cfg;
        p->n_threads = n_threads;
        p->running = n_threads;
        for (unsigned i = 0; i < n_threads && cfg->receive; i++) {
                p->threads[i].buffer = malloc(PROTO_FRAME_MAX_DEFAULT);
                if (!p->threads[i].buffer) {
                        pump_free(p);
                        return -ENOMEM;
                }
        }
        for (unsigned i = 0; i < n; i++) {
                PumpThread *t = &p->threads[i % n_threads];
                streams[i].bytes = streams[i].last_usec = 0;
                streams[i].answered = 0;
                streams[i].error = 0;
                t->pump = p;
                t->streams[t->n_streams++] = &streams[i];
        }
        for (unsigned i = 0; i < n_threads; i++) {
                int e = pthread_create(&p->threads[i].thread, NULL, thread_main, &p->threads[i]);
                if (e != 0) {
                        /* Those started stop at once; their streams' partial frames fail the test. */
                        __atomic_store_n(&p->abort, true, __ATOMIC_RELAXED);
                        __atomic_sub_fetch(&p->running, n_threads - i, __ATOMIC_ACQ_REL);
                        for (unsigned j = 0; j < i; j++)
                                (void) pthread_join(p->threads[j].thread, NULL);
                        pump_free(p);
                        return -e;
                }
                p->threads[i].started = true;
        }
        *ret = p;
        return 0;
}

bool pump_finished(const Pump *p) {
        return __atomic_load_n(&p->running, __ATOMIC_ACQUIRE) == 0;
}

uint64_t pump_assigned(const Pump *p) {
        return __atomic_load_n(&p->assigned, __ATOMIC_RELAXED);
}

Pump *pump_join(Pump *p) {
        if (!p)
                return NULL;
        __atomic_store_n(&p->abort, true, __ATOMIC_RELAXED);
        for (unsigned i = 0; i < p->n_threads; i++)
                if (p->threads[i].started)
                        (void) pthread_join(p->threads[i].thread, NULL);
        return pump_free(p);
}
