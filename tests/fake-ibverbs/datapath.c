/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* datapath.c — posting, executing and completing work requests: the requester's HCA, in its process */
#include "fake-ibverbs.h"

/* What executing a work request came to: a completion status, or try again later. */
#define WAIT (-1)

/* The IB spec's RNR timer encoding (C9-141), in microseconds; 0 is the longest. */
static const uint32_t rnr_timer_usec[32] = {
        655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
        2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static uint64_t send_wrs_posted; /* in this process, for FAKE_IBVERBS_FAULT=vanish */

/* Only these three are queued (queue_send()). */
static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op) {
        return op == IBV_WR_RDMA_WRITE ? IBV_WC_RDMA_WRITE : op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_SEND;
}

/* How long a work request waits before it looks again at a queue pair that stopped dead. */
#define STALL_RECHECK_USEC 1000

/* FAKE_IBVERBS_FAULT=stall: the queue pair stopped dead after its stall_after-th request. */
static bool stalled(const FakeQpSlot *s) {
        return s->stall_after > 0 && s->requests >= s->stall_after;
}

static void count_request(FakeQpSlot *s) {
        s->requests++;
        if (s->fault_after > 0 && s->requests >= s->fault_after)
                fake_qp_slot_error(s, FAKE_QP_EVENT_FATAL);
        if (s->stall_after > 0 && s->requests == s->stall_after)
                fake_fabric_signal_file("stalled");
}

/* The queue pair at the other end, if it would answer now: alive, addressed right, ready to receive,
 * expecting this PSN. Anything else is a packet that goes nowhere. One that stopped dead in a process
 * that lives (FAKE_IBVERBS_FAULT=stall) holds the packet: *held, and no answer yet. */
static FakeQpSlot *route(FakeFabric *f, FakeQp *qp, const FakeQpSlot *me, bool *held) {
        if (!me->port_active || me->vanished)
                return NULL;
        for (int i = 0; i < FAKE_QPS_MAX; i++) {
                FakeQpSlot *d = &f->qps[i];
                if (!d->in_use || d->qpn != me->dest_qpn)
                        continue;
                if (stalled(d) && fake_pid_alive(d->pid)) {
                        *held = true;
                        return NULL;
                }
                /* An Ethernet port and an InfiniBand port are on different fabrics. */
                if (!fake_pid_alive(d->pid) || d->vanished || !d->port_active || d->link_layer != me->link_layer)
                        return NULL;
                if (d->state != IBV_QPS_RTR && d->state != IBV_QPS_RTS)
                        return NULL;
                /* InfiniBand switches route by LID; the GRH, when there is one, must name the port. */
                if (me->link_layer == IBV_LINK_LAYER_INFINIBAND && d->lid != qp->dlid)
                        return NULL;
                if (qp->is_global || me->link_layer == IBV_LINK_LAYER_ETHERNET) {
                        bool found = false;
                        for (uint32_t g = 0; g < d->n_gids && !found; g++)
                                found = memcmp(d->gids[g], qp->dgid, 16) == 0;
                        if (!found)
                                return NULL;
                }
                if (d->epsn != qp->sq_psn)
                        return NULL;
                return d;
        }
        return NULL;
}

/* The region behind an lkey of owner's, if [addr, addr+len) lies in it with the access. */
static const FakeMrSlot *local_region(FakeFabric *f, const FakeQpSlot *owner, const FakeSge *sge, unsigned access) {
        const FakeMrSlot *m = fake_fabric_find_lkey(f, sge->lkey);

        if (!m || m->pid != owner->pid || m->pd != owner->pd || (m->access & access) != access)
                return NULL;
        if (sge->addr < m->addr || sge->addr + sge->length > m->addr + m->length || sge->addr + sge->length < sge->addr)
                return NULL;
        return m;
}

