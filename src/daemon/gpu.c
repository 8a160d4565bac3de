/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>

#include "gpu.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

static const BusObjectType gpu_bus_type = {
        .interface = GPU_INTERFACE,
};

static const char *const gpu_probe_state_table[_GPU_PROBE_STATE_MAX] = {
        [GPU_PROBE_NEVER] = "never",
        [GPU_PROBE_RUNNING] = "running",
        [GPU_PROBE_OK] = "ok",
        [GPU_PROBE_FAILED] = "failed",
        [GPU_PROBE_UNSUPPORTED] = "unsupported",
        [GPU_PROBE_SKIPPED_INHIBITED] = "skipped-inhibited",
};

DEFINE_STRING_TABLE_LOOKUP(gpu_probe_state, GpuProbeState, gpu_probe_state_table)

static int gpu_compare(const void *key, const void *object) {
        return compare_int_key(key, (int) ((const Gpu *) object)->number);
}

/* The table's key is an unsigned; compare_int_key() reads an int from the same address. */
_Static_assert(sizeof(unsigned) == sizeof(int), "gpu numbers are compared as int");

int gpu_object_path(unsigned number, char **ret) {
        char label[16];
        snprintf(label, sizeof(label), "%u", number);
        return sd_bus_path_encode(GPU_PATH_PREFIX, label, ret);
}

Gpu *gpu_get(Gpus *gpus, unsigned number) {
        return table_get(&gpus->table, &number);
}

Gpu *gpu_find(Gpus *gpus, const char *key) {
        Gpu *g;

        TABLE_FOREACH(g, &gpus->table)
                if (streq(g->inventory.key, key))
                        return g;
        return NULL;
}

static Gpu *gpu_free(Gpu *g) {
        if (!g)
                return NULL;
        bus_object_done(&g->bus);
        gpu_inventory_done(&g->inventory);
        gpu_measurement_done(&g->measurement);
        free(g->last_error);
        free(g->derived.pci_device_path);
        return mfree(g);
}

int gpu_new(Gpus *gpus, unsigned number, const char *key, Gpu **ret) {
        _cleanup_(freep) char *path = NULL;
        Gpu *g;
        int r;

        if (number >= GPU_NUMBER_MAX || isempty(key))
                return -EINVAL;
        r = gpu_object_path(number, &path);
        if (r < 0)
                return r;

        g = new0(Gpu, 1);
        if (!g)
                return -ENOMEM;
        g->number = number;
        g->owner = gpus;
        g->probe_state = GPU_PROBE_NEVER;
        g->inventory.key = strdup(key);
        if (!g->inventory.key) {
                free(g);
                return -ENOMEM;
        }
        r = table_put(&gpus->table, &g->number, g);
        if (r < 0) {
                gpu_free(g);
                return r;
        }
        bus_object_init(&g->bus, gpus->publisher, &gpu_bus_type, TAKE_PTR(path));
        gpus->changed = true;
        *ret = g;
        return 0;
}

void gpu_remove(Gpu *g) {
        Gpus *gpus = g->owner;

        log_gpu_info(g, "%s is gone.", strna(g->inventory.name));
        (void) gpu_number_retire(gpus, g->number, g->inventory.key);
        bus_object_remove(&g->bus);
        table_remove(&gpus->table, &g->number);
        gpu_free(g);
        gpus->changed = true;
}

void gpus_init(Gpus *gpus, BusPublisher *p) {
        *gpus = (Gpus) {
                .table = TABLE_INIT(gpu_compare),
                .publisher = p,
        };
}

void gpus_done(Gpus *gpus) {
        Gpu *g;

        TABLE_FOREACH(g, &gpus->table)
                gpu_free(g);
        table_done(&gpus->table);
        for (size_t i = 0; i < gpus->n_retired; i++)
                free(gpus->retired[i].key);
        gpus->retired = mfree(gpus->retired);
        gpus->n_retired = 0;
        gpus->nvlinks = mfree(gpus->nvlinks);
        gpus->n_nvlinks = 0;
}

static bool number_is_taken(Gpus *gpus, unsigned number) {
        if (gpu_get(gpus, number))
                return true;
        for (size_t i = 0; i < gpus->n_retired; i++)
                if (gpus->retired[i].number == number)
                        return true;
        return false;
}

