/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>

#include "probe-gpu-json.h"
#include "probe-gpu-kernels.h"
#include "probe-gpu-measure.h"
#include "probe-gpu-session.h"
#include "shared/time-util.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)


static const Plan plan_full = {
        .warmup_first_usec = 300 * USEC_PER_MSEC,
        .warmup_usec = 150 * USEC_PER_MSEC,
        .launch_usec = 20 * USEC_PER_MSEC,
        .runs = 15,
        .buffer_min = 256 * MIB,
        .buffer_max = 1 * GIB,
        .default_budget_usec = 20 * USEC_PER_SEC,
};

static const Plan plan_quick = {
        .warmup_first_usec = 30 * USEC_PER_MSEC,
        .warmup_usec = 20 * USEC_PER_MSEC,
        .launch_usec = 2 * USEC_PER_MSEC,
        .runs = 3,
        .buffer_min = 64 * MIB,
        .buffer_max = 64 * MIB,
        .default_budget_usec = 5 * USEC_PER_SEC,
};


static int measure_fma(Session *s, const char *kernel_name, const char *test_name, unsigned width,
                       json_object *j, TestFigures *ret, GpuError *e) {
        _cleanup_(cl_kernel_releasep) cl_kernel k = NULL;
        _cleanup_(cl_mem_releasep) cl_mem out = NULL;
        const GpuDevice *d = s->device;
        cl_float a = 0.999f, b = 0.001f;
        size_t local;
        cl_int err;
        int r;

        r = session_kernel(s, s->program, kernel_name, &k, &local, e);
        if (r < 0)
                return r;

        /* Enough work-groups to fill every compute unit several times over: on a CPU each group is a
         * task for a worker thread; on a GPU 2048 work-items per compute unit keep every scheduler busy. */
        size_t per_cu = d->type & CL_DEVICE_TYPE_CPU ? 8 * local : 2048;
        size_t global = (MAX((size_t) d->compute_units, (size_t) 1) * per_cu + local - 1) / local * local;

        out = clCreateBuffer(s->context, CL_MEM_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS,
                             global * sizeof(cl_float), NULL, &err);
        if (!out)
                return gpu_error_cl(e, err, "clCreateBuffer(%zu bytes)", global * sizeof(cl_float));
        r = kernel_set_arg(k, 0, sizeof(out), &out, kernel_name, e);
        if (r >= 0)
                r = kernel_set_arg(k, 1, sizeof(a), &a, kernel_name, e);
        if (r >= 0)
                r = kernel_set_arg(k, 2, sizeof(b), &b, kernel_name, e);
        if (r < 0)
                return r;

        Test t = {
                .name = test_name,
                .kernel = k,
                .global = global,
                .local = local,
                .work = (double) global * s->config.chains * width * 2, /* an FMA is two operations */
                .calibrated = true,
        };
        /* First guess from what the device could do at most (two FMA pipes per lane); the warm-up
         * corrects it within a launch or two. */
        double peak = (double) d->max_clock_mhz * 1e6 * MAX(d->compute_units, 1u) *
                      MAX(d->native_vector_width[GPU_SCALAR_FLOAT], 1u) * 4;
        r = test_set_iterations(&t, (double) s->plan->launch_usec * 1e-6 * peak / t.work / 8, e);
        if (r < 0)
                return r;
        r = test_run(s, &t, "GFLOPS", j, ret, e);
        if (r < 0)
                return r;

        json_object_object_add(j, "instruction", json_object_new_string(s->config.use_fma ? "fma" : "mad"));
        json_object_object_add(j, "vector_width", json_object_new_int((int) width));
        json_object_object_add(j, "chains_per_work_item", json_object_new_int((int) s->config.chains));
        json_object_object_add(j, "iterations", json_object_new_int64(t.iterations));
        json_object_object_add(j, "flops_per_run", json_object_new_uint64((uint64_t) test_work(&t)));
        return 0;
}