static const FakeMrSlot *remote_region(FakeFabric *f, const FakeQpSlot *d, uint32_t rkey, uint64_t addr, uint64_t len,
                                       unsigned access) {
        const FakeMrSlot *m = fake_fabric_find_rkey(f, rkey);

        if (!m || m->pid != d->pid || m->pd != d->pd || !(m->access & access) || !(d->access & access))
                return NULL;
        if (addr < m->addr || addr + len > m->addr + m->length || addr + len < addr)
                return NULL;
        return m;
}

/* Copies between the requester's gather/scatter list and a contiguous remote range. */
static void copy_sges(const FakeSendWqe *w, uint8_t *remote, bool to_remote) {
        if (w->inline_len > 0) {
                memcpy(remote, w->inline_data, w->inline_len);
                return;
        }
        for (uint32_t i = 0; i < w->num_sge; i++) {
                uint8_t *local = (uint8_t *) (uintptr_t) w->sge[i].addr;
                if (to_remote)
                        memcpy(remote, local, w->sge[i].length);
                else
                        memcpy(local, remote, w->sge[i].length);
                remote += w->sge[i].length;
        }
}

static uint32_t wqe_length(const FakeSendWqe *w) {
        uint64_t len = w->inline_len;

        for (uint32_t i = 0; i < w->num_sge; i++)
                len += w->sge[i].length;
        return len > FAKE_MSG_MAX ? UINT32_MAX : (uint32_t) len;
}

/* A send arriving at d: consumes d's next receive, or says RNR (WAIT). */
static int deliver_send(FakeFabric *f, FakeQp *qp, FakeQpSlot *me, FakeQpSlot *d, FakeSendWqe *w, uint32_t len,
                        uint64_t now) {
        if (d->rq_count == 0) {
                /* Receiver not ready: try again after the responder's RNR timer, rnr_retry times (7: for ever). */
                w->rnr_naks++;
                if (qp->rnr_retry != 7 && w->rnr_naks > qp->rnr_retry)
                        return IBV_WC_RNR_RETRY_EXC_ERR;
                w->next_try = now + rnr_timer_usec[d->min_rnr_timer & 31];
                return WAIT;
        }
        const FakeRecvWqe *r = &d->rq[d->rq_head];
        FakeCqe e = { .wr_id = r->wr_id, .opcode = IBV_WC_RECV, .qp_num = d->qpn, .src_qp = me->qpn,
                      .qp_slot = (uint32_t) (d - f->qps), .qp_generation = d->generation };
        uint8_t *dst[FAKE_SGE_MAX];
        uint64_t room = 0;
        int status = IBV_WC_SUCCESS;

        for (uint32_t i = 0; i < r->num_sge && status == IBV_WC_SUCCESS; i++) {
                const FakeMrSlot *m = local_region(f, d, &r->sge[i], IBV_ACCESS_LOCAL_WRITE);
                if (!m) {
                        status = IBV_WC_REM_OP_ERR; /* the receiver's own buffer was bad */
                        break;
                }
                dst[i] = fake_map_remote(m, r->sge[i].addr);
                if (!dst[i])
                        return WAIT; /* the receiver is gone after all: no answer */
                room += r->sge[i].length;
        }
        if (status == IBV_WC_SUCCESS && len > room)
                status = IBV_WC_REM_INV_REQ_ERR;
        /* The receive is consumed, whatever comes of it. */
        d->rq_head = (d->rq_head + 1) % FAKE_WR_MAX;
        d->rq_count--;
        d->rq_unpolled++;
        if (status != IBV_WC_SUCCESS) {
                e.status = status == IBV_WC_REM_OP_ERR ? IBV_WC_LOC_PROT_ERR : IBV_WC_LOC_LEN_ERR;
                (void) fake_cq_push(f, d->recv_cq, d->recv_cq_generation, &e);
                fake_qp_slot_error(d, FAKE_QP_EVENT_NONE);
                return status;
        }

        /* Scatter the message over the receive's buffers, in the receiver's memory. */
        uint64_t done = 0;
        const uint8_t *src = w->inline_len > 0 ? w->inline_data : NULL;
        uint32_t sge_i = 0, sge_off = 0;
        for (uint32_t i = 0; i < r->num_sge && done < len; i++) {
                uint32_t n = (uint32_t) MIN((uint64_t) r->sge[i].length, len - done);
                for (uint32_t k = 0; k < n;) {
                        const uint8_t *from;
                        uint32_t chunk;
                        if (src) {
                                from = src + done + k;
                                chunk = n - k;
                        } else {
                                from = (const uint8_t *) (uintptr_t) w->sge[sge_i].addr + sge_off;
                                chunk = MIN(n - k, w->sge[sge_i].length - sge_off);
                        }
                        memcpy(dst[i] + k, from, chunk);
                        k += chunk;
                        if (!src && (sge_off += chunk) == w->sge[sge_i].length) {
                                sge_i++;
                                sge_off = 0;
                        }
                }
                done += n;
        }
        e.byte_len = len;
        if (!fake_cq_push(f, d->recv_cq, d->recv_cq_generation, &e))
                fake_qp_slot_error(d, FAKE_QP_EVENT_NONE);
        return IBV_WC_SUCCESS;
}