static void retired_drop(Gpus *p, size_t i) {
        free(p->retired[i].key);
        memmove(p->retired + i, p->retired + i + 1, (p->n_retired - i - 1) * sizeof(GpuSlot));
        p->n_retired--;
}

int gpu_number_for_key(Gpus *gpus, const char *key, unsigned *ret) {
        for (size_t i = 0; i < gpus->n_retired; i++)
                if (streq(gpus->retired[i].key, key)) {
                        *ret = gpus->retired[i].number;
                        retired_drop(gpus, i);
                        return 0;
                }
        for (;;) {
                for (unsigned n = 0; n < GPU_NUMBER_MAX; n++)
                        if (!number_is_taken(gpus, n)) {
                                *ret = n;
                                return 0;
                        }
                /* Every number is held: the device that left longest ago gives its up. */
                if (gpus->n_retired == 0)
                        return -ENOSPC;
                retired_drop(gpus, 0);
        }
}

int gpu_number_retire(Gpus *p, unsigned number, const char *key) {
        if (isempty(key))
                return 0;
        for (size_t i = 0; i < p->n_retired; i++)
                if (p->retired[i].number == number || streq(p->retired[i].key, key))
                        retired_drop(p, i--);
        if (p->n_retired >= GPU_RETIRED_MAX)
                retired_drop(p, 0);

        GpuSlot *grown = reallocarray(p->retired, p->n_retired + 1, sizeof(GpuSlot));
        if (!grown)
                return -ENOMEM;
        p->retired = grown;
        p->retired[p->n_retired].key = strdup(key);
        if (!p->retired[p->n_retired].key)
                return -ENOMEM;
        p->retired[p->n_retired++].number = number;
        return 0;
}

static void set_text(Gpu *g, char **field, char **value, const char *property) {
        if (!streq(strempty(*field), strempty(*value))) {
                free_and_replace(*field, *value);
                bus_object_changed(&g->bus, property);
        } else
                *value = mfree(*value);
}

/* NaN is a value here (FP16 unsupported): equal to itself, so it is not announced twice. */
static void set_double(Gpu *g, double *field, double value, const char *property) {
        if ((isnan(*field) && isnan(value)) || *field == value)
                return;
        *field = value;
        bus_object_changed(&g->bus, property);
}

void gpu_set_inventory(Gpu *g, GpuInventory *i) {
        GpuInventory *o = &g->inventory;

        /* The key is what found this object: it never changes. */
        i->key = mfree(i->key);
        set_text(g, &o->name, &i->name, "Name");
        set_text(g, &o->vendor, &i->vendor, "Vendor");
        set_text(g, &o->platform, &i->platform, "Platform");
        set_text(g, &o->device_type, &i->device_type, "DeviceType");
        set_text(g, &o->uuid, &i->uuid, "Uuid");
        if (!streq(strempty(o->pci_bus_id), strempty(i->pci_bus_id)))
                g->owner->changed = true;
        set_text(g, &o->pci_bus_id, &i->pci_bus_id, "PciBusId");
        set_text(g, &o->driver_version, &i->driver_version, "DriverVersion");
        set_text(g, &o->opencl_version, &i->opencl_version, "OpenCLVersion");
        bus_object_set(&g->bus, o->vendor_id, i->vendor_id, "VendorId");
        bus_object_set(&g->bus, o->compute_units, i->compute_units, "ComputeUnits");
        bus_object_set(&g->bus, o->clock_mhz, i->clock_mhz, "ClockMHz");
        bus_object_set(&g->bus, o->global_memory_bytes, i->global_memory_bytes, "GlobalMemoryBytes");
        bus_object_set(&g->bus, o->max_allocation_bytes, i->max_allocation_bytes, "MaxAllocationBytes");
        bus_object_set(&g->bus, o->fp16_supported, i->fp16_supported, "Fp16Supported");
        bus_object_set(&g->bus, o->host_unified_memory, i->host_unified_memory, "HostUnifiedMemory");
        bus_object_set(&g->bus, o->available, i->available, "Available");
        gpu_inventory_done(i);
}

