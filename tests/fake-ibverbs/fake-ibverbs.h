/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fake-ibverbs.h — a test-only libibverbs.so.1: RDMA verbs between processes over shared memory */
#pragma once

/*
 * What this is and how it is loaded
 * ---------------------------------
 * This machine's kernel has no RDMA subsystem and no rdma_rxe, so linkprobe-probe-rdma and the
 * responder's RDMA path cannot run against a real device. This library stands in for libibverbs
 * itself: it is built as libibverbs.so.1, exports the public verbs with their symbol versions
 * (libibverbs.map), and a test puts its directory first on LD_LIBRARY_PATH, as test_probe_gpu_nvml.py
 * does for libnvidia-ml.so.1. It is never installed.
 *
 * Why not a provider plugin under the real libibverbs (rdma-core 44, Debian 12): a provider registers
 * itself through verbs_register_driver_34() with struct verbs_device_ops, a private ABI whose header
 * (driver.h) Debian does not ship and which changes with rdma-core releases; the device list comes from
 * netlink or SYSFS_PATH/class/infiniband_verbs, and ibv_open_device() then opens the character device
 * /dev/infiniband/uverbsN (or /dev/char/MAJ:MIN) and checks its device number against sysfs before the
 * provider is even asked. Faking that means a private ABI plus a character device this kernel cannot
 * have. The public ABI (struct ibv_context with its ops table, through which the inline
 * ibv_post_send(), ibv_post_recv() and ibv_poll_cq() call) is what every application is compiled
 * against, so replacing the library is the least magic that works.
 *
 * What plays the kernel: the devices, ports, LIDs, GID tables, port states and rates are read from
 * the sysfs tree at $SYSFS_PATH (the variable libibverbs itself honours; default /sys), every entry of
 * class/infiniband being openable as if ib_uverbs were bound to it. A test points the daemon
 * (--sysfs-root) and this library at the same umockdev testbed, so both see the same devices.
 *
 * What plays the wire: one shared file, $FAKE_IBVERBS_FABRIC (default $TMPDIR/fake-ibverbs-fabric),
 * mapped by every process that opens a device. It holds the queue pairs (addressed by QPN, and by the
 * LID or GID of their port), the memory regions (by lkey and rkey), the completion queues and the
 * receive queues, under one process-shared robust mutex. A registered region's pages are moved, with
 * their contents and at the same address, into a memfd, which the other process maps through
 * /proc/PID/fd: an RDMA write or read really copies bytes between the two processes' registered
 * memory, done by the requesting process as its HCA would, without the target's involvement. A send
 * consumes a receive the other process posted and lands in its completion queue.
 *
 * What is enforced, as hardware does: the RC state machine RESET -> INIT -> RTR -> RTS (and to ERR or
 * RESET from anywhere) with the attribute masks ibv_modify_qp(3) requires and the kernel's optional
 * ones, nothing else; attribute ranges (path MTU against the port's, the GID index, PSNs, rd_atomic);
 * MR access flags (REMOTE_WRITE needs LOCAL_WRITE; remote access needs the flag on both the region and
 * the queue pair), lkey, rkey, protection domain and bounds on every byte; send and receive queue
 * depths (ENOMEM when full, slots freed when their completion is polled); completion queue sizes (an
 * overrun breaks the CQ: IBV_EVENT_CQ_ERR and poll errors); PSN agreement between the two ends.
 * Completion statuses: IBV_WC_REM_ACCESS_ERR (bad rkey, range or access; the target QP goes to error
 * too), IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_LEN_ERR / IBV_WC_REM_INV_REQ_ERR (a send longer than the
 * receive), IBV_WC_RNR_RETRY_EXC_ERR (no receive posted, rnr_retry times the target's min_rnr_timer),
 * IBV_WC_RETRY_EXC_ERR (the target does not answer: gone, killed, not RTR, in error, PSN mismatch, port
 * down; after (retry_cnt + 1) x 4.096 us x 2^timeout), and IBV_WC_WR_FLUSH_ERR for every outstanding
 * work request once a QP is in error. A device that disappears from sysfs is noticed within
 * FAKE_REFRESH_USEC: IBV_EVENT_DEVICE_FATAL, its QPs go to error and flush.
 *
 * $FAKE_IBVERBS_FAULT (comma-separated) injects what a test cannot otherwise cause, in the process
 * that has it:
 *   qp-error=N  a queue pair created here goes to error (IBV_EVENT_QP_FATAL) when it has taken part in
 *               N work requests, posted by it or arriving at it
 *   vanish=N    the device disappears (hot unplug) when this process posts its Nth send work request
 *   rkey        every memory region's rkey as the application sees it is wrong (what a peer is told)
 *   stall=N     a queue pair created here stops dead when it has taken part in N work requests, and stays
 *               so while this process lives: the requests it posts are not carried out and those that
 *               arrive at it are neither answered nor refused (no completion, and the requester's
 *               retransmission timer does not run), as if its host froze. Once the process is gone the
 *               requester's timer starts, as for any peer that vanished. When the queue pair stops,
 *               the file $FAKE_IBVERBS_FABRIC.stalled is created: a test waits for it to do what it
 *               needs in the middle of a phase (kill the process), however fast or slow the phase ran.
 *
 * Not modelled: UD/UC/XRC, SRQs, completion channels, atomics, memory windows, multicast. The verbs
 * behind them fail with EOPNOTSUPP. Registering a range that partly overlaps an earlier registration
 * fails with EINVAL (both would need the same pages in two memfds).
 */

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/macros.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

