/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "proto-auth.h"
#include "proto-bulk.h"
#include "rdma-engine.h"
#include "shared/time-util.h"

#define SEND_DEPTH 64
#define RECV_OFFSET 4096     /* ping-pong receives land here, sends leave from offset 0 */
#define WR_ID_WRITE 1
#define WR_ID_SEND 2
#define WR_ID_RECV 3

struct RdmaEndpoint {
        struct ibv_context *ctx;
        struct ibv_pd *pd;
        struct ibv_cq *cq;
        struct ibv_qp *qp;
        struct ibv_mr *mr;
        uint8_t *buf;
        size_t size;
        char device[64];
        uint8_t port;
        int gid_index;
        struct ibv_port_attr port_attr;
        union ibv_gid gid;
        uint32_t psn;
        ProtoRdmaInfo remote;
        int control_fd; /* rdma_endpoint_watch(), or -1 */
        /* Why the last call returned -EIO: the failed work completion, and what the device said. */
        bool failed;
        enum ibv_wc_status failed_status;
        uint64_t failed_wr_id;
        int fatal_event; /* enum ibv_event_type, or -1 */
};

static bool gid_is_zero(const union ibv_gid *g) {
        static const union ibv_gid zero;
        return memcmp(g, &zero, sizeof(zero)) == 0;
}

int rdma_device_find(const char *want, uint8_t port, char ret_name[static 64], char reason[static 128]) {
        struct ibv_device **list;
        int n = 0, r = -ENODEV;

        list = ibv_get_device_list(&n);
        if (!list) {
                /* ENOSYS: the kernel has no verbs support at all. */
                snprintf(reason, 128, "no RDMA device (no kernel verbs support: %s)", strerror(errno));
                return -ENODEV;
        }
        if (n == 0)
                snprintf(reason, 128, "no RDMA device on this host");
        else if (!isempty(want))
                snprintf(reason, 128, "no RDMA device named %s", want);
        else
                snprintf(reason, 128, "no RDMA device has port %u active", port);

        for (int i = 0; i < n; i++) {
                const char *name = ibv_get_device_name(list[i]);
                if (!isempty(want) && !streq(want, name))
                        continue;
                /* An iWARP queue pair reaches RTS only through the RDMA connection manager, which
                 * exchanges its TCP stream; ibv_modify_qp() with an address vector cannot. */
                if (list[i]->transport_type == IBV_TRANSPORT_IWARP) {
                        snprintf(reason, 128, "RDMA device %s is iWARP, which connects through the RDMA CM (not used)",
                                 name);
                        r = -EPROTONOSUPPORT;
                        continue;
                }

                struct ibv_context *ctx = ibv_open_device(list[i]);
                if (!ctx) {
                        r = -errno ?: -EIO;
                        snprintf(reason, 128, "cannot open RDMA device %s: %s", name, strerror(-r));
                        continue;
                }
                struct ibv_port_attr attr;
                int k = ibv_query_port(ctx, port, &attr);
                ibv_close_device(ctx);
                if (k != 0) {
                        snprintf(reason, 128, "RDMA device %s has no port %u", name, port);
                        r = -ENODEV;
                        continue;
                }
                if (attr.state != IBV_PORT_ACTIVE) {
                        snprintf(reason, 128, "RDMA device %s port %u is not active", name, port);
                        r = -ENETDOWN;
                        continue;
                }
                snprintf(ret_name, 64, "%s", name);
                r = 0;
                break;
        }
        ibv_free_device_list(list);
        return r;
}

/* How well a RoCE GID serves: RoCE v2 is routed (RoCE v1 only reaches its own L2 segment, and the two
 * do not talk to each other), IPv4 is what perftest prefers, a link-local address reaches no further
 * than the link. 0 for an entry that cannot be used. */
