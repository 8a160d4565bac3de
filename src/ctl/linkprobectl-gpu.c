/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl gpu / probe gpu: OpenCL devices, their inventory and measured throughput. */
#include "linkprobectl.h"
#include "shared/bus-error.h"
#include "shared/time-util.h"

#define PROBE_TIMEOUT_DEFAULT_USEC (300 * USEC_PER_SEC)

static bool gpu_measured(json_object *g) {
        return ctl_timestamp_usec(g, "MeasuredAt") > 0;
}

static char *format_tflops(json_object *g, const char *key, json_object *v) {
        /* Fp16Tflops is NaN on the bus for "unsupported", which JSON can only carry as null. */
        if (json_object_object_get_ex(g, key, NULL) && !v)
                return strdup("unsupported");
        return gpu_measured(g) ? ctl_format_value(g, key, v) : NULL;
}

static char *format_measured_value(json_object *g, const char *key, json_object *v) {
        return gpu_measured(g) ? ctl_format_value(g, key, v) : NULL;
}

static char *format_state(json_object *g, const char *key, json_object *v) {
        return ctl_strdupf("%s%s", json_string_or(g, "ProbeState", "?"), json_bool_or(g, "Stale", false) ? " (stale)" : "");
}

/* At 80 columns the figures, the name and the state stay; clock, compute units and memory (what the
 * device is rather than what it did) give way first. */
static const CtlColumn gpu_columns[] = {
        { ">N", "Index", NULL, NULL },
        { "NAME", "Name", NULL, NULL, { .min_width = 12 } },
        { "TYPE", "DeviceType", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 2 } },
        { ">CU", "ComputeUnits", NULL, NULL, { .optional = 4 } },
        { ">CLOCK", "ClockMHz", NULL, NULL, { .optional = 5 } },
        { ">MEMORY", "GlobalMemoryBytes", NULL, NULL, { .optional = 3 } },
        { ">FP32", "Fp32Tflops", format_tflops, NULL },
        { ">FP16", "Fp16Tflops", format_tflops, NULL, { .optional = 1 } },
        { ">BANDWIDTH", "MemoryBandwidthGBps", format_measured_value, NULL },
        { "STATE", "ProbeState", format_state, ctl_colour_state, { .min_width = TEXT_WIDTH_WHOLE } },
        { "MEASURED", "MeasuredAt", ctl_format_age, ctl_colour_stale, { .min_width = TEXT_WIDTH_WHOLE } },
};

/* The last run's error when the table is printed with it: the devices that only repeat it are not
 * listed under the table, so it is said once. */
static const char *gpu_run_error;

/* Each device's last error under the table, unless it is the whole run's. */
static void gpu_notes(json_object *gpus, FILE *f) {
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                const char *error = json_string_or(g, "LastError", "");
                if (!isempty(error) && !streq(error, strempty(gpu_run_error))) {
                        _cleanup_(freep) char *escaped = escape_for_terminal(error);
                        fprintf(f, "GPU %" PRId64 ": %s\n", json_int_or(g, "Index", 0), strna(escaped));
                }
        }
}

/* An OpenCL runtime for the CPU (PoCL) lists the CPU as a device: where any device is not a GPU, they
 * are compute devices, counted by their TYPE. */
static char *gpu_footer(json_object *gpus) {
        static const char *const types[] = { "gpu", "cpu", "accelerator", "other" };
        size_t n = json_object_array_length(gpus), count[ELEMENTSOF(types)] = {}, len = 0;
        char by_type[ELEMENTSOF(types) * 40] = ""; /* four "N type, " of at most 35 bytes: never cut */

        for (size_t i = 0; i < n; i++) {
                const char *type = json_string_or(json_object_array_get_idx(gpus, i), "DeviceType", "");
                size_t t = 0;
                while (t < ELEMENTSOF(types) - 1 && !streq(type, types[t]))
                        t++;
                count[t]++;
        }
        if (count[0] == n)
                return NULL; /* "N GPUs listed." */
        for (size_t t = 0; t < ELEMENTSOF(types); t++)
                if (count[t] > 0)
                        len += snprintf(by_type + len, sizeof(by_type) - len, "%s%zu %s", len > 0 ? ", " : "",
                                        count[t], types[t]);
        return ctl_strdupf("%zu compute device%s listed (%s)", n, n == 1 ? "" : "s", by_type);
}

