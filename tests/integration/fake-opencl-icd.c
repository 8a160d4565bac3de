/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fake OpenCL ICD for linkprobe-probe-gpu's tests: one platform whose devices answer the queries the
 * probe makes with values no machine here has (UUIDs, PCI addresses through the KHR, AMD and NVIDIA
 * extensions, fp16, duplicate names), and whose failures are chosen by the test. ocl-icd loads it from
 * an .icd file in $OCL_ICD_VENDORS like any vendor's driver. Built by the test with
 *   cc -shared -fPIC -o libfake-opencl-icd.so fake-opencl-icd.c fake-opencl-runtime.c
 *
 * $FAKE_OPENCL_ICD_MODE:
 *   gpus             five devices (default)
 *   device-ids-fail  clGetDeviceIDs() answers CL_OUT_OF_HOST_MEMORY
 *   query-fail       device 1 answers CL_INVALID_VALUE for CL_DEVICE_MAX_COMPUTE_UNITS
 *   hang             clGetDeviceIDs() never returns (a wedged driver)
 *   measure          the five devices measure: contexts, programs, kernels and copies work
 *                    (fake-opencl-runtime.c), each taking the time the device's model says
 * $FAKE_OPENCL_ICD_CONTEXT_ERROR: what clCreateContext() fails with in the other modes (default
 * CL_OUT_OF_RESOURCES).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-opencl-icd.h"

#define EXPORT __attribute__((visibility("default")))

/* Measure mode's models, per device: what the fake runtime (fake-opencl-runtime.c) makes each kernel and
 * copy take, and which load widths fail to build or to run. */
const FakeDevice fake_devices[N_DEVICES] = {
        { "Fake GPU KHR", CL_DEVICE_TYPE_GPU, "cl_khr_fp16 cl_khr_device_uuid cl_khr_pci_bus_info", 108,
          1410, 1024,
          /* uint4 loads with grid strides are fastest */
          .bandwidth_gb_s = { 600, 900, 1500, 1400, 1200 }, .grid_factor = 1.1, .fp32_gflops = 19500,
          .fp16_gflops = 78000, .pinned_gb_s = 25, .pageable_gb_s = 12 },
        /* A small work-group limit, a width its compiler rejects, one that cannot run. */
        { "Fake GPU AMD", CL_DEVICE_TYPE_GPU, "cl_amd_device_attribute_query", 120, 2100, 64,
          .bandwidth_gb_s = { 300, 500, 800, 1000, 0 }, .grid_factor = 0.9, .fp32_gflops = 47900,
          .pinned_gb_s = 24, .pageable_gb_s = 10, .bw_build_fails = 16, .bw_block_run_fails = 8,
          .kernel_work_group = 48 },
        { "Fake GPU NV", CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT, "cl_nv_device_attribute_query", 132,
          1980, 1024, .bandwidth_gb_s = { 1000, 2000, 2800, 3000, 2900 }, .grid_factor = 0.95,
          .fp32_gflops = 67000, .pinned_gb_s = 55, .pageable_gb_s = 20 },
        { "Fake Accelerator", CL_DEVICE_TYPE_ACCELERATOR, "", 4, 1000, 1024,
          .bandwidth_gb_s = { 10, 10, 10, 10, 10 }, .grid_factor = 1, .fp32_gflops = 100, .pinned_gb_s = 1,
          .pageable_gb_s = 1 },
        { "Fake Accelerator", CL_DEVICE_TYPE_ACCELERATOR, "", 4, 1000, 1024,
          .bandwidth_gb_s = { 10, 10, 10, 10, 10 }, .grid_factor = 1, .fp32_gflops = 100, .pinned_gb_s = 1,
          .pageable_gb_s = 1 },
};

static struct _cl_icd_dispatch dispatch;
static struct _cl_platform_id platform = { &dispatch };
static struct _cl_device_id devices[N_DEVICES];

const char *fake_mode(void) {
        const char *m = getenv("FAKE_OPENCL_ICD_MODE");
        return m && *m ? m : "gpus";
}

cl_int fake_answer(const void *value, size_t size, size_t param_value_size, void *param_value,
                   size_t *param_value_size_ret) {
        if (param_value) {
                if (param_value_size < size)
                        return CL_INVALID_VALUE;
                memcpy(param_value, value, size);
        }
        if (param_value_size_ret)
                *param_value_size_ret = size;
        return CL_SUCCESS;
}

#define ANSWER_STRING(s) fake_answer((s), strlen(s) + 1, param_value_size, param_value, param_value_size_ret)
#define ANSWER(v) fake_answer(&(v), sizeof(v), param_value_size, param_value, param_value_size_ret)

