/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-kernels.h — the OpenCL C kernels of the GPU probe and how they are shaped per device */
#pragma once

#include "probe-gpu-inventory.h"

/* The load widths (uint lanes) the bandwidth test tries, as clpeak tries float to float16: which is
 * fastest depends on the device (a CPU likes a whole 64-byte line per load, many GPUs a 16-byte load). */
#define GPU_BANDWIDTH_WIDTHS { 1, 2, 4, 8, 16 }

/*
 * How the kernels are compiled for one device. Widths are 1, 2, 4, 8 or 16.
 *   fetches:          loads per work-item in the bandwidth kernels (clpeak's 16)
 *   fp_vector/chains: each work-item runs `chains` independent FMA chains of `fp_vector` lanes, enough
 *                     in flight to hide the FMA latency of two pipes on a CPU, or of one lane on a GPU
 *   half_vector:      lanes per chain for FP16 (at least 2: GPUs issue packed half2 FMAs)
 */
typedef struct GpuKernelConfig {
        unsigned fetches;
        unsigned fp_vector;
        unsigned chains;
        unsigned half_vector;
        bool use_fma; /* fma() when the device has hardware FMA, otherwise mad() (never a libm call) */
        bool fp16;
} GpuKernelConfig;

extern const char gpu_kernel_source[];

void gpu_kernel_config_for_device(const GpuDevice *d, GpuKernelConfig *ret);

/* The -D options for gpu_kernel_source's main program (fill and FMA kernels). Returns 0, or -ENOBUFS
 * when buf is too small. */
int gpu_kernel_config_to_options(const GpuKernelConfig *c, char *buf, size_t size);
/* The -D options for its bandwidth program: of one load width, or of every width when width is 0.
 * Returns 0 or -ENOBUFS. */
int gpu_bandwidth_options(const GpuKernelConfig *c, unsigned width, char *buf, size_t size);
