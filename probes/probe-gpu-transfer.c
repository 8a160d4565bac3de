/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host<->device copy rates, the way clpeak's transfer-bandwidth test and NVIDIA's oclBandwidthTest
 * (--memory=pinned) measure them: a host buffer allocated by the driver (CL_MEM_ALLOC_HOST_PTR, so it
 * is pinned and the DMA engine can reach it), mapped once for its host pointer, and
 * clEnqueueWriteBuffer()/clEnqueueReadBuffer() between it and a buffer in device memory, each copy
 * timed on the device. On a discrete GPU the result is what its PCIe path carries in practice; set
 * beside the link's theoretical rate (Gpu.PciPathGBps), a GPU running at half its slot's speed shows.
 */
#include <inttypes.h>

#include "probe-gpu-json.h"
#include "probe-gpu-session.h"
#include "shared/time-util.h"

#define MIB (UINT64_C(1) << 20)
/* Large enough that per-copy overheads vanish (the rate stops growing well before 64 MiB on every
 * bus we know), small enough for a quick run. */
#define TRANSFER_BYTES_FULL (256 * MIB)
#define TRANSFER_BYTES_QUICK (16 * MIB)

static cl_int enqueue_write(const Test *t, cl_command_queue queue, cl_event *ret_event) {
        return clEnqueueWriteBuffer(queue, t->buffer, CL_FALSE, 0, (size_t) t->work, t->host, 0, NULL, ret_event);
}

static cl_int enqueue_read(const Test *t, cl_command_queue queue, cl_event *ret_event) {
        return clEnqueueReadBuffer(queue, t->buffer, CL_FALSE, 0, (size_t) t->work, t->host, 0, NULL, ret_event);
}

/* The copy size: the plan's, within one allocation and, where the "device" is host memory, a small
 * share of what the host has free (two buffers of it exist at once). */
static uint64_t transfer_bytes(const Session *s) {
        const GpuDevice *d = s->device;
        uint64_t bytes = s->plan->runs > 3 ? TRANSFER_BYTES_FULL : TRANSFER_BYTES_QUICK;

        bytes = MIN(bytes, (uint64_t) d->max_allocation_bytes);
        if ((d->type & CL_DEVICE_TYPE_CPU) || d->host_unified_memory) {
                uint64_t avail = mem_available_bytes();
                if (avail > 0)
                        bytes = MIN(bytes, avail / 16);
        }
        return bytes / MIB * MIB;
}

static int run_direction(Session *s, cl_mem buffer, void *host, uint64_t bytes, bool to_device, json_object *j,
                         TestFigures *ret, GpuError *e) {
        Test t = {
                .name = to_device ? "host_to_device" : "device_to_host",
                .work = (double) bytes,
                .enqueue = to_device ? enqueue_write : enqueue_read,
                .buffer = buffer,
                .host = host,
        };
        int r = test_run(s, &t, "GB/s", j, ret, e);
        if (r < 0)
                return r;
        json_object_object_add(j, "bytes_per_copy", json_object_new_uint64(bytes));
        json_object_object_add(j, "host_memory", json_object_new_string("pinned"));
        return 0;
}

int measure_transfer(Session *s, json_object *j, TestFigures *ret_h2d, TestFigures *ret_d2h, GpuError *e) {
        _cleanup_(cl_mem_releasep) cl_mem pinned = NULL, device = NULL;
        json_object *h2d = json_object_new_object(), *d2h = json_object_new_object();
        uint64_t bytes = transfer_bytes(s);
        void *host = NULL;
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

        pinned = clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
        if (!pinned)
                return gpu_error_cl(e, err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, %" PRIu64 " bytes)", bytes);
        device = clCreateBuffer(s->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
        if (!device)
                return gpu_error_cl(e, err, "clCreateBuffer(%" PRIu64 " bytes)", bytes);
        host = clEnqueueMapBuffer(s->queue, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
        if (!host)
                return gpu_error_cl(e, err, "clEnqueueMapBuffer(%" PRIu64 " bytes)", bytes);
        /* Touched, so no page is a shared zero page the first copy would have to fault in. */
        memset(host, 0x5a, bytes);

        r = run_direction(s, device, host, bytes, true, h2d, ret_h2d, e);
        if (r >= 0)
                r = run_direction(s, device, host, bytes, false, d2h, ret_d2h, e);

        err = clEnqueueUnmapMemObject(s->queue, pinned, host, 0, NULL, NULL);
        if (err == CL_SUCCESS)
                err = clFinish(s->queue);
        if (r >= 0 && err != CL_SUCCESS)
                r = gpu_error_cl(e, err, "clEnqueueUnmapMemObject()");
        return r;
}
