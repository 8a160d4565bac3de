/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "frame-io.h"
#include "proto-bulk.h"
#include "rdma-engine.h"
#include "responder-rdma.h"
#include "shared/log.h"
#include "shared/time-util.h"

struct RdmaSession {
        pthread_t thread;
        int fd;
        int done_fd;
        ProtoRdmaInfo client;
        ResponderRdma cfg;
        ResponderLimits limits;
        atomic_bool cancel;
        atomic_bool finished;
};

int responder_rdma_detect(ResponderRdma *cfg) {
        char name[64];
        int r;

        if (cfg->port == 0)
                cfg->port = 1;
        r = rdma_device_find(cfg->device, cfg->port, name, cfg->reason);
        cfg->available = r >= 0;
        if (r >= 0) {
                snprintf(cfg->device, sizeof(cfg->device), "%s", name);
                cfg->reason[0] = '\0';
        }
        return 0;
}

static int send_frame(RdmaSession *s, const uint8_t *buf, ssize_t n, uint64_t deadline) {
        if (n < 0)
                return (int) n;
        return fio_write_all(s->fd, buf, (size_t) n, deadline);
}

static int send_error(RdmaSession *s, ProtoErrorCode code, const char *message, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + 4 + PROTO_ERROR_MESSAGE_MAX];
        return send_frame(s, buf, proto_encode_error(buf, sizeof(buf), code, message), deadline);
}

/* Tells the client why an RDMA phase failed here, with the failed work completion when there was one. */
static int send_failure(RdmaSession *s, RdmaEndpoint *e, int r, const char *what, uint64_t deadline) {
        char message[PROTO_ERROR_MESSAGE_MAX], why[192];
        const char *name;

        /* The client hung up or said why it stopped: nobody to tell. */
        if (r == -ECONNABORTED)
                return r;
        if (r == -EIO && rdma_endpoint_failure(e, &name, why, sizeof(why)) >= 0)
                snprintf(message, sizeof(message), "%s failed (%s): %s", what, name, why);
        else
                snprintf(message, sizeof(message), "%s failed: %s", what, strerror(-r));
        log_debug("RDMA session: %s", message);
        return send_error(s, PROTO_ERROR_INTERNAL, message, deadline) ?: r;
}

static int serve_test(RdmaSession *s, RdmaEndpoint *e, const ProtoRdmaTest *t, uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX];
        ProtoTestResult result = {};
        int r;

        switch (t->op) {
        case PROTO_RDMA_OP_WRITE_DOWNLOAD: {
                uint64_t bytes = MIN(t->max_bytes, s->limits.max_test_bytes);
                uint64_t usec = MIN(t->max_usec, s->limits.max_test_usec);
                uint32_t size = MIN(t->message_size, RDMA_BUFFER_MAX);
                r = rdma_endpoint_write_bw(e, bytes, usec, size, deadline, &s->cancel, &result);
                if (r < 0)
                        return send_failure(s, e, r, "RDMA write", deadline);
                break;
        }
        case PROTO_RDMA_OP_SEND_LATENCY: {
                if (t->iterations == 0 || t->iterations > RDMA_LATENCY_ITERATIONS_MAX ||
                    t->message_size > RDMA_LATENCY_MESSAGE_MAX)
                        return send_error(s, PROTO_ERROR_LIMIT, "latency test out of bounds", deadline) ?: -EINVAL;
                r = rdma_endpoint_post_recv(e, t->message_size);
                if (r < 0)
                        return r;
                r = send_frame(s, buf, proto_encode_empty(buf, sizeof(buf), PROTO_RDMA_READY), deadline);
                if (r < 0)
                        return r;
                uint64_t start = now_usec(CLOCK_MONOTONIC);
                r = rdma_endpoint_pingpong(e, false, t->iterations, t->message_size, deadline, &s->cancel, NULL);
                if (r < 0)
                        return send_failure(s, e, r, "RDMA send/receive", deadline);
                result = (ProtoTestResult) { .bytes = t->iterations, .usec = now_usec(CLOCK_MONOTONIC) - start };
                break;
        }
        case _PROTO_RDMA_OP_MAX:
                return -EINVAL;
        }
        return send_frame(s, buf, proto_encode_test_result(buf, sizeof(buf), PROTO_RDMA_RESULT, &result), deadline);
}

