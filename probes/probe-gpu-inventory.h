/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-inventory.h — OpenCL platforms and devices as the GPU probe reports them */
#pragma once

#include <json-c/json.h>

#include "probe-gpu-cl.h"

/* Vector widths are reported for these element types, in this order. */
typedef enum GpuScalarType {
        GPU_SCALAR_CHAR,
        GPU_SCALAR_SHORT,
        GPU_SCALAR_INT,
        GPU_SCALAR_LONG,
        GPU_SCALAR_FLOAT,
        GPU_SCALAR_DOUBLE,
        GPU_SCALAR_HALF,
        _GPU_SCALAR_MAX,
} GpuScalarType;

typedef struct GpuDevice {
        cl_platform_id platform;
        cl_device_id id;
        unsigned index; /* position in the probe's "devices" array, what --device= selects */
        unsigned platform_index; /* position of the platform in clGetPlatformIDs() */
        unsigned device_index; /* position of the device within its platform */

        char *platform_name;
        char *platform_vendor;
        char *platform_version;
        char *name;
        char *vendor;
        char *driver_version;
        char *device_version; /* "OpenCL 3.0 ..." */
        char *opencl_c_version; /* "OpenCL C 1.2 ..." */
        char *extensions;
        cl_device_type type;
        cl_uint vendor_id;
        bool available;
        bool host_unified_memory;

        cl_uint compute_units;
        cl_uint max_clock_mhz;
        cl_ulong global_memory_bytes;
        cl_ulong max_allocation_bytes;
        cl_ulong local_memory_bytes;
        cl_ulong global_memory_cache_bytes;
        size_t max_work_group_size;

        cl_device_fp_config single_fp_config;
        cl_device_fp_config half_fp_config;
        bool fp16;
        cl_uint native_vector_width[_GPU_SCALAR_MAX];
        cl_uint preferred_vector_width[_GPU_SCALAR_MAX];

        char uuid[37]; /* "" when the driver has no cl_khr_device_uuid */
        char pci_bus_id[32]; /* "dddd:bb:dd.f", "" when no extension exposes it */
        char *key; /* unique in one run and stable across runs; "<identity>@<platform>", see the man page */
} GpuDevice;

/**
 * gpu_devices_enumerate() - every device of every OpenCL platform the ICD loader offers
 * @ret: array of devices, written only on success (NULL with *ret_n == 0 when there are none)
 * @ret_n: number of devices
 * @ret_platforms: JSON array describing the platforms, written only on success
 * @e: filled on failure
 *
 * No ICD at all and no platforms (CL_PLATFORM_NOT_FOUND_KHR) are not failures: they give zero devices.
 * A platform that fails to list its devices is reported in its platform entry and skipped.
 * Returns 0 or a negative errno.
 */
int gpu_devices_enumerate(GpuDevice **ret, size_t *ret_n, json_object **ret_platforms, GpuError *e);

GpuDevice *gpu_devices_free(GpuDevice *devices, size_t n);

/* The inventory part of a device's JSON object (see linkprobe-probe-gpu(8)). */
json_object *gpu_device_to_json(const GpuDevice *d);

/* "cpu", "gpu", "accelerator", "custom" or "default", the first set bit in that order. */
const char *gpu_device_type_to_string(cl_device_type type);