/* Runs one work request as far as it goes now. The fabric lock is held. */
static int execute(FakeFabric *f, FakeQp *qp, FakeQpSlot *me, FakeSendWqe *w, uint64_t now) {
        unsigned local_access = w->opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_LOCAL_WRITE : 0;
        uint32_t len = wqe_length(w);
        FakeQpSlot *d;
        bool held = false;

        if (len == UINT32_MAX)
                return IBV_WC_LOC_LEN_ERR;
        for (uint32_t i = 0; w->inline_len == 0 && i < w->num_sge; i++)
                if (!local_region(f, me, &w->sge[i], local_access))
                        return IBV_WC_LOC_PROT_ERR;
        if (w->opcode == IBV_WR_RDMA_READ && qp->max_rd_atomic == 0)
                return IBV_WC_LOC_QP_OP_ERR;

        if (w->first_try == 0)
                w->first_try = now;
        d = route(f, qp, me, &held);
        if (held) {
                /* Not a lost packet: the transport timer starts once the holder is gone. */
                w->first_try = 0;
                w->next_try = now + STALL_RECHECK_USEC;
                return WAIT;
        }
        if (!d) {
                /* No acknowledgement: retransmit every 4.096 us x 2^timeout, retry_cnt times. */
                if (qp->timeout == 0) {
                        w->next_try = now + 10000; /* timeout 0 waits for ever */
                        return WAIT;
                }
                uint64_t period = (UINT64_C(4096) << qp->timeout) / 1000;
                uint64_t elapsed = now - w->first_try;
                if (elapsed >= period * (qp->retry_cnt + 1U))
                        return IBV_WC_RETRY_EXC_ERR;
                w->next_try = w->first_try + (elapsed / period + 1) * period;
                return WAIT;
        }

        int status = IBV_WC_SUCCESS;
        if (w->opcode == IBV_WR_SEND) {
                status = deliver_send(f, qp, me, d, w, len, now);
                if (status == WAIT)
                        return WAIT;
        } else {
                bool write = w->opcode == IBV_WR_RDMA_WRITE;
                const FakeMrSlot *m = NULL;
                if (!write && d->max_dest_rd_atomic == 0)
                        status = IBV_WC_REM_INV_REQ_ERR;
                /* A zero-length RDMA write checks no rkey (IB spec 9.4.4). */
                else if (len > 0 || !write) {
                        m = remote_region(f, d, w->rkey, w->remote_addr, len,
                                          write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ);
                        if (!m) {
                                /* The responder NAKs and goes to error itself (a local access violation). */
                                fake_qp_slot_error(d, FAKE_QP_EVENT_ACCESS_ERR);
                                status = IBV_WC_REM_ACCESS_ERR;
                        }
                }
                if (status == IBV_WC_SUCCESS && len > 0) {
                        uint8_t *remote = fake_map_remote(m, w->remote_addr);
                        if (!remote)
                                return WAIT;
                        copy_sges(w, remote, write);
                }
        }
        if (status == IBV_WC_SUCCESS) {
                /* Both ends count the packets: a message of n MTUs takes n PSNs. */
                uint32_t mtu = 128U << me->path_mtu;
                uint32_t packets = len == 0 ? 1 : (len + mtu - 1) / mtu;
                qp->sq_psn = (qp->sq_psn + packets) & FAKE_PSN_MASK;
                d->epsn = qp->sq_psn;
                count_request(d);
        }
        return status;
}

