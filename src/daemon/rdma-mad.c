/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker that speaks to subnet management agents. libibmad's calls block (umad_recv() with a
 * timeout), and a neighbour that never answers must not stall the loop: they run here, and what comes
 * back is the answers' bytes, judged on the loop by ib-smp.c. */
#include <endian.h>
#include <errno.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "rdma-mad.h"
#include "shared/log.h"
#include "shared/string-util.h"

typedef enum RequestKind {
        REQUEST_LIST_CAS,
        REQUEST_QUERY_PORT,
} RequestKind;

typedef struct Request {
        RequestKind kind;
        uint64_t seq;
        unsigned port;
        char ca[RDMA_MAD_NAME_MAX];
} Request;

typedef enum AnswerKind {
        ANSWER_CA,       /* one CA of a listing */
        ANSWER_CAS_DONE, /* the listing is complete (error: why it is empty) */
        ANSWER_PORT,
} AnswerKind;

typedef struct Answer {
        AnswerKind kind;
        int error;
        union {
                RdmaMadCa ca;
                RdmaMadAnswer port;
        };
} Answer;

/* The MAD ports the worker holds open: opening one registers two agents with the kernel (and ibsim's
 * umad2sim 0.10 forgets one of them at every close, until it has none left), so a port stays open
 * while its queries succeed and is opened again after one fails (the device may have gone). */
typedef struct OpenPort {
        char ca[RDMA_MAD_NAME_MAX];
        unsigned port;
        struct ibmad_port *srcport;
} OpenPort;

struct RdmaMad {
        rdma_mad_cas_t cas;
        rdma_mad_port_t port;
        void *userdata;
        int loop_fd, worker_fd; /* SOCK_SEQPACKET, as link-speed.c's */
        pthread_t worker;
        bool worker_started;
        sd_event_source *io;
        /* The listing being received. */
        RdmaMadCa *listing;
        size_t n_listing;
        /* The worker's alone. */
        OpenPort open_ports[RDMA_MAD_PORTS_MAX];
};

/* ---- the worker ---- */

static void copy_name(char *dst, const char *src) {
        snprintf(dst, RDMA_MAD_NAME_MAX, "%s", strempty(src));
}

static int send_answer(int fd, const Answer *a) {
        ssize_t n;

        while ((n = send(fd, a, sizeof(*a), MSG_NOSIGNAL)) < 0 && errno == EINTR)
                ;
        return n < 0 ? -errno : 0;
}

static int worker_list_cas(int fd) {
        char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
        Answer done = { .kind = ANSWER_CAS_DONE };
        int n;

        n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
        if (n < 0)
                done.error = n;
        for (int i = 0; i < n; i++) {
                Answer a = { .kind = ANSWER_CA };
                umad_ca_t ca;

                if (umad_get_ca(names[i], &ca) < 0)
                        continue; /* gone since it was listed */
                copy_name(a.ca.name, ca.ca_name);
                a.ca.node_type = ca.node_type;
                a.ca.node_guid = be64toh(ca.node_guid);
                a.ca.sys_image_guid = be64toh(ca.system_guid);
                copy_name(a.ca.fw_ver, ca.fw_ver);
                copy_name(a.ca.ca_type, ca.ca_type);
                copy_name(a.ca.hw_ver, ca.hw_ver);
                for (int p = 1; p <= ca.numports && p < UMAD_CA_MAX_PORTS && a.ca.n_ports < RDMA_MAD_PORTS_MAX; p++) {
                        umad_port_t *up = ca.ports[p];
                        if (!up)
                                continue;
                        a.ca.ports[a.ca.n_ports++] = (RdmaMadCaPort) {
                                .number = up->portnum,
                                .state = up->state,
                                .phys_state = up->phys_state,
                                .lid = up->base_lid,
                                .sm_lid = up->sm_lid,
                                .cap_mask = be32toh(up->capmask),
                        };
                        copy_name(a.ca.ports[a.ca.n_ports - 1].link_layer, up->link_layer);
                }
                umad_release_ca(&ca);
                if (send_answer(fd, &a) < 0)
                        return -EPIPE;
        }
        return send_answer(fd, &done);
}

