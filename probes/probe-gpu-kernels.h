/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-kernels.h — the OpenCL C kernels of the GPU probe and how they are shaped per device */
#pragma once

#include "probe-gpu-inventory.h"

/*
 * How the kernels are compiled for one device. Widths are 1, 2, 4, 8 or 16.
 *   bandwidth_vector: uint lanes per load in stream_read (16 = one 64-byte line on a CPU; 4 = the
 *                     128-bit load GPUs coalesce best)
 *   fetches:          loads per work-item, strided by the work-group size so a work-group reads one
 *                     contiguous block (coalesced on GPUs, a few sequential streams on CPUs)
 *   fp_vector/chains: each work-item runs `chains` independent FMA chains of `fp_vector` lanes, enough
 *                     in flight to hide the FMA latency of two pipes on a CPU, or of one lane on a GPU
 *   half_vector:      lanes per chain for FP16 (at least 2: GPUs issue packed half2 FMAs)
 */
typedef struct GpuKernelConfig {
        unsigned bandwidth_vector;
        unsigned fetches;
        unsigned fp_vector;
        unsigned chains;
        unsigned half_vector;
        bool use_fma; /* fma() when the device has hardware FMA, otherwise mad() (never a libm call) */
        bool fp16;
} GpuKernelConfig;

extern const char gpu_kernel_source[];

void gpu_kernel_config_for_device(const GpuDevice *d, GpuKernelConfig *ret);

/* The -D options for gpu_kernel_source. Returns 0, or -ENOBUFS when buf is too small. */
int gpu_kernel_config_to_options(const GpuKernelConfig *c, char *buf, size_t size);