/* Retires the oldest unfinished work request. The fabric lock is held. */
static void complete(FakeFabric *f, FakeQp *qp, FakeQpSlot *me, FakeSendWqe *w, int status) {
        FakeCqe e = {
                .wr_id = w->wr_id,
                .status = (uint32_t) status,
                .opcode = wc_opcode(w->opcode),
                .byte_len = w->opcode == IBV_WR_RDMA_READ ? wqe_length(w) : 0,
                .qp_num = me->qpn,
                .qp_slot = (uint32_t) qp->slot,
                .qp_generation = qp->generation,
                .is_send = 1,
                .seq = qp->done_seq,
        };

        qp->done_seq++;
        /* Errors always complete; successes only when asked to. */
        if (status != IBV_WC_SUCCESS || qp->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED))
                /* An overrun CQ is in error (its owner hears IBV_EVENT_CQ_ERR), and so is the QP. */
                if (!fake_cq_push(f, qp->send_cq->slot, qp->send_cq->generation, &e))
                        fake_qp_slot_error(me, FAKE_QP_EVENT_NONE);
        if (status != IBV_WC_SUCCESS)
                fake_qp_slot_error(me, FAKE_QP_EVENT_NONE);
}

void fake_qp_flush_rq(FakeFabric *f, FakeQp *qp) {
        FakeQpSlot *s = &f->qps[qp->slot];

        for (; s->rq_count > 0; s->rq_count--) {
                FakeCqe e = { .wr_id = s->rq[s->rq_head].wr_id, .status = IBV_WC_WR_FLUSH_ERR, .opcode = IBV_WC_RECV,
                              .qp_num = s->qpn, .qp_slot = (uint32_t) qp->slot, .qp_generation = qp->generation };
                s->rq_head = (s->rq_head + 1) % FAKE_WR_MAX;
                s->rq_unpolled++;
                (void) fake_cq_push(f, s->recv_cq, s->recv_cq_generation, &e);
        }
}

int fake_qp_progress(FakeContext *c, FakeQp *qp, uint64_t now) {
        FakeFabric *f = fake_fabric();
        FakeQpSlot *me;

        fake_fabric_lock(f);
        me = &f->qps[qp->slot];
        if (me->state == IBV_QPS_ERR) {
                if (!qp->flushed_rq) {
                        fake_qp_flush_rq(f, qp);
                        qp->flushed_rq = true;
                }
                if (me->event != FAKE_QP_EVENT_NONE) {
                        enum ibv_event_type t = me->event == FAKE_QP_EVENT_ACCESS_ERR ? IBV_EVENT_QP_ACCESS_ERR :
                                                me->event == FAKE_QP_EVENT_REQ_ERR    ? IBV_EVENT_QP_REQ_ERR :
                                                                                       IBV_EVENT_QP_FATAL;
                        me->event = FAKE_QP_EVENT_NONE;
                        fake_context_event(c, t, (uintptr_t) &qp->ibv);
                }
        }
        while (qp->done_seq < qp->posted_seq) {
                FakeSendWqe *w = &qp->sq[qp->done_seq % qp->max_send_wr];
                if (me->state == IBV_QPS_ERR) {
                        complete(f, qp, me, w, IBV_WC_WR_FLUSH_ERR);
                        continue;
                }
                if (now < w->next_try || stalled(me))
                        break; /* not yet, or this queue pair stopped dead: nothing it posts is carried out */
                int status = execute(f, qp, me, w, now);
                if (status == WAIT)
                        break;
                complete(f, qp, me, w, status);
        }
        qp->ibv.state = (enum ibv_qp_state) me->state;
        fake_fabric_unlock(f);
        return 0;
}