/* One SMP by directed route: hops 0 asks our own port, 1 the node at its other end. */
static int smp(RdmaMadAnswer *a, struct ibmad_port *srcport, unsigned hops, unsigned attr, unsigned mod,
               const char *name, uint8_t out[static IB_SMP_DATA_SIZE]) {
        ib_portid_t id = {};
        int status = 0;

        id.drpath.cnt = hops;
        id.drpath.p[1] = a->port; /* out through our port (p[0] is the start and unused) */
        memset(out, 0, IB_SMP_DATA_SIZE);
        if (!smp_query_status_via(out, &id, attr, mod, RDMA_MAD_TIMEOUT_MS, &status, srcport)) {
                snprintf(a->failed, sizeof(a->failed), "%s", name);
                if (status != 0) {
                        a->status = status;
                        return a->error = -EREMOTEIO;
                }
                return a->error = -ETIMEDOUT;
        }
        return 0;
}


static struct ibmad_port *port_get(RdmaMad *m, const char *ca, unsigned port) {
        int classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
        OpenPort *free_slot = NULL;

        for (size_t i = 0; i < ELEMENTSOF(m->open_ports); i++) {
                if (m->open_ports[i].srcport && m->open_ports[i].port == port && streq(m->open_ports[i].ca, ca))
                        return m->open_ports[i].srcport;
                if (!m->open_ports[i].srcport && !free_slot)
                        free_slot = &m->open_ports[i];
        }
        if (!free_slot) {
                /* More ports than slots: the first one gives way. */
                mad_rpc_close_port(m->open_ports[0].srcport);
                m->open_ports[0].srcport = NULL;
                free_slot = &m->open_ports[0];
        }
        free_slot->srcport = mad_rpc_open_port((char *) ca, port, classes, ELEMENTSOF(classes));
        if (!free_slot->srcport)
                return NULL;
        copy_name(free_slot->ca, ca);
        free_slot->port = port;
        mad_rpc_set_timeout(free_slot->srcport, RDMA_MAD_TIMEOUT_MS);
        mad_rpc_set_retries(free_slot->srcport, RDMA_MAD_RETRIES);
        return free_slot->srcport;
}

static void port_close(RdmaMad *m, struct ibmad_port *srcport) {
        for (size_t i = 0; i < ELEMENTSOF(m->open_ports); i++)
                if (m->open_ports[i].srcport == srcport || (!srcport && m->open_ports[i].srcport)) {
                        mad_rpc_close_port(m->open_ports[i].srcport);
                        m->open_ports[i].srcport = NULL;
                }
}

static void worker_query_port(RdmaMad *m, RdmaMadAnswer *a) {
        uint8_t again[IB_SMP_DATA_SIZE];
        struct ibmad_port *srcport;
        unsigned phys;

        srcport = port_get(m, a->ca, a->port);
        if (!srcport) {
                a->error = -ENODEV;
                return;
        }

        if (smp(a, srcport, 0, IB_ATTR_PORT_INFO, a->port, "our PortInfo", a->local_port_info) < 0)
                goto finish;
        a->has_local = true;
        /* PortPhysicalState, bits 264-267: only a trained link has a neighbour to ask. */
        phys = a->local_port_info[33] >> 4;
        if (phys != 5)
                goto finish;

        if (smp(a, srcport, 1, IB_ATTR_NODE_INFO, 0, "NodeInfo", a->node_info) < 0 ||
            smp(a, srcport, 1, IB_ATTR_NODE_DESC, 0, "NodeDescription", a->node_description) < 0 ||
            /* NodeInfo's LocalPortNum (byte 36): the port our query came in through. */
            smp(a, srcport, 1, IB_ATTR_PORT_INFO, a->node_info[36], "the neighbour's PortInfo", a->remote_port_info) < 0)
                goto finish;
        a->has_remote = true;
        /* NodeType 2: a switch keeps its capability masks on port 0. */
        if (a->node_info[2] == 2 && smp(a, srcport, 1, IB_ATTR_PORT_INFO, 0, "the switch's port 0 PortInfo",
                                        a->remote_port0_info) >= 0)
                a->has_remote_port0 = true;
        a->error = 0;

        /* Asked once more: a port that went down and up while we asked may have another neighbour. */
        if (smp(a, srcport, 0, IB_ATTR_PORT_INFO, a->port, "our PortInfo", again) < 0 ||
            memcmp(again + 28, a->local_port_info + 28, 8) != 0) {
                a->changed = true;
                a->error = 0;
        }
finish:
        /* libibmad does not tell a timeout from a device that went away: after a failure the port is
         * opened again. */
        if (a->error < 0)
                port_close(m, srcport);
}