static cl_int CL_API_CALL fake_get_platform_info(cl_platform_id p, cl_platform_info param_name,
                                                 size_t param_value_size, void *param_value,
                                                 size_t *param_value_size_ret) {
        if (p != &platform)
                return CL_INVALID_PLATFORM;
        switch (param_name) {
        case CL_PLATFORM_NAME:
                return ANSWER_STRING("linkprobe fake ICD");
        case CL_PLATFORM_VENDOR:
                return ANSWER_STRING("linkprobe tests");
        case CL_PLATFORM_VERSION:
                return ANSWER_STRING("OpenCL 1.2 fake");
        case CL_PLATFORM_PROFILE:
                return ANSWER_STRING("FULL_PROFILE");
        case CL_PLATFORM_EXTENSIONS:
                return ANSWER_STRING("cl_khr_icd");
        case CL_PLATFORM_ICD_SUFFIX_KHR:
                return ANSWER_STRING("FAKE");
        default:
                return CL_INVALID_VALUE;
        }
}

static cl_int CL_API_CALL fake_get_device_ids(cl_platform_id p, cl_device_type type, cl_uint num_entries,
                                              cl_device_id *out, cl_uint *num_devices) {
        cl_uint n = 0;

        if (p != &platform)
                return CL_INVALID_PLATFORM;
        if (strcmp(fake_mode(), "hang") == 0)
                for (;;)
                        pause();
        if (strcmp(fake_mode(), "device-ids-fail") == 0)
                return CL_OUT_OF_HOST_MEMORY;
        for (int i = 0; i < N_DEVICES; i++) {
                if (!(fake_devices[i].type & type) && type != CL_DEVICE_TYPE_ALL)
                        continue;
                if (out && n < num_entries)
                        out[n] = &devices[i];
                n++;
        }
        if (num_devices)
                *num_devices = n;
        return n > 0 ? CL_SUCCESS : CL_DEVICE_NOT_FOUND;
}

static cl_int CL_API_CALL fake_get_device_info(cl_device_id d, cl_device_info param_name,
                                               size_t param_value_size, void *param_value,
                                               size_t *param_value_size_ret) {
        const FakeDevice *f;
        cl_ulong ul;
        cl_uint u;
        cl_bool b;
        size_t z;

        if (!d || d < devices || d >= devices + N_DEVICES)
                return CL_INVALID_DEVICE;
        f = &fake_devices[d->index];

        switch (param_name) {
        case CL_DEVICE_NAME:
                return ANSWER_STRING(f->name);
        case CL_DEVICE_VENDOR:
                return ANSWER_STRING("linkprobe tests");
        case CL_DRIVER_VERSION:
                return ANSWER_STRING("1.0-fake");
        case CL_DEVICE_VERSION:
                return ANSWER_STRING("OpenCL 1.2 fake");
        case CL_DEVICE_OPENCL_C_VERSION:
                return ANSWER_STRING("OpenCL C 1.2 fake");
        case CL_DEVICE_EXTENSIONS:
                return ANSWER_STRING(f->extensions);
        case CL_DEVICE_TYPE:
                return ANSWER(f->type);
        case CL_DEVICE_GLOBAL_MEM_SIZE:
                ul = (cl_ulong) 16 << 30;
                return ANSWER(ul);
        case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
                ul = (cl_ulong) 4 << 30;
                return ANSWER(ul);
        case CL_DEVICE_LOCAL_MEM_SIZE:
                ul = 64 << 10;
                return ANSWER(ul);
        case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
                ul = 40 << 20;
                return ANSWER(ul);
        case CL_DEVICE_SINGLE_FP_CONFIG:
                ul = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA;
                return ANSWER(ul);
        case CL_DEVICE_HALF_FP_CONFIG:
                if (!strstr(f->extensions, "cl_khr_fp16"))
                        return CL_INVALID_VALUE;
                ul = CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA;
                return ANSWER(ul);
        case CL_DEVICE_VENDOR_ID:
                u = 0x1234;
                return ANSWER(u);
        case CL_DEVICE_MAX_COMPUTE_UNITS:
                if (strcmp(fake_mode(), "query-fail") == 0 && d->index == 1)
                        return CL_INVALID_VALUE;
                return ANSWER(f->compute_units);
        case CL_DEVICE_MAX_CLOCK_FREQUENCY:
                return ANSWER(f->clock_mhz);
        case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR:
        case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT:
        case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT:
        case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG:
        case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT:
        case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE:
        case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR:
        case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT:
        case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT:
        case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG:
        case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT:
        case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE:
                u = 1;
                return ANSWER(u);
        case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF:
        case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF:
                u = strstr(f->extensions, "cl_khr_fp16") ? 2 : 0;
                return ANSWER(u);
        case CL_DEVICE_AVAILABLE:
                b = CL_TRUE;
                return ANSWER(b);
        case CL_DEVICE_HOST_UNIFIED_MEMORY:
                b = CL_FALSE;
                return ANSWER(b);
        case CL_DEVICE_MAX_WORK_GROUP_SIZE:
                z = f->max_work_group;
                return ANSWER(z);
        case CL_DEVICE_UUID_KHR: {
                static const cl_uchar uuid[CL_UUID_SIZE_KHR] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                                                                 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb,
                                                                 0xcc, 0xdd, 0xee, 0xff };
                if (!strstr(f->extensions, "cl_khr_device_uuid"))
                        return CL_INVALID_VALUE;
                return fake_answer(uuid, sizeof(uuid), param_value_size, param_value, param_value_size_ret);
        }
        case CL_DEVICE_PCI_BUS_INFO_KHR: {
                cl_device_pci_bus_info_khr info = {
                        .pci_domain = 1, .pci_bus = 0x65, .pci_device = 0x1f, .pci_function = 0
                };
                if (!strstr(f->extensions, "cl_khr_pci_bus_info"))
                        return CL_INVALID_VALUE;
                return ANSWER(info);
        }
        case CL_DEVICE_TOPOLOGY_AMD: {
                cl_device_topology_amd topo;
                if (!strstr(f->extensions, "cl_amd_device_attribute_query"))
                        return CL_INVALID_VALUE;
                memset(&topo, 0, sizeof(topo));
                topo.pcie.type = CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
                topo.pcie.bus = (cl_char) 0x83; /* above 0x7f: negative in the signed field */
                topo.pcie.device = 0;
                topo.pcie.function = 1;
                return ANSWER(topo);
        }
        case 0x4008: /* CL_DEVICE_PCI_BUS_ID_NV */
        case 0x4009: /* CL_DEVICE_PCI_SLOT_ID_NV */
        case 0x400A: /* CL_DEVICE_PCI_DOMAIN_ID_NV */
                if (!strstr(f->extensions, "cl_nv_device_attribute_query"))
                        return CL_INVALID_VALUE;
                u = param_name == 0x4008 ? 0x17 : param_name == 0x4009 ? (3u << 3) | 0u : 2;
                return ANSWER(u);
        default:
                return CL_INVALID_VALUE;
        }
}