/* ---- the ops the inline ibv_post_send(), ibv_post_recv() and ibv_poll_cq() call ---- */

static int queue_send(FakeQp *qp, const struct ibv_send_wr *wr) {
        FakeSendWqe *w;
        uint64_t inline_len = 0;

        /* Immediate data, atomics, memory windows: not modelled. */
        if (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_READ && wr->opcode != IBV_WR_SEND)
                return EINVAL;
        if (wr->num_sge < 0 || (uint32_t) wr->num_sge > qp->max_send_sge)
                return EINVAL;
        if (wr->send_flags & IBV_SEND_INLINE) {
                for (int i = 0; i < wr->num_sge; i++)
                        inline_len += wr->sg_list[i].length;
                if (wr->opcode == IBV_WR_RDMA_READ || inline_len > qp->max_inline)
                        return EINVAL;
        }
        if (qp->posted_seq - qp->polled_seq >= qp->max_send_wr)
                return ENOMEM; /* the send queue is full until completions are polled */

        w = &qp->sq[qp->posted_seq % qp->max_send_wr];
        *w = (FakeSendWqe) {
                .wr_id = wr->wr_id,
                .opcode = wr->opcode,
                .send_flags = wr->send_flags,
                .num_sge = (uint32_t) wr->num_sge,
                .remote_addr = wr->wr.rdma.remote_addr,
                .rkey = wr->wr.rdma.rkey,
        };
        if (wr->send_flags & IBV_SEND_INLINE) {
                /* Inline data is copied now and needs no lkey. */
                w->num_sge = 0;
                for (int i = 0; i < wr->num_sge; i++) {
                        memcpy(w->inline_data + w->inline_len, (const void *) (uintptr_t) wr->sg_list[i].addr,
                               wr->sg_list[i].length);
                        w->inline_len += wr->sg_list[i].length;
                }
        } else
                for (int i = 0; i < wr->num_sge; i++)
                        w->sge[i] = (FakeSge) { wr->sg_list[i].addr, wr->sg_list[i].length, wr->sg_list[i].lkey };
        qp->posted_seq++;
        return 0;
}

int fake_post_send(struct ibv_qp *ibv_qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
        FakeQp *qp = container_of(ibv_qp, FakeQp, ibv);
        FakeContext *c = fake_context(ibv_qp->context);
        FakeFabric *f = fake_fabric();
        const FakeFaults *faults = fake_faults();
        uint64_t now = fake_now_usec();
        int r = 0;

        pthread_mutex_lock(&c->lock);
        fake_context_refresh(c, now);
        for (; wr; wr = wr->next) {
                bool vanish = false;

                fake_fabric_lock(f);
                FakeQpSlot *me = &f->qps[qp->slot];
                /* Sends are posted in RTS; in error they are accepted and flushed (IB spec 10.8.2). */
                if (me->state != IBV_QPS_RTS && me->state != IBV_QPS_ERR && me->state != IBV_QPS_SQD)
                        r = EINVAL;
                else
                        r = queue_send(qp, wr);
                if (r == 0) {
                        count_request(me);
                        send_wrs_posted++;
                        vanish = faults->vanish_after > 0 && send_wrs_posted == faults->vanish_after;
                }
                fake_fabric_unlock(f);
                if (r != 0) {
                        *bad = wr;
                        break;
                }
                if (vanish)
                        fake_context_vanish(c);
        }
        (void) fake_qp_progress(c, qp, now);
        pthread_mutex_unlock(&c->lock);
        return r;
}