static void *session_main(void *userdata) {
        RdmaSession *s = userdata;
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_CONTROL_MAX], payload[PROTO_CONTROL_MAX];
        _cleanup_(rdma_endpoint_freep) RdmaEndpoint *e = NULL;
        /* Every RDMA phase is bounded by the test limit; three phases and some slack bound the session. */
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + 3 * s->limits.max_test_usec + 10 * USEC_PER_SEC;
        char why[PROTO_ERROR_MESSAGE_MAX];
        ProtoRdmaInfo local;
        int r;

        size_t size = MIN((size_t) s->client.size, (size_t) RDMA_BUFFER_MAX);
        size = MAX(size, (size_t) 2 * 4096);
        r = rdma_endpoint_open(s->cfg.device, s->cfg.port, s->cfg.gid_index, size, &e);
        if (r < 0) {
                (void) send_error(s, PROTO_ERROR_UNSUPPORTED, "cannot open the RDMA device", deadline);
                goto finish;
        }
        r = rdma_endpoint_check_peer(e, &s->client, why, sizeof(why));
        if (r < 0) {
                (void) send_error(s, PROTO_ERROR_UNSUPPORTED, why, deadline);
                goto finish;
        }
        r = rdma_endpoint_connect(e, &s->client);
        if (r < 0) {
                snprintf(why, sizeof(why), "cannot connect the queue pair: %s", strerror(-r));
                (void) send_error(s, PROTO_ERROR_PROTOCOL, why, deadline);
                goto finish;
        }
        rdma_endpoint_info(e, &local);
        /* A probe that hangs up or gives up mid-phase ends the phase here too. */
        rdma_endpoint_watch(e, s->fd);
        r = send_frame(s, buf, proto_encode_rdma_info(buf, sizeof(buf), PROTO_RDMA_CONNECT_REPLY, &local), deadline);
        if (r < 0)
                goto finish;

        while (!atomic_load(&s->cancel)) {
                ProtoHeader h;
                ProtoRdmaTest t;
                uint64_t idle = now_usec(CLOCK_MONOTONIC) + s->limits.idle_timeout_usec;

                r = fio_read_frame(s->fd, PROTO_FRAME_MAX_MIN, &h, payload, MIN(deadline, idle));
                if (r < 0)
                        break;
                if (h.type != PROTO_RDMA_TEST || proto_decode_rdma_test(payload, h.length, &t) < 0) {
                        (void) send_error(s, PROTO_ERROR_PROTOCOL, "expected an RDMA test", deadline);
                        break;
                }
                r = serve_test(s, e, &t, deadline);
                if (r < 0)
                        break;
        }

finish:
        if (r < 0)
                log_debug_errno(r, "RDMA session ended: %m");
        atomic_store(&s->finished, true);
        uint64_t one = 1;
        (void) write(s->done_fd, &one, sizeof(one));
        return NULL;
}

int rdma_session_start(int fd, const ProtoRdmaInfo *client, const ResponderRdma *cfg, const ResponderLimits *limits,
                       int done_fd, RdmaSession **ret) {
        RdmaSession *s;
        int r;

        s = calloc(1, sizeof(RdmaSession));
        if (!s)
                return -ENOMEM;
        *s = (RdmaSession) { .fd = fd, .done_fd = done_fd, .client = *client, .cfg = *cfg, .limits = *limits };
        r = pthread_create(&s->thread, NULL, session_main, s);
        if (r != 0) {
                free(s);
                return -r;
        }
        *ret = s;
        return 0;
}

bool rdma_session_finished(const RdmaSession *s) {
        return s && atomic_load(&s->finished);
}

RdmaSession *rdma_session_join(RdmaSession *s) {
        if (!s)
                return NULL;
        atomic_store(&s->cancel, true);
        /* Wakes a thread blocked in poll() on the control connection. */
        (void) shutdown(s->fd, SHUT_RDWR);
        pthread_join(s->thread, NULL);
        safe_close(s->fd);
        free(s);
        return NULL;
}
