/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fabric.c — the shared file every process of a test maps: queue pairs, regions, completion queues */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "fake-ibverbs.h"

#define FABRIC_MAGIC UINT64_C(0x736272657662696b) /* "kibverbs" */
#define FABRIC_VERSION 2
/* Keys: 8 bits of generation, the slot above; the rkey is scrambled so it never equals the lkey. */
#define RKEY_SALT 0x5a000000U
#define MAP_CACHE_MAX 16

static pthread_mutex_t fabric_once_lock = PTHREAD_MUTEX_INITIALIZER;
static FakeFabric *fabric;

uint64_t fake_now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000U + (uint64_t) ts.tv_nsec / 1000U;
}

static const char *fabric_path(char buf[static 4096]) {
        const char *p = getenv("FAKE_IBVERBS_FABRIC");
        if (!isempty(p))
                return p;
        snprintf(buf, 4096, "%s/fake-ibverbs-fabric", getenv("TMPDIR") ?: "/tmp");
        return buf;
}

void fake_fabric_signal_file(const char *suffix) {
        char buf[4096], path[4200];
        int fd;

        snprintf(path, sizeof(path), "%s.%s", fabric_path(buf), suffix);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
                fprintf(stderr, "fake-ibverbs: cannot create %s: %s\n", path, strerror(errno));
        else
                close(fd);
}

static int fabric_init(int fd) {
        pthread_mutexattr_t a;
        FakeFabric *f;

        if (ftruncate(fd, sizeof(FakeFabric)) < 0)
                return -errno;
        f = mmap(NULL, sizeof(FakeFabric), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (f == MAP_FAILED)
                return -errno;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        /* A process killed while it holds the lock (the responder, in a test) must not stop the rest. */
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&f->lock, &a);
        pthread_mutexattr_destroy(&a);
        f->next_qpn = 0x100 + (uint32_t) (getpid() & 0xff) * 0x10;
        f->next_key = 1;
        f->next_id = 1;
        f->size = sizeof(FakeFabric);
        f->version = FABRIC_VERSION;
        __atomic_store_n(&f->magic, FABRIC_MAGIC, __ATOMIC_RELEASE);
        munmap(f, sizeof(FakeFabric));
        return 0;
}