int fake_post_recv(struct ibv_qp *ibv_qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
        FakeQp *qp = container_of(ibv_qp, FakeQp, ibv);
        FakeFabric *f = fake_fabric();
        int r = 0;

        fake_fabric_lock(f);
        FakeQpSlot *s = &f->qps[qp->slot];
        for (; wr; wr = wr->next) {
                if (s->state == IBV_QPS_RESET)
                        r = EINVAL;
                else if (wr->num_sge < 0 || (uint32_t) wr->num_sge > s->max_recv_sge)
                        r = EINVAL;
                else if (s->rq_count + s->rq_unpolled >= s->max_recv_wr)
                        r = ENOMEM;
                if (r != 0) {
                        *bad = wr;
                        break;
                }
                FakeRecvWqe *w = &s->rq[(s->rq_head + s->rq_count) % FAKE_WR_MAX];
                *w = (FakeRecvWqe) { .wr_id = wr->wr_id, .num_sge = (uint32_t) wr->num_sge };
                for (int i = 0; i < wr->num_sge; i++)
                        w->sge[i] = (FakeSge) { wr->sg_list[i].addr, wr->sg_list[i].length, wr->sg_list[i].lkey };
                s->rq_count++;
                /* Posted to a QP in error: flushed at once. */
                if (s->state == IBV_QPS_ERR && qp->flushed_rq)
                        fake_qp_flush_rq(f, qp);
        }
        fake_fabric_unlock(f);
        return r;
}

int fake_poll_cq(struct ibv_cq *ibv_cq, int n, struct ibv_wc *wc) {
        FakeCq *cq = container_of(ibv_cq, FakeCq, ibv);
        FakeContext *c = fake_context(ibv_cq->context);
        FakeFabric *f = fake_fabric();
        uint64_t now = fake_now_usec();
        int got = 0;

        pthread_mutex_lock(&c->lock);
        fake_context_refresh(c, now);
        for (FakeQp *qp = c->qps; qp; qp = qp->next)
                (void) fake_qp_progress(c, qp, now);

        fake_fabric_lock(f);
        FakeCqSlot *s = &f->cqs[cq->slot];
        if (s->overrun) {
                /* An overrun CQ is in error for good (IBV_EVENT_CQ_ERR), as on hardware. */
                if (!s->overrun_reported) {
                        s->overrun_reported = 1;
                        fake_context_event(c, IBV_EVENT_CQ_ERR, (uintptr_t) ibv_cq);
                }
                got = -1;
        }
        while (got >= 0 && got < n && s->count > 0) {
                const FakeCqe *e = &s->ring[s->head];
                wc[got] = (struct ibv_wc) {
                        .wr_id = e->wr_id,
                        .status = (enum ibv_wc_status) e->status,
                        .opcode = (enum ibv_wc_opcode) e->opcode,
                        .byte_len = e->byte_len,
                        .qp_num = e->qp_num,
                        .src_qp = e->src_qp,
                };
                /* The work request's queue slot is free once its completion is polled. */
                if (e->is_send) {
                        for (FakeQp *qp = c->qps; qp; qp = qp->next)
                                if (qp->slot == (int) e->qp_slot && qp->generation == e->qp_generation)
                                        qp->polled_seq = MAX(qp->polled_seq, e->seq + 1);
                } else {
                        FakeQpSlot *q = &f->qps[e->qp_slot];
                        if (q->in_use && q->generation == e->qp_generation && q->rq_unpolled > 0)
                                q->rq_unpolled--;
                }
                s->head = (s->head + 1) % FAKE_CQE_MAX;
                s->count--;
                got++;
        }
        fake_fabric_unlock(f);
        pthread_mutex_unlock(&c->lock);
        return got;
}
