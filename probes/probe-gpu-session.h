/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-session.h — one device's measuring session, shared by the kernels' tests and the transfer test */
#pragma once

#include <json-c/json.h>

#include "probe-gpu-cl.h"
#include "probe-gpu-inventory.h"
#include "probe-gpu-kernels.h"
#include "sysfs/cpu-cache.h"

/* The largest work-group the kernels are launched with: a multiple of every warp and wavefront, and
 * what streaming kernels need to keep a GPU's memory system busy. */
#define GPU_MAX_WORK_GROUP 256

/* How long each phase takes. Full: a GPU reaches its boost clock within a few hundred milliseconds,
 * so the first test warms up longest; 20 ms launches are long enough that the profiling timer's
 * resolution does not matter and short enough for display watchdogs. */
typedef struct Plan {
        uint64_t warmup_first_usec;
        uint64_t warmup_usec;
        uint64_t launch_usec; /* target device time of one FMA launch */
        unsigned runs;
        uint64_t buffer_min; /* streaming buffer: at least this, and at least 8x the device's cache */
        uint64_t buffer_max;
        uint64_t default_budget_usec;
} Plan;

/* A test's figures: the median of the timed runs (what linkprobed publishes) and the best. */
typedef struct TestFigures {
        double median;
        double best;
} TestFigures;

typedef struct Session {
        const GpuDevice *device;
        const Plan *plan;
        GpuKernelConfig config;
        cl_context context;
        cl_command_queue queue;
        cl_program program;
        uint64_t deadline; /* CLOCK_MONOTONIC usec by which the device's work should be done */
        unsigned tests_done;
        unsigned tests_left;
        bool host_timed; /* a driver returned unusable profiling timestamps at least once */
        const SysfsCpuCache *host_cache; /* NULL: the host's caches are not known */
        json_object *warnings;
} Session;

/* What one test launches. Work per launch is `work` units, times the iteration count when the
 * kernel takes one (argument 3), which the warm-up then tunes to the plan's launch length. */
typedef struct Test {
        const char *name;
        cl_kernel kernel;
        size_t global;
        size_t local;
        double work; /* bytes or flops per launch (per iteration when calibrated) */
        bool calibrated; /* argument 3 is an iteration count */
        cl_uint iterations;
        /* Instead of a kernel: one copy between buffer and host (the transfer test). */
        cl_int (*enqueue)(const struct Test *t, cl_command_queue queue, cl_event *ret_event);
        cl_mem buffer;
        void *host;
        bool host_clock; /* timed from enqueueing to completion on the host's clock, not the device's */
        /* Called before every launch, warm-up, sweep and timed runs alike (may be NULL). */
        int (*prepare)(struct Test *t, GpuError *e);
        void *userdata; /* for prepare */
        /* When a sweep chose this test: when the sweep began (the test's time and warm-up count from
         * then) and how many launches it made. 0: test_run() starts the clock. */
        uint64_t started_usec;
        unsigned sweep_launches;
} Test;

/* Releases the session's program, queue and context, and its warnings. */
void session_done(Session *s);
/* clSetKernelArg(), its error named with what. */
int kernel_set_arg(cl_kernel k, cl_uint index, size_t size, const void *value, const char *what, GpuError *e);
/* The kernel called name from program, and the work-group size to launch it with: the largest power
 * of two the kernel, the device and GPU_MAX_WORK_GROUP allow. */
int session_kernel(Session *s, cl_program program, const char *name, cl_kernel *ret_kernel, size_t *ret_local,
                   GpuError *e);
/* Sets a calibrated test's iteration count (argument 3), within 16 and 2^26. */
int test_set_iterations(Test *t, double iterations, GpuError *e);
/* The work of one launch: per iteration times the iterations when calibrated. */
double test_work(const Test *t);
/* Records a warning in the measurement's "warnings". */
_printf_(2, 3) void session_warn(Session *s, const char *format, ...);
/* One launch of kernel, waited for; its duration in seconds from the device's profiling counters. */
int session_launch(Session *s, cl_kernel kernel, size_t global, size_t local, const char *what, double *ret_sec,
                   GpuError *e);
/* Warm-up, then up to plan->runs timed launches within this test's share of the budget; adds the
 * statistics (best/median/min/max/spread in 1e9 work per second) to j. */
int test_run(Session *s, Test *t, const char *unit, json_object *j, TestFigures *ret, GpuError *e);

/**
 * test_sweep() - tries candidate ways of running one test and picks the fastest
 * @s: the session
 * @t: the candidates; work is per launch, as in test_run()
 * @n: how many
 * @ret_rates: per candidate, the best of its launches in 1e9 work per second; 0 for one that failed
 * @errors: per candidate, why it failed (name empty when it did not); one already named on entry
 *          failed before the sweep (it would not build, had no memory) and is not launched
 * @e: filled when every candidate failed: the first one's error
 *
 * Launches every candidate three times, interleaved (fewer when the passes take the test's whole share
 * of warm-up), and ranks each by its best launch, the one a shared host disturbed least. A candidate
 * that fails to launch is dropped and the others go on. The sweep is the test's warm-up: the winner's started_usec and sweep_launches are
 * set for test_run(). Returns the winner's index, or a negative errno when every candidate failed.
 */
int test_sweep(Session *s, Test *t, size_t n, double *ret_rates, GpuError *errors, GpuError *e);
/* Builds source with options and $LINKPROBE_GPU_KERNEL_OPTIONS after them (a -D there overrides ours). */
int session_build(Session *s, const char *options, cl_program *ret, GpuError *e);
/* MemAvailable from /proc/meminfo in bytes, or 0 when it cannot be read. */
uint64_t mem_available_bytes(void);

/**
 * measure_bandwidth() - the device's memory bandwidth (probe-gpu-bandwidth.c)
 * @s: the session
 * @j: the "memory_bandwidth" test object, filled
 * @ret: GB/s (median and best run)
 * @e: filled on failure
 *
 * Uses one of the session's tests. Returns 0 or a negative errno.
 */
int measure_bandwidth(Session *s, json_object *j, TestFigures *ret, GpuError *e);

/**
 * measure_transfer() - host-to-device and device-to-host copy rates (probe-gpu-transfer.c)
 * @s: the session
 * @j: the measurement object: "host_to_device" and "device_to_host" test objects are added to it
 * @ret_h2d: GB/s from host memory to the device (median and best run)
 * @ret_d2h: GB/s back
 * @e: filled on failure
 *
 * Uses two of the session's tests. Returns 0 or a negative errno.
 */
int measure_transfer(Session *s, json_object *j, TestFigures *ret_h2d, TestFigures *ret_d2h, GpuError *e);
