/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One device's measuring session: launches timed on the device, and the warm-up and timed runs every
 * test shares (the kernels' tests in probe-gpu-measure.c, the copies in probe-gpu-transfer.c). */
#include <inttypes.h>
#include <stdarg.h>

#include "probe-gpu-json.h"
#include "probe-gpu-session.h"
#include "probe-util.h"
#include "shared/time-util.h"

#define MAX_RUNS 32
/* A sweep launches each candidate at most this often; the best launch ranks it. Three: with two, a
 * burst on a shared host that hit the fastest candidate's second launch as its first (which also
 * paid for compiling and faulting in) let a slow one win now and then. */
#define SWEEP_PASSES 3

void session_done(Session *s) {
        if (s->program)
                clReleaseProgram(s->program);
        if (s->queue)
                clReleaseCommandQueue(s->queue);
        if (s->context)
                clReleaseContext(s->context);
        json_object_put(s->warnings);
}

void session_warn(Session *s, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        probe_warnv(s->warnings, format, ap);
        va_end(ap);
}

/* Waits for a command and returns its duration in seconds from the device's profiling counters (the
 * host's clock, with a warning, when the driver's are unusable; always with host_clock). t0: when it
 * was enqueued. */
static int session_wait_timed(Session *s, cl_event ev, uint64_t t0, bool host_clock, const char *what,
                              double *ret_sec, GpuError *e) {
        cl_ulong start = 0, end = 0;
        cl_int err, status = 0;

        err = clWaitForEvents(1, &ev);
        if (err != CL_SUCCESS) {
                /* The command's own status says why it failed (e.g. CL_OUT_OF_RESOURCES). */
                cl_int q = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                                          NULL);
                if (q == CL_SUCCESS && status < 0)
                        err = status;
                return gpu_error_cl(e, err, "clWaitForEvents(%s)", what);
        }
        uint64_t t1 = now_usec(CLOCK_MONOTONIC);
        if (host_clock) {
                *ret_sec = (double) MAX(t1 - t0, UINT64_C(1)) * 1e-6;
                return 0;
        }

        err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL);
        if (err == CL_SUCCESS)
                err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
        if (err != CL_SUCCESS)
                return gpu_error_cl(e, err, "clGetEventProfilingInfo(%s)", what);

        if (end > start)
                *ret_sec = (double) (end - start) * 1e-9;
        else {
                /* Seen with broken drivers: fall back to the host's clock and say so in the result. */
                s->host_timed = true;
                *ret_sec = (double) MAX(t1 - t0, UINT64_C(1)) * 1e-6;
        }
        return 0;
}

int session_launch(Session *s, cl_kernel kernel, size_t global, size_t local, const char *what, double *ret_sec,
                   GpuError *e) {
        _cleanup_(cl_event_releasep) cl_event ev = NULL;
        cl_int err;

        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        err = clEnqueueNDRangeKernel(s->queue, kernel, 1, NULL, &global, local > 0 ? &local : NULL, 0, NULL,
                                     &ev);
        if (err != CL_SUCCESS)
                return gpu_error_cl(e, err, "clEnqueueNDRangeKernel(%s, global %zu, local %zu)", what,
                                    global, local);
        return session_wait_timed(s, ev, t0, false, what, ret_sec, e);
}

/* One timed unit of a test: a kernel launch, or the test's own command. */
static int test_launch(Session *s, Test *t, double *ret_sec, GpuError *e) {
        _cleanup_(cl_event_releasep) cl_event ev = NULL;
        cl_int err;
        int r;

        if (t->prepare) {
                r = t->prepare(t, e);
                if (r < 0)
                        return r;
        }
        if (!t->enqueue)
                return session_launch(s, t->kernel, t->global, t->local, t->name, ret_sec, e);
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        err = t->enqueue(t, s->queue, &ev);
        if (err != CL_SUCCESS)
                return gpu_error_cl(e, err, "enqueueing %s", t->name);
        return session_wait_timed(s, ev, t0, t->host_clock, t->name, ret_sec, e);
}

int session_kernel(Session *s, cl_program program, const char *name, cl_kernel *ret_kernel, size_t *ret_local,
                   GpuError *e) {
        _cleanup_(cl_kernel_releasep) cl_kernel k = NULL;
        size_t wg = 0;
        cl_int err;

        k = clCreateKernel(program, name, &err);
        if (!k)
                return gpu_error_cl(e, err, "clCreateKernel(%s)", name);
        err = clGetKernelWorkGroupInfo(k, s->device->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg), &wg, NULL);
        if (err != CL_SUCCESS)
                return gpu_error_cl(e, err, "clGetKernelWorkGroupInfo(%s)", name);

        size_t local = 1;
        while (local * 2 <= MIN(MIN(wg, s->device->max_work_group_size), (size_t) GPU_MAX_WORK_GROUP))
                local *= 2;
        *ret_kernel = TAKE_PTR(k);
        *ret_local = local;
        return 0;
}

