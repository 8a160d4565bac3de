/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fake libibverbs (tests/fake-ibverbs/) holds applications to what hardware holds them to, or the
 * RDMA tests that run over it prove nothing: the RC state machine and its attribute masks, access
 * flags, keys and bounds, queue depths, CQ overruns, the completion statuses of each failure, and
 * bytes that really cross between two processes. Linked with the fake's objects, against fixture
 * devices in a umockdev testbed (SYSFS_PATH), on a fabric file of its own.
 */
#include <infiniband/verbs.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "shared/time-util.h"
#include "unit-test.h"
/* After macros.h: glib redefines CLAMP() the same way, with an #undef first. */
#include <umockdev.h>

#define BUF_SIZE (64 * 1024)
#define IB_LID 0x1a
#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define INIT_MASK (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
                  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
                  IBV_QP_MAX_QP_RD_ATOMIC)

static UMockdevTestbed *testbed;
static char fabric_dir[] = "/tmp/test-fake-ibverbs-XXXXXX";

/* One end: a queue pair on mlx5_0 port 1 with a registered buffer. */
typedef struct End {
        struct ibv_context *ctx;
        struct ibv_pd *pd;
        struct ibv_cq *cq;
        struct ibv_qp *qp;
        struct ibv_mr *mr;
        uint8_t *buf;
        uint8_t gid[16];
        uint32_t psn;
        /* Requester and responder settings connect_to() uses. */
        uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
} End;

/* What the other end needs, as the probe exchanges it. */
typedef struct Address {
        uint32_t qpn, psn, rkey;
        uint64_t addr;
        uint8_t gid[16];
} Address;

static struct ibv_context *open_device(const char *name) {
        struct ibv_device **list;
        struct ibv_context *ctx = NULL;
        int n;

        list = ibv_get_device_list(&n);
        assert_non_null(list);
        for (int i = 0; i < n; i++)
                if (streq(ibv_get_device_name(list[i]), name))
                        ctx = ibv_open_device(list[i]);
        ibv_free_device_list(list);
        assert_non_null(ctx);
        return ctx;
}

static void end_open_size(End *e, int cqe, uint32_t max_send_wr) {
        union ibv_gid gid;

        *e = (End) { .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12, .psn = 0x123456 };
        e->ctx = open_device("mlx5_0");
        e->pd = ibv_alloc_pd(e->ctx);
        assert_non_null(e->pd);
        e->cq = ibv_create_cq(e->ctx, cqe, NULL, NULL, 0);
        assert_non_null(e->cq);
        struct ibv_qp_init_attr init = {
                .send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
                .cap = { .max_send_wr = max_send_wr, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2 },
        };
        e->qp = ibv_create_qp(e->pd, &init);
        assert_non_null(e->qp);
        assert_int_equal(e->qp->state, IBV_QPS_RESET);
        e->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(e->buf != MAP_FAILED);
        e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, ALL_ACCESS);
        assert_non_null(e->mr);
        assert_int_equal(ibv_query_gid(e->ctx, 1, 0, &gid), 0);
        memcpy(e->gid, gid.raw, 16);
}

static void end_open(End *e) {
        end_open_size(e, 64, 16);
}

static void end_close(End *e) {
        assert_int_equal(ibv_destroy_qp(e->qp), 0);
        assert_int_equal(ibv_destroy_cq(e->cq), 0);
        assert_int_equal(ibv_dereg_mr(e->mr), 0);
        assert_int_equal(ibv_dealloc_pd(e->pd), 0);
        assert_int_equal(ibv_close_device(e->ctx), 0);
        munmap(e->buf, BUF_SIZE);
}

static Address address_of(const End *e) {
        Address a = { .qpn = e->qp->qp_num, .psn = e->psn, .rkey = e->mr->rkey, .addr = (uintptr_t) e->buf };
        memcpy(a.gid, e->gid, 16);
        return a;
}

static int to_init(End *e, int mask) {
        struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = ALL_ACCESS };
        return ibv_modify_qp(e->qp, &a, mask);
}

