/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <sys/epoll.h>

#include "frame-io.h"
#include "net-streams.h"
#include "proto-bulk.h"
#include "rtt-stats.h"
#include "shared/time-util.h"

int net_streams_open(NetStreams *s, NetClient *control, unsigned wanted, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + 4], reply[PROTO_CONTROL_MAX];
        ProtoStreams granted;
        uint32_t length;
        ssize_t n;
        int r;

        *s = (NetStreams) { .control = control, .granted = 1, .payload_fd = net_payload_fd(PROTO_FRAME_MAX_DEFAULT) };
        for (size_t i = 0; i < ELEMENTSOF(s->joined); i++)
                s->joined[i] = (NetClient) NET_CLIENT_NULL;
        if (wanted <= 1 || !(control->capabilities & PROTO_CAP_STREAMS))
                return 0;

        n = proto_encode_u32(buf, sizeof(buf), PROTO_STREAMS_REQUEST, MIN(wanted, (unsigned) PROTO_STREAMS_MAX));
        if (n < 0)
                return (int) n;
        r = net_client_request(control, buf, (size_t) n, PROTO_STREAMS_REPLY, reply, &length, deadline);
        if (r < 0)
                return r;
        if (proto_decode_streams_reply(reply, length, &granted) < 0 || granted.granted > wanted)
                return -EPROTO;
        s->granted = granted.granted;
        memcpy(s->token, granted.token, sizeof(s->token));
        return 0;
}

int net_streams_join(NetStreams *s, const NetTarget *t, const ProtoKey *key, unsigned streams, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_STREAMS_TOKEN_SIZE], reply[PROTO_CONTROL_MAX];
        uint32_t length, index;
        ssize_t n;
        int r;

        if (streams > s->granted)
                return -EINVAL;
        while (1 + s->n_joined < streams) {
                NetClient *j = &s->joined[s->n_joined];

                net_client_done(j);
                *j = (NetClient) NET_CLIENT_NULL;
                j->skip_identity = true;
                r = net_client_connect(j, t, key, deadline);
                if (r >= 0) {
                        n = proto_encode_join(buf, sizeof(buf), s->token);
                        r = n < 0 ? (int) n : net_client_request(j, buf, (size_t) n, PROTO_JOIN_OK, reply, &length, deadline);
                }
                if (r >= 0 && (proto_decode_join_ok(reply, length, &index) < 0 || index != s->n_joined + 1))
                        r = -EPROTO;
                if (r < 0) {
                        s->control->remote_error = j->remote_error;
                        net_client_done(j);
                        return r;
                }
                s->n_joined++;
        }
        return 0;
}

void net_streams_done(NetStreams *s) {
        for (unsigned i = 0; i < s->n_joined; i++)
                net_client_done(&s->joined[i]);
        s->n_joined = 0;
        s->payload_fd = safe_close(s->payload_fd);
}

/*
 * The data path. A test's streams are served by a few threads, each moving the data of its share of
 * the streams with epoll, as neper does: at most one thread per CPU near the NIC and never more than
 * the streams, so threads do not queue for CPUs that the kernel's own TCP work needs too.
 *
 * Receiving, the payload is dropped in the kernel: recv(MSG_TRUNC) on TCP frees the received data
 * without copying it to user space and returns its length, which halves the receiver's CPU time per
 * byte (a copy costs about as much as all the TCP work for it). On other sockets (the fuzzer's
 * socketpair) MSG_TRUNC is ignored for streams and the data lands in the buffer, which is why the
 * buffer is real and large enough.
 *
 * Sending, large frames (the responder's maximum, up to 1 MiB) keep system calls rare, and their
 * payload goes out with sendfile() from a memfd (net_payload_fd()), as iperf3 -Z does: the socket
 * takes references to the same pages again and again instead of copying each byte in. MSG_ZEROCOPY
 * is not used: on loopback and veth, where every test of this project runs, the kernel copies
 * zerocopy user pages anyway when it hands the packet to a local socket (skb_orphan_frags_rx) and
 * adds a completion notification per send; pages sent from a file are not user pages and are
 * not copied there, so sendfile() is the one that helps on every kind of link.
 */

/* How much one stream may move before the other streams of its thread get their turn. */
#define FLOW_BUDGET (4U * 1024U * 1024U)

