/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The GPU probe's JSON (linkprobe-probe-gpu(8)) and our state file use the same member names, so one
 * reader serves both. Everything is checked: a probe is another program and a state file may be
 * damaged, and neither may put a bad string on the bus or a bogus figure in front of a scheduler.
 */
#include <math.h>

#include "gpu.h"
#include "sysfs/pci.h"
#include "shared/string-util.h"

static const char *const device_types[] = { "cpu", "gpu", "accelerator", "custom", "default" };

/* Absent or null is "", a string is made valid UTF-8 and cut to max bytes, anything else -EINVAL. */
static int read_text(json_object *o, const char *member, size_t max, char **ret) {
        json_object *v;
        const char *s;
        char *escaped;
        size_t n;

        if (!json_object_object_get_ex(o, member, &v) || json_object_is_type(v, json_type_null))
                s = "";
        else if (json_object_is_type(v, json_type_string))
                s = json_object_get_string(v);
        else
                return -EINVAL;

        /* Escape first, cut second, at a character boundary: the result reads back unchanged, so a
         * restart does not change what is published. */
        escaped = utf8_escape_invalid(s);
        if (!escaped)
                return -ENOMEM;
        n = strlen(escaped);
        if (n > max) {
                n = max;
                while (n > 0 && ((unsigned char) escaped[n] & 0xc0) == 0x80)
                        n--;
                escaped[n] = '\0';
        }
        free(*ret);
        *ret = escaped;
        return 0;
}

/* Absent or null is 0; a negative, fractional or too large number, or another type, is -EINVAL. */
static int read_unsigned(json_object *o, const char *member, uint64_t max, uint64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, member, &v) || json_object_is_type(v, json_type_null)) {
                *ret = 0;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        errno = 0;
        int64_t i = json_object_get_int64(v);
        if (errno != 0 || i < 0 || (uint64_t) i > max)
                return -EINVAL;
        *ret = (uint64_t) i;
        return 0;
}

static int read_u32(json_object *o, const char *member, uint32_t *ret) {
        uint64_t v;
        int r = read_unsigned(o, member, UINT32_MAX, &v);
        if (r >= 0)
                *ret = (uint32_t) v;
        return r;
}

static int read_bool(json_object *o, const char *member, bool fallback, bool *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, member, &v) || json_object_is_type(v, json_type_null)) {
                *ret = fallback;
                return 0;
        }
        if (!json_object_is_type(v, json_type_boolean))
                return -EINVAL;
        *ret = json_object_get_boolean(v);
        return 0;
}

/* A finite, non-negative number; absent is -EINVAL when required, else 0. */
static int read_figure(json_object *o, const char *member, bool required, double *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, member, &v)) {
                if (required)
                        return -EINVAL;
                *ret = 0;
                return 0;
        }
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return -EINVAL;
        double d = json_object_get_double(v);
        if (!isfinite(d) || d < 0)
                return -EINVAL;
        *ret = d;
        return 0;
}

void gpu_inventory_done(GpuInventory *i) {
        free(i->key);
        free(i->name);
        free(i->vendor);
        free(i->platform);
        free(i->device_type);
        free(i->uuid);
        free(i->pci_bus_id);
        free(i->driver_version);
        free(i->opencl_version);
        *i = (GpuInventory) {};
}