static struct ibv_qp_attr rtr_attr(const End *e, const Address *peer) {
        struct ibv_qp_attr a = {
                .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .dest_qp_num = peer->qpn, .rq_psn = peer->psn,
                .max_dest_rd_atomic = 1, .min_rnr_timer = e->min_rnr_timer,
                .ah_attr = { .dlid = IB_LID, .port_num = 1, .is_global = 1, .grh = { .sgid_index = 0, .hop_limit = 1 } },
        };
        memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
        return a;
}

static struct ibv_qp_attr rts_attr(const End *e) {
        return (struct ibv_qp_attr) { .qp_state = IBV_QPS_RTS, .sq_psn = e->psn, .timeout = e->timeout,
                                      .retry_cnt = e->retry_cnt, .rnr_retry = e->rnr_retry, .max_rd_atomic = 1 };
}

static void connect_to(End *e, const Address *peer) {
        struct ibv_qp_attr a;

        assert_int_equal(to_init(e, INIT_MASK), 0);
        a = rtr_attr(e, peer);
        assert_int_equal(ibv_modify_qp(e->qp, &a, RTR_MASK), 0);
        a = rts_attr(e);
        assert_int_equal(ibv_modify_qp(e->qp, &a, RTS_MASK), 0);
        assert_int_equal(e->qp->state, IBV_QPS_RTS);
}

static void connect_pair(End *a, End *b) {
        Address aa = address_of(a), ba = address_of(b);
        connect_to(a, &ba);
        connect_to(b, &aa);
}

static int post(End *e, enum ibv_wr_opcode op, uint64_t wr_id, void *local, uint32_t len, uint64_t remote, uint32_t rkey) {
        struct ibv_sge sge = { .addr = (uintptr_t) local, .length = len, .lkey = e->mr->lkey };
        struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
                                  .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { remote, rkey } }, *bad = NULL;
        return ibv_post_send(e->qp, &wr, &bad);
}

static int post_recv(End *e, uint64_t wr_id, void *local, uint32_t len) {
        struct ibv_sge sge = { .addr = (uintptr_t) local, .length = len, .lkey = e->mr->lkey };
        struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
        return ibv_post_recv(e->qp, &wr, &bad);
}

/* The next completion of e, within two seconds (the longest wait here is a retry timeout). */
static struct ibv_wc poll_one(End *e) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + 2 * USEC_PER_SEC;
        struct ibv_wc wc;
        int n;

        while ((n = ibv_poll_cq(e->cq, 1, &wc)) == 0)
                assert_true(now_usec(CLOCK_MONOTONIC) < end);
        assert_int_equal(n, 1);
        return wc;
}

static void assert_no_completion(End *e) {
        struct ibv_wc wc;
        assert_int_equal(ibv_poll_cq(e->cq, 1, &wc), 0);
}

static int next_event(End *e) {
        struct ibv_async_event ev;
        if (ibv_get_async_event(e->ctx, &ev) < 0)
                return -1;
        ibv_ack_async_event(&ev);
        return (int) ev.event_type;
}

/* ---- the state machine ---- */

