/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-measure.h — memory bandwidth and FP32/FP16 throughput of one OpenCL device */
#pragma once

#include <json-c/json.h>

#include "probe-gpu-inventory.h"
#include "sysfs/cpu-cache.h"

typedef struct GpuMeasureOptions {
        bool quick; /* small buffer, short warm-up, three runs: for tests, not for numbers */
        uint64_t budget_usec; /* wall time this device may take; 0 = the mode's default */
        const SysfsCpuCache *host_cache; /* the host's last-level cache; NULL when unknown */
} GpuMeasureOptions;

/**
 * gpu_device_measure() - measures one device
 * @d: the device
 * @o: options
 * @ret: the "measurement" object (see linkprobe-probe-gpu(8)), written only on success
 * @e: filled on failure, with the OpenCL error's name
 *
 * Memory bandwidth (streaming read of random bits), FP32 and, with cl_khr_fp16, FP16 FMA throughput.
 * Every figure is timed on the device (CL_QUEUE_PROFILING_ENABLE) after a time-based warm-up; the
 * median of the runs is the result, and the best, minimum, maximum and spread are reported with it.
 * The bandwidth buffer is at least 4x (aimed at 8x) the larger of the device's cache and, for a
 * device that uses host memory, the host's last-level cache. The work is scaled down to fit the
 * budget. Returns 0 or a negative errno.
 */
int gpu_device_measure(const GpuDevice *d, const GpuMeasureOptions *o, json_object **ret, GpuError *e);
