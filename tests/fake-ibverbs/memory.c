/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memory.c — protection domains and memory regions: registered pages move into a memfd the peer maps */
#include <sys/mman.h>

#include "fake-ibverbs.h"

#define ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
                      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING)

/* The memfd under a page-aligned range of this process; regions inside it share it. */
struct FakeBacking {
        FakeBacking *next;
        uintptr_t start, end;
        int memfd;
        uint64_t id;
        unsigned refs;
};

static pthread_mutex_t backings_lock = PTHREAD_MUTEX_INITIALIZER;
static FakeBacking *backings;

FAKE_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context) {
        FakeContext *c = fake_context(context);
        FakeFabric *f = fake_fabric();
        FakePd *pd;

        if (c->vanished) {
                errno = ENODEV;
                return NULL;
        }
        if (c->n_pds >= FAKE_PDS_MAX) {
                errno = ENOMEM;
                return NULL;
        }
        pd = calloc(1, sizeof(FakePd));
        if (!pd) {
                errno = ENOMEM;
                return NULL;
        }
        fake_fabric_lock(f);
        pd->id = f->next_id++;
        fake_fabric_unlock(f);
        pd->ibv.context = context;
        pd->ibv.handle = (uint32_t) pd->id;
        pthread_mutex_lock(&c->lock);
        c->n_pds++;
        pthread_mutex_unlock(&c->lock);
        return &pd->ibv;
}

FAKE_EXPORT int ibv_dealloc_pd(struct ibv_pd *ibv_pd) {
        FakePd *pd = container_of(ibv_pd, FakePd, ibv);
        FakeContext *c = fake_context(ibv_pd->context);

        /* As the kernel: a domain with regions or queue pairs in it stays. */
        if (pd->users > 0)
                return EBUSY;
        pthread_mutex_lock(&c->lock);
        c->n_pds--;
        pthread_mutex_unlock(&c->lock);
        free(pd);
        return 0;
}

/* The protection of the mappings under [start, end): all there, all alike, or -EFAULT. */
static int range_protection(uintptr_t start, uintptr_t end, int *ret_prot) {
        _cleanup_(fclosep) FILE *maps = fopen("/proc/self/maps", "re");
        uintptr_t covered = start;
        char line[512];
        int prot = -1;

        if (!maps)
                return -errno;
        while (covered < end && fgets(line, sizeof(line), maps)) {
                unsigned long a, b;
                char perms[5];
                if (sscanf(line, "%lx-%lx %4s", &a, &b, perms) != 3 || b <= covered)
                        continue;
                if (a > covered)
                        break; /* a hole */
                int p = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0);
                if (prot >= 0 && p != prot)
                        return -EINVAL;
                prot = p;
                covered = b;
        }
        if (covered < end || !(prot & PROT_READ))
                return -EFAULT;
        *ret_prot = prot;
        return 0;
}

