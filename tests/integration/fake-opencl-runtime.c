/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fake ICD's runtime (FAKE_OPENCL_ICD_MODE=measure): contexts, queues, buffers, programs, kernels and
 * events for the calls linkprobe-probe-gpu makes, so that its measuring logic runs against devices this
 * machine does not have. Nothing is computed: each command takes the time the device's model in
 * fake-opencl-icd.c gives it, on a device clock that is CLOCK_MONOTONIC (a queue runs one command at a
 * time; waiting for an event sleeps until it ends), and its profiling timestamps say exactly that.
 *
 * What a driver enforces is enforced: kernel names exist only in the program built with the options
 * that define them, every argument must be set with its size before a launch, the work-group must
 * divide the global size and stay within the kernel's limit, a streaming read must stay inside its
 * buffer, copies inside theirs. The model's failures: a load width whose program does not build (with
 * a build log) and one whose block kernel fails to launch with CL_OUT_OF_RESOURCES.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-opencl-icd.h"

#define MAX_ARGS 4
#define MAX_MAPPED 16
#define MAX_ALLOCATION ((size_t) 4 << 30) /* CL_DEVICE_MAX_MEM_ALLOC_SIZE in fake-opencl-icd.c */

struct _cl_context {
        struct _cl_icd_dispatch *dispatch;
        cl_device_id device;
};

struct _cl_command_queue {
        struct _cl_icd_dispatch *dispatch;
        cl_context context;
        uint64_t busy_until; /* ns on CLOCK_MONOTONIC */
};

struct _cl_mem {
        struct _cl_icd_dispatch *dispatch;
        size_t size;
        cl_mem_flags flags;
        void *mapped; /* host memory of a CL_MEM_ALLOC_HOST_PTR buffer, once mapped */
};

struct _cl_program {
        struct _cl_icd_dispatch *dispatch;
        cl_context context;
        char options[1024];
        char log[256];
        bool built;
};

/* What one kernel of the probe's source takes, and how its time is modelled. */
typedef enum KernelKind { FILL, STREAM_BLOCK, STREAM_GRID, FMA32, FMA16 } KernelKind;

static const struct {
        const char *name; /* the streaming reads' end in their load width: stream_read_block_4 */
        KernelKind kind;
        const char *defined_by; /* the option that puts it in a program; the streaming reads' see below */
        size_t arg_sizes[MAX_ARGS];
} kernels[] = {
        { "fill_random", FILL, "-DFP_VEC=", { sizeof(cl_mem), sizeof(cl_uint) } },
        { "stream_read_block_", STREAM_BLOCK, NULL,
          { sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_uint), sizeof(cl_ulong) } },
        { "stream_read_grid_", STREAM_GRID, NULL,
          { sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_uint), sizeof(cl_ulong) } },
        { "fp32_fma", FMA32, "-DFP_VEC=", { sizeof(cl_mem), sizeof(cl_float), sizeof(cl_float), sizeof(cl_uint) } },
        { "fp16_fma", FMA16, "-DWITH_FP16=1", { sizeof(cl_mem), sizeof(cl_float), sizeof(cl_float), sizeof(cl_uint) } },
};

struct _cl_kernel {
        struct _cl_icd_dispatch *dispatch;
        cl_program program;
        size_t k; /* index in kernels[] */
        long width; /* a streaming read's load width */
        unsigned set; /* bit per argument set */
        uint64_t args[MAX_ARGS]; /* the values of the scalar and cl_mem arguments */
};

struct _cl_event {
        struct _cl_icd_dispatch *dispatch;
        uint64_t queued, start, end;
};