/* Limits, as ibv_query_device() reports them. */
#define FAKE_QPS_MAX 64
#define FAKE_MRS_MAX 256
#define FAKE_CQS_MAX 64
#define FAKE_PDS_MAX 256
#define FAKE_CQE_MAX 2048
#define FAKE_WR_MAX 512
#define FAKE_SGE_MAX 4
#define FAKE_INLINE_MAX 256
#define FAKE_RD_ATOMIC_MAX 16
#define FAKE_PORTS_MAX 8
#define FAKE_GIDS_MAX 32
#define FAKE_MSG_MAX (UINT32_C(1) << 30)
#define FAKE_PSN_MASK 0xffffffU

/* How often sysfs is looked at again for a device that vanished or a port that changed state. */
#define FAKE_REFRESH_USEC (50 * 1000)

typedef struct FakeSge {
        uint64_t addr;
        uint32_t length;
        uint32_t lkey;
} FakeSge;

typedef struct FakeRecvWqe {
        uint64_t wr_id;
        uint32_t num_sge;
        FakeSge sge[FAKE_SGE_MAX];
} FakeRecvWqe;

/* A completion in a shared CQ. Besides the ibv_wc fields, which work request it retires. */
typedef struct FakeCqe {
        uint64_t wr_id;
        uint32_t status;
        uint32_t opcode;
        uint32_t byte_len;
        uint32_t qp_num;
        uint32_t src_qp;
        uint32_t qp_slot;
        uint32_t qp_generation;
        uint32_t is_send;
        uint64_t seq; /* the send queue's sequence number of the work request */
} FakeCqe;

typedef struct FakeCqSlot {
        uint32_t in_use;
        uint32_t generation;
        int32_t pid;
        uint32_t size; /* cqe as created: more unpolled entries than this overrun the CQ */
        uint32_t head;
        uint32_t count;
        uint32_t overrun;
        uint32_t overrun_reported;
        FakeCqe ring[FAKE_CQE_MAX];
} FakeCqSlot;

typedef struct FakeMrSlot {
        uint32_t in_use;
        uint32_t generation;
        int32_t pid;
        int32_t memfd;          /* in the owner, for /proc/PID/fd/N */
        uint64_t backing_id;    /* one per memfd, for the mapping caches */
        uint64_t backing_base;  /* the owner's address of the memfd's first byte */
        uint64_t backing_len;
        uint64_t pd;            /* fabric-wide protection domain id */
        uint64_t addr;
        uint64_t length;
        uint32_t lkey;
        uint32_t rkey;
        uint32_t access;
} FakeMrSlot;

/* Events another process may leave for a queue pair's owner. */
enum {
        FAKE_QP_EVENT_NONE,
        FAKE_QP_EVENT_FATAL,
        FAKE_QP_EVENT_ACCESS_ERR,
        FAKE_QP_EVENT_REQ_ERR,
};

