/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpu.h — an OpenCL device as we publish it: inventory and measurements from linkprobe-probe-gpu */
#pragma once

#include <json-c/json.h>

#include "bus-object.h"
#include "log-object.h"
#include "shared/table.h"

#define GPUS_MAX 64          /* devices taken from one probe document; more are ignored with a warning */
#define GPU_NUMBER_MAX 1024  /* the n of gpu/<n> */
#define GPU_RETIRED_MAX 64   /* numbers of departed devices kept reserved */
#define GPU_KEY_MAX 512      /* bytes */
#define GPU_TEXT_MAX 256     /* bytes kept of a driver's string */
#define GPU_WARNINGS_MAX 16
#define GPU_WARNING_MAX 512  /* bytes */

typedef enum GpuProbeState {
        GPU_PROBE_NEVER,
        GPU_PROBE_RUNNING,
        GPU_PROBE_OK,
        GPU_PROBE_FAILED,
        GPU_PROBE_UNSUPPORTED,
        GPU_PROBE_SKIPPED_INHIBITED,
        _GPU_PROBE_STATE_MAX,
        _GPU_PROBE_STATE_INVALID = -EINVAL,
} GpuProbeState;

/* What the probe's inventory says about a device (linkprobe-probe-gpu(8), "Device objects"). */
typedef struct GpuInventory {
        char *key;
        char *name;
        char *vendor;
        char *platform;
        char *device_type; /* cpu, gpu, accelerator, custom, default or other */
        char *uuid;
        char *pci_bus_id;
        char *driver_version;
        char *opencl_version;
        uint32_t vendor_id;
        uint32_t compute_units;
        uint32_t clock_mhz;
        uint64_t global_memory_bytes;
        uint64_t max_allocation_bytes;
        bool fp16_supported;
        bool host_unified_memory;
        bool available;
} GpuInventory;

/* The last successful measurement. measured_at_usec 0 = never measured: every figure is then 0. */
typedef struct GpuMeasurement {
        uint64_t measured_at_usec; /* CLOCK_REALTIME, when the measuring run started */
        bool quick;                /* measured with --quick: rough figures */
        /* The figures: medians of the timed runs. */
        double memory_bandwidth_gb_s;
        double fp32_gflops;
        double fp16_gflops; /* NaN: the device has no cl_khr_fp16 */
        /* The best run of each, and (max - min) / median. */
        double memory_bandwidth_best_gb_s;
        double fp32_best_gflops;
        double fp16_best_gflops; /* NaN with fp16_gflops */
        double memory_bandwidth_spread;
        double fp32_spread;
        double fp16_spread;
        double host_to_device_gb_s; /* pinned host buffer to device memory; 0 unknown */
        double device_to_host_gb_s;
        char **warnings;
} GpuMeasurement;

/* Active NVLinks from one GPU to one peer, as NVML reported them to the GPU probe. */
typedef struct GpuNvLink {
        char local[17];  /* PCI function of the GPU, "0000:18:00.0" */
        char remote[17]; /* of what the links reach: another GPU, or an NVSwitch */
        bool remote_is_switch;
        unsigned version; /* NVLink version (1..5); 0 unknown */
        unsigned count;   /* active links */
} GpuNvLink;

/* A number held for a device that is gone, so that it gets it back and nobody else does. */
typedef struct GpuSlot {
        unsigned number;
        char *key;
} GpuSlot;

/* The published devices, and the numbers of those that left. */
typedef struct Gpus {
        Table table; /* Gpu* by number */
        GpuSlot *retired; /* oldest first */
        size_t n_retired;
        BusPublisher *publisher;
        /* Devices came, went or moved to another PCI function, or the NVLinks changed: the derivation
         * pass redoes the PCIe cross-links. */
        bool changed;
        GpuNvLink *nvlinks; /* from the probe's last "nvml" member; NULL: NVML absent */
        size_t n_nvlinks;
} Gpus;

typedef struct Gpu {
        unsigned number; /* first: the table's key, and the n of gpu/<n> */
        Gpus *owner;
        BusObject bus;

        GpuInventory inventory;
        GpuMeasurement measurement;
        GpuProbeState probe_state;
        char *last_error; /* "name: message" of the last failed attempt, NULL after a success */
        bool stale;       /* the measurement is older than the TTL */
        bool seen;        /* mark and sweep of a probe document */

        /* Derived (derive-pci.c writes these). */
        struct {
                char *pci_device_path;  /* PciDevice */
                double pci_path_gbytes; /* PciPathGBps: the PCIe path's rate in GB/s, 0 unknown */
        } derived;
} Gpu;