static void *worker_main(void *userdata) {
        RdmaMad *m = userdata;
        sigset_t all;
        Request q;

        sigfillset(&all);
        (void) pthread_sigmask(SIG_BLOCK, &all, NULL);
        /* libibmad's own debugging output stays off: the loop says what matters. */
        ibdebug = 0;
        (void) umad_init();

        for (;;) {
                ssize_t n = recv(m->worker_fd, &q, sizeof(q), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(q))
                        break;
                q.ca[sizeof(q.ca) - 1] = 0;
                if (q.kind == REQUEST_LIST_CAS) {
                        if (worker_list_cas(m->worker_fd) < 0)
                                break;
                        continue;
                }
                Answer a = { .kind = ANSWER_PORT };
                copy_name(a.port.ca, q.ca);
                a.port.port = q.port;
                a.port.seq = q.seq;
                worker_query_port(m, &a.port);
                if (send_answer(m->worker_fd, &a) < 0)
                        break;
        }
        /* The open ports are left to the process's exit, which closes their files: closing them here
         * made ibsim's umad2sim 0.10 crash (SIGSEGV) as the daemon exited. */
        return NULL;
}

/* ---- the loop's side ---- */

static int on_answer(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RdmaMad *m = userdata;
        Answer a;

        for (;;) {
                ssize_t n = recv(m->loop_fd, &a, sizeof(a), MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(a))
                        return 0;
                switch (a.kind) {
                case ANSWER_CA: {
                        RdmaMadCa *l = reallocarray(m->listing, m->n_listing + 1, sizeof(RdmaMadCa));
                        if (!l) {
                                log_oom();
                                break;
                        }
                        m->listing = l;
                        m->listing[m->n_listing++] = a.ca;
                        break;
                }
                case ANSWER_CAS_DONE:
                        m->cas(m->userdata, m->listing, m->n_listing, a.error);
                        m->listing = mfree(m->listing);
                        m->n_listing = 0;
                        break;
                case ANSWER_PORT:
                        a.port.ca[sizeof(a.port.ca) - 1] = 0;
                        a.port.failed[sizeof(a.port.failed) - 1] = 0;
                        m->port(m->userdata, &a.port);
                        break;
                }
        }
}

int rdma_mad_new(sd_event *event, rdma_mad_cas_t cas, rdma_mad_port_t port, void *userdata, RdmaMad **ret) {
        _cleanup_(rdma_mad_freep) RdmaMad *m = NULL;
        pthread_attr_t attr;
        int fds[2], k;

        m = new0(RdmaMad, 1);
        if (!m)
                return -ENOMEM;
        *m = (RdmaMad) { .cas = cas, .port = port, .userdata = userdata, .loop_fd = -EBADF, .worker_fd = -EBADF };
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                return -errno;
        m->loop_fd = fds[0];
        m->worker_fd = fds[1];
        k = sd_event_add_io(event, &m->io, m->loop_fd, EPOLLIN, on_answer, m);
        if (k < 0)
                return k;
        (void) sd_event_source_set_description(m->io, "rdma-mad");

        k = pthread_attr_init(&attr);
        if (k != 0)
                return -k;
        (void) pthread_attr_setstacksize(&attr, 512 * 1024);
        k = pthread_create(&m->worker, &attr, worker_main, m);
        pthread_attr_destroy(&attr);
        if (k != 0)
                return -k;
        m->worker_started = true;
        *ret = TAKE_PTR(m);
        return 0;
}

RdmaMad *rdma_mad_free(RdmaMad *m) {
        if (!m)
                return NULL;
        sd_event_source_disable_unref(m->io);
        /* Closing our end ends the worker once its query in flight is answered or times out. */
        m->loop_fd = safe_close(m->loop_fd);
        if (m->worker_started)
                (void) pthread_join(m->worker, NULL);
        safe_close(m->worker_fd);
        free(m->listing);
        return mfree(m);
}

static int request(RdmaMad *m, const Request *q) {
        if (send(m->loop_fd, q, sizeof(*q), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return -errno;
        return 0;
}

int rdma_mad_list_cas(RdmaMad *m) {
        return request(m, &(Request) { .kind = REQUEST_LIST_CAS });
}

int rdma_mad_query_port(RdmaMad *m, const char *ca, unsigned port, uint64_t seq) {
        Request q = { .kind = REQUEST_QUERY_PORT, .seq = seq, .port = port };

        if (strlen(ca) >= sizeof(q.ca))
                return -EINVAL;
        copy_name(q.ca, ca);
        return request(m, &q);
}
