/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* queues.c — completion queues, queue pairs and the RC state machine */
#include <arpa/inet.h>

#include "fake-ibverbs.h"

static bool gid_is_zero(const uint8_t g[16]) {
        static const uint8_t zero[16];
        return memcmp(g, zero, 16) == 0;
}

/* ---- fault settings ---- */

static pthread_once_t faults_once = PTHREAD_ONCE_INIT;
static FakeFaults faults;

static void faults_parse(void) {
        const char *spec = getenv("FAKE_IBVERBS_FAULT");
        _cleanup_(freep) char *copy = spec ? strdup(spec) : NULL;
        char *save = NULL;

        if (!copy)
                return;
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                unsigned long long n = 0;
                if (streq(w, "rkey"))
                        faults.wrong_rkey = true;
                else if (sscanf(w, "qp-error=%llu", &n) == 1 && n > 0)
                        faults.qp_error_after = n;
                else if (sscanf(w, "vanish=%llu", &n) == 1 && n > 0)
                        faults.vanish_after = n;
                else if (sscanf(w, "stall=%llu", &n) == 1 && n > 0)
                        faults.stall_after = n;
                else
                        fprintf(stderr, "fake-ibverbs: unknown fault \"%s\" in FAKE_IBVERBS_FAULT\n", w);
        }
}

const FakeFaults *fake_faults(void) {
        pthread_once(&faults_once, faults_parse);
        return &faults;
}

/* ---- completion queues ---- */

FAKE_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                         struct ibv_comp_channel *channel, int comp_vector) {
        FakeContext *c = fake_context(context);
        FakeFabric *f = fake_fabric();
        FakeCq *cq;
        int slot;

        if (c->vanished) {
                errno = ENODEV;
                return NULL;
        }
        if (channel) {
                errno = EOPNOTSUPP; /* completion channels are not modelled */
                return NULL;
        }
        if (cqe < 1 || cqe > FAKE_CQE_MAX || comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
                errno = EINVAL;
                return NULL;
        }
        cq = calloc(1, sizeof(FakeCq));
        if (!cq) {
                errno = ENOMEM;
                return NULL;
        }
        fake_fabric_lock(f);
        slot = fake_fabric_alloc_cq(f);
        if (slot < 0) {
                fake_fabric_unlock(f);
                free(cq);
                errno = ENOMEM;
                return NULL;
        }
        FakeCqSlot *s = &f->cqs[slot];
        s->generation++;
        s->in_use = 1;
        s->pid = getpid();
        /* Exactly what was asked for: a provider may round up, an application may not count on it. */
        s->size = (uint32_t) cqe;
        s->head = s->count = 0;
        s->overrun = s->overrun_reported = 0;
        cq->slot = slot;
        cq->generation = s->generation;
        fake_fabric_unlock(f);

        cq->ibv = (struct ibv_cq) { .context = context, .cq_context = cq_context, .cqe = cqe };
        pthread_mutex_init(&cq->ibv.mutex, NULL);
        pthread_cond_init(&cq->ibv.cond, NULL);
        pthread_mutex_lock(&c->lock);
        c->n_cqs++;
        pthread_mutex_unlock(&c->lock);
        return &cq->ibv;
}

FAKE_EXPORT int ibv_destroy_cq(struct ibv_cq *ibv_cq) {
        FakeCq *cq = container_of(ibv_cq, FakeCq, ibv);
        FakeContext *c = fake_context(ibv_cq->context);
        FakeFabric *f = fake_fabric();

        if (cq->users > 0)
                return EBUSY;
        fake_fabric_lock(f);
        f->cqs[cq->slot].in_use = 0;
        fake_fabric_unlock(f);
        pthread_mutex_lock(&c->lock);
        c->n_cqs--;
        pthread_mutex_unlock(&c->lock);
        free(cq);
        return 0;
}

/* ---- queue pairs ---- */

