/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fake OpenCL ICD for linkprobe-probe-gpu's tests: one platform whose devices answer the queries the
 * probe makes with values no machine here has (UUIDs, PCI addresses through the KHR, AMD and NVIDIA
 * extensions, fp16, duplicate names), and whose failures are chosen by the test. ocl-icd loads it from
 * an .icd file in $OCL_ICD_VENDORS like any vendor's driver. Built by the test with
 *   cc -shared -fPIC -o libfake-opencl-icd.so fake-opencl-icd.c
 *
 * $FAKE_OPENCL_ICD_MODE:
 *   gpus             five devices (default)
 *   device-ids-fail  clGetDeviceIDs() answers CL_OUT_OF_HOST_MEMORY
 *   query-fail       device 1 answers CL_INVALID_VALUE for CL_DEVICE_MAX_COMPUTE_UNITS
 *   hang             clGetDeviceIDs() never returns (a wedged driver)
 * $FAKE_OPENCL_ICD_CONTEXT_ERROR: what clCreateContext() fails with (default CL_OUT_OF_RESOURCES).
 */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define N_DEVICES 5

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
} FakeDevice;

static const FakeDevice fake_devices[N_DEVICES] = {
        { "Fake GPU KHR", CL_DEVICE_TYPE_GPU, "cl_khr_fp16 cl_khr_device_uuid cl_khr_pci_bus_info", 108,
          1410 },
        { "Fake GPU AMD", CL_DEVICE_TYPE_GPU, "cl_amd_device_attribute_query", 120, 2100 },
        { "Fake GPU NV", CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT, "cl_nv_device_attribute_query", 132,
          1980 },
        { "Fake Accelerator", CL_DEVICE_TYPE_ACCELERATOR, "", 4, 1000 },
        { "Fake Accelerator", CL_DEVICE_TYPE_ACCELERATOR, "", 4, 1000 },
};

static struct _cl_icd_dispatch dispatch;
static struct _cl_platform_id platform = { &dispatch };
static struct _cl_device_id devices[N_DEVICES];

static const char *mode(void) {
        const char *m = getenv("FAKE_OPENCL_ICD_MODE");
        return m && *m ? m : "gpus";
}

static cl_int answer(const void *value, size_t size, size_t param_value_size, void *param_value,
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

#define ANSWER_STRING(s) answer((s), strlen(s) + 1, param_value_size, param_value, param_value_size_ret)
#define ANSWER(v) answer(&(v), sizeof(v), param_value_size, param_value, param_value_size_ret)

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
        if (strcmp(mode(), "hang") == 0)
                for (;;)
                        pause();
        if (strcmp(mode(), "device-ids-fail") == 0)
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
                if (strcmp(mode(), "query-fail") == 0 && d->index == 1)
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
                z = 1024;
                return ANSWER(z);
        case CL_DEVICE_UUID_KHR: {
                static const cl_uchar uuid[CL_UUID_SIZE_KHR] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                                                                 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb,
                                                                 0xcc, 0xdd, 0xee, 0xff };
                if (!strstr(f->extensions, "cl_khr_device_uuid"))
                        return CL_INVALID_VALUE;
                return answer(uuid, sizeof(uuid), param_value_size, param_value, param_value_size_ret);
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