typedef enum FlowState {
        FLOW_SEND_DATA,     /* upload: frames from the grant, while time is left */
        FLOW_SEND_END,      /* upload: UPLOAD_END */
        FLOW_READ_HEADER,   /* a frame header (download, or an upload stream's result) */
        FLOW_READ_DATA,     /* download: a DATA payload, dropped */
        FLOW_READ_PAYLOAD,  /* a control frame's payload */
        FLOW_DONE,
} FlowState;

typedef struct FlowTest {
        uint32_t frame_size;
        uint64_t granted_bytes, granted_usec;
        uint64_t start, deadline;
        uint64_t assigned;       /* upload: bytes handed to frames on all streams (atomic) */
        const NetHost *host;
        int payload_fd;          /* net_payload_fd(), or -EBADF to send from the client's buffer */
} FlowTest;

/* One stream's part of a test. */
typedef struct Flow {
        FlowTest *test;
        NetClient *c;
        bool control;
        bool upload;
        FlowState state;
        uint8_t header[PROTO_HEADER_SIZE];
        size_t header_len;       /* sending: bytes of header+payload sent; receiving: header bytes in */
        uint32_t frame_len;      /* sending: the payload of the frame in progress; 0 none */
        ProtoHeader frame;       /* receiving */
        uint32_t data_left;
        uint8_t payload[PROTO_CONTROL_MAX];
        size_t payload_len;
        uint64_t bytes;          /* sent or received on this stream */
        uint64_t last;           /* download: when its last byte came */
        uint32_t lowat;          /* SO_RCVLOWAT set on the socket (0: the kernel's default, 1) */
        ProtoTestResult result;  /* what the responder said about this stream */
        int r;
} Flow;

/*
 * A short test's goodput in slices. A step of the ramp lasts tens of milliseconds, and a TCP flow's
 * rate is not steady on that scale: slow start, and on a path with a microsecond RTT (veth) BBR's
 * model, let one stream run at several times its sustained rate for 10 to 50 ms now and then, so a
 * step's total can read as much as a second's test never sustains. Worker 0 reads the receiver's
 * progress on every stream (what the responder acknowledged, or what came in here) at slice
 * boundaries; the median slice is what the stream count sustains.
 */
#define SLICES_MAX 64

typedef struct Slices {
        uint64_t slice_usec;     /* 0: none */
        uint64_t end;            /* the granted time's end: what comes later is the drain */
        uint64_t next;           /* the next boundary */
        uint64_t last_usec, last_bytes;
        const int *fds;
        unsigned n_fds;
        bool sending;
        bool failed;             /* a socket did not say */
        double gbps[SLICES_MAX];
        unsigned n;
} Slices;

/* The receiver's progress on all streams now: false when a socket does not say. */
static bool slices_read(Slices *sl, uint64_t *ret) {
        uint64_t sum = 0;

        for (unsigned i = 0; i < sl->n_fds; i++) {
                uint64_t b = net_host_tcp_bytes(sl->fds[i], sl->sending);
                if (b == UINT64_MAX)
                        return false;
                sum += b;
        }
        *ret = sum;
        return true;
}

static void slices_start(Slices *sl, uint64_t now) {
        if (sl->slice_usec == 0 || !slices_read(sl, &sl->last_bytes)) {
                sl->failed = true;
                return;
        }
        sl->last_usec = now;
        sl->next = now + sl->slice_usec;
}

/* Closes the slice when its boundary has passed; the time until the next boundary (UINT64_MAX: none). */
static uint64_t slices_tick(Slices *sl, uint64_t now) {
        uint64_t bytes;

        if (!sl || sl->failed || sl->slice_usec == 0 || sl->last_usec >= sl->end || sl->n >= SLICES_MAX)
                return UINT64_MAX;
        if (now < sl->next)
                return sl->next - now;
        if (!slices_read(sl, &bytes)) {
                sl->failed = true;
                return UINT64_MAX;
        }
        /* A slice that reaches past the end by more than half holds mostly the drain. */
        if (now <= sl->end + sl->slice_usec / 2)
                sl->gbps[sl->n++] = goodput_gbps(bytes - sl->last_bytes, now - sl->last_usec);
        sl->last_usec = now;
        sl->last_bytes = bytes;
        sl->next = now + sl->slice_usec;
        return sl->slice_usec;
}

typedef struct Worker {
        FlowTest *test;
        Flow *flows[PROTO_STREAMS_MAX];
        unsigned n_flows;
        bool pin;
        Slices *slices;          /* worker 0 of a test with slices */
        pthread_t thread;
} Worker;

