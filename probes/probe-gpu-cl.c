/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "probe-gpu-cl.h"

/* Literal values rather than the header macros, so an older opencl-headers still names every code a
 * newer ICD may return. Values from the Khronos cl.h and cl_ext.h (2023.02.06). */
static const struct {
        cl_int code;
        const char *name;
} cl_errors[] = {
        { 0, "CL_SUCCESS" },
        { -1, "CL_DEVICE_NOT_FOUND" },
        { -2, "CL_DEVICE_NOT_AVAILABLE" },
        { -3, "CL_COMPILER_NOT_AVAILABLE" },
        { -4, "CL_MEM_OBJECT_ALLOCATION_FAILURE" },
        { -5, "CL_OUT_OF_RESOURCES" },
        { -6, "CL_OUT_OF_HOST_MEMORY" },
        { -7, "CL_PROFILING_INFO_NOT_AVAILABLE" },
        { -8, "CL_MEM_COPY_OVERLAP" },
        { -9, "CL_IMAGE_FORMAT_MISMATCH" },
        { -10, "CL_IMAGE_FORMAT_NOT_SUPPORTED" },
        { -11, "CL_BUILD_PROGRAM_FAILURE" },
        { -12, "CL_MAP_FAILURE" },
        { -13, "CL_MISALIGNED_SUB_BUFFER_OFFSET" },
        { -14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" },
        { -15, "CL_COMPILE_PROGRAM_FAILURE" },
        { -16, "CL_LINKER_NOT_AVAILABLE" },
        { -17, "CL_LINK_PROGRAM_FAILURE" },
        { -18, "CL_DEVICE_PARTITION_FAILED" },
        { -19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE" },
        { -30, "CL_INVALID_VALUE" },
        { -31, "CL_INVALID_DEVICE_TYPE" },
        { -32, "CL_INVALID_PLATFORM" },
        { -33, "CL_INVALID_DEVICE" },
        { -34, "CL_INVALID_CONTEXT" },
        { -35, "CL_INVALID_QUEUE_PROPERTIES" },
        { -36, "CL_INVALID_COMMAND_QUEUE" },
        { -37, "CL_INVALID_HOST_PTR" },
        { -38, "CL_INVALID_MEM_OBJECT" },
        { -39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR" },
        { -40, "CL_INVALID_IMAGE_SIZE" },
        { -41, "CL_INVALID_SAMPLER" },
        { -42, "CL_INVALID_BINARY" },
        { -43, "CL_INVALID_BUILD_OPTIONS" },
        { -44, "CL_INVALID_PROGRAM" },
        { -45, "CL_INVALID_PROGRAM_EXECUTABLE" },
        { -46, "CL_INVALID_KERNEL_NAME" },
        { -47, "CL_INVALID_KERNEL_DEFINITION" },
        { -48, "CL_INVALID_KERNEL" },
        { -49, "CL_INVALID_ARG_INDEX" },
        { -50, "CL_INVALID_ARG_VALUE" },
        { -51, "CL_INVALID_ARG_SIZE" },
        { -52, "CL_INVALID_KERNEL_ARGS" },
        { -53, "CL_INVALID_WORK_DIMENSION" },
        { -54, "CL_INVALID_WORK_GROUP_SIZE" },
        { -55, "CL_INVALID_WORK_ITEM_SIZE" },
        { -56, "CL_INVALID_GLOBAL_OFFSET" },
        { -57, "CL_INVALID_EVENT_WAIT_LIST" },
        { -58, "CL_INVALID_EVENT" },
        { -59, "CL_INVALID_OPERATION" },
        { -60, "CL_INVALID_GL_OBJECT" },
        { -61, "CL_INVALID_BUFFER_SIZE" },
        { -62, "CL_INVALID_MIP_LEVEL" },
        { -63, "CL_INVALID_GLOBAL_WORK_SIZE" },
        { -64, "CL_INVALID_PROPERTY" },
        { -65, "CL_INVALID_IMAGE_DESCRIPTOR" },
        { -66, "CL_INVALID_COMPILER_OPTIONS" },
        { -67, "CL_INVALID_LINKER_OPTIONS" },
        { -68, "CL_INVALID_DEVICE_PARTITION_COUNT" },
        { -69, "CL_INVALID_PIPE_SIZE" },
        { -70, "CL_INVALID_DEVICE_QUEUE" },
        { -71, "CL_INVALID_SPEC_ID" },
        { -72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED" },
        { -1000, "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR" },
        { -1001, "CL_PLATFORM_NOT_FOUND_KHR" },
        { -1002, "CL_INVALID_D3D10_DEVICE_KHR" },
        { -1003, "CL_INVALID_D3D10_RESOURCE_KHR" },
        { -1004, "CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR" },
        { -1005, "CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR" },
        { -1006, "CL_INVALID_D3D11_DEVICE_KHR" },
        { -1007, "CL_INVALID_D3D11_RESOURCE_KHR" },
        { -1008, "CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR" },
        { -1009, "CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR" },
        { -1010, "CL_INVALID_DX9_MEDIA_ADAPTER_KHR" },
        { -1011, "CL_INVALID_DX9_MEDIA_SURFACE_KHR" },
        { -1012, "CL_DX9_MEDIA_SURFACE_ALREADY_ACQUIRED_KHR" },
        { -1013, "CL_DX9_MEDIA_SURFACE_NOT_ACQUIRED_KHR" },
        { -1057, "CL_DEVICE_PARTITION_FAILED_EXT" },
        { -1058, "CL_INVALID_PARTITION_COUNT_EXT" },
        { -1059, "CL_INVALID_PARTITION_NAME_EXT" },
        { -1092, "CL_EGL_RESOURCE_NOT_ACQUIRED_KHR" },
        { -1093, "CL_INVALID_EGL_OBJECT_KHR" },
        { -1094, "CL_INVALID_ACCELERATOR_INTEL" },
        { -1095, "CL_INVALID_ACCELERATOR_TYPE_INTEL" },
        { -1096, "CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL" },
        { -1097, "CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL" },
        { -1098, "CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL" },
        { -1099, "CL_INVALID_VA_API_MEDIA_SURFACE_INTEL" },
        { -1100, "CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL" },
        { -1101, "CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL" },
        { -1108, "CL_COMMAND_TERMINATED_ITSELF_WITH_FAILURE_ARM" },
        { -1121, "CL_CONTEXT_TERMINATED_KHR" },
        { -1138, "CL_INVALID_COMMAND_BUFFER_KHR" },
        { -1139, "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR" },
        { -1140, "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR" },
        { -1141, "CL_INVALID_MUTABLE_COMMAND_KHR" },
        { -1142, "CL_INVALID_SEMAPHORE_KHR" },
};

const char *cl_error_name(cl_int code, char buf[static 32]) {
        for (size_t i = 0; i < ELEMENTSOF(cl_errors); i++)
                if (cl_errors[i].code == code)
                        return cl_errors[i].name;
        snprintf(buf, 32, "CL_ERROR_%d", (int) code);
        return buf;
}

int gpu_error_set(GpuError *e, int errno_value, const char *name, const char *format, ...) {
        va_list ap;

        snprintf(e->name, sizeof(e->name), "%s", name);
        va_start(ap, format);
        vsnprintf(e->message, sizeof(e->message), format, ap);
        va_end(ap);
        return -abs(errno_value);
}

int gpu_error_cl(GpuError *e, cl_int code, const char *format, ...) {
        char buf[32];
        va_list ap;

        /* "CL_OUT_OF_RESOURCES from clEnqueueNDRangeKernel(fp32)": the name first, so a truncated
         * message (a long build log) still says what happened. */
        snprintf(e->name, sizeof(e->name), "%s", cl_error_name(code, buf));
        int n = snprintf(e->message, sizeof(e->message), "%s from ", e->name);
        va_start(ap, format);
        vsnprintf(e->message + n, sizeof(e->message) - n, format, ap);
        va_end(ap);
        return -EIO;
}

/* The two string queries differ only in the function; both size first, then fill. */
#define DEFINE_STRING_GETTER(fname, handle_type, info_type, query)        \
        cl_int fname(handle_type h, info_type param, char **ret) {        \
                size_t size = 0;                                          \
                cl_int err = query(h, param, 0, NULL, &size);             \
                if (err != CL_SUCCESS)                                    \
                        return err;                                       \
                _cleanup_(freep) char *s = calloc(size + 1, 1);           \
                if (!s)                                                   \
                        return CL_OUT_OF_HOST_MEMORY;                     \
                if (size > 0) {                                           \
                        err = query(h, param, size, s, NULL);             \
                        if (err != CL_SUCCESS)                            \
                                return err;                               \
                }                                                         \
                /* Some drivers pad names with spaces on either side. */  \
                for (size_t n = strlen(s); n > 0 && s[n - 1] == ' '; n--) \
                        s[n - 1] = '\0';                                  \
                size_t lead = strspn(s, " ");                             \
                memmove(s, s + lead, strlen(s + lead) + 1);               \
                *ret = TAKE_PTR(s);                                       \
                return CL_SUCCESS;                                        \
        }

DEFINE_STRING_GETTER(cl_platform_get_string, cl_platform_id, cl_platform_info, clGetPlatformInfo)
DEFINE_STRING_GETTER(cl_device_get_string, cl_device_id, cl_device_info, clGetDeviceInfo)

/* Fixed-size queries: a driver answering with a different size is treated as not answering. */
#define DEFINE_SCALAR_GETTER(fname, type)                                     \
        cl_int fname(cl_device_id d, cl_device_info param, type *ret) {       \
                type v = 0;                                                   \
                size_t size = 0;                                              \
                cl_int err = clGetDeviceInfo(d, param, sizeof(v), &v, &size); \
                if (err != CL_SUCCESS)                                        \
                        return err;                                           \
                if (size != sizeof(v))                                        \
                        return CL_INVALID_VALUE;                              \
                *ret = v;                                                     \
                return CL_SUCCESS;                                            \
        }

DEFINE_SCALAR_GETTER(cl_device_get_uint, cl_uint)
DEFINE_SCALAR_GETTER(cl_device_get_ulong, cl_ulong)
DEFINE_SCALAR_GETTER(cl_device_get_size, size_t)

cl_int cl_device_get_bool(cl_device_id d, cl_device_info param, bool *ret) {
        cl_bool v;
        cl_int err = cl_device_get_uint(d, param, &v);
        if (err == CL_SUCCESS)
                *ret = v != CL_FALSE;
        return err;
}

bool cl_extensions_have(const char *extensions, const char *ext) {
        size_t len = strlen(ext);

        if (!extensions || len == 0)
                return false;
        for (const char *p = extensions; (p = strstr(p, ext)); p += len) {
                bool starts = p == extensions || p[-1] == ' ';
                bool ends = p[len] == '\0' || p[len] == ' ';
                if (starts && ends)
                        return true;
        }
        return false;
}

#define BUILD_LOG_EXCERPT 480

int cl_program_build(cl_context context, cl_device_id device, const char *source, const char *options,
                     cl_program *ret, GpuError *e) {
        _cleanup_(cl_program_releasep) cl_program program = NULL;
        cl_int err;

        program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
        if (!program)
                return gpu_error_cl(e, err, "clCreateProgramWithSource()");

        err = clBuildProgram(program, 1, &device, options, NULL, NULL);
        if (err != CL_SUCCESS) {
                _cleanup_(freep) char *log = NULL;
                size_t size = 0;

                /* The log is what a person needs to see. Compilers report the root cause first and
                 * the document's message is bounded (probe-util keeps 1 KiB), so keep the head. */
                cl_int q = clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
                if (q == CL_SUCCESS && size > 1 && (log = calloc(size + 1, 1)))
                        q = clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
                if (q == CL_SUCCESS && log)
                        return gpu_error_cl(e, err, "clBuildProgram(%s); build log: %.*s%s",
                                            strempty(options), BUILD_LOG_EXCERPT, log,
                                            strlen(log) > BUILD_LOG_EXCERPT ? "..." : "");
                return gpu_error_cl(e, err, "clBuildProgram(%s) (no build log)", strempty(options));
        }

        *ret = TAKE_PTR(program);
        return 0;
}