void gpu_set_measurement(Gpu *g, GpuMeasurement *meas) {
        GpuMeasurement *o = &g->measurement;

        bus_object_set(&g->bus, o->measured_at_usec, meas->measured_at_usec, "MeasuredAt");
        bus_object_set(&g->bus, o->quick, meas->quick, "Warnings");
        set_double(g, &o->memory_bandwidth_gb_s, meas->memory_bandwidth_gb_s, "MemoryBandwidthGBps");
        set_double(g, &o->fp32_gflops, meas->fp32_gflops, "Fp32Tflops");
        set_double(g, &o->fp16_gflops, meas->fp16_gflops, "Fp16Tflops");
        set_double(g, &o->memory_bandwidth_best_gb_s, meas->memory_bandwidth_best_gb_s, "MemoryBandwidthBestGBps");
        set_double(g, &o->fp32_best_gflops, meas->fp32_best_gflops, "Fp32BestTflops");
        set_double(g, &o->fp16_best_gflops, meas->fp16_best_gflops, "Fp16BestTflops");
        set_double(g, &o->memory_bandwidth_spread, meas->memory_bandwidth_spread, "MemoryBandwidthSpread");
        set_double(g, &o->fp32_spread, meas->fp32_spread, "Fp32Spread");
        set_double(g, &o->fp16_spread, meas->fp16_spread, "Fp16Spread");
        set_double(g, &o->host_to_device_gb_s, meas->host_to_device_gb_s, "HostToDeviceGBps");
        set_double(g, &o->device_to_host_gb_s, meas->device_to_host_gb_s, "DeviceToHostGBps");
        (void) bus_object_set_strv(&g->bus, &o->warnings, &meas->warnings, "Warnings");
        gpu_measurement_done(meas);
}

void gpu_set_probe_state(Gpu *g, GpuProbeState state, const char *error) {
        bus_object_set(&g->bus, g->probe_state, state, "ProbeState");
        /* Running or skipped says nothing new about the last attempt: its error stays. */
        if (IN_SET(state, GPU_PROBE_OK, GPU_PROBE_FAILED, GPU_PROBE_UNSUPPORTED))
                (void) bus_object_set_string(&g->bus, &g->last_error, error, "LastError");
}

void gpu_update_stale(Gpu *g, uint64_t now_realtime, uint64_t ttl_usec) {
        uint64_t at = g->measurement.measured_at_usec;
        bool stale = at > 0 && ttl_usec > 0 && (now_realtime < at ? false : now_realtime - at >= ttl_usec);

        bus_object_set(&g->bus, g->stale, stale, "Stale");
}

static void gpu_apply_measurement(Gpu *g, json_object *device, uint64_t started_realtime, bool quick) {
        _cleanup_(gpu_measurement_done) GpuMeasurement meas = {};
        _cleanup_(freep) char *error = NULL;
        json_object *o;
        int r;

        if (!json_object_object_get_ex(device, "measurement", &o)) {
                gpu_set_probe_state(g, GPU_PROBE_FAILED, "not-measured: the probe did not measure this device");
                return;
        }
        r = gpu_measurement_from_json(o, &meas, &error);
        if (r < 0) {
                log_gpu_warning(g, "The probe's measurement is malformed, ignoring it.");
                gpu_set_probe_state(g, GPU_PROBE_FAILED, "bad-output: malformed measurement");
                return;
        }
        if (r == 0) {
                log_gpu_warning(g, "Measuring %s failed: %s", strna(g->inventory.name), error);
                /* A device its driver calls unavailable cannot be measured: that is not a fault. */
                gpu_set_probe_state(g, g->inventory.available ? GPU_PROBE_FAILED : GPU_PROBE_UNSUPPORTED, error);
                return;
        }

        meas.measured_at_usec = started_realtime;
        meas.quick = quick;
        char fp16[32] = "unsupported";
        if (!isnan(meas.fp16_gflops))
                snprintf(fp16, sizeof(fp16), "%.3f TFLOPS", meas.fp16_gflops / 1000);
        log_gpu_info(g, "%s: %.1f GB/s, %.3f FP32 TFLOPS, FP16 %s.", strna(g->inventory.name),
                     meas.memory_bandwidth_gb_s, meas.fp32_gflops / 1000, fp16);
        gpu_set_measurement(g, &meas);
        gpu_set_probe_state(g, GPU_PROBE_OK, NULL);
}