int gpu_inventory_from_json(json_object *device, GpuInventory *ret) {
        _cleanup_(gpu_inventory_done) GpuInventory i = {};
        _cleanup_(freep) char *type = NULL;
        int r;

        if (!json_object_is_type(device, json_type_object))
                return -EINVAL;

        r = read_text(device, "key", GPU_KEY_MAX, &i.key);
        if (r < 0)
                return r;
        if (isempty(i.key))
                return -EINVAL;

        r = read_text(device, "name", GPU_TEXT_MAX, &i.name);
        if (r >= 0)
                r = read_text(device, "vendor", GPU_TEXT_MAX, &i.vendor);
        if (r >= 0)
                r = read_text(device, "platform", GPU_TEXT_MAX, &i.platform);
        if (r >= 0)
                r = read_text(device, "type", GPU_TEXT_MAX, &type);
        if (r >= 0)
                r = read_text(device, "uuid", GPU_TEXT_MAX, &i.uuid);
        if (r >= 0)
                r = read_text(device, "pci_bus_id", GPU_TEXT_MAX, &i.pci_bus_id);
        if (r >= 0)
                r = read_text(device, "driver_version", GPU_TEXT_MAX, &i.driver_version);
        if (r >= 0)
                r = read_text(device, "opencl_version", GPU_TEXT_MAX, &i.opencl_version);
        if (r >= 0)
                r = read_u32(device, "vendor_id", &i.vendor_id);
        if (r >= 0)
                r = read_u32(device, "compute_units", &i.compute_units);
        if (r >= 0)
                r = read_u32(device, "max_clock_mhz", &i.clock_mhz);
        if (r >= 0)
                r = read_unsigned(device, "global_memory_bytes", INT64_MAX, &i.global_memory_bytes);
        if (r >= 0)
                r = read_unsigned(device, "max_allocation_bytes", INT64_MAX, &i.max_allocation_bytes);
        if (r >= 0)
                r = read_bool(device, "fp16_supported", false, &i.fp16_supported);
        if (r >= 0)
                r = read_bool(device, "host_unified_memory", false, &i.host_unified_memory);
        if (r >= 0)
                r = read_bool(device, "available", true, &i.available);
        if (r < 0)
                return r;

        /* The schema's names, or "other" for anything a newer probe might say. */
        const char *known = "other";
        for (size_t k = 0; k < ELEMENTSOF(device_types); k++)
                if (streq(type, device_types[k]))
                        known = device_types[k];
        i.device_type = strdup(known);
        if (!i.device_type)
                return -ENOMEM;

        *ret = i;
        i = (GpuInventory) {};
        return 0;
}

json_object *gpu_inventory_to_json(const GpuInventory *i) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "key", json_object_new_string(strempty(i->key)));
        json_object_object_add(o, "name", json_object_new_string(strempty(i->name)));
        json_object_object_add(o, "vendor", json_object_new_string(strempty(i->vendor)));
        json_object_object_add(o, "vendor_id", json_object_new_int64(i->vendor_id));
        json_object_object_add(o, "platform", json_object_new_string(strempty(i->platform)));
        json_object_object_add(o, "type", json_object_new_string(strempty(i->device_type)));
        json_object_object_add(o, "available", json_object_new_boolean(i->available));
        json_object_object_add(o, "host_unified_memory", json_object_new_boolean(i->host_unified_memory));
        json_object_object_add(o, "compute_units", json_object_new_int64(i->compute_units));
        json_object_object_add(o, "max_clock_mhz", json_object_new_int64(i->clock_mhz));
        json_object_object_add(o, "global_memory_bytes", json_object_new_int64((int64_t) i->global_memory_bytes));
        json_object_object_add(o, "max_allocation_bytes", json_object_new_int64((int64_t) i->max_allocation_bytes));
        json_object_object_add(o, "fp16_supported", json_object_new_boolean(i->fp16_supported));
        json_object_object_add(o, "driver_version", json_object_new_string(strempty(i->driver_version)));
        json_object_object_add(o, "opencl_version", json_object_new_string(strempty(i->opencl_version)));
        json_object_object_add(o, "uuid", json_object_new_string(strempty(i->uuid)));
        json_object_object_add(o, "pci_bus_id", json_object_new_string(strempty(i->pci_bus_id)));
        return o;
}

void gpu_measurement_done(GpuMeasurement *m) {
        strv_free(m->warnings);
        *m = (GpuMeasurement) {};
}