/* The next frame's share of the grant, or 0 when it is used up. */
static uint32_t take_frame(uint64_t *assigned, uint64_t granted, uint32_t frame) {
        uint64_t old = __atomic_load_n(assigned, __ATOMIC_RELAXED), want;

        do {
                if (old >= granted)
                        return 0;
                want = MIN((uint64_t) frame, granted - old);
        } while (!__atomic_compare_exchange_n(assigned, &old, old + want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return (uint32_t) want;
}

/* 1 when the call moved bytes, 0 when the socket has none (or no room), -errno. */
static int io_result(ssize_t k, size_t *ret) {
        if (k < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                return -errno;
        }
        *ret = (size_t) k;
        return 1;
}

/* Sends the frame in progress; 1 when it has left, 0 when the socket is full. */
static int flow_send_frame(Flow *f) {
        while (f->header_len < PROTO_HEADER_SIZE + f->frame_len) {
                struct iovec iov[2];
                size_t n = 0, k = 0;
                int r;

                if (f->test->payload_fd >= 0) {
                        r = net_payload_send(f->c->fd, f->test->payload_fd, f->header, PROTO_HEADER_SIZE + f->frame_len,
                                             f->header_len, &k);
                        if (r <= 0)
                                return r;
                        f->header_len += k;
                        continue;
                }
                if (f->header_len < PROTO_HEADER_SIZE)
                        iov[n++] = (struct iovec) { .iov_base = f->header + f->header_len,
                                                    .iov_len = PROTO_HEADER_SIZE - f->header_len };
                size_t body = f->header_len > PROTO_HEADER_SIZE ? f->header_len - PROTO_HEADER_SIZE : 0;
                if (f->frame_len > body)
                        iov[n++] = (struct iovec) { .iov_base = f->c->data, .iov_len = f->frame_len - body };
                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n };
                r = io_result(sendmsg(f->c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT), &k);
                if (r <= 0)
                        return r;
                f->header_len += k;
        }
        return 1;
}

static int flow_upload(Flow *f) {
        FlowTest *t = f->test;
        size_t moved = 0;
        int r;

        while (f->state == FLOW_SEND_DATA && moved < FLOW_BUDGET) {
                if (f->frame_len == 0) {
                        uint32_t frame = 0;
                        if (now_usec(CLOCK_MONOTONIC) - t->start < t->granted_usec)
                                frame = take_frame(&t->assigned, t->granted_bytes, t->frame_size);
                        if (frame == 0) {
                                (void) proto_encode_empty(f->header, sizeof(f->header), PROTO_UPLOAD_END);
                                f->header_len = 0;
                                f->state = FLOW_SEND_END;
                                break;
                        }
                        proto_header_encode(f->header, PROTO_DATA, frame);
                        f->frame_len = frame;
                        f->header_len = 0;
                }
                r = flow_send_frame(f);
                if (r <= 0)
                        return r;
                f->bytes += f->frame_len;
                moved += f->frame_len;
                f->frame_len = 0;
        }
        if (f->state != FLOW_SEND_END)
                return 0;
        r = flow_send_frame(f);
        if (r <= 0)
                return r;
        if (f->control) {
                /* The control's answer, for all streams, comes once every stream has ended. */
                f->state = FLOW_DONE;
                return 1;
        }
        f->state = FLOW_READ_HEADER;
        f->header_len = 0;
        return 0;
}

/* A complete control frame: the stream's result, or the responder's error. */
static int flow_control_frame(Flow *f) {
        ProtoType end = f->upload ? PROTO_UPLOAD_RESULT : PROTO_DOWNLOAD_END;

        if (f->frame.type == PROTO_ERROR) {
                if (proto_decode_error(f->payload, f->frame.length, &f->c->remote_error) < 0)
                        return -EPROTO;
                return -EREMOTEIO;
        }
        if (f->frame.type != end || proto_decode_test_result(f->payload, f->frame.length, &f->result) < 0 ||
            f->result.bytes != f->bytes)
                return -EPROTO;
        f->state = FLOW_DONE;
        return 1;
}

static void flow_lowat(Flow *f, uint32_t want) {
        net_set_rcvlowat(f->c->fd, &f->lowat, want);
}

/* One recv() of a stream: 1 with *ret bytes, 0 when the socket is empty, -ECONNRESET at its end. */
static int flow_recv(Flow *f, void *buf, size_t n, int flags, size_t *ret) {
        int r = io_result(recv(f->c->fd, buf, n, MSG_DONTWAIT | flags), ret);
        if (r > 0 && *ret == 0)
                return -ECONNRESET;
        return r;
}

static int flow_receive(Flow *f) {
        FlowTest *t = f->test;
        size_t moved = 0, k = 0;
        int r;

        while (moved < FLOW_BUDGET) {
                switch (f->state) {
                case FLOW_READ_HEADER:
                        r = flow_recv(f, f->header + f->header_len, PROTO_HEADER_SIZE - f->header_len, 0, &k);
                        if (r <= 0)
                                return r;
                        f->header_len += k;
                        if (f->header_len < PROTO_HEADER_SIZE)
                                break;
                        f->header_len = 0;
                        if (proto_header_decode(f->header, PROTO_FRAME_MAX_DEFAULT, &f->frame) < 0)
                                return -EPROTO;
                        if (f->frame.type == PROTO_DATA) {
                                if (f->upload || f->bytes + f->frame.length > t->granted_bytes)
                                        return -EPROTO;
                                f->data_left = f->frame.length;
                                f->state = FLOW_READ_DATA;
                                flow_lowat(f, MIN(f->data_left, NET_RCVLOWAT_MAX));
                                break;
                        }
                        if (f->frame.length > PROTO_CONTROL_MAX)
                                return -EPROTO;
                        f->payload_len = 0;
                        f->state = FLOW_READ_PAYLOAD;
                        if (f->frame.length == 0)
                                return flow_control_frame(f);
                        break;
                case FLOW_READ_DATA:
                        /* Dropped in the kernel on TCP: see the top of this part. */
                        r = flow_recv(f, f->c->data, MIN((size_t) f->data_left, (size_t) PROTO_FRAME_MAX_DEFAULT),
                                      MSG_TRUNC, &k);
                        if (r <= 0)
                                return r;
                        k = MIN(k, (size_t) f->data_left);
                        f->data_left -= (uint32_t) k;
                        f->bytes += k;
                        moved += k;
                        f->last = now_usec(CLOCK_MONOTONIC);
                        if (f->data_left == 0)
                                f->state = FLOW_READ_HEADER;
                        /* A header (or the stream's result) is small: it must wake us as it is. */
                        if (f->data_left < f->lowat)
                                flow_lowat(f, f->data_left);
                        break;
                case FLOW_READ_PAYLOAD:
                        r = flow_recv(f, f->payload + f->payload_len, f->frame.length - f->payload_len, 0, &k);
                        if (r <= 0)
                                return r;
                        f->payload_len += k;
                        if (f->payload_len == f->frame.length)
                                return flow_control_frame(f);
                        break;
                case FLOW_SEND_DATA:
                case FLOW_SEND_END:
                case FLOW_DONE:
                        return -EINVAL;
                }
        }
        return 0;
}

/* Moves what the socket allows: 1 when the stream is done, 0 to wait for the socket, -errno. */
static int flow_step(Flow *f) {
        if (IN_SET(f->state, FLOW_SEND_DATA, FLOW_SEND_END))
                return flow_upload(f);
        return flow_receive(f);
}

static uint32_t flow_events(const Flow *f) {
        return IN_SET(f->state, FLOW_SEND_DATA, FLOW_SEND_END) ? EPOLLOUT : EPOLLIN;
}

static void worker_run(Worker *w) {
        _cleanup_(closep) int epfd = -EBADF;
        unsigned pending = 0;
        int r;

        if (w->pin)
                (void) net_host_pin_thread(w->test->host);
        epfd = epoll_create1(EPOLL_CLOEXEC);
        for (unsigned i = 0; i < w->n_flows; i++) {
                Flow *f = w->flows[i];
                struct epoll_event ev = { .events = flow_events(f), .data.ptr = f };
                if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, f->c->fd, &ev) < 0)
                        f->r = -errno;
                else
                        pending++;
        }

        while (pending > 0) {
                struct epoll_event evs[PROTO_STREAMS_MAX];
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                int n;

                if (now >= w->test->deadline)
                        break;
                uint64_t wait = MIN(w->test->deadline - now, slices_tick(w->slices, now));
                n = epoll_wait(epfd, evs, (int) ELEMENTSOF(evs), (int) MIN((wait + 999) / 1000, (uint64_t) INT32_MAX));
                if (n < 0 && errno != EINTR) {
                        r = -errno;
                        for (unsigned i = 0; i < w->n_flows; i++)
                                if (w->flows[i]->state != FLOW_DONE && w->flows[i]->r == 0)
                                        w->flows[i]->r = r;
                        return;
                }
                for (int i = 0; i < n; i++) {
                        Flow *f = evs[i].data.ptr;
                        uint32_t before = flow_events(f);

                        r = flow_step(f);
                        if (r != 0) {
                                /* Done or failed: the other streams go on, as the responder sees them end. */
                                if (r < 0)
                                        f->r = r;
                                (void) epoll_ctl(epfd, EPOLL_CTL_DEL, f->c->fd, NULL);
                                pending--;
                        } else if (flow_events(f) != before) {
                                struct epoll_event ev = { .events = flow_events(f), .data.ptr = f };
                                if (epoll_ctl(epfd, EPOLL_CTL_MOD, f->c->fd, &ev) < 0) {
                                        f->r = -errno;
                                        (void) epoll_ctl(epfd, EPOLL_CTL_DEL, f->c->fd, NULL);
                                        pending--;
                                }
                        }
                }
        }
        for (unsigned i = 0; i < w->n_flows; i++)
                if (w->flows[i]->state != FLOW_DONE && w->flows[i]->r == 0)
                        w->flows[i]->r = -ETIME;
}