static void test_transitions_need_their_attributes(void **state) {
        End e, peer;
        struct ibv_qp_attr a;

        end_open(&e);
        end_open(&peer);
        Address pa = address_of(&peer);

        /* ibv_modify_qp(3), RC: INIT needs the port, the P_Key index and the access flags. */
        assert_int_equal(to_init(&e, INIT_MASK & ~IBV_QP_ACCESS_FLAGS), EINVAL);
        assert_int_equal(to_init(&e, INIT_MASK & ~IBV_QP_PKEY_INDEX), EINVAL);
        assert_int_equal(to_init(&e, INIT_MASK | IBV_QP_SQ_PSN), EINVAL); /* nothing else */
        a = rtr_attr(&e, &pa);
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTR_MASK), EINVAL); /* RESET -> RTR skips INIT */
        a = (struct ibv_qp_attr) { .qp_state = IBV_QPS_ERR };
        assert_int_equal(ibv_modify_qp(e.qp, &a, IBV_QP_STATE), EINVAL); /* nothing to flush in RESET */
        a = (struct ibv_qp_attr) { .qp_state = IBV_QPS_INIT, .port_num = 2, .qp_access_flags = ALL_ACCESS };
        assert_int_equal(ibv_modify_qp(e.qp, &a, INIT_MASK), EINVAL); /* mlx5_0 has one port */
        assert_int_equal(to_init(&e, INIT_MASK), 0);
        assert_int_equal(e.qp->state, IBV_QPS_INIT);

        /* RTR: address vector, path MTU, destination QPN, RQ PSN, responder resources, RNR timer. */
        static const int rtr_required[] = { IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN,
                                            IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER };
        for (size_t i = 0; i < ELEMENTSOF(rtr_required); i++) {
                a = rtr_attr(&e, &pa);
                assert_int_equal(ibv_modify_qp(e.qp, &a, RTR_MASK & ~rtr_required[i]), EINVAL);
        }
        a = rtr_attr(&e, &pa);
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTR_MASK | IBV_QP_SQ_PSN), EINVAL);
        a = rts_attr(&e);
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTS_MASK), EINVAL); /* INIT -> RTS skips RTR */
        /* Values the port cannot take. */
        a = rtr_attr(&e, &pa);
        a.ah_attr.dlid = 0;
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTR_MASK), EINVAL);
        a = rtr_attr(&e, &pa);
        a.ah_attr.grh.sgid_index = 1; /* an empty slot of mlx5_0's table */
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTR_MASK), EINVAL);
        a = rtr_attr(&e, &pa);
        a.path_mtu = (enum ibv_mtu) 6;
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTR_MASK), EINVAL);
        a = rtr_attr(&e, &pa);
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTR_MASK), 0);
        assert_int_equal(e.qp->state, IBV_QPS_RTR);

        /* Sends are posted in RTS only; receives from INIT on. */
        uint8_t byte = 0;
        assert_int_equal(post(&e, IBV_WR_SEND, 1, e.buf, 1, 0, 0), EINVAL);
        assert_int_equal(post_recv(&e, 1, &byte, 0), 0);

        /* RTS: SQ PSN, timeout, retry count, RNR retry, initiator depth. */
        static const int rts_required[] = { IBV_QP_SQ_PSN, IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY,
                                            IBV_QP_MAX_QP_RD_ATOMIC };
        for (size_t i = 0; i < ELEMENTSOF(rts_required); i++) {
                a = rts_attr(&e);
                assert_int_equal(ibv_modify_qp(e.qp, &a, RTS_MASK & ~rts_required[i]), EINVAL);
        }
        a = rts_attr(&e);
        a.retry_cnt = 8;
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTS_MASK), EINVAL);
        a = rts_attr(&e);
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTS_MASK | IBV_QP_CUR_STATE), EINVAL); /* cur_qp_state 0 is RESET */
        a.cur_qp_state = IBV_QPS_RTR;
        assert_int_equal(ibv_modify_qp(e.qp, &a, RTS_MASK | IBV_QP_CUR_STATE), 0);

        /* From anywhere to ERR (the posted receive flushes) and to RESET; back up from RESET only. */
        a = (struct ibv_qp_attr) { .qp_state = IBV_QPS_ERR };
        assert_int_equal(ibv_modify_qp(e.qp, &a, IBV_QP_STATE), 0);
        struct ibv_wc wc = poll_one(&e);
        assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
        assert_int_equal(wc.wr_id, 1);
        assert_int_equal(to_init(&e, INIT_MASK), EINVAL);
        a = (struct ibv_qp_attr) { .qp_state = IBV_QPS_RESET };
        assert_int_equal(ibv_modify_qp(e.qp, &a, IBV_QP_STATE), 0);
        assert_int_equal(to_init(&e, INIT_MASK), 0);

        end_close(&e);
        end_close(&peer);
}