int kernel_set_arg(cl_kernel k, cl_uint index, size_t size, const void *value, const char *what, GpuError *e) {
        cl_int err = clSetKernelArg(k, index, size, value);
        return err == CL_SUCCESS ? 0 : gpu_error_cl(e, err, "clSetKernelArg(%s, %u)", what, index);
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}


int test_set_iterations(Test *t, double iterations, GpuError *e) {
        t->iterations = (cl_uint) MIN(MAX(iterations, 16.0), (double) (1u << 26));
        return kernel_set_arg(t->kernel, 3, sizeof(t->iterations), &t->iterations, t->name, e);
}

double test_work(const Test *t) {
        return t->calibrated ? t->work * t->iterations : t->work;
}

/* The share of the remaining budget a test starting at start may use. */
static uint64_t test_slice_usec(const Session *s, uint64_t start) {
        return s->deadline > start ? (s->deadline - start) / MAX(s->tests_left, 1u) : 0;
}

/* How long a test warms up: the plan's time, within 3/10 of its slice. */
static uint64_t test_warmup_usec(const Session *s, uint64_t slice) {
        const Plan *p = s->plan;
        return MIN(s->tests_done == 0 ? p->warmup_first_usec : p->warmup_usec, slice * 3 / 10);
}

/* Warm-up, then up to plan->runs timed launches, within this test's share of the device's budget.
 * Adds best/median/min/max/spread (in units of 1e9 work per second) and the samples to j. The median
 * is the figure: one launch that a cache, a turbo burst or a quiet moment on a shared host favoured
 * cannot move it, where it would be the best. */
int test_run(Session *s, Test *t, const char *unit, json_object *j, TestFigures *ret, GpuError *e) {
        const Plan *p = s->plan;
        double samples[MAX_RUNS], launch_sec[MAX_RUNS], sec;
        unsigned warmups = t->sweep_launches, n = 0;
        int r;

        /* A sweep before the test was its warm-up: its time counts. */
        uint64_t start = t->started_usec > 0 ? t->started_usec : now_usec(CLOCK_MONOTONIC);
        uint64_t slice = test_slice_usec(s, start);
        uint64_t warmup = test_warmup_usec(s, slice);
        uint64_t target = MIN(p->launch_usec, slice / (2 * p->runs + 4));
        uint64_t stop = start + slice * 9 / 10;

        /* Time-based warm-up (clocks ramp, caches and TLBs fill, lazy allocations happen), which also
         * tunes the iteration count so launches last about `target`: at least one launch, unless a
         * sweep already took the whole warm-up time. */
        bool warm = t->sweep_launches > 0 && now_usec(CLOCK_MONOTONIC) - start >= warmup;
        while (!warm) {
                r = test_launch(s, t, &sec, e);
                if (r < 0)
                        return r;
                warmups++;
                if (t->calibrated) {
                        double want = (double) MAX(target, UINT64_C(100)) * 1e-6;
                        if (sec < want * 0.7 || sec > want * 1.5) {
                                r = test_set_iterations(t, t->iterations * want / sec, e);
                                if (r < 0)
                                        return r;
                        }
                }
                warm = now_usec(CLOCK_MONOTONIC) - start >= warmup;
        }

        uint64_t timed_start = now_usec(CLOCK_MONOTONIC);
        for (n = 0; n < MIN(p->runs, (unsigned) MAX_RUNS); n++) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                /* Stop early rather than overrun the budget; the first run always happens. */
                if (n > 0 && now + (now - timed_start) / n > stop)
                        break;
                r = test_launch(s, t, &sec, e);
                if (r < 0)
                        return r;
                launch_sec[n] = sec;
                samples[n] = test_work(t) / sec * 1e-9;
        }

        double sorted[MAX_RUNS];
        memcpy(sorted, samples, n * sizeof(double));
        qsort(sorted, n, sizeof(double), cmp_double);
        double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        double best = sorted[n - 1], spread = median > 0 ? (sorted[n - 1] - sorted[0]) / median : 0;
        qsort(launch_sec, n, sizeof(double), cmp_double);

        json_object *a = json_object_new_array();
        for (unsigned i = 0; i < n; i++)
                json_object_array_add(a, json_double_rounded(samples[i], 3));

        json_object_object_add(j, "status", json_object_new_string("ok"));
        json_object_object_add(j, "unit", json_object_new_string(unit));
        json_object_object_add(j, "best", json_double_rounded(best, 3));
        json_object_object_add(j, "median", json_double_rounded(median, 3));
        json_object_object_add(j, "min", json_double_rounded(sorted[0], 3));
        json_object_object_add(j, "max", json_double_rounded(best, 3));
        json_object_object_add(j, "relative_spread", json_double_rounded(spread, 4));
        json_object_object_add(j, "runs", json_object_new_int((int) n));
        json_object_object_add(j, "samples", a);
        json_object_object_add(j, "warmup_launches", json_object_new_int((int) warmups));
        json_object_object_add(j, "warmup_ms", json_double_rounded((double) (timed_start - start) / 1e3, 1));
        json_object_object_add(j, "launch_ms", json_double_rounded(launch_sec[n / 2] * 1e3, 3));
        if (!t->enqueue) {
                json_object_object_add(j, "global_work_size", json_object_new_uint64(t->global));
                json_object_object_add(j, "local_work_size", json_object_new_uint64(t->local));
        }

        /* Shared hosts and thermally limited GPUs drift; the median is the result, but the drift is
         * part of the truth about the machine. */
        if (spread > 0.10)
                session_warn(
                        s,
                        "%s varied by %.0f%% between runs (%.3g to %.3g %s, median %.3g): the "
                        "device's throughput is not steady (shared host, power or thermal limits); the "
                        "median is reported",
                        t->name, spread * 100, sorted[0], best, unit, median);
        if (n < p->runs)
                session_warn(s, "%s: only %u of %u runs fit in the time budget", t->name, n, p->runs);

        s->tests_done++;
        s->tests_left--;
        *ret = (TestFigures) { .median = median, .best = best };
        return 0;
}