/* The relative_spread of one test object ("memory_bandwidth", "fp32", "fp16"), 0 when not there. */
static int read_spread(json_object *measurement, const char *test, double *ret) {
        json_object *t;

        if (!json_object_object_get_ex(measurement, test, &t) || !json_object_is_type(t, json_type_object)) {
                *ret = 0;
                return 0;
        }
        return read_figure(t, "relative_spread", false, ret);
}

/* A figure and its best run. The probe names the best run as it always has (memory_bandwidth_gb_s)
 * and the median beside it (memory_bandwidth_median_gb_s); a result without the median, from
 * before it was the figure, has its best as the figure. FP16 may be "unsupported": NaN for both. */
static int read_figures(json_object *o, const char *best_name, const char *median_name, bool may_be_unsupported,
                        double *ret_median, double *ret_best) {
        json_object *v;
        int r;

        if (may_be_unsupported) {
                if (!json_object_object_get_ex(o, best_name, &v))
                        return -EINVAL;
                if (json_object_is_type(v, json_type_string)) {
                        if (!streq(json_object_get_string(v), "unsupported"))
                                return -EINVAL;
                        *ret_median = *ret_best = NAN;
                        return 0;
                }
        }
        r = read_figure(o, best_name, true, ret_best);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(o, median_name, NULL)) {
                *ret_median = *ret_best;
                return 0;
        }
        return read_figure(o, median_name, true, ret_median);
}

/* An optional figure: the median when the document has it, else the best run (a probe from before
 * the medians), else 0. */
static int read_optional_figure(json_object *o, const char *best_name, const char *median_name, double *ret) {
        if (json_object_object_get_ex(o, median_name, NULL))
                return read_figure(o, median_name, true, ret);
        return read_figure(o, best_name, false, ret);
}

static int read_warnings(json_object *measurement, char ***ret) {
        json_object *a;
        size_t n;

        if (!json_object_object_get_ex(measurement, "warnings", &a) || json_object_is_type(a, json_type_null))
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return -EINVAL;
        n = MIN(json_object_array_length(a), (size_t) GPU_WARNINGS_MAX);

        _cleanup_(strv_freep) char **l = new0(char *, n + 1);
        if (!l)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++) {
                json_object *item = json_object_array_get_idx(a, k);
                json_object *holder = json_object_new_object();
                int r;

                if (!holder)
                        return -ENOMEM;
                /* read_text() wants a member; lend it one. */
                json_object_object_add(holder, "w", json_object_get(item));
                r = read_text(holder, "w", GPU_WARNING_MAX, &l[k]);
                json_object_put(holder);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* "NAME: message" from an error object, with the name restricted as the probe runner does. */
static int format_error(json_object *measurement, char **ret) {
        _cleanup_(freep) char *name = NULL, *message = NULL;
        json_object *e;

        if (!json_object_object_get_ex(measurement, "error", &e) || !json_object_is_type(e, json_type_object))
                return -EINVAL;
        if (read_text(e, "name", 64, &name) < 0 || read_text(e, "message", 512, &message) < 0)
                return -EINVAL;
        if (isempty(name) || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
                                     strlen(name))
                return -EINVAL;
        if (asprintf(ret, "%s: %s", name, isempty(message) ? "no message" : message) < 0)
                return -ENOMEM;
        return 0;
}

int gpu_measurement_from_json(json_object *o, GpuMeasurement *ret, char **ret_error) {
        _cleanup_(gpu_measurement_done) GpuMeasurement m = {};
        json_object *status;
        int r;

        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "status", &status) ||
            !json_object_is_type(status, json_type_string))
                return -EINVAL;

        if (streq(json_object_get_string(status), "error"))
                return format_error(o, ret_error) < 0 ? -EINVAL : 0;
        if (!streq(json_object_get_string(status), "ok"))
                return -EINVAL;

        r = read_figures(o, "memory_bandwidth_gb_s", "memory_bandwidth_median_gb_s", false, &m.memory_bandwidth_gb_s,
                         &m.memory_bandwidth_best_gb_s);
        if (r >= 0)
                r = read_figures(o, "fp32_gflops", "fp32_median_gflops", false, &m.fp32_gflops, &m.fp32_best_gflops);
        /* "unsupported" (no cl_khr_fp16) is never a number, and never 0. */
        if (r >= 0)
                r = read_figures(o, "fp16_gflops", "fp16_median_gflops", true, &m.fp16_gflops, &m.fp16_best_gflops);
        /* Documents of probes before the transfer test have no transfer figures (0), and a failed
         * transfer test leaves them out. The median is the figure, as above. */
        if (r >= 0)
                r = read_optional_figure(o, "host_to_device_gb_s", "host_to_device_median_gb_s",
                                          &m.host_to_device_gb_s);
        if (r >= 0)
                r = read_optional_figure(o, "device_to_host_gb_s", "device_to_host_median_gb_s",
                                          &m.device_to_host_gb_s);
        if (r >= 0)
                r = read_spread(o, "memory_bandwidth", &m.memory_bandwidth_spread);
        if (r >= 0)
                r = read_spread(o, "fp32", &m.fp32_spread);
        if (r >= 0)
                r = read_spread(o, "fp16", &m.fp16_spread);
        if (r >= 0)
                r = read_warnings(o, &m.warnings);
        if (r >= 0)
                r = read_unsigned(o, "measured_at_usec", INT64_MAX, &m.measured_at_usec);
        if (r >= 0)
                r = read_bool(o, "quick", false, &m.quick);
        if (r < 0)
                return r;

        *ret = m;
        m = (GpuMeasurement) {};
        return 1;
}

