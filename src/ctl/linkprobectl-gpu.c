/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl gpu / probe gpu: OpenCL devices, their inventory and measured throughput. */
#include "linkprobectl.h"
#include "shared/bus-error.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

#define PROBE_TIMEOUT_DEFAULT_USEC (300 * USEC_PER_SEC)

/* Fp16Tflops is NaN on the bus for "unsupported", which JSON can only carry as null. */
static bool json_is_null_member(json_object *o, const char *key) {
        json_object *v;
        return json_object_object_get_ex(o, key, &v) && !v;
}

static bool gpu_measured(json_object *g) {
        return json_int_or(g, "MeasuredAt", 0) > 0;
}

static const char *format_tflops(char buf[static 32], json_object *g, const char *key) {
        if (json_is_null_member(g, key))
                return "unsupported";
        if (!gpu_measured(g))
                return "-";
        double v = json_double_or(g, key, 0);
        snprintf(buf, 32, v < 10 ? "%.3f TFLOPS" : "%.1f TFLOPS", v);
        return buf;
}

/* Prints gpus (an array of Gpu property objects) as a table, then the errors. Returns the number of
 * devices whose last attempt did not succeed. */
static int print_gpus(json_object *gpus) {
        _cleanup_(text_table_freep) TextTable *t = NULL;
        size_t n = json_object_array_length(gpus);
        int not_ok = 0;

        t = text_table_new(">N", "NAME", "TYPE", ">CU", ">CLOCK", ">MEMORY", ">FP32", ">FP16", ">BANDWIDTH", "STATE",
                           "MEASURED", NULL);
        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                char index[16], cu[16], clock[24], memory[32], fp32[32], fp16[32], bandwidth[32], state[48], age[32];

                snprintf(index, sizeof(index), "%" PRId64, json_int_or(g, "Index", 0));
                snprintf(cu, sizeof(cu), "%" PRId64, json_int_or(g, "ComputeUnits", 0));
                snprintf(clock, sizeof(clock), "%" PRId64 " MHz", json_int_or(g, "ClockMHz", 0));
                format_bytes(memory, (uint64_t) json_int_or(g, "GlobalMemoryBytes", 0));
                if (gpu_measured(g))
                        snprintf(bandwidth, sizeof(bandwidth), "%.1f GB/s", json_double_or(g, "MemoryBandwidthGBps", 0));
                else
                        snprintf(bandwidth, sizeof(bandwidth), "-");
                const char *probe_state = json_string_or(g, "ProbeState", "?");
                snprintf(state, sizeof(state), "%s%s", probe_state, json_bool_or(g, "Stale", false) ? " (stale)" : "");
                if (!streq(probe_state, "ok"))
                        not_ok++;

                if (text_table_add_row(t, index, json_string_or(g, "Name", NULL), json_string_or(g, "DeviceType", NULL),
                                       cu, clock, memory, format_tflops(fp32, g, "Fp32Tflops"),
                                       format_tflops(fp16, g, "Fp16Tflops"), bandwidth, state,
                                       format_age(age, (uint64_t) json_int_or(g, "MeasuredAt", 0), "-")) < 0)
                        return -ENOMEM;
        }
        text_table_print(t, stdout, arg_legend);
        for (size_t i = 0; i < n; i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                const char *error = json_string_or(g, "LastError", "");
                if (!isempty(error)) {
                        _cleanup_(freep) char *escaped = escape_for_terminal(error);
                        printf("GPU %" PRId64 ": %s\n", json_int_or(g, "Index", 0), strna(escaped));
                }
        }
        if (arg_legend)
                printf("\n%zu GPUs listed.\n", n);
        return not_ok;
}

int verb_gpu(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *gpus = NULL;
        int r;

        r = ctl_get_children(bus, "Gpu", &gpus);
        if (r != 0)
                return r;
        if (arg_json)
                return ctl_print_json(gpus);
        if (json_object_array_length(gpus) == 0) {
                printf("No GPUs (no OpenCL device found, or GPU probing is off).\n");
                return 0;
        }
        return print_gpus(gpus) < 0 ? CTL_EXIT_FAILURE : 0;
}

int verb_probe_gpu(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(json_object_putp) json_object *gpus = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        uint64_t timeout = arg_timeout_usec ?: PROBE_TIMEOUT_DEFAULT_USEC;
        int r, failed = 0;

        /* ProbeGpus() answers when the measuring run is over, so the call's timeout is the wait. */
        r = sd_bus_message_new_method_call(bus, &call, BUS_NAME, BUS_PATH, IFACE_PREFIX "Manager", "ProbeGpus");
        if (r >= 0)
                r = sd_bus_call(bus, call, timeout, &error, &reply);
        if (r < 0) {
                if (sd_bus_error_has_name(&error, SD_BUS_ERROR_NO_REPLY) || r == -ETIMEDOUT)
                        fprintf(stderr, "No result within %" PRIu64 " s (see --timeout=).\n", timeout / USEC_PER_SEC);
                else
                        ctl_log_bus_error(r, &error, "GPU probe");
                failed = 1;
                if (!sd_bus_error_has_name(&error, BUS_ERROR_FAILED)) {
                        sd_bus_error_free(&error);
                        return CTL_EXIT_FAILURE;
                }
                /* The run failed: the objects say how, print them too. */
        }
        sd_bus_error_free(&error);

        r = ctl_get_children(bus, "Gpu", &gpus);
        if (r != 0)
                return r;
        if (arg_json) {
                for (size_t i = 0; i < json_object_array_length(gpus); i++)
                        if (!streq(json_string_or(json_object_array_get_idx(gpus, i), "ProbeState", ""), "ok"))
                                failed = 1;
                return ctl_print_json(gpus) != 0 || failed ? CTL_EXIT_FAILURE : 0;
        }
        if (json_object_array_length(gpus) == 0) {
                printf("No GPUs found.\n");
                return failed ? CTL_EXIT_FAILURE : 0;
        }
        r = print_gpus(gpus);
        return r != 0 || failed ? CTL_EXIT_FAILURE : 0;
}