static void *worker_thread(void *userdata) {
        worker_run(userdata);
        return NULL;
}

/* Asks for a test over streams streams and reads what the responder grants: at most what was asked. */
static int test_start(NetStreams *s, bool upload, const ProtoTestRequest *req, ProtoTestResult *ret, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        ssize_t n;
        int r;

        n = proto_encode_test_request(buf, sizeof(buf), upload ? PROTO_UPLOAD_START : PROTO_DOWNLOAD_START, req);
        if (n < 0)
                return (int) n;
        r = net_client_request_result(s->control, buf, (size_t) n, upload ? PROTO_UPLOAD_READY : PROTO_DOWNLOAD_READY,
                                      ret, deadline);
        if (r < 0)
                return r;
        if (ret->bytes == 0 || ret->usec == 0 || ret->bytes > req->max_bytes || ret->usec > req->max_usec)
                return -EPROTO;
        return 0;
}

/* Runs the flows on threads: worker 0 on this one. The first failure, the control's when it has one
 * (the responder says there why the test ended). */
static int run_flows(NetStreams *s, FlowTest *t, Flow *flows, unsigned n, Slices *slices, unsigned *ret_threads) {
        Worker workers[PROTO_STREAMS_MAX] = {};
        unsigned n_workers = MIN(n, s->host ? s->host->n_cpus : 1U), started = 1;
        int r = 0;

        n_workers = MAX(n_workers, 1U);
        for (unsigned i = 0; i < n_workers; i++)
                workers[i] = (Worker) { .test = t, .pin = s->host != NULL, .slices = i == 0 ? slices : NULL };
        for (unsigned i = 0; i < n; i++) {
                Worker *w = &workers[i % n_workers];
                w->flows[w->n_flows++] = &flows[i];
        }
        for (; started < n_workers; started++) {
                int e = pthread_create(&workers[started].thread, NULL, worker_thread, &workers[started]);
                if (e != 0) {
                        r = -e;
                        break;
                }
        }
        worker_run(&workers[0]);
        for (unsigned i = 1; i < started; i++)
                (void) pthread_join(workers[i].thread, NULL);
        *ret_threads = started;
        if (r < 0)
                return r; /* the responder sees the missing streams' silence and ends the test */
        if (flows[0].r < 0)
                return flows[0].r;
        for (unsigned i = 1; i < n; i++)
                if (flows[i].r < 0) {
                        s->control->remote_error = flows[i].c->remote_error;
                        return flows[i].r;
                }
        return 0;
}