static void test_roce_needs_a_global_route(void **state) {
        struct ibv_context *ctx = open_device("rocep59s0f0");
        struct ibv_pd *pd = ibv_alloc_pd(ctx);
        struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
        struct ibv_qp_init_attr init = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                         .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
        struct ibv_qp *qp = ibv_create_qp(pd, &init);
        struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
        struct ibv_gid_entry g;

        assert_non_null(qp);
        assert_int_equal(ibv_modify_qp(qp, &a, INIT_MASK), 0);
        a = (struct ibv_qp_attr) { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = 2,
                                   .ah_attr = { .port_num = 1 } };
        assert_int_equal(ibv_modify_qp(qp, &a, RTR_MASK), EINVAL);
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.sgid_index = 3;
        assert_int_equal(ibv_modify_qp(qp, &a, RTR_MASK), 0);
        /* The GID types of the fixture's table, as gid_attrs/types says. */
        assert_int_equal(ibv_query_gid_ex(ctx, 1, 2, &g, 0), 0);
        assert_int_equal(g.gid_type, IBV_GID_TYPE_ROCE_V1);
        assert_int_equal(ibv_query_gid_ex(ctx, 1, 3, &g, 0), 0);
        assert_int_equal(g.gid_type, IBV_GID_TYPE_ROCE_V2);
        assert_int_equal(ibv_query_gid_ex(ctx, 1, 12, &g, 0), ENODATA);
        assert_int_equal(ibv_query_gid_ex(ctx, 1, 99, &g, 0), EINVAL);
        assert_int_equal(ibv_destroy_qp(qp), 0);
        assert_int_equal(ibv_destroy_cq(cq), 0);
        assert_int_equal(ibv_dealloc_pd(pd), 0);
        assert_int_equal(ibv_close_device(ctx), 0);
}

/* ---- memory, keys, queues ---- */

static void test_memory_registration_rules(void **state) {
        End e;
        end_open(&e);

        assert_null(ibv_reg_mr(e.pd, e.buf, BUF_SIZE, IBV_ACCESS_REMOTE_WRITE));
        assert_int_equal(errno, EINVAL); /* remote write needs local write */
        uint8_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_null(ibv_reg_mr(e.pd, ro, 4096, IBV_ACCESS_LOCAL_WRITE));
        assert_int_equal(errno, EFAULT);
        munmap(ro, 4096);
        uint8_t *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(gone, 4096);
        assert_null(ibv_reg_mr(e.pd, gone, 4096, 0));
        assert_int_equal(errno, EFAULT);
        /* In use: the PD and the CQ stay. */
        assert_int_equal(ibv_dealloc_pd(e.pd), EBUSY);
        assert_int_equal(ibv_destroy_cq(e.cq), EBUSY);
        /* Keys: an lkey is no rkey. */
        assert_int_not_equal(e.mr->lkey, e.mr->rkey);
        end_close(&e);
}

static void test_writes_reads_and_their_errors(void **state) {
        End a, b;
        struct ibv_wc wc;

        end_open(&a);
        end_open(&b);
        connect_pair(&a, &b);
        for (size_t i = 0; i < BUF_SIZE; i++)
                a.buf[i] = (uint8_t) (i * 7);
        memset(b.buf, 0, BUF_SIZE);

        /* A write lands in the other's registered memory, a read comes back. */
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 1, a.buf, 1000, (uintptr_t) b.buf + 100, b.mr->rkey), 0);
        wc = poll_one(&a);
        assert_int_equal(wc.status, IBV_WC_SUCCESS);
        assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
        assert_memory_equal(b.buf + 100, a.buf, 1000);
        assert_int_equal(b.buf[99], 0);
        assert_int_equal(b.buf[1100], 0);
        assert_no_completion(&b); /* one-sided */
        assert_int_equal(post(&a, IBV_WR_RDMA_READ, 2, a.buf + 5000, 1000, (uintptr_t) b.buf + 100, b.mr->rkey), 0);
        wc = poll_one(&a);
        assert_int_equal(wc.status, IBV_WC_SUCCESS);
        assert_int_equal(wc.byte_len, 1000);
        assert_memory_equal(a.buf + 5000, a.buf, 1000);

        /* A local buffer outside the region is a local protection error; the QP goes to error and what
         * follows is flushed. */
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 3, a.buf + BUF_SIZE - 10, 100, (uintptr_t) b.buf, b.mr->rkey), 0);
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 4, a.buf, 100, (uintptr_t) b.buf, b.mr->rkey), 0);
        wc = poll_one(&a);
        assert_int_equal(wc.wr_id, 3);
        assert_int_equal(wc.status, IBV_WC_LOC_PROT_ERR);
        wc = poll_one(&a);
        assert_int_equal(wc.wr_id, 4);
        assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
        /* Posting to a QP in error is accepted and flushed. */
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 5, a.buf, 100, (uintptr_t) b.buf, b.mr->rkey), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_WR_FLUSH_ERR);
        end_close(&a);
        end_close(&b);

        /* The remote range, the rkey and its access are checked; the responder goes to error too. */
        static const struct { uint64_t offset; uint32_t len; bool lkey; } bad[] = {
                { BUF_SIZE - 10, 100, false },
                { 0, 100, true },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                end_open(&a);
                end_open(&b);
                connect_pair(&a, &b);
                assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 1, a.buf, bad[i].len, (uintptr_t) b.buf + bad[i].offset,
                                      bad[i].lkey ? b.mr->lkey : b.mr->rkey), 0);
                wc = poll_one(&a);
                assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
                assert_int_equal(post_recv(&b, 9, b.buf, 10), 0);
                wc = poll_one(&b);
                assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
                assert_int_equal(next_event(&b), IBV_EVENT_QP_ACCESS_ERR);
                end_close(&a);
                end_close(&b);
        }
}