FAKE_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *ibv_pd, struct ibv_qp_init_attr *init) {
        FakePd *pd = container_of(ibv_pd, FakePd, ibv);
        FakeContext *c = fake_context(ibv_pd->context);
        FakeFabric *f = fake_fabric();
        struct ibv_qp_cap *cap = &init->cap;
        FakeQp *qp;
        int slot;

        if (c->vanished) {
                errno = ENODEV;
                return NULL;
        }
        if (init->qp_type != IBV_QPT_RC || init->srq) {
                errno = EOPNOTSUPP;
                return NULL;
        }
        if (!init->send_cq || !init->recv_cq || init->send_cq->context != ibv_pd->context ||
            init->recv_cq->context != ibv_pd->context || cap->max_send_wr > FAKE_WR_MAX ||
            cap->max_recv_wr > FAKE_WR_MAX || cap->max_send_sge > FAKE_SGE_MAX || cap->max_recv_sge > FAKE_SGE_MAX ||
            cap->max_inline_data > FAKE_INLINE_MAX) {
                errno = EINVAL;
                return NULL;
        }
        qp = calloc(1, sizeof(FakeQp));
        if (qp)
                qp->sq = calloc(MAX(cap->max_send_wr, 1U), sizeof(FakeSendWqe));
        if (!qp || !qp->sq) {
                if (qp)
                        free(qp);
                errno = ENOMEM;
                return NULL;
        }
        qp->pd = pd;
        qp->send_cq = container_of(init->send_cq, FakeCq, ibv);
        qp->recv_cq = container_of(init->recv_cq, FakeCq, ibv);
        qp->sq_sig_all = init->sq_sig_all;
        qp->max_send_wr = cap->max_send_wr;
        qp->max_send_sge = MAX(cap->max_send_sge, 1U);
        qp->max_inline = cap->max_inline_data;

        fake_fabric_lock(f);
        slot = fake_fabric_alloc_qp(f);
        if (slot < 0) {
                fake_fabric_unlock(f);
                free(qp->sq);
                free(qp);
                errno = ENOMEM;
                return NULL;
        }
        FakeQpSlot *s = &f->qps[slot];
        uint32_t generation = s->generation + 1;
        memset(s, 0, offsetof(FakeQpSlot, rq));
        s->generation = generation;
        s->in_use = 1;
        s->pid = getpid();
        /* QP numbers are 24 bits; 0 and 1 are the special QPs. */
        do
                s->qpn = f->next_qpn++ & FAKE_PSN_MASK;
        while (s->qpn < 2);
        s->pd = pd->id;
        snprintf(s->device, sizeof(s->device), "%s", c->info.name);
        s->state = IBV_QPS_RESET;
        s->recv_cq = qp->recv_cq->slot;
        s->recv_cq_generation = qp->recv_cq->generation;
        s->max_recv_wr = cap->max_recv_wr;
        s->max_recv_sge = MAX(cap->max_recv_sge, 1U);
        s->fault_after = fake_faults()->qp_error_after;
        s->stall_after = fake_faults()->stall_after;
        qp->slot = slot;
        qp->generation = generation;
        fake_fabric_unlock(f);

        qp->ibv = (struct ibv_qp) {
                .context = ibv_pd->context,
                .qp_context = init->qp_context,
                .pd = ibv_pd,
                .send_cq = init->send_cq,
                .recv_cq = init->recv_cq,
                .handle = (uint32_t) slot,
                .qp_num = s->qpn,
                .state = IBV_QPS_RESET,
                .qp_type = IBV_QPT_RC,
        };
        pthread_mutex_init(&qp->ibv.mutex, NULL);
        pthread_cond_init(&qp->ibv.cond, NULL);
        /* What the application gets is what it asked for (ibv_create_qp(3) may return more). */
        cap->max_send_sge = qp->max_send_sge;
        cap->max_recv_sge = s->max_recv_sge;
        pd->users++;
        qp->send_cq->users++;
        qp->recv_cq->users++;
        pthread_mutex_lock(&c->lock);
        qp->next = c->qps;
        c->qps = qp;
        pthread_mutex_unlock(&c->lock);
        return &qp->ibv;
}

FAKE_EXPORT int ibv_destroy_qp(struct ibv_qp *ibv_qp) {
        FakeQp *qp = container_of(ibv_qp, FakeQp, ibv);
        FakeContext *c = fake_context(ibv_qp->context);
        FakeFabric *f = fake_fabric();

        pthread_mutex_lock(&c->lock);
        for (FakeQp **p = &c->qps; *p; p = &(*p)->next)
                if (*p == qp) {
                        *p = qp->next;
                        break;
                }
        pthread_mutex_unlock(&c->lock);
        fake_fabric_lock(f);
        f->qps[qp->slot].in_use = 0;
        f->qps[qp->slot].state = IBV_QPS_RESET;
        fake_fabric_unlock(f);
        qp->pd->users--;
        qp->send_cq->users--;
        qp->recv_cq->users--;
        free(qp->sq);
        free(qp);
        return 0;
}

/* ibv_modify_qp(3) for RC, and the optional attributes the kernel accepts (ib_modify_qp_is_ok()). */
typedef struct Transition {
        bool valid;
        int required;
        int optional;
} Transition;