static json_object *spread_object(double spread) {
        json_object *o = json_object_new_object();
        if (o)
                json_object_object_add(o, "relative_spread", json_object_new_double(spread));
        return o;
}

/* A figure, NaN as "unsupported", as the probe writes it. */
static json_object *figure_to_json(double v) {
        return isnan(v) ? json_object_new_string("unsupported") : json_object_new_double(v);
}

json_object *gpu_measurement_to_json(const GpuMeasurement *m) {
        json_object *o = json_object_new_object(), *warnings = json_object_new_array();

        if (!o || !warnings) {
                json_object_put(o);
                json_object_put(warnings);
                return NULL;
        }
        json_object_object_add(o, "status", json_object_new_string("ok"));
        json_object_object_add(o, "measured_at_usec", json_object_new_int64((int64_t) m->measured_at_usec));
        json_object_object_add(o, "quick", json_object_new_boolean(m->quick));
        json_object_object_add(o, "memory_bandwidth_gb_s", figure_to_json(m->memory_bandwidth_best_gb_s));
        json_object_object_add(o, "fp32_gflops", figure_to_json(m->fp32_best_gflops));
        json_object_object_add(o, "fp16_gflops", figure_to_json(m->fp16_best_gflops));
        json_object_object_add(o, "memory_bandwidth_median_gb_s", figure_to_json(m->memory_bandwidth_gb_s));
        json_object_object_add(o, "fp32_median_gflops", figure_to_json(m->fp32_gflops));
        json_object_object_add(o, "fp16_median_gflops", figure_to_json(m->fp16_gflops));
        /* Of the copy rates only the medians are kept. */
        json_object_object_add(o, "host_to_device_median_gb_s", json_object_new_double(m->host_to_device_gb_s));
        json_object_object_add(o, "device_to_host_median_gb_s", json_object_new_double(m->device_to_host_gb_s));
        json_object_object_add(o, "memory_bandwidth", spread_object(m->memory_bandwidth_spread));
        json_object_object_add(o, "fp32", spread_object(m->fp32_spread));
        json_object_object_add(o, "fp16", spread_object(m->fp16_spread));
        STRV_FOREACH(w, m->warnings)
                json_object_array_add(warnings, json_object_new_string(*w));
        json_object_object_add(o, "warnings", warnings);
        return o;
}