static cl_context CL_API_CALL fake_create_context(const cl_context_properties *properties,
                                                  cl_uint num_devices, const cl_device_id *devs,
                                                  void(CL_CALLBACK *notify)(const char *, const void *,
                                                                            size_t, void *),
                                                  void *user_data, cl_int *errcode_ret) {
        const char *e = getenv("FAKE_OPENCL_ICD_CONTEXT_ERROR");
        if (errcode_ret)
                *errcode_ret = e && *e ? atoi(e) : CL_OUT_OF_RESOURCES;
        return NULL;
}

static void *find_function(const char *name);

EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                 cl_uint *num_platforms) {
        if (!dispatch.clGetPlatformInfo) {
                dispatch.clGetPlatformInfo = fake_get_platform_info;
                dispatch.clGetDeviceIDs = fake_get_device_ids;
                dispatch.clGetDeviceInfo = fake_get_device_info;
                dispatch.clCreateContext = fake_create_context;
                dispatch.clGetExtensionFunctionAddress = find_function;
                if (strcmp(fake_mode(), "measure") == 0)
                        fake_runtime_install(&dispatch);
                for (int i = 0; i < N_DEVICES; i++)
                        devices[i] = (struct _cl_device_id) { &dispatch, i };
        }
        if (num_entries == 0 && platforms)
                return CL_INVALID_VALUE;
        if (platforms)
                platforms[0] = &platform;
        if (num_platforms)
                *num_platforms = 1;
        return CL_SUCCESS;
}

EXPORT cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p, cl_platform_info param_name,
                                            size_t param_value_size, void *param_value,
                                            size_t *param_value_size_ret) {
        return fake_get_platform_info(p, param_name, param_value_size, param_value, param_value_size_ret);
}

static void *find_function(const char *name) {
        if (strcmp(name, "clIcdGetPlatformIDsKHR") == 0)
                return (void *) clIcdGetPlatformIDsKHR;
        if (strcmp(name, "clGetPlatformInfo") == 0)
                return (void *) clGetPlatformInfo;
        return NULL;
}

EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *name) {
        return find_function(name);
}