int test_sweep(Session *s, Test *t, size_t n, double *ret_rates, GpuError *errors, GpuError *e) {
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        uint64_t slice = test_slice_usec(s, start);
        unsigned launches = 0;
        size_t best = n;
        double sec;
        int r;

        for (size_t i = 0; i < n; i++)
                ret_rates[i] = 0;
        /* Every candidate once, then again, interleaved, so drift on a shared host falls on all of them
         * alike, and each is ranked by its launches after its first, which paid for faulting in
         * buffers, ramping clocks and compiling. Only a budget too tight for the warm-up's share of
         * the test cuts the passes short. */
        for (unsigned pass = 0; pass < SWEEP_PASSES; pass++) {
                if (pass > 0 && now_usec(CLOCK_MONOTONIC) - start >= slice * 3 / 10)
                        break;
                for (size_t i = 0; i < n; i++) {
                        if (!isempty(errors[i].name))
                                continue;
                        r = test_launch(s, &t[i], &sec, &errors[i]);
                        launches++;
                        if (r < 0) {
                                ret_rates[i] = 0;
                                continue;
                        }
                        ret_rates[i] = MAX(ret_rates[i], test_work(&t[i]) / sec * 1e-9);
                }
        }

        for (size_t i = 0; i < n; i++)
                if (isempty(errors[i].name) && (best == n || ret_rates[i] > ret_rates[best]))
                        best = i;
        if (best == n) {
                *e = errors[0];
                return -EIO;
        }
        t[best].started_usec = start;
        t[best].sweep_launches = launches;
        return (int) best;
}

int session_build(Session *s, const char *options, cl_program *ret, GpuError *e) {
        char buf[1024];

        /* For diagnosing a driver's compiler: appended, so a -D here overrides ours. */
        const char *extra = getenv("LINKPROBE_GPU_KERNEL_OPTIONS");
        if (snprintf(buf, sizeof(buf), "%s%s%s", options, isempty(extra) ? "" : " ", strempty(extra)) >=
            (int) sizeof(buf))
                return gpu_error_set(e, ENOBUFS, "ENOBUFS", "$LINKPROBE_GPU_KERNEL_OPTIONS is too long");
        return cl_program_build(s->context, s->device->id, gpu_kernel_source, buf, ret, e);
}

/* MemAvailable from /proc/meminfo in bytes, or 0 when it cannot be read. */
uint64_t mem_available_bytes(void) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/meminfo", "re");
        char line[256];
        unsigned long long kib;

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
                        return (uint64_t) kib * 1024;
        return 0;
}