static void test_sends_receives_rnr_and_lengths(void **state) {
        End a, b;
        struct ibv_wc wc;

        end_open(&a);
        end_open(&b);
        b.min_rnr_timer = 1; /* 10 us */
        a.rnr_retry = 2;
        connect_pair(&a, &b);
        memcpy(a.buf, "hello", 5);

        assert_int_equal(post_recv(&b, 7, b.buf + 100, 64), 0);
        assert_int_equal(post(&a, IBV_WR_SEND, 1, a.buf, 5, 0, 0), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_SUCCESS);
        wc = poll_one(&b);
        assert_int_equal(wc.status, IBV_WC_SUCCESS);
        assert_int_equal(wc.opcode, IBV_WC_RECV);
        assert_int_equal(wc.wr_id, 7);
        assert_int_equal(wc.byte_len, 5);
        assert_int_equal(wc.qp_num, b.qp->qp_num);
        assert_memory_equal(b.buf + 100, "hello", 5);

        /* Gathered from two buffers, scattered over two others of other sizes. */
        memcpy(a.buf + 200, "abc", 3);
        memcpy(a.buf + 300, "defghij", 7);
        struct ibv_sge gather[2] = { { (uintptr_t) (a.buf + 200), 3, a.mr->lkey },
                                     { (uintptr_t) (a.buf + 300), 7, a.mr->lkey } };
        struct ibv_sge scatter[2] = { { (uintptr_t) (b.buf + 1000), 4, b.mr->lkey },
                                      { (uintptr_t) (b.buf + 2000), 6, b.mr->lkey } };
        struct ibv_recv_wr rwr = { .wr_id = 8, .sg_list = scatter, .num_sge = 2 }, *rbad;
        struct ibv_send_wr swr = { .wr_id = 9, .sg_list = gather, .num_sge = 2, .opcode = IBV_WR_SEND,
                                   .send_flags = IBV_SEND_SIGNALED }, *sbad;
        assert_int_equal(ibv_post_recv(b.qp, &rwr, &rbad), 0);
        assert_int_equal(ibv_post_send(a.qp, &swr, &sbad), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_SUCCESS);
        wc = poll_one(&b);
        assert_int_equal(wc.byte_len, 10);
        assert_memory_equal(b.buf + 1000, "abcd", 4);
        assert_memory_equal(b.buf + 2000, "efghij", 6);

        /* No receive posted: RNR NAKs, rnr_retry times, then the requester gives up. */
        assert_int_equal(post(&a, IBV_WR_SEND, 2, a.buf, 5, 0, 0), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_RNR_RETRY_EXC_ERR);
        end_close(&a);
        end_close(&b);

        /* A message longer than the receive: the receiver's length error, the sender's invalid request. */
        end_open(&a);
        end_open(&b);
        connect_pair(&a, &b);
        assert_int_equal(post_recv(&b, 8, b.buf, 4), 0);
        assert_int_equal(post(&a, IBV_WR_SEND, 3, a.buf, 5, 0, 0), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_REM_INV_REQ_ERR);
        assert_int_equal(poll_one(&b).status, IBV_WC_LOC_LEN_ERR);
        end_close(&a);
        end_close(&b);
}