static const CtlTableView gpu_table = {
        .columns = gpu_columns,
        .n_columns = ELEMENTSOF(gpu_columns),
        .noun = "GPU",
        .nouns = "GPUs",
        .empty = "No GPUs (no OpenCL device found, or GPU probing is off).",
        .footer = gpu_footer,
        .notes = gpu_notes,
};

/* Manager.GpuProbeError: why the last run failed as a whole, "" when it did not. */
static int read_probe_error(sd_bus *bus, char **ret) {
        _cleanup_(json_object_putp) json_object *manager = NULL;
        int r;

        r = ctl_get_root_interface(bus, "Manager", false, &manager);
        if (r != 0)
                return r;
        *ret = strdup(json_string_or(manager, "GpuProbeError", ""));
        return *ret ? 0 : log_oom_ctl();
}

/* The GPUs as gpu prints them. With no device because the probe could not run, "No GPUs" would be a
 * lie: that is said instead, and is a failure. call_error: why ProbeGpus() failed, when it did (probe
 * gpu); the run's error is then the command's own, said once on stderr. */
static int output_gpus(sd_bus *bus, json_object *gpus, const char *call_error, bool *ret_failed) {
        _cleanup_(freep) char *probe_error = NULL, *escaped = NULL;
        const char *run_error;
        int r;

        r = read_probe_error(bus, &probe_error);
        if (r != 0)
                return r;
        /* A run that failed and one that succeeded since: the call's own answer is all there is. */
        run_error = !isempty(probe_error) ? probe_error : call_error;
        escaped = run_error ? escape_for_terminal(run_error) : NULL;
        if (json_object_array_length(gpus) == 0 && !isempty(run_error)) {
                r = arg_json != JSON_OFF ? ctl_output_json(gpus) : 0;
                fprintf(stderr, "The GPU probe could not run, so nothing is known about GPUs: %s\n", strna(escaped));
                *ret_failed = true;
                return r;
        }
        gpu_run_error = run_error;
        r = ctl_output_table(gpus, &gpu_table);
        gpu_run_error = NULL;
        if (r != 0 || isempty(run_error))
                return r;
        if (call_error)
                fprintf(stderr, "The GPU probe failed: %s\n", strna(escaped));
        else if (arg_json == JSON_OFF)
                printf("The last GPU probe run failed: %s\n", strna(escaped));
        return r;
}

int verb_gpu(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *gpus = NULL;
        bool failed = false;
        int r;

        r = ctl_get_children(bus, "Gpu", &gpus);
        if (r != 0)
                return r;
        r = output_gpus(bus, gpus, NULL, &failed);
        return r != 0 ? r : failed ? CTL_EXIT_FAILURE : 0;
}

int verb_probe_gpu(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(json_object_putp) json_object *gpus = NULL;
        _cleanup_(freep) char *call_error = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        uint64_t timeout = arg_timeout_usec ?: PROBE_TIMEOUT_DEFAULT_USEC;
        bool failed = false;
        int r;

        /* ProbeGpus() answers when the measuring run is over, so the call's timeout is the wait. */
        r = sd_bus_message_new_method_call(bus, &call, BUS_NAME, BUS_PATH, MANAGER_INTERFACE, "ProbeGpus");
        if (r >= 0)
                r = sd_bus_call(bus, call, timeout, &error, &reply);
        if (r < 0) {
                if (!sd_bus_error_has_name(&error, BUS_ERROR_FAILED)) {
                        if (sd_bus_error_has_name(&error, SD_BUS_ERROR_NO_REPLY) || r == -ETIMEDOUT)
                                fprintf(stderr, "No result within %" PRIu64 " s (see --timeout=).\n",
                                        timeout / USEC_PER_SEC);
                        else
                                ctl_log_bus_error(r, &error, "GPU probe");
                        sd_bus_error_free(&error);
                        return CTL_EXIT_FAILURE;
                }
                /* The run failed: the objects say how, and the error is said with them, once. */
                call_error = strdup(error.message ?: error.name);
                failed = true;
        }
        sd_bus_error_free(&error);
        if (failed && !call_error)
                return log_oom_ctl();

        r = ctl_get_children(bus, "Gpu", &gpus);
        if (r != 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(gpus); i++)
                if (!streq(json_string_or(json_object_array_get_idx(gpus, i), "ProbeState", ""), "ok"))
                        failed = true;
        r = output_gpus(bus, gpus, call_error, &failed);
        return r != 0 || failed ? CTL_EXIT_FAILURE : 0;
}
