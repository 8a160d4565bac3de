/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host<->device copy rates, the way clpeak's transfer-bandwidth test and NVIDIA's oclBandwidthTest
 * measure them: clEnqueueWriteBuffer()/clEnqueueReadBuffer() between host memory and a buffer in device
 * memory. Two kinds of host memory are tried, and the faster is timed for each direction:
 *   pinned:   allocated by the driver (CL_MEM_ALLOC_HOST_PTR, so the DMA engine reaches it directly) and
 *             mapped once for its host pointer (oclBandwidthTest --memory=pinned); each copy is timed
 *             on the device. On a discrete GPU this is the fast path, and what its PCIe path carries
 *             in practice: set beside the link's theoretical rate (Gpu.PciPathGBps), a GPU running at
 *             half its slot's speed shows.
 *   pageable: ordinary memory of ours, in huge pages where the kernel has them (clpeak copies from
 *             ordinary memory). A GPU's driver may stage such a copy through a pinned buffer of its
 *             own before the device sees it, so it is timed on the host's clock from enqueueing to
 *             completion. A CPU device's copy is a memcpy it runs as the command itself, which its
 *             timestamps cover (the host's clock would add two thread wake-ups); there this is
 *             the faster kind.
 */
#include <inttypes.h>
#include <sys/mman.h>

#include "probe-gpu-json.h"
#include "probe-gpu-session.h"
#include "shared/time-util.h"

#define MIB (UINT64_C(1) << 20)
/* Large enough that per-copy overheads vanish (the rate stops growing well before 64 MiB on every
 * bus we know), small enough for a quick run. */
#define TRANSFER_BYTES_FULL (256 * MIB)
#define TRANSFER_BYTES_QUICK (16 * MIB)
/* Huge pages: fewer TLB misses for the copy, and fewer page faults to fill the buffer. */
#define HUGE_PAGE (2 * MIB)
/* Memory is prepared for the copies in chunks of this size, as far as the budget allows. */
#define PREPARE_CHUNK TRANSFER_BYTES_QUICK
/* Of the time left for the two transfer tests, preparing their memory may use this share. */
#define PREPARE_SHARE 0.3

typedef enum HostMemory {
        HOST_PINNED,
        HOST_PAGEABLE,
        _HOST_MEMORY_MAX,
} HostMemory;

static const char *const host_memory_names[_HOST_MEMORY_MAX] = {
        [HOST_PINNED] = "pinned",
        [HOST_PAGEABLE] = "pageable",
};

/* The host side of the copies: each kind's pointer, or why there is none. */
typedef struct HostBuffers {
        cl_mem pinned;
        void *host[_HOST_MEMORY_MAX];
        GpuError errors[_HOST_MEMORY_MAX];
} HostBuffers;

static cl_int enqueue_write(const Test *t, cl_command_queue queue, cl_event *ret_event) {
        return clEnqueueWriteBuffer(queue, t->buffer, CL_FALSE, 0, (size_t) t->work, t->host, 0, NULL, ret_event);
}

static cl_int enqueue_read(const Test *t, cl_command_queue queue, cl_event *ret_event) {
        return clEnqueueReadBuffer(queue, t->buffer, CL_FALSE, 0, (size_t) t->work, t->host, 0, NULL, ret_event);
}

/* The copy size: the plan's, within one allocation and, where the "device" is host memory, a small
 * share of what the host has free (three buffers of it exist at once). */
static uint64_t transfer_bytes(const Session *s) {
        const GpuDevice *d = s->device;
        uint64_t bytes = s->plan->runs > 3 ? TRANSFER_BYTES_FULL : TRANSFER_BYTES_QUICK;

        bytes = MIN(bytes, (uint64_t) d->max_allocation_bytes);
        if ((d->type & CL_DEVICE_TYPE_CPU) || d->host_unified_memory) {
                uint64_t avail = mem_available_bytes();
                if (avail > 0)
                        bytes = MIN(bytes, avail / 24);
        }
        return bytes / MIB * MIB;
}

/* Allocation only: nothing is touched yet, so memory the copies end up not using costs nothing. */
static void host_buffers_init(Session *s, uint64_t bytes, HostBuffers *h) {
        cl_int err;

        h->pinned = clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
        if (!h->pinned)
                gpu_error_cl(&h->errors[HOST_PINNED], err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, %" PRIu64 " bytes)",
                             bytes);
        else {
                h->host[HOST_PINNED] = clEnqueueMapBuffer(s->queue, h->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                          bytes, 0, NULL, NULL, &err);
                if (!h->host[HOST_PINNED])
                        gpu_error_cl(&h->errors[HOST_PINNED], err, "clEnqueueMapBuffer(%" PRIu64 " bytes)", bytes);
        }

        int r = posix_memalign(&h->host[HOST_PAGEABLE], HUGE_PAGE, bytes);
        if (r != 0) {
                h->host[HOST_PAGEABLE] = NULL;
                gpu_error_set(&h->errors[HOST_PAGEABLE], r, "ENOMEM", "no memory for a %" PRIu64 " byte host buffer",
                              bytes);
        } else
                /* Only advice: without transparent huge pages the copies still run, on small pages. */
                (void) madvise(h->host[HOST_PAGEABLE], bytes, MADV_HUGEPAGE);
}