static void test_queue_depths_and_cq_overrun(void **state) {
        End a, b;

        /* Four send slots, freed only when their completions are polled. */
        end_open_size(&a, 64, 4);
        end_open(&b);
        connect_pair(&a, &b);
        for (int i = 0; i < 4; i++)
                assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, (uint64_t) i, a.buf, 8, (uintptr_t) b.buf, b.mr->rkey), 0);
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 4, a.buf, 8, (uintptr_t) b.buf, b.mr->rkey), ENOMEM);
        assert_int_equal(poll_one(&a).wr_id, 0);
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 4, a.buf, 8, (uintptr_t) b.buf, b.mr->rkey), 0);
        end_close(&a);
        end_close(&b);

        /* A CQ of two entries and three completions: the CQ overruns and is in error for good. */
        end_open_size(&a, 2, 8);
        end_open(&b);
        connect_pair(&a, &b);
        for (int i = 0; i < 3; i++)
                assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, (uint64_t) i, a.buf, 8, (uintptr_t) b.buf, b.mr->rkey), 0);
        struct ibv_wc wc[4];
        assert_true(ibv_poll_cq(a.cq, 4, wc) < 0);
        assert_int_equal(next_event(&a), IBV_EVENT_CQ_ERR);
        end_close(&a);
        end_close(&b);
}

static void test_unanswered_requests_are_retried_then_fail(void **state) {
        End a, b;
        Address ba;

        /* A PSN the other end does not expect goes unanswered: retry_cnt retransmissions, then the error. */
        end_open(&a);
        end_open(&b);
        a.timeout = 8; /* 1 ms */
        a.retry_cnt = 2;
        ba = address_of(&b);
        connect_to(&a, &ba);
        Address aa = address_of(&a);
        aa.psn ^= 1; /* b is told a different PSN than a starts with */
        connect_to(&b, &aa);
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 1, a.buf, 8, (uintptr_t) b.buf, b.mr->rkey), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_RETRY_EXC_ERR);
        /* (retry_cnt + 1) x 4.096 us x 2^timeout */
        assert_true(now_usec(CLOCK_MONOTONIC) - start >= 3 * 1048);
        end_close(&a);
        end_close(&b);
}

/* The other end in a child process: bytes cross, and when the child dies its QP stops answering. */
static void test_two_processes(void **state) {
        int to_child[2], to_parent[2];
        End a;
        Address ca;
        pid_t pid;

        assert_int_equal(pipe(to_child), 0);
        assert_int_equal(pipe(to_parent), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                End c;
                Address pa;
                end_open(&c);
                memset(c.buf, 0x5a, BUF_SIZE);
                ca = address_of(&c);
                if (write(to_parent[1], &ca, sizeof(ca)) != sizeof(ca) || read(to_child[0], &pa, sizeof(pa)) != sizeof(pa))
                        _exit(2);
                connect_to(&c, &pa);
                char go;
                if (write(to_parent[1], "r", 1) != 1 || read(to_child[0], &go, 1) != 1)
                        _exit(2);
                /* The parent wrote "remote" at 1000 of our buffer. */
                _exit(memcmp(c.buf + 1000, "remote", 6) == 0 ? 0 : 1);
        }
        end_open(&a);
        assert_int_equal(read(to_parent[0], &ca, sizeof(ca)), sizeof(ca));
        Address aa = address_of(&a);
        assert_int_equal(write(to_child[1], &aa, sizeof(aa)), sizeof(aa));
        connect_to(&a, &ca);
        char ready;
        assert_int_equal(read(to_parent[0], &ready, 1), 1);

        memcpy(a.buf, "remote", 6);
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 1, a.buf, 6, ca.addr + 1000, ca.rkey), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_SUCCESS);
        assert_int_equal(post(&a, IBV_WR_RDMA_READ, 2, a.buf + 100, 16, ca.addr, ca.rkey), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_SUCCESS);
        for (int i = 0; i < 16; i++)
                assert_int_equal(a.buf[100 + i], 0x5a);

        /* Let the child check what arrived and exit. */
        assert_int_equal(write(to_child[1], "g", 1), 1);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);

        /* Gone: the write is not answered. */
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 3, a.buf, 6, ca.addr, ca.rkey), 0);
        assert_int_equal(poll_one(&a).status, IBV_WC_RETRY_EXC_ERR);
        end_close(&a);
        for (int i = 0; i < 2; i++) {
                close(to_child[i]);
                close(to_parent[i]);
        }
}

