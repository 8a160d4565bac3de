/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-cl.h — OpenCL plumbing for the GPU probe: error names, info queries, program builds */
#pragma once

/* OpenCL 1.2 is what every ICD still in use implements; newer entry points are not needed. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "shared/macros.h"

/*
 * A failure as the probe reports it: a stable name ("CL_OUT_OF_RESOURCES", "ENOMEM", ...) and a
 * message for people. Functions that fill one return a negative errno (-EIO for OpenCL errors).
 */
typedef struct GpuError {
        char name[64];
        char message[3072];
} GpuError;

int gpu_error_set(GpuError *e, int errno_value, const char *name, const char *format, ...) _printf_(4, 5);
/* Names the OpenCL error code and prefixes the message with the call that failed. Returns -EIO. */
int gpu_error_cl(GpuError *e, cl_int code, const char *format, ...) _printf_(3, 4);

/**
 * cl_error_name() - the symbolic name of an OpenCL error code
 * @code: the value an OpenCL call returned
 * @buf: scratch space for codes no header knows, which become "CL_ERROR_<code>"
 *
 * Covers the core codes of OpenCL 1.0-3.0 and the extension codes in the Khronos headers.
 * Returns a static string or @buf.
 */
const char *cl_error_name(cl_int code, char buf[static 32]);

/* Queries that allocate: *ret is a NUL-terminated copy, written only on CL_SUCCESS. */
cl_int cl_platform_get_string(cl_platform_id p, cl_platform_info param, char **ret);
cl_int cl_device_get_string(cl_device_id d, cl_device_info param, char **ret);
cl_int cl_device_get_uint(cl_device_id d, cl_device_info param, cl_uint *ret);
cl_int cl_device_get_ulong(cl_device_id d, cl_device_info param, cl_ulong *ret);
cl_int cl_device_get_size(cl_device_id d, cl_device_info param, size_t *ret);
cl_int cl_device_get_bool(cl_device_id d, cl_device_info param, bool *ret);

/* True when the space-separated extension list names ext exactly. */
bool cl_extensions_have(const char *extensions, const char *ext);

/**
 * cl_program_build() - compiles OpenCL C source for one device
 * @context: the context of @device
 * @device: the device to build for
 * @source: the OpenCL C source
 * @options: compiler options (may be NULL)
 * @ret: the built program, written only on success
 * @e: filled on failure; a CL_BUILD_PROGRAM_FAILURE carries the build log in its message
 *
 * Returns 0 or a negative errno.
 */
int cl_program_build(cl_context context, cl_device_id device, const char *source, const char *options,
                     cl_program *ret, GpuError *e);

/* Cleanup helpers for _cleanup_(): each takes a pointer to the handle and accepts NULL handles. */
static inline void cl_context_releasep(cl_context *c) {
        if (*c)
                clReleaseContext(*c);
}
static inline void cl_queue_releasep(cl_command_queue *q) {
        if (*q)
                clReleaseCommandQueue(*q);
}
static inline void cl_program_releasep(cl_program *p) {
        if (*p)
                clReleaseProgram(*p);
}
static inline void cl_kernel_releasep(cl_kernel *k) {
        if (*k)
                clReleaseKernel(*k);
}
static inline void cl_mem_releasep(cl_mem *m) {
        if (*m)
                clReleaseMemObject(*m);
}
static inline void cl_event_releasep(cl_event *ev) {
        if (*ev)
                clReleaseEvent(*ev);
}