/* Fills the host buffers and copies each chunk once both ways over every kind of host memory, so no
 * timed copy pays for first touches: a page the kernel faults in, memory the driver allocates or pins
 * on first use. Those are the slow part where memory is fresh (a virtual machine here faulted 256 MiB
 * in at 0.2-0.3 GB/s and then copied it at 15-20 GB/s), and they grow with the size, so memory is
 * prepared a chunk at a time until the plan's size is reached or the next chunk would not fit in the
 * allowance. Returns the bytes prepared, the size every timed copy then moves. A kind of host memory
 * whose copy fails is left out of the sweep with its error. */
static uint64_t prepare_copies(Session *s, cl_mem device, HostBuffers *h, uint64_t bytes, uint64_t allowance_usec) {
        uint64_t start = now_usec(CLOCK_MONOTONIC), done = 0;

        while (done < bytes) {
                uint64_t now = now_usec(CLOCK_MONOTONIC), chunk = MIN(PREPARE_CHUNK, bytes - done);
                /* The first chunk always: a copy of some size is timed whatever the budget. */
                if (done > 0 && now + (now - start) * chunk / done > start + allowance_usec)
                        break;
                for (HostMemory k = 0; k < _HOST_MEMORY_MAX; k++) {
                        uint8_t *p = h->host[k];
                        cl_int err;

                        if (!p || !isempty(h->errors[k].name))
                                continue;
                        memset(p + done, 0x5a, chunk);
                        err = clEnqueueWriteBuffer(s->queue, device, CL_TRUE, done, chunk, p + done, 0, NULL, NULL);
                        if (err != CL_SUCCESS) {
                                gpu_error_cl(&h->errors[k], err, "clEnqueueWriteBuffer(%" PRIu64 " bytes)", chunk);
                                continue;
                        }
                        err = clEnqueueReadBuffer(s->queue, device, CL_TRUE, done, chunk, p + done, 0, NULL, NULL);
                        if (err != CL_SUCCESS)
                                gpu_error_cl(&h->errors[k], err, "clEnqueueReadBuffer(%" PRIu64 " bytes)", chunk);
                }
                done += chunk;
        }
        if (done < bytes)
                session_warn(s,
                             "host/device transfer: copies of %" PRIu64 " MiB, not %" PRIu64 " MiB: preparing "
                             "fresh memory for them (first touches) went at %.0f MB/s, too slow for more "
                             "within the time budget",
                             done / MIB, bytes / MIB,
                             /* bytes per microsecond are MB/s */
                             (double) done / (double) MAX(now_usec(CLOCK_MONOTONIC) - start, UINT64_C(1)));
        return done;
}