/* Last: the testbed keeps mlx5_0's interface and PCI function, so it cannot be added back. */
static void test_device_that_vanishes(void **state) {
        End a, b;

        end_open(&a);
        end_open(&b);
        connect_pair(&a, &b);
        assert_int_equal(post_recv(&a, 5, a.buf, 8), 0);
        umockdev_testbed_remove_device(testbed, "/sys/devices/pci0000:80/0000:80:01.1/0000:81:00.0/infiniband/mlx5_0");
        usleep(100 * 1000); /* longer than the fake looks at sysfs */
        assert_int_equal(post(&a, IBV_WR_RDMA_WRITE, 1, a.buf, 8, (uintptr_t) b.buf, b.mr->rkey), 0);
        struct ibv_wc wc[2];
        int n = 0;
        while (n < 2) {
                int k = ibv_poll_cq(a.cq, 2 - n, wc + n);
                assert_true(k >= 0);
                n += k;
        }
        assert_int_equal(wc[0].status, IBV_WC_WR_FLUSH_ERR);
        assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
        assert_int_equal(next_event(&a), IBV_EVENT_DEVICE_FATAL);
        struct ibv_port_attr attr;
        assert_int_equal(ibv_query_port(a.ctx, 1, &attr), ENODEV);
        end_close(&a);
        end_close(&b);
}

static int setup(void **state) {
        static const char *const fixtures[] = { "cx6-ib-hdr", "cx5-roce" };
        GError *error = NULL;

        testbed = umockdev_testbed_new();
        for (size_t i = 0; i < ELEMENTSOF(fixtures); i++) {
                _cleanup_(freep) char *path = NULL;
                assert_true(asprintf(&path, "%s/tests/fixtures/rdma/%s.umockdev", unit_top_dir(), fixtures[i]) > 0);
                if (!umockdev_testbed_add_from_file(testbed, path, &error))
                        return -1;
        }
        gchar *sys = umockdev_testbed_get_sys_dir(testbed);
        setenv("SYSFS_PATH", sys, 1);
        g_free(sys);
        if (!mkdtemp(fabric_dir))
                return -1;
        _cleanup_(freep) char *fabric = NULL;
        if (asprintf(&fabric, "%s/fabric", fabric_dir) < 0)
                return -1;
        setenv("FAKE_IBVERBS_FABRIC", fabric, 1);
        return 0;
}

static int teardown(void **state) {
        _cleanup_(freep) char *fabric = NULL;
        if (asprintf(&fabric, "%s/fabric", fabric_dir) >= 0)
                (void) unlink(fabric);
        (void) rmdir(fabric_dir);
        g_object_unref(testbed);
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_transitions_need_their_attributes),
                cmocka_unit_test(test_roce_needs_a_global_route),
                cmocka_unit_test(test_memory_registration_rules),
                cmocka_unit_test(test_writes_reads_and_their_errors),
                cmocka_unit_test(test_sends_receives_rnr_and_lengths),
                cmocka_unit_test(test_queue_depths_and_cq_overrun),
                cmocka_unit_test(test_unanswered_requests_are_retried_then_fail),
                cmocka_unit_test(test_two_processes),
                cmocka_unit_test(test_device_that_vanishes),
        };
        return cmocka_run_group_tests_name("fake-ibverbs", tests, setup, teardown);
}