static int rank_roce_gid(const struct ibv_gid_entry *g) {
        bool mapped = memcmp(g->gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0;
        bool link_local = g->gid.raw[0] == 0xfe && (g->gid.raw[1] & 0xc0) == 0x80;

        if (gid_is_zero(&g->gid))
                return 0;
        if (g->gid_type != IBV_GID_TYPE_ROCE_V2)
                return 1;
        return mapped ? 4 : link_local ? 2 : 3;
}

static int pick_gid(RdmaEndpoint *e, int gid_index) {
        int best = 0;

        if (gid_index >= 0) {
                /* An empty table slot reads as ::, which reaches nothing. */
                if (ibv_query_gid(e->ctx, e->port, gid_index, &e->gid) != 0 || gid_is_zero(&e->gid))
                        return -EADDRNOTAVAIL;
                e->gid_index = gid_index;
                return 0;
        }
        e->gid_index = 0;
        (void) ibv_query_gid(e->ctx, e->port, 0, &e->gid);
        if (e->port_attr.link_layer != IBV_LINK_LAYER_ETHERNET)
                return 0;
        /* RoCE routes by GID: the best entry, the first of equals (as perftest's default). */
        for (int i = 0; i < e->port_attr.gid_tbl_len && i < 256; i++) {
                struct ibv_gid_entry g;
                if (ibv_query_gid_ex(e->ctx, e->port, (uint32_t) i, &g, 0) != 0)
                        continue;
                int rank = rank_roce_gid(&g);
                if (rank > best) {
                        best = rank;
                        e->gid = g.gid;
                        e->gid_index = i;
                }
        }
        return best > 0 ? 0 : -EADDRNOTAVAIL;
}

int rdma_endpoint_open(const char *device, uint8_t port, int gid_index, size_t buffer_size, RdmaEndpoint **ret) {
        _cleanup_(rdma_endpoint_freep) RdmaEndpoint *e = NULL;
        struct ibv_device **list;
        int n = 0, r;

        if (buffer_size < 2 * RECV_OFFSET || buffer_size > RDMA_BUFFER_MAX)
                return -EINVAL;
        e = calloc(1, sizeof(RdmaEndpoint));
        if (!e)
                return -ENOMEM;
        snprintf(e->device, sizeof(e->device), "%s", device);
        e->port = port;
        e->size = buffer_size;
        e->control_fd = -EBADF;

        list = ibv_get_device_list(&n);
        if (!list)
                return -ENODEV;
        for (int i = 0; i < n && !e->ctx; i++)
                if (streq(ibv_get_device_name(list[i]), device))
                        e->ctx = ibv_open_device(list[i]);
        ibv_free_device_list(list);
        if (!e->ctx)
                return -ENODEV;

        /* Async events are read only to explain a failure, never waited for. */
        int flags = fcntl(e->ctx->async_fd, F_GETFL);
        if (flags < 0 || fcntl(e->ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        e->fatal_event = -1;

        if (ibv_query_port(e->ctx, port, &e->port_attr) != 0)
                return -ENODEV;
        if (e->port_attr.state != IBV_PORT_ACTIVE)
                return -ENETDOWN;
        r = pick_gid(e, gid_index);
        if (r < 0)
                return r;

        e->buf = mmap(NULL, e->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (e->buf == MAP_FAILED) {
                e->buf = NULL;
                return -ENOMEM;
        }
        e->pd = ibv_alloc_pd(e->ctx);
        if (!e->pd)
                return -errno ?: -EIO;
        e->mr = ibv_reg_mr(e->pd, e->buf, e->size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        if (!e->mr)
                return -errno ?: -EIO;
        e->cq = ibv_create_cq(e->ctx, 2 * SEND_DEPTH + 2, NULL, NULL, 0);
        if (!e->cq)
                return -errno ?: -EIO;

        struct ibv_qp_init_attr qia = {
                .send_cq = e->cq,
                .recv_cq = e->cq,
                .qp_type = IBV_QPT_RC,
                .cap = { .max_send_wr = SEND_DEPTH, .max_recv_wr = SEND_DEPTH, .max_send_sge = 1, .max_recv_sge = 1 },
        };
        e->qp = ibv_create_qp(e->pd, &qia);
        if (!e->qp)
                return -errno ?: -EIO;

        struct ibv_qp_attr attr = {
                .qp_state = IBV_QPS_INIT,
                .pkey_index = 0,
                .port_num = port,
                .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
        };
        r = ibv_modify_qp(e->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        if (r != 0)
                return -r;

        uint32_t psn;
        r = proto_random_bytes(&psn, sizeof(psn));
        if (r < 0)
                return r;
        e->psn = psn & 0xffffff;

        *ret = TAKE_PTR(e);
        return 0;
}

RdmaEndpoint *rdma_endpoint_free(RdmaEndpoint *e) {
        if (!e)
                return NULL;
        if (e->qp)
                ibv_destroy_qp(e->qp);
        if (e->cq)
                ibv_destroy_cq(e->cq);
        if (e->mr)
                ibv_dereg_mr(e->mr);
        if (e->pd)
                ibv_dealloc_pd(e->pd);
        if (e->buf)
                munmap(e->buf, e->size);
        if (e->ctx)
                ibv_close_device(e->ctx);
        free(e);
        return NULL;
}

void rdma_endpoint_info(const RdmaEndpoint *e, ProtoRdmaInfo *ret) {
        *ret = (ProtoRdmaInfo) {
                .qpn = e->qp->qp_num,
                .psn = e->psn,
                .rkey = e->mr->rkey,
                .lid = e->port_attr.lid,
                .mtu = (uint8_t) e->port_attr.active_mtu,
                .gid_index = (uint8_t) e->gid_index,
                .addr = (uint64_t) (uintptr_t) e->buf,
                .size = (uint32_t) e->size,
        };
        memcpy(ret->gid, e->gid.raw, sizeof(ret->gid));
}

int rdma_endpoint_check_peer(const RdmaEndpoint *e, const ProtoRdmaInfo *peer, char *reason, size_t size) {
        /* The exchange carries no link layer, but tells it: an active InfiniBand port has the LID its
         * subnet manager gave it, a RoCE port has none. */
        bool here_roce = e->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET, there_roce = peer->lid == 0;

        if (here_roce == there_roce)
                return 0;
        snprintf(reason, size, "%s port %u is %s, the other end's port is %s: no path joins the two", e->device,
                 e->port, here_roce ? "RoCE" : "InfiniBand", there_roce ? "RoCE" : "InfiniBand");
        return -EPROTOTYPE;
}

int rdma_endpoint_connect(RdmaEndpoint *e, const ProtoRdmaInfo *remote) {
        union ibv_gid dgid;
        int r;

        memcpy(dgid.raw, remote->gid, sizeof(dgid.raw));
        struct ibv_qp_attr attr = {
                .qp_state = IBV_QPS_RTR,
                .path_mtu = (enum ibv_mtu) MIN((int) e->port_attr.active_mtu, (int) remote->mtu),
                .dest_qp_num = remote->qpn,
                .rq_psn = remote->psn,
                .max_dest_rd_atomic = 1,
                .min_rnr_timer = 12,
                .ah_attr = {
                        .dlid = remote->lid,
                        .sl = 0,
                        .src_path_bits = 0,
                        .port_num = e->port,
                },
        };
        /* RoCE always needs the global route header; InfiniBand only across subnets. */
        if (e->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET || !gid_is_zero(&dgid)) {
                attr.ah_attr.is_global = 1;
                attr.ah_attr.grh.dgid = dgid;
                attr.ah_attr.grh.sgid_index = (uint8_t) e->gid_index;
                attr.ah_attr.grh.hop_limit = 64;
        }
        r = ibv_modify_qp(e->qp, &attr,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
        if (r != 0)
                return -r;

        attr = (struct ibv_qp_attr) {
                .qp_state = IBV_QPS_RTS,
                .timeout = 14,
                .retry_cnt = 7,
                .rnr_retry = 7,   /* 7 = retry for ever: the peer posts its receive when it is told to */
                .sq_psn = e->psn,
                .max_rd_atomic = 1,
        };
        r = ibv_modify_qp(e->qp, &attr,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC);
        if (r != 0)
                return -r;
        e->remote = *remote;
        return 0;
}

/* Keeps what explains a failed completion: the completion, and an async event that says the queue
 * pair or the whole device failed (which is why its work requests were flushed). */
static void record_failure(RdmaEndpoint *e, const struct ibv_wc *wc, int n) {
        struct ibv_async_event ev;
        const struct ibv_wc *first = NULL;

        /* A flush only says the queue pair is in error; another completion of the batch says why. */
        for (int i = 0; i < n; i++)
                if (wc[i].status != IBV_WC_SUCCESS && (!first || first->status == IBV_WC_WR_FLUSH_ERR))
                        first = &wc[i];
        if (!first)
                return;
        if (!e->failed || e->failed_status == IBV_WC_WR_FLUSH_ERR) {
                e->failed = true;
                e->failed_status = first->status;
                e->failed_wr_id = first->wr_id;
        }
        while (ibv_get_async_event(e->ctx, &ev) == 0) {
                if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
                        e->fatal_event = IBV_EVENT_DEVICE_FATAL;
                else if (e->fatal_event < 0 && IN_SET(ev.event_type, IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR,
                                                      IBV_EVENT_QP_ACCESS_ERR, IBV_EVENT_CQ_ERR, IBV_EVENT_PORT_ERR))
                        e->fatal_event = (int) ev.event_type;
                ibv_ack_async_event(&ev);
        }
}

void rdma_endpoint_watch(RdmaEndpoint *e, int fd) {
        e->control_fd = fd;
}

/* The control connection closed, failed, or starts an error frame: the other end gave up on this
 * phase, and waiting for its queue pair would only run into the deadline. */
static bool control_says_stop(const RdmaEndpoint *e) {
        struct pollfd p = { .fd = e->control_fd, .events = POLLIN | POLLRDHUP };
        uint8_t buf[PROTO_HEADER_SIZE];
        ProtoHeader h;

        if (e->control_fd < 0 || poll(&p, 1, 0) <= 0)
                return false;
        if (p.revents & (POLLERR | POLLHUP | POLLRDHUP))
                return true;
        ssize_t n = recv(e->control_fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
        if (n == 0)
                return true;
        if (n < 0)
                return !IN_SET(errno, EAGAIN, EINTR);
        /* Anything else (a result that overtook our last completion) is read after the phase. */
        return n == (ssize_t) sizeof(buf) && proto_header_decode(buf, PROTO_FRAME_MAX_MAX, &h) >= 0 &&
               h.type == PROTO_ERROR;
}

/* Polls for up to max completions; -EIO for a failed one, -ETIME/-ECANCELED when told to stop. */
static int poll_cq(RdmaEndpoint *e, struct ibv_wc *wc, int max, uint64_t deadline, const atomic_bool *cancel,
                   unsigned *spins) {
        int n = ibv_poll_cq(e->cq, max, wc);
        if (n < 0) {
                /* The CQ itself failed (overrun): there is no completion to tell, only the event. */
                record_failure(e, &(struct ibv_wc) { .status = IBV_WC_GENERAL_ERR }, 1);
                return -EIO;
        }
        for (int i = 0; i < n; i++)
                if (wc[i].status != IBV_WC_SUCCESS) {
                        record_failure(e, wc, n);
                        return -EIO;
                }
        /* The clock and the control connection are looked at every few thousand polls, busy or not:
         * busy polling is the point, syscalls are not, and a busy phase must hear of a peer that left. */
        if (++*spins % 4096 == 0) {
                if (cancel && atomic_load(cancel))
                        return -ECANCELED;
                if (control_says_stop(e))
                        return -ECONNABORTED;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return -ETIME;
        }
        return n;
}

int rdma_endpoint_failure(const RdmaEndpoint *e, const char **ret_name, char *message, size_t size) {
        const char *name, *why;

        if (!e->failed)
                return -ENOENT;
        /* What the device said outranks what the flushed work request can say. */
        if (e->fatal_event == IBV_EVENT_DEVICE_FATAL) {
                name = "device-failed";
                why = "the RDMA device failed or was removed";
        } else if (e->fatal_event == IBV_EVENT_CQ_ERR) {
                name = "cq-overrun";
                why = "the completion queue overran";
        } else if (e->failed_status == IBV_WC_REM_ACCESS_ERR) {
                name = "remote-access";
                why = "the other end refused access to its memory (rkey, address range or permissions)";
        } else if (e->failed_status == IBV_WC_RETRY_EXC_ERR) {
                name = "retry-exceeded";
                why = "the other end stopped answering (gone, reset, or its queue pair failed)";
        } else if (e->failed_status == IBV_WC_RNR_RETRY_EXC_ERR) {
                name = "rnr-retry-exceeded";
                why = "the other end had no receive posted";
        } else if (e->failed_status == IBV_WC_WR_FLUSH_ERR) {
                name = "qp-error";
                why = e->fatal_event >= 0 ? ibv_event_type_str((enum ibv_event_type) e->fatal_event) :
                                            "the queue pair is in the error state";
        } else {
                name = "work-completion";
                why = "the work request failed";
        }
        snprintf(message, size, "%s: %s", why, ibv_wc_status_str(e->failed_status));
        *ret_name = name;
        return 0;
}

int rdma_endpoint_write_bw(RdmaEndpoint *e, uint64_t max_bytes, uint64_t max_usec, uint32_t message_size,
                           uint64_t deadline, const atomic_bool *cancel, ProtoTestResult *ret) {
        uint64_t posted = 0, completed = 0, offset = 0, start, end;
        unsigned outstanding = 0, spins = 0;
        struct ibv_wc wc[16];

        if (message_size == 0 || message_size > e->size || message_size > e->remote.size)
                return -EINVAL;

        start = end = now_usec(CLOCK_MONOTONIC);
        for (;;) {
                bool more = posted < max_bytes && now_usec(CLOCK_MONOTONIC) - start < max_usec;
                if (!more && outstanding == 0)
                        break;
                while (more && outstanding < SEND_DEPTH) {
                        uint32_t len = (uint32_t) MIN((uint64_t) message_size, max_bytes - posted);
                        if (offset + len > e->remote.size)
                                offset = 0;
                        struct ibv_sge sge = { .addr = (uintptr_t) e->buf, .length = len, .lkey = e->mr->lkey };
                        struct ibv_send_wr wr = {
                                .wr_id = WR_ID_WRITE,
                                .sg_list = &sge,
                                .num_sge = 1,
                                .opcode = IBV_WR_RDMA_WRITE,
                                .send_flags = IBV_SEND_SIGNALED,
                                .wr.rdma = { .remote_addr = e->remote.addr + offset, .rkey = e->remote.rkey },
                        }, *bad;
                        int r = ibv_post_send(e->qp, &wr, &bad);
                        if (r != 0)
                                return -r;
                        posted += len;
                        offset += len;
                        outstanding++;
                        more = posted < max_bytes;
                }
                int n = poll_cq(e, wc, ELEMENTSOF(wc), deadline, cancel, &spins);
                if (n < 0)
                        return n;
                for (int i = 0; i < n; i++) {
                        completed += wc[i].byte_len ?: MIN((uint64_t) message_size, posted - completed);
                        outstanding--;
                }
                if (n > 0)
                        end = now_usec(CLOCK_MONOTONIC);
        }
        /* Work completions of RDMA writes carry no byte count on every provider: posted bytes are the
         * bytes written once every write completed. */
        *ret = (ProtoTestResult) { .bytes = posted, .usec = end - start };
        (void) completed;
        return 0;
}

int rdma_endpoint_post_recv(RdmaEndpoint *e, uint32_t size) {
        struct ibv_sge sge = { .addr = (uintptr_t) (e->buf + RECV_OFFSET), .length = size, .lkey = e->mr->lkey };
        struct ibv_recv_wr wr = { .wr_id = WR_ID_RECV, .sg_list = &sge, .num_sge = 1 }, *bad;

        if (size == 0 || size > RDMA_LATENCY_MESSAGE_MAX || RECV_OFFSET + size > e->size)
                return -EINVAL;
        int r = ibv_post_recv(e->qp, &wr, &bad);
        return r != 0 ? -r : 0;
}

static int post_send(RdmaEndpoint *e, uint32_t size) {
        struct ibv_sge sge = { .addr = (uintptr_t) e->buf, .length = size, .lkey = e->mr->lkey };
        struct ibv_send_wr wr = {
                .wr_id = WR_ID_SEND,
                .sg_list = &sge,
                .num_sge = 1,
                .opcode = IBV_WR_SEND,
                .send_flags = IBV_SEND_SIGNALED,
        }, *bad;
        int r = ibv_post_send(e->qp, &wr, &bad);
        return r != 0 ? -r : 0;
}

/* Counts send and receive completions until both reach the wanted numbers; a completion seen while
 * waiting for the other kind is never lost. */
static int reap_until(RdmaEndpoint *e, uint64_t *sends, uint64_t want_sends, uint64_t *recvs, uint64_t want_recvs,
                      uint64_t deadline, const atomic_bool *cancel) {
        unsigned spins = 0;
        struct ibv_wc wc[8];

        while (*sends < want_sends || *recvs < want_recvs) {
                int n = poll_cq(e, wc, ELEMENTSOF(wc), deadline, cancel, &spins);
                if (n < 0)
                        return n;
                for (int i = 0; i < n; i++) {
                        if (wc[i].wr_id == WR_ID_SEND)
                                (*sends)++;
                        else if (wc[i].wr_id == WR_ID_RECV)
                                (*recvs)++;
                }
        }
        return 0;
}

int rdma_endpoint_pingpong(RdmaEndpoint *e, bool initiator, uint32_t iterations, uint32_t size, uint64_t deadline,
                           const atomic_bool *cancel, double *samples) {
        uint64_t sends = 0, recvs = 0;
        int r;

        if (size == 0 || size > RDMA_LATENCY_MESSAGE_MAX)
                return -EINVAL;

        for (uint32_t i = 0; i < iterations; i++) {
                struct timespec a, b;

                if (initiator) {
                        clock_gettime(CLOCK_MONOTONIC, &a);
                        r = post_send(e, size);
                        if (r < 0)
                                return r;
                        r = reap_until(e, &sends, i + 1, &recvs, i + 1, deadline, cancel);
                        if (r < 0)
                                return r;
                        clock_gettime(CLOCK_MONOTONIC, &b);
                        /* The next receive is posted before the next send, so the answer always finds one. */
                        if (i + 1 < iterations && (r = rdma_endpoint_post_recv(e, size)) < 0)
                                return r;
                        if (samples)
                                samples[i] = (double) (b.tv_sec - a.tv_sec) * 1e6 + (double) (b.tv_nsec - a.tv_nsec) / 1e3;
                } else {
                        /* Keep at most half the send queue in flight. */
                        uint64_t want_sends = i > SEND_DEPTH / 2 ? i - SEND_DEPTH / 2 : 0;
                        r = reap_until(e, &sends, want_sends, &recvs, i + 1, deadline, cancel);
                        if (r < 0)
                                return r;
                        if (i + 1 < iterations && (r = rdma_endpoint_post_recv(e, size)) < 0)
                                return r;
                        r = post_send(e, size);
                        if (r < 0)
                                return r;
                }
        }
        if (!initiator)
                return reap_until(e, &sends, iterations, &recvs, iterations, deadline, cancel);
        return 0;
}