const char *gpu_probe_state_to_string(GpuProbeState s) _const_;
GpuProbeState gpu_probe_state_from_string(const char *s) _pure_;

/* gpu-json.c: the probe's documents and our state file, validated field by field. */

/* Reads a device object. -EINVAL when a member has the wrong type or range or the key is missing;
 * strings are cut to GPU_TEXT_MAX bytes and bytes that are not UTF-8 become "\xNN". */
int gpu_inventory_from_json(json_object *device, GpuInventory *ret);
json_object *gpu_inventory_to_json(const GpuInventory *i);
void gpu_inventory_done(GpuInventory *i);

/*
 * Reads a measurement object. Returns 1 with *ret filled for status "ok"; 0 with *ret_error set to
 * "name: message" for status "error"; -EINVAL when malformed. measured_at_usec and quick are read
 * when present (our state file), else left 0/false for the caller to set.
 */
int gpu_measurement_from_json(json_object *measurement, GpuMeasurement *ret, char **ret_error);
json_object *gpu_measurement_to_json(const GpuMeasurement *m);
void gpu_measurement_done(GpuMeasurement *m);

/* Reads the document's "nvml" member: 1 with the active links grouped per (GPU, peer); 0 when NVML is
 * absent or the member is missing (no links); -EINVAL when malformed. */
int gpu_nvlinks_from_json(json_object *doc, GpuNvLink **ret, size_t *ret_n);
/* The active NVLinks between the GPUs at PCI addresses a and b (direct, or through NVSwitches as many
 * as the side with fewer switch links has: nvidia-smi topo -m's NV#), and their version. */
unsigned gpus_nvlinks_between(const Gpus *gpus, const char *a, const char *b, unsigned *ret_version);

/* gpu.c: the table of published devices. */

void gpus_init(Gpus *gpus, BusPublisher *p);
void gpus_done(Gpus *gpus);

Gpu *gpu_get(Gpus *gpus, unsigned number);
Gpu *gpu_find(Gpus *gpus, const char *key);
/* The object path of gpu/<number>. */
int gpu_object_path(unsigned number, char **ret);

/* Creates gpu/<number> for key (the number from gpu_number_for_key()). */
int gpu_new(Gpus *gpus, unsigned number, const char *key, Gpu **ret);
/* Announces the removal, reserves the number for the key, frees. */
void gpu_remove(Gpu *g);

/* The number a key had, or the lowest one no present or departed device holds. */
int gpu_number_for_key(Gpus *gpus, const char *key, unsigned *ret);
/* Keeps number reserved for key (a departed device), dropping the oldest beyond GPU_RETIRED_MAX. */
int gpu_number_retire(Gpus *gpus, unsigned number, const char *key);

/* Take the contents of *i / *meas (left zeroed) and mark what changed. */
void gpu_set_inventory(Gpu *g, GpuInventory *i);
void gpu_set_measurement(Gpu *g, GpuMeasurement *meas);
void gpu_set_probe_state(Gpu *g, GpuProbeState state, const char *error);
/* Recomputes Stale at realtime now for the TTL (0: never stale). */
void gpu_update_stale(Gpu *g, uint64_t now_realtime, uint64_t ttl_usec);

/*
 * Publishes a probe document: devices are matched by key, new ones created, departed ones removed.
 * With measured, each device's measurement member sets its figures and state. Returns the number of
 * devices whose measurement did not succeed, or -EINVAL when the document has no device list.
 */
int gpus_apply_document(Gpus *gpus, json_object *doc, bool measured, uint64_t started_realtime, bool quick);

/* gpu-state.c: the state file, gpus.json in the state directory. */
typedef struct StateDirectory StateDirectory;
int gpus_save(Gpus *gpus, StateDirectory *dir);
int gpus_load(Gpus *gpus, StateDirectory *dir);
/* Parses a state file into the table (exported for tests). -EINVAL for a file that is not ours. */
int gpus_load_from_string(Gpus *gpus, const char *text);

#define log_gpu_full_errno(g, level, error, ...)                                                 \
        ({                                                                                        \
                char _gpu_[16];                                                                   \
                snprintf(_gpu_, sizeof(_gpu_), "gpu%u", (g)->number);                             \
                log_object_full_errno(level, error, "GPU", _gpu_, __VA_ARGS__);                   \
        })
#define log_gpu_info(g, ...) (void) log_gpu_full_errno(g, LOG_INFO, 0, __VA_ARGS__)
#define log_gpu_warning(g, ...) (void) log_gpu_full_errno(g, LOG_WARNING, 0, __VA_ARGS__)