static int session_open(Session *s, GpuError *e) {
        const GpuDevice *d = s->device;
        cl_context_properties props[] = { CL_CONTEXT_PLATFORM, (cl_context_properties) d->platform, 0 };
        char options[256];
        cl_int err;
        int r;

        s->context = clCreateContext(props, 1, &d->id, NULL, NULL, &err);
        if (!s->context)
                return gpu_error_cl(e, err, "clCreateContext()");
        s->queue = clCreateCommandQueue(s->context, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
        if (!s->queue)
                return gpu_error_cl(e, err, "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE)");

        gpu_kernel_config_for_device(d, &s->config);
        r = gpu_kernel_config_to_options(&s->config, options, sizeof(options));
        if (r < 0)
                return gpu_error_set(e, r, "ENOBUFS", "kernel options do not fit");
        return session_build(s, options, &s->program, e);
}

int gpu_device_measure(const GpuDevice *d, const GpuMeasureOptions *o, json_object **ret, GpuError *e) {
        _cleanup_(json_object_putp) json_object *m = json_object_new_object();
        json_object *bw = json_object_new_object(), *fp32 = json_object_new_object(),
                    *fp16 = json_object_new_object();
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        TestFigures bw_figures = {}, fp32_figures = {}, fp16_figures = {}, h2d = {}, d2h = {};
        int r;

        Session s = {
                .device = d,
                .host_cache = o->host_cache,
                .plan = o->quick ? &plan_quick : &plan_full,
                .warnings = json_object_new_array(),
        };
        s.deadline = start + (o->budget_usec > 0 ? o->budget_usec : s.plan->default_budget_usec);

        if (!m || !bw || !fp32 || !fp16 || !s.warnings) {
                json_object_put(bw);
                json_object_put(fp32);
                json_object_put(fp16);
                r = gpu_error_set(e, ENOMEM, "ENOMEM", "out of memory");
                goto finish;
        }
        /* "status" leads; it is set to "ok" again, in place, once everything has been measured. */
        json_object_object_add(m, "status", json_object_new_string("error"));
        json_object_object_add(m, "memory_bandwidth", bw);
        json_object_object_add(m, "fp32", fp32);
        json_object_object_add(m, "fp16", fp16);

        r = session_open(&s, e);
        if (r < 0)
                goto finish;

        s.tests_left = (d->fp16 ? 3 : 2) + 2; /* and the two directions of the transfer test */
        r = measure_bandwidth(&s, bw, &bw_figures, e);
        if (r < 0)
                goto finish;
        r = measure_fma(&s, "fp32_fma", "fp32", s.config.fp_vector, fp32, &fp32_figures, e);
        if (r < 0)
                goto finish;
        if (d->fp16) {
                r = measure_fma(&s, "fp16_fma", "fp16", s.config.half_vector, fp16, &fp16_figures, e);
                if (r < 0)
                        goto finish;
        } else {
                json_object_object_add(fp16, "status", json_object_new_string("unsupported"));
                json_object_object_add(fp16, "reason",
                                       json_object_new_string("the device does not report cl_khr_fp16"));
        }
        /* A copy that fails says nothing about the device's own figures: a warning, not an error. */
        GpuError transfer_error = {};
        if (measure_transfer(&s, m, &h2d, &d2h, &transfer_error) < 0) {
                h2d = d2h = (TestFigures) {};
                session_warn(&s, "host/device transfer: %s: %s", transfer_error.name, transfer_error.message);
                static const char *const directions[] = { "host_to_device", "device_to_host" };
                for (size_t k = 0; k < ELEMENTSOF(directions); k++) {
                        json_object *t;
                        if (json_object_object_get_ex(m, directions[k], &t) && !json_object_object_get_ex(t, "status", NULL)) {
                                json_object_object_add(t, "status", json_object_new_string("error"));
                                json_object_object_add(t, "error", json_error_new(transfer_error.name, transfer_error.message));
                        }
                }
        }
        if (s.host_timed)
                session_warn(&s, "the driver's profiling timestamps were unusable for some launches; host "
                                 "wall-clock time was used for those");

        json_object_object_add(m, "status", json_object_new_string("ok"));
        /* The best runs keep the names they had since version 1; the medians, which linkprobed
         * publishes as the figures, come beside them. */
        json_object_object_add(m, "memory_bandwidth_gb_s", json_double_rounded(bw_figures.best, 3));
        json_object_object_add(m, "fp32_gflops", json_double_rounded(fp32_figures.best, 3));
        json_object_object_add(m, "fp16_gflops",
                               d->fp16 ? json_double_rounded(fp16_figures.best, 3)
                                       : json_object_new_string("unsupported"));
        json_object_object_add(m, "memory_bandwidth_median_gb_s", json_double_rounded(bw_figures.median, 3));
        json_object_object_add(m, "fp32_median_gflops", json_double_rounded(fp32_figures.median, 3));
        json_object_object_add(m, "fp16_median_gflops",
                               d->fp16 ? json_double_rounded(fp16_figures.median, 3)
                                       : json_object_new_string("unsupported"));
        if (h2d.best > 0 && d2h.best > 0) {
                json_object_object_add(m, "host_to_device_gb_s", json_double_rounded(h2d.best, 3));
                json_object_object_add(m, "device_to_host_gb_s", json_double_rounded(d2h.best, 3));
                json_object_object_add(m, "host_to_device_median_gb_s", json_double_rounded(h2d.median, 3));
                json_object_object_add(m, "device_to_host_median_gb_s", json_double_rounded(d2h.median, 3));
        }
        json_object_object_add(m, "timing", json_object_new_string(s.host_timed ? "host" : "device"));
        json_object_object_add(m, "duration_ms",
                               json_double_rounded((double) (now_usec(CLOCK_MONOTONIC) - start) / 1e3, 1));
        json_object_object_add(m, "warnings", json_object_get(s.warnings));
        *ret = TAKE_PTR(m);
        r = 0;

finish:
        session_done(&s);
        return r;
}