static struct _cl_icd_dispatch *runtime_dispatch;
static cl_mem mapped[MAX_MAPPED]; /* live CL_MEM_ALLOC_HOST_PTR buffers with host memory */

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void sleep_until(uint64_t ns) {
        struct timespec ts = { .tv_sec = (time_t) (ns / 1000000000u), .tv_nsec = (long) (ns % 1000000000u) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
                ;
}

static const FakeDevice *device_of(cl_context c) {
        return &fake_devices[c->device->index];
}

/* The value of the last -DNAME=value in options (a later -D overrides an earlier one), or -1. */
static long option_value(const char *options, const char *name) {
        char key[64];
        long v = -1;

        snprintf(key, sizeof(key), "-D%s=", name);
        for (const char *p = options; (p = strstr(p, key)); p += strlen(key))
                v = strtol(p + strlen(key), NULL, 10);
        return v;
}

static int width_index(long w) {
        for (int i = 0; i < N_WIDTHS; i++)
                if (w == 1L << i)
                        return i;
        return -1;
}

#define SET_ERR(v)                      \
        do {                            \
                if (errcode_ret)        \
                        *errcode_ret = (v); \
        } while (0)

static cl_context CL_API_CALL fake_create_context(const cl_context_properties *properties, cl_uint num_devices,
                                                  const cl_device_id *devices,
                                                  void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                  void *user_data, cl_int *errcode_ret) {
        cl_context c;

        if (num_devices != 1 || !devices || !devices[0]) {
                SET_ERR(CL_INVALID_VALUE);
                return NULL;
        }
        c = calloc(1, sizeof(*c));
        *c = (struct _cl_context) { runtime_dispatch, devices[0] };
        SET_ERR(CL_SUCCESS);
        return c;
}

#define DEFINE_RELEASE(fname, type)                \
        static cl_int CL_API_CALL fname(type object) { \
                free(object);                          \
                return CL_SUCCESS;                     \
        }
DEFINE_RELEASE(fake_release_context, cl_context)
DEFINE_RELEASE(fake_release_queue, cl_command_queue)
DEFINE_RELEASE(fake_release_program, cl_program)
DEFINE_RELEASE(fake_release_kernel, cl_kernel)
DEFINE_RELEASE(fake_release_event, cl_event)

static cl_int CL_API_CALL fake_release_mem(cl_mem m) {
        for (int i = 0; i < MAX_MAPPED; i++)
                if (mapped[i] == m)
                        mapped[i] = NULL;
        free(m->mapped);
        free(m);
        return CL_SUCCESS;
}

static cl_command_queue CL_API_CALL fake_create_queue(cl_context context, cl_device_id device,
                                                      cl_command_queue_properties properties, cl_int *errcode_ret) {
        cl_command_queue q = calloc(1, sizeof(*q));
        *q = (struct _cl_command_queue) { runtime_dispatch, context, 0 };
        SET_ERR(CL_SUCCESS);
        return q;
}

static cl_mem CL_API_CALL fake_create_buffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                                             cl_int *errcode_ret) {
        cl_mem m;

        if (size == 0 || size > MAX_ALLOCATION) {
                SET_ERR(CL_INVALID_BUFFER_SIZE);
                return NULL;
        }
        m = calloc(1, sizeof(*m));
        *m = (struct _cl_mem) { runtime_dispatch, size, flags, NULL };
        SET_ERR(CL_SUCCESS);
        return m;
}

static cl_program CL_API_CALL fake_create_program(cl_context context, cl_uint count, const char **strings,
                                                  const size_t *lengths, cl_int *errcode_ret) {
        cl_program p = calloc(1, sizeof(*p));
        p->dispatch = runtime_dispatch;
        p->context = context;
        SET_ERR(CL_SUCCESS);
        return p;
}