/* Finds or makes the backing for [start, end); the lock is held. */
static int backing_get(uintptr_t start, uintptr_t end, bool writable, FakeBacking **ret) {
        FakeBacking *b;
        int prot, r, fd;

        for (b = backings; b; b = b->next) {
                if (start >= b->start && end <= b->end) {
                        b->refs++;
                        *ret = b;
                        return 0;
                }
                if (start < b->end && end > b->start) {
                        fprintf(stderr, "fake-ibverbs: a region that partly overlaps an earlier one is not modelled\n");
                        return -EINVAL;
                }
        }
        r = range_protection(start, end, &prot);
        if (r < 0)
                return r;
        if (writable && !(prot & PROT_WRITE))
                return -EFAULT; /* the kernel cannot pin read-only pages for writing */

        fd = memfd_create("fake-ibverbs-mr", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) (end - start)) < 0)
                goto fail;
        /* The pages keep their contents and their address; only what backs them changes. */
        for (uintptr_t p = start; p < end;) {
                ssize_t n = pwrite(fd, (const void *) p, end - p, (off_t) (p - start));
                if (n <= 0)
                        goto fail;
                p += (uintptr_t) n;
        }
        if (mmap((void *) start, end - start, prot, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
                goto fail;
        b = calloc(1, sizeof(FakeBacking));
        if (!b) {
                close(fd);
                return -ENOMEM;
        }
        *b = (FakeBacking) { .next = backings, .start = start, .end = end, .memfd = fd, .refs = 1 };
        backings = b;
        *ret = b;
        return 0;
fail:
        r = -errno;
        close(fd);
        return r;
}

static void backing_put(FakeBacking *b) {
        pthread_mutex_lock(&backings_lock);
        if (--b->refs == 0) {
                for (FakeBacking **p = &backings; *p; p = &(*p)->next)
                        if (*p == b) {
                                *p = b->next;
                                break;
                        }
                /* The mapping stays, so the application's memory does; only the name goes. */
                close(b->memfd);
                free(b);
        }
        pthread_mutex_unlock(&backings_lock);
}

FAKE_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *ibv_pd, void *addr, size_t length, uint64_t iova,
                                            unsigned int access) {
        FakePd *pd = container_of(ibv_pd, FakePd, ibv);
        FakeContext *c = fake_context(ibv_pd->context);
        FakeFabric *f = fake_fabric();
        long page = sysconf(_SC_PAGESIZE);
        FakeBacking *b = NULL;
        FakeMr *mr;
        int slot, r;

        if (c->vanished) {
                errno = ENODEV;
                return NULL;
        }
        /* ibv_reg_mr(3): remote write or atomic access needs local write. */
        if ((access & ~ACCESS_KNOWN) || ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
                                         !(access & IBV_ACCESS_LOCAL_WRITE))) {
                errno = EINVAL;
                return NULL;
        }
        if (!addr || length == 0 || iova != (uintptr_t) addr) {
                errno = EINVAL;
                return NULL;
        }
        mr = calloc(1, sizeof(FakeMr));
        if (!mr) {
                errno = ENOMEM;
                return NULL;
        }
        uintptr_t start = (uintptr_t) addr & ~(uintptr_t) (page - 1);
        uintptr_t end = ((uintptr_t) addr + length + (uintptr_t) page - 1) & ~(uintptr_t) (page - 1);
        pthread_mutex_lock(&backings_lock);
        r = backing_get(start, end, access & IBV_ACCESS_LOCAL_WRITE, &b);
        pthread_mutex_unlock(&backings_lock);
        if (r < 0) {
                free(mr);
                errno = -r;
                return NULL;
        }

        fake_fabric_lock(f);
        slot = fake_fabric_alloc_mr(f);
        if (slot < 0) {
                fake_fabric_unlock(f);
                backing_put(b);
                free(mr);
                errno = ENOMEM;
                return NULL;
        }
        if (b->id == 0)
                b->id = f->next_id++;
        FakeMrSlot *m = &f->mrs[slot];
        uint32_t generation = m->generation + 1;
        *m = (FakeMrSlot) {
                .in_use = 1,
                .generation = generation,
                .pid = getpid(),
                .memfd = b->memfd,
                .backing_id = b->id,
                .backing_base = b->start,
                .backing_len = b->end - b->start,
                .pd = pd->id,
                .addr = (uintptr_t) addr,
                .length = length,
                .lkey = fake_mr_lkey(slot, generation),
                .rkey = fake_mr_rkey(slot, generation),
                .access = access,
        };
        fake_fabric_unlock(f);

        mr->slot = slot;
        mr->backing = b;
        mr->ibv = (struct ibv_mr) {
                .context = ibv_pd->context,
                .pd = ibv_pd,
                .addr = addr,
                .length = length,
                .handle = (uint32_t) slot,
                .lkey = m->lkey,
                /* FAKE_IBVERBS_FAULT=rkey: what the application hands its peer is not what was registered. */
                .rkey = fake_faults()->wrong_rkey ? m->rkey ^ 0x00008000U : m->rkey,
        };
        pd->users++;
        return &mr->ibv;
}

#undef ibv_reg_mr
FAKE_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access) {
        return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t) addr, (unsigned) access);
}

FAKE_EXPORT int ibv_dereg_mr(struct ibv_mr *ibv_mr) {
        FakeMr *mr = container_of(ibv_mr, FakeMr, ibv);
        FakePd *pd = container_of(ibv_mr->pd, FakePd, ibv);
        FakeFabric *f = fake_fabric();

        fake_fabric_lock(f);
        f->mrs[mr->slot].in_use = 0;
        fake_fabric_unlock(f);
        backing_put(mr->backing);
        pd->users--;
        free(mr);
        return 0;
}