static const Transition transitions[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
        [IBV_QPS_RESET] = {
                /* Not to ERR: a QP that never left RESET has nothing to flush. */
                [IBV_QPS_RESET] = { true },
                [IBV_QPS_INIT] = { true, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS },
        },
        [IBV_QPS_INIT] = {
                [IBV_QPS_RESET] = { true },
                [IBV_QPS_ERR] = { true },
                [IBV_QPS_INIT] = { true, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS },
                [IBV_QPS_RTR] = { true,
                                  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                                  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX },
        },
        [IBV_QPS_RTR] = {
                [IBV_QPS_RESET] = { true },
                [IBV_QPS_ERR] = { true },
                [IBV_QPS_RTS] = { true,
                                  IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                          IBV_QP_MAX_QP_RD_ATOMIC,
                                  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
                                          IBV_QP_PATH_MIG_STATE },
        },
        [IBV_QPS_RTS] = {
                [IBV_QPS_RESET] = { true },
                [IBV_QPS_ERR] = { true },
                [IBV_QPS_RTS] = { true, 0,
                                  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
                                          IBV_QP_MIN_RNR_TIMER },
        },
        [IBV_QPS_SQD] = { [IBV_QPS_RESET] = { true }, [IBV_QPS_ERR] = { true } },
        [IBV_QPS_SQE] = { [IBV_QPS_RESET] = { true }, [IBV_QPS_ERR] = { true } },
        [IBV_QPS_ERR] = { [IBV_QPS_RESET] = { true }, [IBV_QPS_ERR] = { true } },
};

static int check_av(FakeContext *c, FakeQpSlot *s, const struct ibv_ah_attr *ah) {
        const FakePortInfo *p = &c->info.ports[s->port - 1];

        if (ah->port_num != s->port)
                return EINVAL;
        /* RoCE is routed by GID: without the global route header there is no address. */
        if (p->attr.link_layer == IBV_LINK_LAYER_ETHERNET && !ah->is_global)
                return EINVAL;
        if (p->attr.link_layer == IBV_LINK_LAYER_INFINIBAND && (ah->dlid == 0 || ah->dlid >= 0xc000))
                return EINVAL;
        if (ah->is_global && (ah->grh.sgid_index >= p->n_gids || gid_is_zero(p->gids[ah->grh.sgid_index])))
                return EINVAL;
        return 0;
}

static int check_attributes(FakeContext *c, FakeQpSlot *s, const struct ibv_qp_attr *a, int mask) {
        unsigned port = mask & IBV_QP_PORT ? a->port_num : s->port;

        if (port < 1 || port > c->info.n_ports)
                return EINVAL;
        if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index >= c->info.ports[port - 1].attr.pkey_tbl_len)
                return EINVAL;
        if ((mask & IBV_QP_ACCESS_FLAGS) &&
            (a->qp_access_flags & ~(unsigned) (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                               IBV_ACCESS_REMOTE_ATOMIC)))
                return EINVAL;
        if ((mask & IBV_QP_PATH_MTU) &&
            (a->path_mtu < IBV_MTU_256 || a->path_mtu > c->info.ports[port - 1].attr.active_mtu))
                return EINVAL;
        if ((mask & IBV_QP_AV) && check_av(c, s, &a->ah_attr) != 0)
                return EINVAL;
        if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > FAKE_PSN_MASK)
                return EINVAL;
        if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > FAKE_RD_ATOMIC_MAX)
                return EINVAL;
        if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > FAKE_RD_ATOMIC_MAX)
                return EINVAL;
        if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
                return EINVAL;
        if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
                return EINVAL;
        if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
                return EINVAL;
        if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
                return EINVAL;
        return 0;
}

void fake_qp_slot_error(FakeQpSlot *s, uint32_t event) {
        if (s->state == IBV_QPS_ERR)
                return;
        s->state = IBV_QPS_ERR;
        if (event != FAKE_QP_EVENT_NONE)
                s->event = event;
}

static void enter_state(FakeContext *c, FakeQp *qp, FakeQpSlot *s, const struct ibv_qp_attr *a, int mask,
                        enum ibv_qp_state next) {
        if (mask & IBV_QP_PORT) {
                const FakePortInfo *p = &c->info.ports[a->port_num - 1];
                s->port = a->port_num;
                s->link_layer = p->attr.link_layer;
                s->lid = p->attr.lid;
                s->active_mtu = p->attr.active_mtu;
                s->port_active = p->attr.state == IBV_PORT_ACTIVE;
                s->n_gids = p->n_gids;
                memcpy(s->gids, p->gids, sizeof(s->gids));
        }
        if (mask & IBV_QP_ACCESS_FLAGS)
                s->access = a->qp_access_flags;
        if (mask & IBV_QP_PATH_MTU)
                s->path_mtu = a->path_mtu;
        if (mask & IBV_QP_DEST_QPN)
                s->dest_qpn = a->dest_qp_num;
        if (mask & IBV_QP_RQ_PSN)
                s->epsn = a->rq_psn & FAKE_PSN_MASK;
        if (mask & IBV_QP_MIN_RNR_TIMER)
                s->min_rnr_timer = a->min_rnr_timer;
        if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
                s->max_dest_rd_atomic = a->max_dest_rd_atomic;
        if (mask & IBV_QP_AV) {
                qp->is_global = a->ah_attr.is_global;
                qp->dlid = a->ah_attr.dlid;
                memcpy(qp->dgid, a->ah_attr.grh.dgid.raw, 16);
                qp->sgid_index = a->ah_attr.grh.sgid_index;
        }
        if (mask & IBV_QP_SQ_PSN)
                qp->sq_psn = a->sq_psn & FAKE_PSN_MASK;
        if (mask & IBV_QP_TIMEOUT)
                qp->timeout = a->timeout;
        if (mask & IBV_QP_RETRY_CNT)
                qp->retry_cnt = a->retry_cnt;
        if (mask & IBV_QP_RNR_RETRY)
                qp->rnr_retry = a->rnr_retry;
        if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
                qp->max_rd_atomic = a->max_rd_atomic;

        if (next == IBV_QPS_RESET) {
                /* Reset drops every work request without a completion. */
                qp->posted_seq = qp->done_seq = qp->polled_seq = 0;
                s->rq_head = s->rq_count = s->rq_unpolled = 0;
                s->event = FAKE_QP_EVENT_NONE;
        }
        if (next != IBV_QPS_ERR)
                qp->flushed_rq = false;
        s->state = next;
}