static cl_int CL_API_CALL fake_build_program(cl_program p, cl_uint num_devices, const cl_device_id *devices,
                                             const char *options,
                                             void(CL_CALLBACK *notify)(cl_program, void *), void *user_data) {
        const FakeDevice *f = device_of(p->context);
        long w;

        snprintf(p->options, sizeof(p->options), "%s", options ? options : "");
        p->log[0] = '\0';
        w = option_value(p->options, "BW_VEC");
        if (strstr(p->options, "-DBW_VEC=") && width_index(w) < 0) {
                snprintf(p->log, sizeof(p->log), "fake compiler: error: BW_VEC=%ld names no vector type", w);
                return CL_BUILD_PROGRAM_FAILURE;
        }
        /* Every width (BW_ALL) includes the one the device rejects. */
        if (f->bw_build_fails && (w == (long) f->bw_build_fails || (w < 0 && option_value(p->options, "BW_ALL") == 1))) {
                snprintf(p->log, sizeof(p->log), "fake compiler: error: uint%u loads are not supported",
                         f->bw_build_fails);
                return CL_BUILD_PROGRAM_FAILURE;
        }
        p->built = true;
        return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_program_build_info(cl_program p, cl_device_id device, cl_program_build_info name,
                                                  size_t size, void *value, size_t *size_ret) {
        if (name != CL_PROGRAM_BUILD_LOG)
                return CL_INVALID_VALUE;
        return fake_answer(p->log, strlen(p->log) + 1, size, value, size_ret);
}

static cl_kernel CL_API_CALL fake_create_kernel(cl_program p, const char *name, cl_int *errcode_ret) {
        if (!p->built) {
                SET_ERR(CL_INVALID_PROGRAM_EXECUTABLE);
                return NULL;
        }
        for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
                bool stream = kernels[k].kind == STREAM_BLOCK || kernels[k].kind == STREAM_GRID;
                size_t len = strlen(kernels[k].name);
                long width = -1;

                if (stream) {
                        char *end;
                        if (strncmp(name, kernels[k].name, len) != 0)
                                continue;
                        width = strtol(name + len, &end, 10);
                        /* In the program of every width, or in the one of this width. */
                        if (*end || width_index(width) < 0 ||
                            (option_value(p->options, "BW_ALL") != 1 && option_value(p->options, "BW_VEC") != width))
                                continue;
                } else if (strcmp(name, kernels[k].name) != 0 || !strstr(p->options, kernels[k].defined_by))
                        continue;
                cl_kernel kernel = calloc(1, sizeof(*kernel));
                *kernel = (struct _cl_kernel) { runtime_dispatch, p, k, width, 0, {} };
                SET_ERR(CL_SUCCESS);
                return kernel;
        }
        SET_ERR(CL_INVALID_KERNEL_NAME);
        return NULL;
}

static size_t kernel_work_group(cl_kernel k) {
        const FakeDevice *f = device_of(k->program->context);
        bool stream = kernels[k->k].kind == STREAM_BLOCK || kernels[k->k].kind == STREAM_GRID;
        return stream && f->kernel_work_group ? f->kernel_work_group : f->max_work_group;
}

static cl_int CL_API_CALL fake_kernel_work_group_info(cl_kernel k, cl_device_id device,
                                                      cl_kernel_work_group_info name, size_t size, void *value,
                                                      size_t *size_ret) {
        size_t wg = kernel_work_group(k);

        if (name != CL_KERNEL_WORK_GROUP_SIZE)
                return CL_INVALID_VALUE;
        return fake_answer(&wg, sizeof(wg), size, value, size_ret);
}

static cl_int CL_API_CALL fake_set_kernel_arg(cl_kernel k, cl_uint index, size_t size, const void *value) {
        if (index >= MAX_ARGS || kernels[k->k].arg_sizes[index] == 0)
                return CL_INVALID_ARG_INDEX;
        if (size != kernels[k->k].arg_sizes[index] || !value)
                return CL_INVALID_ARG_SIZE;
        k->args[index] = 0;
        memcpy(&k->args[index], value, size);
        k->set |= 1u << index;
        return CL_SUCCESS;
}