/* NVLinks as the probe's NVML member lists them; a document without it (NVML absent) has none. */
static void gpus_apply_nvlinks(Gpus *gpus, json_object *doc) {
        GpuNvLink *links = NULL;
        size_t n = 0;
        int r;

        r = gpu_nvlinks_from_json(doc, &links, &n);
        if (r < 0) {
                log_warning("The GPU probe's NVML member is malformed, ignoring it.");
                return;
        }
        if (n == gpus->n_nvlinks && (n == 0 || memcmp(links, gpus->nvlinks, n * sizeof(GpuNvLink)) == 0)) {
                free(links);
                return;
        }
        free(gpus->nvlinks);
        gpus->nvlinks = links;
        gpus->n_nvlinks = n;
        gpus->changed = true;
        bus_publisher_schedule(gpus->publisher);
}

int gpus_apply_document(Gpus *gpus, json_object *doc, bool measured, uint64_t started_realtime, bool quick) {
        json_object *devices;
        int failed = 0;
        size_t n;
        Gpu *g;

        if (!json_object_object_get_ex(doc, "devices", &devices) || !json_object_is_type(devices, json_type_array))
                return -EINVAL;
        n = json_object_array_length(devices);
        if (n > GPUS_MAX)
                log_warning("The GPU probe lists %zu devices; publishing the first %d.", n, GPUS_MAX);

        TABLE_FOREACH(g, &gpus->table)
                g->seen = false;

        for (size_t k = 0; k < MIN(n, (size_t) GPUS_MAX); k++) {
                json_object *device = json_object_array_get_idx(devices, k);
                _cleanup_(gpu_inventory_done) GpuInventory inv = {};
                unsigned number;
                int r;

                r = gpu_inventory_from_json(device, &inv);
                if (r < 0) {
                        log_warning("Ignoring device %zu of the GPU probe's document: %s", k,
                                    r == -ENOMEM ? "out of memory" : "malformed");
                        continue;
                }
                g = gpu_find(gpus, inv.key);
                if (g && g->seen) {
                        log_warning("Ignoring device %zu of the GPU probe's document: its key repeats.", k);
                        continue;
                }
                if (!g) {
                        r = gpu_number_for_key(gpus, inv.key, &number);
                        if (r >= 0)
                                r = gpu_new(gpus, number, inv.key, &g);
                        if (r < 0) {
                                log_warning_errno(r, "Cannot publish GPU %s: %m", inv.key);
                                continue;
                        }
                        log_gpu_info(g, "%s (%s, %s).", inv.name, inv.device_type, inv.platform);
                }
                g->seen = true;
                gpu_set_inventory(g, &inv);
                if (measured) {
                        gpu_apply_measurement(g, device, started_realtime, quick);
                        /* Unsupported counts too: retried with back-off, not at once. */
                        if (g->probe_state != GPU_PROBE_OK)
                                failed++;
                }
        }

        TABLE_FOREACH_SAFE(g, &gpus->table)
                if (!g->seen)
                        gpu_remove(g);
        gpus_apply_nvlinks(gpus, doc);
        return failed;
}

/* The NVLinks between two GPUs: direct ones, or, through NVSwitches, as many as the side with fewer
 * switch links has (what `nvidia-smi topo -m` shows as NV#). */
unsigned gpus_nvlinks_between(const Gpus *gpus, const char *a, const char *b, unsigned *ret_version) {
        unsigned direct = 0, switch_a = 0, switch_b = 0, version = 0;

        for (size_t i = 0; i < gpus->n_nvlinks; i++) {
                const GpuNvLink *l = &gpus->nvlinks[i];
                if (streq(l->local, a) && streq(l->remote, b) && !l->remote_is_switch)
                        direct += l->count;
                else if (l->remote_is_switch && streq(l->local, a))
                        switch_a += l->count;
                else if (l->remote_is_switch && streq(l->local, b))
                        switch_b += l->count;
                else
                        continue;
                version = MAX(version, l->version);
        }
        *ret_version = version;
        return direct > 0 ? direct : MIN(switch_a, switch_b);
}
