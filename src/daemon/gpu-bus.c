/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-access.h"
#include "bus-registry.h"
#include "bus-util.h"
#include "gpu-bus.h"
#include "gpu-prober.h"
#include "gpu.h"
#include "inhibit.h"
#include "manager.h"
#include "shared/bus-error.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/parse-util.h"

/* The probe counts in GFLOPS; the API in TFLOPS. NaN (FP16 unsupported) stays NaN. */
static int property_get_tflops(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        double *gflops = userdata;
        return sd_bus_message_append(reply, "d", *gflops / 1000.0);
}

BUS_DEFINE_PROPERTY_GET_ENUM(property_get_probe_state, GpuProbeState, gpu_probe_state_to_string)

static int property_get_warnings(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Gpu *g = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        if (g->measurement.measured_at_usec > 0 && g->measurement.quick) {
                r = sd_bus_message_append(reply, "s",
                                          "measured with Quick=yes: small buffers and few runs, rough figures");
                if (r < 0)
                        return r;
        }
        STRV_FOREACH(w, g->measurement.warnings) {
                r = sd_bus_message_append(reply, "s", *w);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

#define INVENTORY(field) offsetof(Gpu, inventory.field)
#define MEASUREMENT(field) offsetof(Gpu, measurement.field)
#define CHANGES SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static const sd_bus_vtable gpu_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Index", "u", NULL, offsetof(Gpu, number), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Key", "s", bus_property_get_string, INVENTORY(key), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Name", "s", bus_property_get_string, INVENTORY(name), CHANGES),
        SD_BUS_PROPERTY("Vendor", "s", bus_property_get_string, INVENTORY(vendor), CHANGES),
        SD_BUS_PROPERTY("VendorId", "u", NULL, INVENTORY(vendor_id), CHANGES),
        SD_BUS_PROPERTY("Platform", "s", bus_property_get_string, INVENTORY(platform), CHANGES),
        SD_BUS_PROPERTY("DeviceType", "s", bus_property_get_string, INVENTORY(device_type), CHANGES),
        SD_BUS_PROPERTY("Uuid", "s", bus_property_get_string, INVENTORY(uuid), CHANGES),
        SD_BUS_PROPERTY("PciBusId", "s", bus_property_get_string, INVENTORY(pci_bus_id), CHANGES),
        SD_BUS_PROPERTY("DriverVersion", "s", bus_property_get_string, INVENTORY(driver_version), CHANGES),
        SD_BUS_PROPERTY("OpenCLVersion", "s", bus_property_get_string, INVENTORY(opencl_version), CHANGES),
        SD_BUS_PROPERTY("Available", "b", bus_property_get_bool, INVENTORY(available), CHANGES),
        SD_BUS_PROPERTY("HostUnifiedMemory", "b", bus_property_get_bool, INVENTORY(host_unified_memory), CHANGES),
        SD_BUS_PROPERTY("ComputeUnits", "u", NULL, INVENTORY(compute_units), CHANGES),
        SD_BUS_PROPERTY("ClockMHz", "u", NULL, INVENTORY(clock_mhz), CHANGES),
        SD_BUS_PROPERTY("GlobalMemoryBytes", "t", NULL, INVENTORY(global_memory_bytes), CHANGES),
        SD_BUS_PROPERTY("MaxAllocationBytes", "t", NULL, INVENTORY(max_allocation_bytes), CHANGES),
        SD_BUS_PROPERTY("Fp16Supported", "b", bus_property_get_bool, INVENTORY(fp16_supported), CHANGES),
        SD_BUS_PROPERTY("Fp32Tflops", "d", property_get_tflops, MEASUREMENT(fp32_gflops), CHANGES),
        SD_BUS_PROPERTY("Fp16Tflops", "d", property_get_tflops, MEASUREMENT(fp16_gflops), CHANGES),
        SD_BUS_PROPERTY("MemoryBandwidthGBps", "d", NULL, MEASUREMENT(memory_bandwidth_gb_s), CHANGES),
        SD_BUS_PROPERTY("MemoryBandwidthBestGBps", "d", NULL, MEASUREMENT(memory_bandwidth_best_gb_s), CHANGES),
        SD_BUS_PROPERTY("Fp32BestTflops", "d", property_get_tflops, MEASUREMENT(fp32_best_gflops), CHANGES),
        SD_BUS_PROPERTY("Fp16BestTflops", "d", property_get_tflops, MEASUREMENT(fp16_best_gflops), CHANGES),
        SD_BUS_PROPERTY("MemoryBandwidthSpread", "d", NULL, MEASUREMENT(memory_bandwidth_spread), CHANGES),
        SD_BUS_PROPERTY("Fp32Spread", "d", NULL, MEASUREMENT(fp32_spread), CHANGES),
        SD_BUS_PROPERTY("Fp16Spread", "d", NULL, MEASUREMENT(fp16_spread), CHANGES),
        SD_BUS_PROPERTY("HostToDeviceGBps", "d", NULL, MEASUREMENT(host_to_device_gb_s), CHANGES),
        SD_BUS_PROPERTY("DeviceToHostGBps", "d", NULL, MEASUREMENT(device_to_host_gb_s), CHANGES),
        SD_BUS_PROPERTY("PciDevice", "o", bus_property_get_object_path, offsetof(Gpu, derived.pci_device_path), CHANGES),
        SD_BUS_PROPERTY("PciPathGBps", "d", NULL, offsetof(Gpu, derived.pci_path_gbytes), CHANGES),
        SD_BUS_PROPERTY("Warnings", "as", property_get_warnings, 0, CHANGES),
        SD_BUS_PROPERTY("MeasuredAt", "t", NULL, MEASUREMENT(measured_at_usec), CHANGES),
        SD_BUS_PROPERTY("Stale", "b", bus_property_get_bool, offsetof(Gpu, stale), CHANGES),
        SD_BUS_PROPERTY("ProbeState", "s", property_get_probe_state, offsetof(Gpu, probe_state), CHANGES),
        SD_BUS_PROPERTY("LastError", "s", bus_property_get_string, offsetof(Gpu, last_error), CHANGES),
        SD_BUS_VTABLE_END,
};

static void *gpu_lookup(void *collection, const char *label) {
        uint32_t number;
        return parse_u32(label, &number) >= 0 ? gpu_get(collection, number) : NULL;
}

static const BusKind gpu_bus_kind = {
        .prefix = GPU_PATH_PREFIX,
        .interface = GPU_INTERFACE,
        .vtable = gpu_vtable,
        .bus_offset = offsetof(Gpu, bus),
        .lookup = gpu_lookup,
};

/* The ProbeGpus() calls that waited for a run: the objects' paths, or why there are none. */
static void answer_probe_gpus(sd_bus_message *const *calls, size_t n, int error, const char *text, void *userdata) {
        Gpus *gpus = userdata;

        for (size_t i = 0; i < n; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                Gpu *g;
                int r;

                if (error == -EAGAIN)
                        r = sd_bus_reply_method_errorf(calls[i], BUS_ERROR_INHIBITED, "%s", text);
                else if (error < 0)
                        r = sd_bus_reply_method_errorf(calls[i], BUS_ERROR_FAILED, "%s", text);
                else {
                        r = sd_bus_message_new_method_return(calls[i], &reply);
                        if (r >= 0)
                                r = sd_bus_message_open_container(reply, 'a', "o");
                        TABLE_FOREACH(g, &gpus->table)
                                if (r >= 0)
                                        r = sd_bus_message_append(reply, "o", g->bus.path);
                        if (r >= 0)
                                r = sd_bus_message_close_container(reply);
                        if (r >= 0)
                                r = sd_bus_send(NULL, reply, NULL);
                }
                if (r < 0)
                        log_debug_errno(r, "Cannot answer ProbeGpus() (the caller may be gone): %m");
        }
}

int gpu_bus_register(BusRegistry *registry, Gpus *gpus, GpuProber *prober) {
        if (prober) {
                prober->answer = answer_probe_gpus;
                prober->answer_userdata = gpus;
        }
        return bus_registry_add(registry, &gpu_bus_kind, &gpus->table, gpus);
}

int bus_method_probe_gpus(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        GpuProber *p = m->gpu_prober;
        InhibitorInfo info = {};
        int r;

        r = bus_verify_caller(m->config.privileged_group, p ? &p->ratelimit : NULL, message, "measure GPUs", error);
        if (r < 0)
                return r;
        if (!p)
                return sd_bus_error_set(error, BUS_ERROR_NOT_SUPPORTED,
                                        "GPU probing is off (Enabled=no in [Gpu] of linkprobed.conf).");

        /* No reply here: the prober keeps the message and it is answered when the run ends. */
        r = gpu_prober_request(p, message);
        if (r == -EBUSY)
                return sd_bus_error_setf(error, BUS_ERROR_BUSY, "%d callers are waiting for the GPU probe already.",
                                         GPU_WAITING_MAX);
        if (r == -EAGAIN) {
                for (size_t i = 0; inhibitors_get(m->inhibitors, i, &info); i++)
                        if (info.what & INHIBIT_GPU)
                                break;
                return sd_bus_error_setf(error, BUS_ERROR_INHIBITED, "GPU probes are inhibited by \"%s\"%s%s%s.",
                                         strna(info.who), isempty(info.why) ? "" : " (", strempty(info.why),
                                         isempty(info.why) ? "" : ")");
        }
        if (r < 0)
                return r;
        return 1;
}