FAKE_EXPORT int ibv_modify_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr, int mask) {
        FakeQp *qp = container_of(ibv_qp, FakeQp, ibv);
        FakeContext *c = fake_context(ibv_qp->context);
        FakeFabric *f = fake_fabric();
        enum ibv_qp_state cur, next;
        int r;

        if (c->vanished)
                return ENODEV;
        pthread_mutex_lock(&c->lock);
        fake_fabric_lock(f);
        FakeQpSlot *s = &f->qps[qp->slot];
        cur = (enum ibv_qp_state) s->state;
        next = mask & IBV_QP_STATE ? attr->qp_state : cur;
        r = EINVAL;
        if ((unsigned) next > IBV_QPS_ERR || (unsigned) cur > IBV_QPS_ERR)
                goto out;
        const Transition *t = &transitions[cur][next];
        int allowed = IBV_QP_STATE | t->required | t->optional;
        if (!t->valid || (mask & t->required) != t->required || (mask & ~allowed))
                goto out;
        if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur)
                goto out;
        /* iWARP (iw_cxgb4, irdma): RTS needs the TCP stream the RDMA connection manager sets up. */
        if (c->info.node_type == IBV_NODE_RNIC && next == IBV_QPS_RTS)
                goto out;
        if (next != IBV_QPS_RESET && next != IBV_QPS_ERR && (r = check_attributes(c, s, attr, mask)) != 0)
                goto out;
        enter_state(c, qp, s, attr, mask, next);
        ibv_qp->state = next;
        r = 0;
out:
        fake_fabric_unlock(f);
        pthread_mutex_unlock(&c->lock);
        /* An application that moved its QP to error sees the flush on its next poll. */
        return r;
}

FAKE_EXPORT int ibv_query_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr, int mask,
                             struct ibv_qp_init_attr *init) {
        FakeQp *qp = container_of(ibv_qp, FakeQp, ibv);
        FakeFabric *f = fake_fabric();

        fake_fabric_lock(f);
        const FakeQpSlot *s = &f->qps[qp->slot];
        *attr = (struct ibv_qp_attr) {
                .qp_state = (enum ibv_qp_state) s->state,
                .cur_qp_state = (enum ibv_qp_state) s->state,
                .path_mtu = (enum ibv_mtu) s->path_mtu,
                .rq_psn = s->epsn,
                .sq_psn = qp->sq_psn,
                .dest_qp_num = s->dest_qpn,
                .qp_access_flags = s->access,
                .cap = { .max_send_wr = qp->max_send_wr, .max_recv_wr = s->max_recv_wr,
                         .max_send_sge = qp->max_send_sge, .max_recv_sge = s->max_recv_sge,
                         .max_inline_data = qp->max_inline },
                .port_num = s->port,
                .timeout = qp->timeout,
                .retry_cnt = qp->retry_cnt,
                .rnr_retry = qp->rnr_retry,
                .min_rnr_timer = s->min_rnr_timer,
                .max_rd_atomic = qp->max_rd_atomic,
                .max_dest_rd_atomic = s->max_dest_rd_atomic,
        };
        fake_fabric_unlock(f);
        ibv_qp->state = attr->qp_state;
        if (init)
                *init = (struct ibv_qp_init_attr) {
                        .qp_context = ibv_qp->qp_context, .send_cq = ibv_qp->send_cq, .recv_cq = ibv_qp->recv_cq,
                        .cap = attr->cap, .qp_type = IBV_QPT_RC, .sq_sig_all = qp->sq_sig_all,
                };
        return 0;
}