/* A PCI address as the probe writes it ("0000:18:00.0"), copied into buf; -EINVAL for anything else. */
static int read_address(json_object *o, const char *member, char buf[static 17]) {
        json_object *v;
        const char *s;

        if (!json_object_object_get_ex(o, member, &v) || !json_object_is_type(v, json_type_string))
                return -EINVAL;
        s = json_object_get_string(v);
        if (!pci_address_is_valid(s))
                return -EINVAL;
        snprintf(buf, 17, "%s", s);
        return 0;
}

/* Adds one active link from local to remote to the groups in *links. */
static int nvlinks_add(GpuNvLink **links, size_t *n, const char *local, const char *remote, bool remote_is_switch,
                       unsigned version) {
        for (size_t i = 0; i < *n; i++) {
                GpuNvLink *l = &(*links)[i];
                if (streq(l->local, local) && streq(l->remote, remote)) {
                        l->count++;
                        l->version = MAX(l->version, version);
                        l->remote_is_switch |= remote_is_switch;
                        return 0;
                }
        }
        if (*n >= GPUS_MAX * 18)
                return -E2BIG;
        GpuNvLink *grown = reallocarray(*links, *n + 1, sizeof(GpuNvLink));
        if (!grown)
                return -ENOMEM;
        *links = grown;
        /* Zeroed padding included: arrays of these are compared with memcmp(). */
        memset(&grown[*n], 0, sizeof(GpuNvLink));
        snprintf(grown[*n].local, sizeof(grown[*n].local), "%s", local);
        snprintf(grown[*n].remote, sizeof(grown[*n].remote), "%s", remote);
        grown[*n].remote_is_switch = remote_is_switch;
        grown[*n].version = version;
        grown[*n].count = 1;
        (*n)++;
        return 0;
}

int gpu_nvlinks_from_json(json_object *doc, GpuNvLink **ret, size_t *ret_n) {
        _cleanup_(freep) GpuNvLink *links = NULL;
        json_object *nvml, *status, *devices;
        size_t n = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        if (!json_object_object_get_ex(doc, "nvml", &nvml) || json_object_is_type(nvml, json_type_null))
                return 0;
        if (!json_object_object_get_ex(nvml, "status", &status) || !json_object_is_type(status, json_type_string))
                return -EINVAL;
        if (!streq(json_object_get_string(status), "ok"))
                return 0; /* absent, or NVML failed: no links known */
        if (!json_object_object_get_ex(nvml, "devices", &devices) || !json_object_is_type(devices, json_type_array))
                return -EINVAL;

        for (size_t i = 0; i < MIN(json_object_array_length(devices), (size_t) GPUS_MAX); i++) {
                json_object *device = json_object_array_get_idx(devices, i), *a;
                char local[17];

                if (read_address(device, "pci_bus_id", local) < 0)
                        return -EINVAL;
                if (!json_object_object_get_ex(device, "nvlinks", &a) || !json_object_is_type(a, json_type_array))
                        return -EINVAL;
                for (size_t k = 0; k < MIN(json_object_array_length(a), (size_t) 64); k++) {
                        json_object *link = json_object_array_get_idx(a, k), *type;
                        char remote[17];
                        uint32_t version = 0;
                        bool to_switch = false;

                        if (read_address(link, "remote_pci_bus_id", remote) < 0 || read_u32(link, "version", &version) < 0 ||
                            version > 99)
                                return -EINVAL;
                        if (json_object_object_get_ex(link, "remote_type", &type) && json_object_is_type(type, json_type_string))
                                to_switch = streq(json_object_get_string(type), "switch");
                        r = nvlinks_add(&links, &n, local, remote, to_switch, version);
                        if (r == -E2BIG)
                                break;
                        if (r < 0)
                                return r;
                }
        }
        *ret = TAKE_PTR(links);
        *ret_n = n;
        return n > 0;
}