/* What the first n streams' TCP sent again so far; UINT64_MAX when a socket does not say. */
static uint64_t streams_retrans(NetStreams *s, unsigned n) {
        uint64_t sum = 0;

        for (unsigned i = 0; i < n; i++) {
                uint64_t b = net_host_retrans_bytes(i == 0 ? s->control->fd : s->joined[i - 1].fd);
                if (b == UINT64_MAX)
                        return UINT64_MAX;
                sum += b;
        }
        return sum;
}

static int streams_test(NetStreams *s, bool upload, unsigned streams, uint64_t max_bytes, uint64_t max_usec,
                        uint64_t slice_usec, uint64_t deadline, NetTransfer *ret) {
        NetClient *control = s->control;
        ProtoTestRequest req = {
                .max_bytes = max_bytes,
                .max_usec = max_usec,
                /* Large frames: one header and one system call per MiB at most. */
                .frame_size = upload ? MIN(control->max_frame, (uint32_t) PROTO_FRAME_MAX_DEFAULT) : PROTO_FRAME_MAX_DEFAULT,
                .streams = streams,
        };
        Flow flows[PROTO_STREAMS_MAX];
        int fds[PROTO_STREAMS_MAX];
        ProtoTestResult granted;
        NetCounters before = {}, after = {};
        int r;

        if (streams < 1 || streams > 1 + s->n_joined)
                return -EINVAL;
        /* The interface's counters around all of the test: what else it carried meanwhile shows. */
        if (s->host && s->host->ifindex > 0)
                (void) net_host_read_counters(s->host->ifindex, &before);
        uint64_t retrans = streams_retrans(s, streams);
        r = test_start(s, upload, &req, &granted, deadline);
        if (r < 0)
                return r;

        /* Timed from READY: the responder starts its clock (and, downloading, its streams) with it. */
        uint64_t start = now_usec(CLOCK_MONOTONIC), cpu = net_host_cpu_usec();
        FlowTest t = {
                .frame_size = req.frame_size,
                .granted_bytes = granted.bytes,
                .granted_usec = granted.usec,
                .start = start,
                .deadline = deadline,
                .host = s->host,
                .payload_fd = s->payload_fd,
        };
        for (unsigned i = 0; i < streams; i++)
                flows[i] = (Flow) {
                        .test = &t,
                        .c = i == 0 ? control : &s->joined[i - 1],
                        .control = i == 0,
                        .upload = upload,
                        .state = upload ? FLOW_SEND_DATA : FLOW_READ_HEADER,
                        .last = start,
                };
        for (unsigned i = 0; i < streams; i++)
                fds[i] = flows[i].c->fd;
        Slices slices = { .slice_usec = slice_usec, .end = start + granted.usec, .fds = fds, .n_fds = streams,
                          .sending = upload };
        slices_start(&slices, start);
        NetTransfer x = { .streams = streams };
        r = run_flows(s, &t, flows, streams, slice_usec > 0 ? &slices : NULL, &x.threads);
        if (slices.n >= 3) {
                x.slices = slices.n;
                x.steady_gbps = samples_median(slices.gbps, slices.n);
        }
        x.cpu_usec = net_host_cpu_usec() - cpu;
        /* A stream cut inside a payload keeps its threshold: the next test's small frames must wake. */
        for (unsigned i = 0; i < streams; i++)
                flow_lowat(&flows[i], 1);
        if (r < 0)
                return r;

        uint64_t last = start;
        for (unsigned i = 0; i < streams; i++) {
                x.bytes += flows[i].bytes;
                last = MAX(last, flows[i].last);
                x.remote_usec = MAX(x.remote_usec, flows[i].result.usec);
        }
        if (upload) {
                /* The responder timed the receive, from READY to the last byte on any stream. */
                ProtoTestResult total;
                r = net_client_read_result(control, PROTO_UPLOAD_RESULT, &total, deadline);
                if (r < 0)
                        return r;
                if (total.bytes != x.bytes)
                        return -EPROTO;
                x.usec = total.usec;
                x.remote_usec = total.usec;
                x.remote = total;
        } else {
                x.usec = last - start;
                x.remote = flows[0].result;
        }
        x.wall_usec = now_usec(CLOCK_MONOTONIC) - start;
        uint64_t retrans_after = streams_retrans(s, streams);
        x.retrans_bytes = retrans == UINT64_MAX || retrans_after == UINT64_MAX ? UINT64_MAX : retrans_after - retrans;
        if (before.valid && net_host_read_counters(s->host->ifindex, &after) >= 0 && after.valid) {
                x.counters_valid = true;
                x.if_rx_bytes = after.rx_bytes - before.rx_bytes;
                x.if_tx_bytes = after.tx_bytes - before.tx_bytes;
                x.if_rx_packets = after.rx_packets - before.rx_packets;
                x.if_tx_packets = after.tx_packets - before.tx_packets;
        }
        *ret = x;
        return 0;
}

int net_streams_upload(NetStreams *s, unsigned streams, uint64_t max_bytes, uint64_t max_usec, uint64_t slice_usec,
                       uint64_t deadline, NetTransfer *ret) {
        return streams_test(s, true, streams, max_bytes, max_usec, slice_usec, deadline, ret);
}

int net_streams_download(NetStreams *s, unsigned streams, uint64_t max_bytes, uint64_t max_usec, uint64_t slice_usec,
                         uint64_t deadline, NetTransfer *ret) {
        return streams_test(s, false, streams, max_bytes, max_usec, slice_usec, deadline, ret);
}