typedef struct FakeQpSlot {
        uint32_t in_use;
        uint32_t generation;
        int32_t pid;
        uint32_t qpn;
        uint64_t pd;
        /* The port, as sysfs says, for addressing. */
        char device[64];
        uint8_t port;
        uint8_t link_layer;
        uint8_t port_active;
        uint8_t vanished;
        uint16_t lid;
        uint32_t active_mtu; /* enum ibv_mtu */
        uint32_t n_gids;
        uint8_t gids[FAKE_GIDS_MAX][16];
        /* The state machine; ERR may be set by another process (then event says why). */
        uint32_t state;
        uint32_t event;
        uint32_t access;
        uint32_t path_mtu; /* enum ibv_mtu */
        uint32_t dest_qpn;
        uint32_t epsn; /* the PSN the responder side expects next */
        uint8_t min_rnr_timer;
        uint8_t max_dest_rd_atomic;
        /* Receive queue: posted, not yet consumed, from rq_head on; consumed but not polled. */
        int32_t recv_cq;
        uint32_t recv_cq_generation;
        uint32_t max_recv_wr;
        uint32_t max_recv_sge;
        uint32_t rq_head;
        uint32_t rq_count;
        uint32_t rq_unpolled;
        /* Fault injection: the QP goes to error after this many requests (0: never); it stops dead
         * after stall_after of them (FAKE_IBVERBS_FAULT=stall, 0: never). */
        uint64_t fault_after;
        uint64_t stall_after;
        uint64_t requests;
        FakeRecvWqe rq[FAKE_WR_MAX];
} FakeQpSlot;

typedef struct FakeFabric {
        uint64_t magic;
        uint32_t version;
        uint32_t size;
        pthread_mutex_t lock;
        uint32_t next_qpn;
        uint32_t next_key;
        uint64_t next_id;
        FakeQpSlot qps[FAKE_QPS_MAX];
        FakeMrSlot mrs[FAKE_MRS_MAX];
        FakeCqSlot cqs[FAKE_CQS_MAX];
} FakeFabric;

/* ---- sysfs: the kernel's view of a device ---- */

typedef struct FakePortInfo {
        uint8_t number;
        struct ibv_port_attr attr;
        uint32_t n_gids;
        uint8_t gids[FAKE_GIDS_MAX][16];
        uint8_t gid_types[FAKE_GIDS_MAX]; /* enum ibv_gid_type, from gid_attrs/types */
} FakePortInfo;

typedef struct FakeDeviceInfo {
        char name[64];
        enum ibv_node_type node_type;
        uint64_t node_guid;      /* host order */
        uint64_t sys_image_guid; /* host order */
        char fw_ver[64];
        uint32_t vendor_id;
        uint32_t vendor_part_id;
        uint32_t hw_ver;
        unsigned n_ports;
        FakePortInfo ports[FAKE_PORTS_MAX];
} FakeDeviceInfo;

const char *fake_sysfs_root(void);
/* Names of class/infiniband, sorted; -ENOSYS when there is no class/infiniband at all. */
int fake_sysfs_list(char (**ret)[64], size_t *ret_n);
int fake_sysfs_read_device(const char *name, FakeDeviceInfo *ret);
bool fake_sysfs_device_exists(const char *name);
int fake_sysfs_read_port_state(const char *name, unsigned port, enum ibv_port_state *ret);
int fake_sysfs_read_gid(const char *name, unsigned port, unsigned index, uint8_t ret[16]);

/* ---- the process's objects ---- */

typedef struct FakeDevice {
        struct ibv_device ibv;
        unsigned refs;
} FakeDevice;

typedef struct FakeContext FakeContext;
typedef struct FakeQp FakeQp;
typedef struct FakeBacking FakeBacking; /* a memfd under registered pages (resources.c) */

typedef struct FakePd {
        struct ibv_pd ibv;
        uint64_t id;
        unsigned users; /* MRs and QPs */
} FakePd;

typedef struct FakeMr {
        struct ibv_mr ibv;
        int slot;
        FakeBacking *backing;
} FakeMr;

typedef struct FakeCq {
        struct ibv_cq ibv;
        int slot;
        uint32_t generation;
        unsigned users; /* QPs */
} FakeCq;

typedef struct FakeSendWqe {
        uint64_t wr_id;
        enum ibv_wr_opcode opcode;
        unsigned send_flags;
        uint32_t num_sge;
        FakeSge sge[FAKE_SGE_MAX];
        uint64_t remote_addr;
        uint32_t rkey;
        uint32_t inline_len;
        uint8_t inline_data[FAKE_INLINE_MAX];
        /* Progress: when it was first tried, when to try again, how often it was not answered. */
        uint64_t first_try;
        uint64_t next_try;
        unsigned timeouts;
        unsigned rnr_naks;
} FakeSendWqe;

