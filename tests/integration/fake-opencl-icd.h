/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fake-opencl-icd.h — what the fake ICD's device list (fake-opencl-icd.c) and its runtime
 * (fake-opencl-runtime.c) share */
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#define N_DEVICES 5
#define N_WIDTHS 5 /* bandwidth load widths 1, 2, 4, 8, 16 */

struct _cl_platform_id {
        struct _cl_icd_dispatch *dispatch;
};

struct _cl_device_id {
        struct _cl_icd_dispatch *dispatch;
        int index;
};

typedef struct FakeDevice {
        const char *name;
        cl_device_type type;
        const char *extensions;
        cl_uint compute_units;
        cl_uint clock_mhz;
        size_t max_work_group;
        /* The measure mode's model. */
        double bandwidth_gb_s[N_WIDTHS]; /* stream_read_block, by load width */
        double grid_factor;              /* stream_read_grid against block */
        double fp32_gflops, fp16_gflops;
        double pinned_gb_s, pageable_gb_s; /* copies from and to either kind of host memory */
        unsigned bw_build_fails;     /* the bandwidth program of this width does not build */
        unsigned bw_block_run_fails; /* stream_read_block of this width fails to launch */
        size_t kernel_work_group;    /* CL_KERNEL_WORK_GROUP_SIZE of the bandwidth kernels (0: the device's) */
} FakeDevice;

extern const FakeDevice fake_devices[N_DEVICES];

/* Answers an info query with size bytes of value, as every clGet*Info() does. */
cl_int fake_answer(const void *value, size_t size, size_t param_value_size, void *param_value,
                   size_t *param_value_size_ret);
/* $FAKE_OPENCL_ICD_MODE, "gpus" when unset. */
const char *fake_mode(void);
/* Fills in the entry points of contexts, queues, buffers, programs, kernels and events. */
void fake_runtime_install(struct _cl_icd_dispatch *dispatch);
