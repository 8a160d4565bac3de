/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>

#include "frame-io.h"
#include "net-streams.h"
#include "shared/time-util.h"

int net_streams_open(NetStreams *s, NetClient *control, unsigned wanted, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + 4], reply[PROTO_CONTROL_MAX];
        ProtoStreams granted;
        uint32_t length;
        ssize_t n;
        int r;

        *s = (NetStreams) { .control = control, .granted = 1 };
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
}

/* One stream's part of a test, run on its own thread for a joined stream. */
typedef struct StreamJob {
        NetClient *c;
        bool control;
        uint32_t frame_size;
        uint64_t granted_bytes, granted_usec;
        uint64_t start, deadline;
        uint64_t *assigned;     /* upload: bytes handed to frames on all streams */
        uint64_t bytes;         /* sent or received on this stream */
        uint64_t last;          /* download: when its last byte came */
        ProtoTestResult result; /* what the responder said about this stream */
        int r;
} StreamJob;

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

static int upload_stream(StreamJob *j) {
        uint8_t end[PROTO_HEADER_SIZE];
        int r;

        while (now_usec(CLOCK_MONOTONIC) - j->start < j->granted_usec) {
                uint32_t frame = take_frame(j->assigned, j->granted_bytes, j->frame_size);
                uint8_t header[PROTO_HEADER_SIZE];
                struct iovec iov[2] = {
                        { .iov_base = header, .iov_len = sizeof(header) },
                        { .iov_base = j->c->data, .iov_len = frame },
                };
                if (frame == 0)
                        break;
                proto_header_encode(header, PROTO_DATA, frame);
                r = fio_writev_all(j->c->fd, iov, 2, j->deadline);
                if (r < 0)
                        return r;
                j->bytes += frame;
        }

        (void) proto_encode_empty(end, sizeof(end), PROTO_UPLOAD_END);
        r = fio_write_all(j->c->fd, end, sizeof(end), j->deadline);
        if (r < 0 || j->control)
                return r; /* the control's answer, for all streams, comes once every stream has ended */
        r = net_client_read_result(j->c, PROTO_UPLOAD_RESULT, &j->result, j->deadline);
        if (r >= 0 && j->result.bytes != j->bytes)
                r = -EPROTO;
        return r;
}

static int download_stream(StreamJob *j) {
        uint8_t reply[PROTO_CONTROL_MAX];
        int r;

        j->last = j->start;
        for (;;) {
                ProtoHeader h;

                r = fio_read_frame(j->c->fd, PROTO_FRAME_MAX_DEFAULT, &h, reply, j->deadline);
                if (r == -EBADMSG || r == -EMSGSIZE)
                        return -EPROTO;
                if (r < 0)
                        return r;
                if (h.type == PROTO_DOWNLOAD_END) {
                        if (proto_decode_test_result(reply, h.length, &j->result) < 0 || j->result.bytes != j->bytes)
                                return -EPROTO;
                        return 0;
                }
                if (h.type == PROTO_ERROR) {
                        if (proto_decode_error(reply, h.length, &j->c->remote_error) < 0)
                                return -EPROTO;
                        return -EREMOTEIO;
                }
                if (h.type != PROTO_DATA || j->bytes + h.length > j->granted_bytes)
                        return -EPROTO;
                /* The payload only needs reading: it lands in the bulk buffer and is overwritten. */
                r = fio_read_all(j->c->fd, j->c->data, h.length, j->deadline);
                if (r < 0)
                        return r;
                j->bytes += h.length;
                j->last = now_usec(CLOCK_MONOTONIC);
        }
}

static void *upload_thread(void *userdata) {
        StreamJob *j = userdata;
        j->r = upload_stream(j);
        return NULL;
}

static void *download_thread(void *userdata) {
        StreamJob *j = userdata;
        j->r = download_stream(j);
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

/* Runs job[0] here and the others on threads; the first failure, the control's when it has one. */
static int run_jobs(NetStreams *s, StreamJob *jobs, unsigned n, void *(*thread)(void *)) {
        pthread_t threads[PROTO_STREAMS_MAX];
        unsigned started = 1;
        int r = 0;

        for (; started < n; started++) {
                int e = pthread_create(&threads[started], NULL, thread, &jobs[started]);
                if (e != 0) {
                        r = -e;
                        break;
                }
        }
        thread(&jobs[0]);
        for (unsigned i = 1; i < started; i++)
                (void) pthread_join(threads[i], NULL);
        if (r < 0)
                return r; /* the responder sees the missing streams' silence and ends the test */
        if (jobs[0].r < 0)
                return jobs[0].r;
        for (unsigned i = 1; i < n; i++)
                if (jobs[i].r < 0) {
                        s->control->remote_error = jobs[i].c->remote_error;
                        return jobs[i].r;
                }
        return 0;
}

static int streams_test(NetStreams *s, bool upload, unsigned streams, uint64_t max_bytes, uint64_t max_usec,
                        uint64_t deadline, NetTransfer *ret) {
        NetClient *control = s->control;
        uint32_t frame = MIN(MIN((uint32_t) PROTO_DATA_FRAME_DEFAULT, control->max_frame), (uint32_t) PROTO_FRAME_MAX_DEFAULT);
        ProtoTestRequest req = {
                .max_bytes = max_bytes,
                .max_usec = max_usec,
                .frame_size = upload ? frame : PROTO_FRAME_MAX_DEFAULT,
                .streams = streams,
        };
        StreamJob jobs[PROTO_STREAMS_MAX];
        ProtoTestResult granted;
        uint64_t assigned = 0;
        int r;

        if (streams < 1 || streams > 1 + s->n_joined)
                return -EINVAL;
        r = test_start(s, upload, &req, &granted, deadline);
        if (r < 0)
                return r;

        /* Timed from READY: the responder starts its clock (and, downloading, its streams) with it. */
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        for (unsigned i = 0; i < streams; i++)
                jobs[i] = (StreamJob) {
                        .c = i == 0 ? control : &s->joined[i - 1],
                        .control = i == 0,
                        .frame_size = req.frame_size,
                        .granted_bytes = granted.bytes,
                        .granted_usec = granted.usec,
                        .start = start,
                        .deadline = deadline,
                        .assigned = &assigned,
                };
        r = run_jobs(s, jobs, streams, upload ? upload_thread : download_thread);
        if (r < 0)
                return r;

        NetTransfer t = { .streams = streams };
        uint64_t last = start;
        for (unsigned i = 0; i < streams; i++) {
                t.bytes += jobs[i].bytes;
                last = MAX(last, jobs[i].last);
                t.remote_usec = MAX(t.remote_usec, jobs[i].result.usec);
        }
        if (upload) {
                /* The responder timed the receive, from READY to the last byte on any stream. */
                ProtoTestResult total;
                r = net_client_read_result(control, PROTO_UPLOAD_RESULT, &total, deadline);
                if (r < 0)
                        return r;
                if (total.bytes != t.bytes)
                        return -EPROTO;
                t.usec = total.usec;
                t.remote_usec = total.usec;
        } else
                t.usec = last - start;
        *ret = t;
        return 0;
}

int net_streams_upload(NetStreams *s, unsigned streams, uint64_t max_bytes, uint64_t max_usec, uint64_t deadline,
                       NetTransfer *ret) {
        return streams_test(s, true, streams, max_bytes, max_usec, deadline, ret);
}

int net_streams_download(NetStreams *s, unsigned streams, uint64_t max_bytes, uint64_t max_usec, uint64_t deadline,
                         NetTransfer *ret) {
        return streams_test(s, false, streams, max_bytes, max_usec, deadline, ret);
}