static FakeFabric *fabric_open(void) {
        char buf[4096];
        const char *path = fabric_path(buf);
        struct stat st;
        FakeFabric *f;
        int fd, r = 0;

        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
                return NULL;
        /* Whoever comes first makes it; the rest wait on the file lock and find it made. */
        if (flock(fd, LOCK_EX) < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                goto fail;
        }
        /* Processes of one test may run as different users. */
        (void) fchmod(fd, 0666);
        if (st.st_size == 0)
                r = fabric_init(fd);
        else if (st.st_size != (off_t) sizeof(FakeFabric))
                r = -EPROTO;
        (void) flock(fd, LOCK_UN);
        if (r < 0)
                goto fail;
        f = mmap(NULL, sizeof(FakeFabric), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (f == MAP_FAILED) {
                r = -errno;
                goto fail;
        }
        close(fd);
        if (__atomic_load_n(&f->magic, __ATOMIC_ACQUIRE) != FABRIC_MAGIC || f->version != FABRIC_VERSION ||
            f->size != sizeof(FakeFabric)) {
                fprintf(stderr, "fake-ibverbs: %s is not a fabric of this build\n", path);
                munmap(f, sizeof(FakeFabric));
                errno = EPROTO;
                return NULL;
        }
        return f;
fail:
        close(fd);
        fprintf(stderr, "fake-ibverbs: cannot set up the fabric %s: %s\n", path, strerror(-r));
        errno = -r;
        return NULL;
}

FakeFabric *fake_fabric(void) {
        pthread_mutex_lock(&fabric_once_lock);
        if (!fabric)
                fabric = fabric_open();
        pthread_mutex_unlock(&fabric_once_lock);
        return fabric;
}

void fake_fabric_lock(FakeFabric *f) {
        int r = pthread_mutex_lock(&f->lock);
        /* The holder died: what it left is consistent enough for a test (each change is small and
         * made in an order that leaves valid slots), and its slots are reclaimed as dead. */
        if (r == EOWNERDEAD)
                pthread_mutex_consistent(&f->lock);
}

void fake_fabric_unlock(FakeFabric *f) {
        pthread_mutex_unlock(&f->lock);
}

/* Whether a process lives is asked for every work request: through a pidfd per peer process, which
 * turns readable when the process exits (a zombie, not yet reaped by its parent, is gone for the
 * fabric as for its queue pairs) and cannot mistake a new process with a reused PID for it. */
#define PIDFD_CACHE_MAX 16

static struct {
        pid_t pid;
        int pidfd;
} pidfds[PIDFD_CACHE_MAX];
static unsigned pidfd_next;

bool fake_pid_alive(pid_t pid) {
        struct pollfd p = { .events = POLLIN };
        int i;

        if (pid <= 0)
                return false;
        if (pid == getpid())
                return true;
        /* Callers hold the fabric lock, which serializes this table too. */
        for (i = 0; i < PIDFD_CACHE_MAX; i++)
                if (pidfds[i].pid == pid && pidfds[i].pidfd > 0)
                        break;
        if (i == PIDFD_CACHE_MAX) {
                int fd = (int) syscall(SYS_pidfd_open, pid, 0);
                if (fd < 0)
                        return errno != ESRCH;
                i = (int) (pidfd_next++ % PIDFD_CACHE_MAX);
                if (pidfds[i].pidfd > 0)
                        close(pidfds[i].pidfd);
                pidfds[i].pid = pid;
                pidfds[i].pidfd = fd;
        }
        p.fd = pidfds[i].pidfd;
        return poll(&p, 1, 0) == 0;
}

#define ALLOC_SLOT(table, n)                                                                    \
        ({                                                                                      \
                int _found = -ENOSPC;                                                           \
                for (int _i = 0; _i < (int) (n); _i++)                                          \
                        if (!(table)[_i].in_use || !fake_pid_alive((table)[_i].pid)) {          \
                                _found = _i;                                                    \
                                break;                                                          \
                        }                                                                       \
                _found;                                                                         \
        })

int fake_fabric_alloc_qp(FakeFabric *f) {
        return ALLOC_SLOT(f->qps, FAKE_QPS_MAX);
}

int fake_fabric_alloc_mr(FakeFabric *f) {
        return ALLOC_SLOT(f->mrs, FAKE_MRS_MAX);
}

int fake_fabric_alloc_cq(FakeFabric *f) {
        return ALLOC_SLOT(f->cqs, FAKE_CQS_MAX);
}

uint32_t fake_mr_lkey(int slot, uint32_t generation) {
        return ((uint32_t) (slot + 1) << 8) | (generation & 0xff);
}

uint32_t fake_mr_rkey(int slot, uint32_t generation) {
        return fake_mr_lkey(slot, generation) ^ RKEY_SALT;
}

static FakeMrSlot *find_key(FakeFabric *f, uint32_t key, bool remote) {
        uint32_t k = remote ? key ^ RKEY_SALT : key;
        uint32_t slot = (k >> 8) - 1;

        if ((k >> 8) == 0 || slot >= FAKE_MRS_MAX || !f->mrs[slot].in_use)
                return NULL;
        if ((remote ? f->mrs[slot].rkey : f->mrs[slot].lkey) != key)
                return NULL;
        return &f->mrs[slot];
}

FakeMrSlot *fake_fabric_find_lkey(FakeFabric *f, uint32_t lkey) {
        return find_key(f, lkey, false);
}

FakeMrSlot *fake_fabric_find_rkey(FakeFabric *f, uint32_t rkey) {
        return find_key(f, rkey, true);
}

bool fake_cq_push(FakeFabric *f, int slot, uint32_t generation, const FakeCqe *e) {
        FakeCqSlot *cq;

        if (slot < 0 || slot >= FAKE_CQS_MAX)
                return false;
        cq = &f->cqs[slot];
        if (!cq->in_use || cq->generation != generation)
                return false;
        if (cq->overrun)
                return false;
        if (cq->count >= cq->size) {
                /* As on hardware: the completion is lost and the CQ is in error from now on. */
                cq->overrun = 1;
                return false;
        }
        cq->ring[(cq->head + cq->count) % FAKE_CQE_MAX] = *e;
        cq->count++;
        return true;
}

/* Mappings of other processes' memfds, newest first. */
typedef struct MapEntry {
        uint64_t backing_id;
        uint8_t *base;
        uint64_t len;
} MapEntry;

static MapEntry map_cache[MAP_CACHE_MAX];

uint8_t *fake_map_remote(const FakeMrSlot *m, uint64_t addr) {
        char path[64];
        MapEntry e;
        int fd, i;

        if (m->pid == getpid())
                return (uint8_t *) (uintptr_t) addr;
        if (!fake_pid_alive(m->pid))
                return NULL;
        for (i = 0; i < MAP_CACHE_MAX; i++)
                if (map_cache[i].base && map_cache[i].backing_id == m->backing_id)
                        break;
        if (i < MAP_CACHE_MAX) {
                e = map_cache[i];
        } else {
                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) m->pid, (int) m->memfd);
                fd = open(path, O_RDWR | O_CLOEXEC);
                if (fd < 0)
                        return NULL;
                e = (MapEntry) { .backing_id = m->backing_id, .len = m->backing_len };
                e.base = mmap(NULL, m->backing_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                close(fd);
                if (e.base == MAP_FAILED)
                        return NULL;
                i = MAP_CACHE_MAX - 1;
                if (map_cache[i].base)
                        munmap(map_cache[i].base, map_cache[i].len);
        }
        memmove(&map_cache[1], &map_cache[0], (size_t) i * sizeof(MapEntry));
        map_cache[0] = e;
        return e.base + (addr - m->backing_base);
}