/* Puts a command of `ns` on the queue's timeline and makes its event. */
static cl_int enqueue(cl_command_queue q, double ns, cl_event *ret_event) {
        uint64_t now = now_ns();
        uint64_t start = q->busy_until > now ? q->busy_until : now;
        uint64_t end = start + (uint64_t) (ns > 1000 ? ns : 1000);

        q->busy_until = end;
        if (ret_event) {
                cl_event ev = calloc(1, sizeof(*ev));
                *ev = (struct _cl_event) { runtime_dispatch, now, start, end };
                *ret_event = ev;
        }
        return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_enqueue_ndrange(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *offset,
                                               const size_t *global, const size_t *local, cl_uint n_wait,
                                               const cl_event *wait, cl_event *ret_event) {
        const FakeDevice *f = device_of(q->context);
        const char *options = k->program->options;
        size_t n_args = 0, g = global ? global[0] : 0;
        double ns = 0;

        while (n_args < MAX_ARGS && kernels[k->k].arg_sizes[n_args])
                n_args++;
        if (k->set != (1u << n_args) - 1)
                return CL_INVALID_KERNEL_ARGS;
        if (dims != 1 || g == 0)
                return CL_INVALID_GLOBAL_WORK_SIZE;
        if (local && (local[0] == 0 || local[0] > kernel_work_group(k) || g % local[0] != 0))
                return CL_INVALID_WORK_GROUP_SIZE;

        switch (kernels[k->k].kind) {
        case FILL: {
                cl_mem buf = (cl_mem) (uintptr_t) k->args[0];
                if (g * 64 > buf->size)
                        return CL_OUT_OF_RESOURCES; /* what a GPU reports for a fault */
                ns = (double) g * 64 / f->bandwidth_gb_s[0];
                break;
        }
        case STREAM_BLOCK:
        case STREAM_GRID: {
                long w = k->width, fetch = option_value(options, "BW_FETCH");
                cl_mem src = (cl_mem) (uintptr_t) k->args[0], out = (cl_mem) (uintptr_t) k->args[1];
                uint64_t first = k->args[3], load = (uint64_t) w * sizeof(cl_uint);
                bool block = kernels[k->k].kind == STREAM_BLOCK;
                double rate = f->bandwidth_gb_s[width_index(w)] * (block ? 1.0 : f->grid_factor);

                if (fetch <= 0 || (first + (uint64_t) g * fetch) * load > src->size ||
                    g * sizeof(cl_uint) > out->size)
                        return CL_OUT_OF_RESOURCES;
                if ((block && w == (long) f->bw_block_run_fails) || rate <= 0)
                        return CL_OUT_OF_RESOURCES;
                ns = (double) g * fetch * load / rate;
                break;
        }
        case FMA32:
        case FMA16: {
                bool half = kernels[k->k].kind == FMA16;
                long lanes = option_value(options, half ? "HALF_VEC" : "FP_VEC");
                long chains = option_value(options, "CHAINS");
                double flops = (double) g * chains * lanes * 2 * (double) (cl_uint) k->args[3];
                ns = flops / (half ? f->fp16_gflops : f->fp32_gflops);
                break;
        }
        }
        return enqueue(q, ns, ret_event);
}

/* A copy's rate: pinned when the host memory is a mapped CL_MEM_ALLOC_HOST_PTR buffer's. */
static double copy_rate(cl_command_queue q, const void *host) {
        const FakeDevice *f = device_of(q->context);

        for (int i = 0; i < MAX_MAPPED; i++)
                if (mapped[i] && (const char *) host >= (const char *) mapped[i]->mapped &&
                    (const char *) host < (const char *) mapped[i]->mapped + mapped[i]->size)
                        return f->pinned_gb_s;
        return f->pageable_gb_s;
}

static cl_int copy(cl_command_queue q, cl_mem m, cl_bool blocking, size_t offset, size_t size, const void *host,
                   cl_event *ret_event) {
        if (!host || size == 0 || offset + size > m->size)
                return CL_INVALID_VALUE;
        enqueue(q, (double) size / copy_rate(q, host), ret_event);
        if (blocking)
                sleep_until(q->busy_until);
        return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_enqueue_write(cl_command_queue q, cl_mem m, cl_bool blocking, size_t offset, size_t size,
                                             const void *host, cl_uint n_wait, const cl_event *wait,
                                             cl_event *ret_event) {
        return copy(q, m, blocking, offset, size, host, ret_event);
}

static cl_int CL_API_CALL fake_enqueue_read(cl_command_queue q, cl_mem m, cl_bool blocking, size_t offset, size_t size,
                                            void *host, cl_uint n_wait, const cl_event *wait, cl_event *ret_event) {
        return copy(q, m, blocking, offset, size, host, ret_event);
}

static void *CL_API_CALL fake_enqueue_map(cl_command_queue q, cl_mem m, cl_bool blocking, cl_map_flags flags,
                                          size_t offset, size_t size, cl_uint n_wait, const cl_event *wait,
                                          cl_event *ret_event, cl_int *errcode_ret) {
        int slot = -1;

        if (!(m->flags & CL_MEM_ALLOC_HOST_PTR) || offset != 0 || size != m->size) {
                SET_ERR(CL_INVALID_VALUE); /* the probe maps only whole host-allocated buffers */
                return NULL;
        }
        for (int i = 0; i < MAX_MAPPED && slot < 0; i++)
                if (!mapped[i] || mapped[i] == m)
                        slot = i;
        if (!m->mapped)
                m->mapped = slot >= 0 ? malloc(m->size) : NULL;
        if (!m->mapped) {
                SET_ERR(CL_MAP_FAILURE);
                return NULL;
        }
        mapped[slot] = m;
        enqueue(q, 0, ret_event);
        SET_ERR(CL_SUCCESS);
        return m->mapped;
}

static cl_int CL_API_CALL fake_enqueue_unmap(cl_command_queue q, cl_mem m, void *ptr, cl_uint n_wait,
                                             const cl_event *wait, cl_event *ret_event) {
        if (!m->mapped || ptr != m->mapped)
                return CL_INVALID_VALUE;
        return enqueue(q, 0, ret_event);
}

static cl_int CL_API_CALL fake_finish(cl_command_queue q) {
        sleep_until(q->busy_until);
        return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_wait_for_events(cl_uint n, const cl_event *events) {
        for (cl_uint i = 0; i < n; i++)
                sleep_until(events[i]->end);
        return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_event_info(cl_event ev, cl_event_info name, size_t size, void *value, size_t *size_ret) {
        cl_int status = now_ns() >= ev->end ? CL_COMPLETE : CL_RUNNING;

        if (name != CL_EVENT_COMMAND_EXECUTION_STATUS)
                return CL_INVALID_VALUE;
        return fake_answer(&status, sizeof(status), size, value, size_ret);
}

static cl_int CL_API_CALL fake_event_profiling_info(cl_event ev, cl_profiling_info name, size_t size, void *value,
                                                    size_t *size_ret) {
        cl_ulong t;

        switch (name) {
        case CL_PROFILING_COMMAND_QUEUED:
        case CL_PROFILING_COMMAND_SUBMIT:
                t = ev->queued;
                break;
        case CL_PROFILING_COMMAND_START:
                t = ev->start;
                break;
        case CL_PROFILING_COMMAND_END:
                t = ev->end;
                break;
        default:
                return CL_INVALID_VALUE;
        }
        if (now_ns() < ev->end)
                return CL_PROFILING_INFO_NOT_AVAILABLE;
        return fake_answer(&t, sizeof(t), size, value, size_ret);
}

void fake_runtime_install(struct _cl_icd_dispatch *d) {
        runtime_dispatch = d;
        d->clCreateContext = fake_create_context;
        d->clReleaseContext = fake_release_context;
        d->clCreateCommandQueue = fake_create_queue;
        d->clReleaseCommandQueue = fake_release_queue;
        d->clCreateBuffer = fake_create_buffer;
        d->clReleaseMemObject = fake_release_mem;
        d->clCreateProgramWithSource = fake_create_program;
        d->clBuildProgram = fake_build_program;
        d->clGetProgramBuildInfo = fake_program_build_info;
        d->clReleaseProgram = fake_release_program;
        d->clCreateKernel = fake_create_kernel;
        d->clGetKernelWorkGroupInfo = fake_kernel_work_group_info;
        d->clSetKernelArg = fake_set_kernel_arg;
        d->clReleaseKernel = fake_release_kernel;
        d->clEnqueueNDRangeKernel = fake_enqueue_ndrange;
        d->clEnqueueWriteBuffer = fake_enqueue_write;
        d->clEnqueueReadBuffer = fake_enqueue_read;
        d->clEnqueueMapBuffer = fake_enqueue_map;
        d->clEnqueueUnmapMemObject = fake_enqueue_unmap;
        d->clFinish = fake_finish;
        d->clWaitForEvents = fake_wait_for_events;
        d->clGetEventInfo = fake_event_info;
        d->clGetEventProfilingInfo = fake_event_profiling_info;
        d->clReleaseEvent = fake_release_event;
}