static int host_buffers_done(Session *s, HostBuffers *h, GpuError *e) {
        cl_int err = CL_SUCCESS;

        free(h->host[HOST_PAGEABLE]);
        if (h->host[HOST_PINNED]) {
                err = clEnqueueUnmapMemObject(s->queue, h->pinned, h->host[HOST_PINNED], 0, NULL, NULL);
                if (err == CL_SUCCESS)
                        err = clFinish(s->queue);
        }
        if (h->pinned)
                clReleaseMemObject(h->pinned);
        return err == CL_SUCCESS ? 0 : gpu_error_cl(e, err, "clEnqueueUnmapMemObject()");
}

static int run_direction(Session *s, cl_mem buffer, const HostBuffers *h, uint64_t bytes, bool to_device,
                         json_object *j, TestFigures *ret, GpuError *e) {
        const char *name = to_device ? "host_to_device" : "device_to_host";
        Test t[_HOST_MEMORY_MAX];
        GpuError errors[_HOST_MEMORY_MAX];
        double rates[_HOST_MEMORY_MAX];
        int best, r;

        for (HostMemory k = 0; k < _HOST_MEMORY_MAX; k++) {
                errors[k] = h->errors[k];
                t[k] = (Test) {
                        .name = name,
                        .work = (double) bytes,
                        .enqueue = to_device ? enqueue_write : enqueue_read,
                        .buffer = buffer,
                        .host = h->host[k],
                        .host_clock = k == HOST_PAGEABLE && !(s->device->type & CL_DEVICE_TYPE_CPU),
                };
        }
        best = test_sweep(s, t, _HOST_MEMORY_MAX, rates, errors, e);
        if (best < 0)
                return best;
        r = test_run(s, &t[best], "GB/s", j, ret, e);
        if (r < 0)
                return r;

        json_object *a = json_object_new_array();
        for (HostMemory k = 0; k < _HOST_MEMORY_MAX; k++) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "host_memory", json_object_new_string(host_memory_names[k]));
                if (isempty(errors[k].name))
                        json_object_object_add(o, "gb_s", json_double_rounded(rates[k], 3));
                else
                        json_object_object_add(o, "error", json_error_new(errors[k].name, errors[k].message));
                json_object_array_add(a, o);
        }
        json_object_object_add(j, "bytes_per_copy", json_object_new_uint64(bytes));
        json_object_object_add(j, "host_memory", json_object_new_string(host_memory_names[best]));
        json_object_object_add(j, "timed_by", json_object_new_string(t[best].host_clock ? "host" : "device"));
        json_object_object_add(j, "candidates", a);
        return 0;
}

int measure_transfer(Session *s, json_object *j, TestFigures *ret_h2d, TestFigures *ret_d2h, GpuError *e) {
        _cleanup_(cl_mem_releasep) cl_mem device = NULL;
        json_object *h2d = json_object_new_object(), *d2h = json_object_new_object();
        uint64_t bytes = transfer_bytes(s);
        HostBuffers h = {};
        cl_int err;
        int r;

        if (!h2d || !d2h) {
                json_object_put(h2d);
                json_object_put(d2h);
                return gpu_error_set(e, ENOMEM, "ENOMEM", "out of memory");
        }
        json_object_object_add(j, "host_to_device", h2d);
        json_object_object_add(j, "device_to_host", d2h);
        if (bytes == 0)
                return gpu_error_set(e, ENOMEM, "ENOMEM", "no room for a transfer buffer (max allocation %" PRIu64 " bytes)",
                                     (uint64_t) s->device->max_allocation_bytes);

        device = clCreateBuffer(s->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
        if (!device)
                return gpu_error_cl(e, err, "clCreateBuffer(%" PRIu64 " bytes)", bytes);

        host_buffers_init(s, bytes, &h);
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bytes = prepare_copies(s, device, &h, bytes,
                               (uint64_t) ((double) (s->deadline > now ? s->deadline - now : 0) * PREPARE_SHARE));
        r = run_direction(s, device, &h, bytes, true, h2d, ret_h2d, e);
        if (r >= 0)
                r = run_direction(s, device, &h, bytes, false, d2h, ret_d2h, e);
        GpuError done_error = {};
        if (host_buffers_done(s, &h, &done_error) < 0 && r >= 0) {
                *e = done_error;
                r = -EIO;
        }
        return r;
}