struct FakeQp {
        struct ibv_qp ibv;
        FakeQp *next;
        int slot;
        uint32_t generation;
        FakePd *pd;
        FakeCq *send_cq;
        FakeCq *recv_cq;
        bool sq_sig_all;
        uint32_t max_send_wr;
        uint32_t max_send_sge;
        uint32_t max_inline;
        /* Requester attributes. */
        uint32_t sq_psn;
        uint8_t timeout;
        uint8_t retry_cnt;
        uint8_t rnr_retry;
        uint8_t max_rd_atomic;
        bool is_global;
        uint16_t dlid;
        uint8_t dgid[16];
        uint8_t sgid_index;
        /* The send queue: posted up to posted_seq, executed up to done_seq, freed up to polled_seq. */
        FakeSendWqe *sq;
        uint64_t posted_seq;
        uint64_t done_seq;
        uint64_t polled_seq;
        bool flushed_rq; /* the receive queue was flushed for the current error state */
};

struct FakeContext {
        struct ibv_context ibv;
        FakeDevice *device;
        FakeDeviceInfo info;
        pthread_mutex_t lock;
        int event_pipe[2];
        FakeQp *qps;
        unsigned n_pds, n_cqs;
        uint64_t next_refresh;
        bool vanished;
};

static inline FakeContext *fake_context(struct ibv_context *c) {
        return container_of(c, FakeContext, ibv);
}

/* ---- the fabric ---- */

/* Maps the fabric (creating it when needed); NULL with errno set on failure. */
FakeFabric *fake_fabric(void);
void fake_fabric_lock(FakeFabric *f);
void fake_fabric_unlock(FakeFabric *f);
/* Creates the file named the fabric's path and ".suffix" (FAKE_IBVERBS_FAULT=stall tells a test so). */
void fake_fabric_signal_file(const char *suffix);
/* Whether a process is alive (not a zombie); the fabric lock is held. */
bool fake_pid_alive(pid_t pid);
/* A free slot of the given table (owners that died are reclaimed), or -ENOSPC. Lock held. */
int fake_fabric_alloc_qp(FakeFabric *f);
int fake_fabric_alloc_mr(FakeFabric *f);
int fake_fabric_alloc_cq(FakeFabric *f);
/* Keys: lkey and rkey differ, so that one used for the other fails as it would on hardware. */
uint32_t fake_mr_lkey(int slot, uint32_t generation);
uint32_t fake_mr_rkey(int slot, uint32_t generation);
FakeMrSlot *fake_fabric_find_lkey(FakeFabric *f, uint32_t lkey);
FakeMrSlot *fake_fabric_find_rkey(FakeFabric *f, uint32_t rkey);
/* Adds a completion to a CQ; false when it overran. Lock held. */
bool fake_cq_push(FakeFabric *f, int slot, uint32_t generation, const FakeCqe *e);
/* Where the owner's address addr of a region is in this process (mapping the memfd when needed);
 * NULL when the owner is gone. Lock held. */
uint8_t *fake_map_remote(const FakeMrSlot *m, uint64_t addr);

/* ---- verbs internals ---- */

/* The process's fault settings. */
typedef struct FakeFaults {
        uint64_t qp_error_after;
        uint64_t vanish_after;
        uint64_t stall_after;
        bool wrong_rkey;
} FakeFaults;
const FakeFaults *fake_faults(void);

void fake_context_event(FakeContext *c, enum ibv_event_type type, uint64_t element);
/* Looks at sysfs again when it is time: a vanished device, port state. */
void fake_context_refresh(FakeContext *c, uint64_t now);
void fake_context_vanish(FakeContext *c);
/* Moves a queue pair to error; the owner flushes it on its next call. Lock held. */
void fake_qp_slot_error(FakeQpSlot *s, uint32_t event);
int fake_qp_progress(FakeContext *c, FakeQp *qp, uint64_t now);
void fake_qp_flush_rq(FakeFabric *f, FakeQp *qp);
uint64_t fake_now_usec(void);

/* ops */
int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
