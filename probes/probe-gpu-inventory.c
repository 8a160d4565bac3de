/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "probe-gpu-inventory.h"
#include "probe-gpu-json.h"

/* cl_nv_device_attribute_query: in NVIDIA's cl_ext_nv.h, not in the Khronos headers. */
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A

static const cl_device_info native_width_param[_GPU_SCALAR_MAX] = {
        [GPU_SCALAR_CHAR] = CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,
        [GPU_SCALAR_SHORT] = CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
        [GPU_SCALAR_INT] = CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,
        [GPU_SCALAR_LONG] = CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
        [GPU_SCALAR_FLOAT] = CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
        [GPU_SCALAR_DOUBLE] = CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
        [GPU_SCALAR_HALF] = CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
};

static const cl_device_info preferred_width_param[_GPU_SCALAR_MAX] = {
        [GPU_SCALAR_CHAR] = CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,
        [GPU_SCALAR_SHORT] = CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
        [GPU_SCALAR_INT] = CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,
        [GPU_SCALAR_LONG] = CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
        [GPU_SCALAR_FLOAT] = CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
        [GPU_SCALAR_DOUBLE] = CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
        [GPU_SCALAR_HALF] = CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
};

static const char *const scalar_type_name[_GPU_SCALAR_MAX] = {
        [GPU_SCALAR_CHAR] = "char", [GPU_SCALAR_SHORT] = "short", [GPU_SCALAR_INT] = "int",
        [GPU_SCALAR_LONG] = "long", [GPU_SCALAR_FLOAT] = "float", [GPU_SCALAR_DOUBLE] = "double",
        [GPU_SCALAR_HALF] = "half",
};

const char *gpu_device_type_to_string(cl_device_type type) {
        if (type & CL_DEVICE_TYPE_CPU)
                return "cpu";
        if (type & CL_DEVICE_TYPE_GPU)
                return "gpu";
        if (type & CL_DEVICE_TYPE_ACCELERATOR)
                return "accelerator";
        if (type & CL_DEVICE_TYPE_CUSTOM)
                return "custom";
        return "default";
}

static void gpu_device_done(GpuDevice *d) {
        free(d->platform_name);
        free(d->platform_vendor);
        free(d->platform_version);
        free(d->name);
        free(d->vendor);
        free(d->driver_version);
        free(d->device_version);
        free(d->opencl_c_version);
        free(d->extensions);
        free(d->key);
}

GpuDevice *gpu_devices_free(GpuDevice *devices, size_t n) {
        if (!devices)
                return NULL;
        for (size_t i = 0; i < n; i++)
                gpu_device_done(devices + i);
        free(devices);
        return NULL;
}

static void read_uuid(GpuDevice *d) {
        cl_uchar u[CL_UUID_SIZE_KHR];
        size_t size = 0;

        if (!cl_extensions_have(d->extensions, "cl_khr_device_uuid") ||
            clGetDeviceInfo(d->id, CL_DEVICE_UUID_KHR, sizeof(u), u, &size) != CL_SUCCESS ||
            size != sizeof(u))
                return;
        snprintf(d->uuid, sizeof(d->uuid),
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
                 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The PCI address in sysfs's form, from whichever extension the driver offers (KHR first, it has the
 * domain; AMD's topology has none, so it is taken as 0). */
static void read_pci_bus_id(GpuDevice *d) {
        if (cl_extensions_have(d->extensions, "cl_khr_pci_bus_info")) {
                cl_device_pci_bus_info_khr info;
                size_t size = 0;
                cl_int err = clGetDeviceInfo(d->id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(info), &info, &size);
                if (err == CL_SUCCESS && size == sizeof(info)) {
                        snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%04x:%02x:%02x.%x",
                                 info.pci_domain & 0xffffu, info.pci_bus & 0xffu, info.pci_device & 0x1fu,
                                 info.pci_function & 0x7u);
                        return;
                }
        }

        if (cl_extensions_have(d->extensions, "cl_amd_device_attribute_query")) {
                cl_device_topology_amd topo;
                size_t size = 0;
                cl_int err = clGetDeviceInfo(d->id, CL_DEVICE_TOPOLOGY_AMD, sizeof(topo), &topo, &size);
                /* The fields are cl_char: a bus above 0x7f is negative until cast back. */
                if (err == CL_SUCCESS && size == sizeof(topo) &&
                    topo.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
                        snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "0000:%02x:%02x.%x",
                                 (unsigned) (cl_uchar) topo.pcie.bus,
                                 (unsigned) (cl_uchar) topo.pcie.device & 0x1fu,
                                 (unsigned) (cl_uchar) topo.pcie.function & 0x7u);
                        return;
                }
        }

        if (cl_extensions_have(d->extensions, "cl_nv_device_attribute_query")) {
                cl_uint bus, slot, domain = 0;
                if (cl_device_get_uint(d->id, CL_DEVICE_PCI_BUS_ID_NV, &bus) == CL_SUCCESS &&
                    cl_device_get_uint(d->id, CL_DEVICE_PCI_SLOT_ID_NV, &slot) == CL_SUCCESS) {
                        /* Older drivers do not know the domain query; 0 is then the only sane guess. */
                        (void) cl_device_get_uint(d->id, CL_DEVICE_PCI_DOMAIN_ID_NV, &domain);
                        snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%04x:%02x:%02x.%x", domain & 0xffffu,
                                 bus & 0xffu, (slot >> 3) & 0x1fu, slot & 0x7u);
                }
        }
}

/* Reads everything the probe reports about one device. Any failure of a query OpenCL 1.2 requires
 * means the driver is broken for this device; the caller reports it on the platform. */
static int device_read(GpuDevice *d, GpuError *e) {
        /* Each query with the name an error message gives it. */
#define QUERY(param, field) { param, #param, &d->field }
        const struct {
                cl_device_info param;
                const char *what;
                char **field;
        } strings[] = {
                QUERY(CL_DEVICE_NAME, name),
                QUERY(CL_DEVICE_VENDOR, vendor),
                QUERY(CL_DRIVER_VERSION, driver_version),
                QUERY(CL_DEVICE_VERSION, device_version),
                QUERY(CL_DEVICE_OPENCL_C_VERSION, opencl_c_version),
                QUERY(CL_DEVICE_EXTENSIONS, extensions),
        };
        const struct {
                cl_device_info param;
                const char *what;
                cl_ulong *field;
        } ulongs[] = {
                QUERY(CL_DEVICE_TYPE, type),
                QUERY(CL_DEVICE_GLOBAL_MEM_SIZE, global_memory_bytes),
                QUERY(CL_DEVICE_MAX_MEM_ALLOC_SIZE, max_allocation_bytes),
                QUERY(CL_DEVICE_LOCAL_MEM_SIZE, local_memory_bytes),
                QUERY(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, global_memory_cache_bytes),
                QUERY(CL_DEVICE_SINGLE_FP_CONFIG, single_fp_config),
        };
        const struct {
                cl_device_info param;
                const char *what;
                cl_uint *field;
        } uints[] = {
                QUERY(CL_DEVICE_VENDOR_ID, vendor_id),
                QUERY(CL_DEVICE_MAX_COMPUTE_UNITS, compute_units),
                QUERY(CL_DEVICE_MAX_CLOCK_FREQUENCY, max_clock_mhz),
        };
#undef QUERY
        cl_int err;

        for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
                err = cl_device_get_string(d->id, strings[i].param, strings[i].field);
                if (err != CL_SUCCESS)
                        return gpu_error_cl(e, err, "clGetDeviceInfo(%s)", strings[i].what);
        }
        for (size_t i = 0; i < ELEMENTSOF(ulongs); i++) {
                err = cl_device_get_ulong(d->id, ulongs[i].param, ulongs[i].field);
                if (err != CL_SUCCESS)
                        return gpu_error_cl(e, err, "clGetDeviceInfo(%s)", ulongs[i].what);
        }
        for (size_t i = 0; i < ELEMENTSOF(uints); i++) {
                err = cl_device_get_uint(d->id, uints[i].param, uints[i].field);
                if (err != CL_SUCCESS)
                        return gpu_error_cl(e, err, "clGetDeviceInfo(%s)", uints[i].what);
        }
        err = cl_device_get_size(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, &d->max_work_group_size);
        if (err != CL_SUCCESS)
                return gpu_error_cl(e, err, "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)");
        err = cl_device_get_bool(d->id, CL_DEVICE_AVAILABLE, &d->available);
        if (err != CL_SUCCESS)
                return gpu_error_cl(e, err, "clGetDeviceInfo(CL_DEVICE_AVAILABLE)");

        /* Deprecated in OpenCL 2.0 but still answered; absent means "discrete" for our purposes. */
        if (cl_device_get_bool(d->id, CL_DEVICE_HOST_UNIFIED_MEMORY, &d->host_unified_memory) != CL_SUCCESS)
                d->host_unified_memory = false;

        /* A width of 0 means "no such type" (half without cl_khr_fp16, double without cl_khr_fp64). */
        for (GpuScalarType t = 0; t < _GPU_SCALAR_MAX; t++) {
                cl_uint *native = &d->native_vector_width[t], *preferred = &d->preferred_vector_width[t];
                if (cl_device_get_uint(d->id, native_width_param[t], native) != CL_SUCCESS)
                        *native = 0;
                if (cl_device_get_uint(d->id, preferred_width_param[t], preferred) != CL_SUCCESS)
                        *preferred = 0;
        }

        d->fp16 = cl_extensions_have(d->extensions, "cl_khr_fp16");
        if (!d->fp16 ||
            cl_device_get_ulong(d->id, CL_DEVICE_HALF_FP_CONFIG, &d->half_fp_config) != CL_SUCCESS)
                d->half_fp_config = 0;

        read_uuid(d);
        read_pci_bus_id(d);
        return 0;
}

/* Keys: "<identity>@<platform name>", identity the UUID, else the PCI address, else the device name;
 * a repeat within the run gets "#<n>". The same card under two platforms (a vendor ICD and rusticl)
 * has the same UUID, so the platform is part of the key. Order-independent except for "#<n>", which
 * follows the ICD's order among otherwise identical devices. */
static int devices_assign_keys(GpuDevice *devices, size_t n) {
        for (size_t i = 0; i < n; i++) {
                GpuDevice *d = devices + i;
                _cleanup_(freep) char *base = NULL;
                int r;

                if (!isempty(d->uuid))
                        r = asprintf(&base, "uuid:%s@%s", d->uuid, d->platform_name);
                else if (!isempty(d->pci_bus_id))
                        r = asprintf(&base, "pci:%s@%s", d->pci_bus_id, d->platform_name);
                else
                        r = asprintf(&base, "name:%s@%s", d->name, d->platform_name);
                if (r < 0)
                        return -ENOMEM;

                unsigned repeat = 0;
                for (size_t j = 0; j < i; j++) {
                        const char *k = devices[j].key;
                        size_t len = strlen(base);
                        if (strneq(k, base, len) && (k[len] == '\0' || k[len] == '#'))
                                repeat++;
                }
                if (repeat == 0)
                        d->key = TAKE_PTR(base);
                else if (asprintf(&d->key, "%s#%u", base, repeat) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static json_object *platform_new_json(unsigned index) {
        json_object *o = json_object_new_object();
        if (o)
                json_object_object_add(o, "index", json_object_new_int((int) index));
        return o;
}

static void platform_add_error(json_object *platform, const GpuError *e) {
        json_object_object_add(platform, "error", json_error_new(e->name, e->message));
        if (!json_object_object_get_ex(platform, "device_count", NULL))
                json_object_object_add(platform, "device_count", json_object_new_int(0));
}

/* Adds the platform's devices to *devices; a failure is recorded on the platform, not returned. */
static int platform_enumerate(cl_platform_id platform, unsigned platform_index, json_object *platform_json,
                              GpuDevice **devices, size_t *n_devices) {
        _cleanup_(freep) char *name = NULL, *vendor = NULL, *version = NULL, *profile = NULL;
        _cleanup_(freep) cl_device_id *ids = NULL;
        cl_uint n_ids = 0;
        GpuError e = {};
        cl_int err;

        (void) cl_platform_get_string(platform, CL_PLATFORM_NAME, &name);
        (void) cl_platform_get_string(platform, CL_PLATFORM_VENDOR, &vendor);
        (void) cl_platform_get_string(platform, CL_PLATFORM_VERSION, &version);
        (void) cl_platform_get_string(platform, CL_PLATFORM_PROFILE, &profile);
        json_object_object_add(platform_json, "name", json_string_or_null(name));
        json_object_object_add(platform_json, "vendor", json_string_or_null(vendor));
        json_object_object_add(platform_json, "version", json_string_or_null(version));
        json_object_object_add(platform_json, "profile", json_string_or_null(profile));

        err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n_ids);
        if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n_ids == 0)) {
                json_object_object_add(platform_json, "device_count", json_object_new_int(0));
                return 0;
        }
        if (err != CL_SUCCESS) {
                gpu_error_cl(&e, err, "clGetDeviceIDs()");
                platform_add_error(platform_json, &e);
                return 0;
        }
        ids = calloc(n_ids, sizeof(cl_device_id));
        if (!ids)
                return -ENOMEM;
        err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n_ids, ids, NULL);
        if (err != CL_SUCCESS) {
                gpu_error_cl(&e, err, "clGetDeviceIDs()");
                platform_add_error(platform_json, &e);
                return 0;
        }

        unsigned listed = 0;
        for (cl_uint i = 0; i < n_ids; i++) {
                GpuDevice *grown = reallocarray(*devices, *n_devices + 1, sizeof(GpuDevice));
                if (!grown)
                        return -ENOMEM;
                *devices = grown;

                GpuDevice *d = grown + *n_devices;
                *d = (GpuDevice) {
                        .platform = platform,
                        .id = ids[i],
                        .index = (unsigned) *n_devices,
                        .platform_index = platform_index,
                        .device_index = i,
                };
                d->platform_name = strdup(strempty(name));
                d->platform_vendor = strdup(strempty(vendor));
                d->platform_version = strdup(strempty(version));
                if (!d->platform_name || !d->platform_vendor || !d->platform_version) {
                        gpu_device_done(d);
                        return -ENOMEM;
                }
                if (device_read(d, &e) < 0) {
                        /* Keep the first failure; the other devices of the platform may still work. */
                        if (!json_object_object_get_ex(platform_json, "error", NULL))
                                platform_add_error(platform_json, &e);
                        gpu_device_done(d);
                        continue;
                }
                (*n_devices)++;
                listed++;
        }
        json_object_object_add(platform_json, "device_count", json_object_new_int((int) listed));
        return 0;
}

int gpu_devices_enumerate(GpuDevice **ret, size_t *ret_n, json_object **ret_platforms, GpuError *e) {
        _cleanup_(json_object_putp) json_object *platforms_json = json_object_new_array();
        _cleanup_(freep) cl_platform_id *platforms = NULL;
        GpuDevice *devices = NULL;
        size_t n_devices = 0;
        cl_uint n_platforms = 0;
        cl_int err;
        int r;

        if (!platforms_json)
                return gpu_error_set(e, ENOMEM, "ENOMEM", "out of memory");

        /* ocl-icd answers CL_PLATFORM_NOT_FOUND_KHR when it found no ICD at all, or none that loads. */
        err = clGetPlatformIDs(0, NULL, &n_platforms);
        if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && n_platforms == 0))
                goto done;
        if (err != CL_SUCCESS)
                return gpu_error_cl(e, err, "clGetPlatformIDs()");

        platforms = calloc(n_platforms, sizeof(cl_platform_id));
        if (!platforms)
                return gpu_error_set(e, ENOMEM, "ENOMEM", "out of memory");
        err = clGetPlatformIDs(n_platforms, platforms, NULL);
        if (err != CL_SUCCESS)
                return gpu_error_cl(e, err, "clGetPlatformIDs()");

        for (cl_uint p = 0; p < n_platforms; p++) {
                json_object *pj = platform_new_json(p);
                if (!pj || json_object_array_add(platforms_json, pj) < 0) {
                        json_object_put(pj);
                        r = -ENOMEM;
                        goto fail;
                }
                r = platform_enumerate(platforms[p], p, pj, &devices, &n_devices);
                if (r < 0)
                        goto fail;
        }

        r = devices_assign_keys(devices, n_devices);
        if (r < 0)
                goto fail;

done:
        *ret = devices;
        *ret_n = n_devices;
        *ret_platforms = TAKE_PTR(platforms_json);
        return 0;

fail:
        gpu_devices_free(devices, n_devices);
        return gpu_error_set(e, r, "ENOMEM", "out of memory while listing OpenCL devices");
}

static json_object *fp_config_to_json(cl_device_fp_config c) {
        static const struct {
                cl_device_fp_config bit;
                const char *name;
        } bits[] = {
                { CL_FP_DENORM, "denorm" },
                { CL_FP_INF_NAN, "inf_nan" },
                { CL_FP_ROUND_TO_NEAREST, "round_to_nearest" },
                { CL_FP_ROUND_TO_ZERO, "round_to_zero" },
                { CL_FP_ROUND_TO_INF, "round_to_inf" },
                { CL_FP_FMA, "fma" },
                { CL_FP_SOFT_FLOAT, "soft_float" },
                { CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, "correctly_rounded_divide_sqrt" },
        };
        json_object *a = json_object_new_array();
        if (!a)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(bits); i++)
                if (c & bits[i].bit)
                        json_object_array_add(a, json_object_new_string(bits[i].name));
        return a;
}

static json_object *widths_to_json(const cl_uint widths[static _GPU_SCALAR_MAX]) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        for (GpuScalarType t = 0; t < _GPU_SCALAR_MAX; t++)
                json_object_object_add(o, scalar_type_name[t], json_object_new_int((int) widths[t]));
        return o;
}

json_object *gpu_device_to_json(const GpuDevice *d) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *widths;

        if (!o)
                return NULL;
        json_object_object_add(o, "index", json_object_new_int((int) d->index));
        json_object_object_add(o, "key", json_string_or_null(d->key));
        json_object_object_add(o, "platform_index", json_object_new_int((int) d->platform_index));
        json_object_object_add(o, "device_index", json_object_new_int((int) d->device_index));
        json_object_object_add(o, "name", json_string_or_null(d->name));
        json_object_object_add(o, "vendor", json_string_or_null(d->vendor));
        json_object_object_add(o, "vendor_id", json_object_new_int64(d->vendor_id));
        json_object_object_add(o, "platform", json_string_or_null(d->platform_name));
        json_object_object_add(o, "platform_vendor", json_string_or_null(d->platform_vendor));
        json_object_object_add(o, "platform_version", json_string_or_null(d->platform_version));
        json_object_object_add(o, "type", json_object_new_string(gpu_device_type_to_string(d->type)));
        json_object_object_add(o, "available", json_object_new_boolean(d->available));
        json_object_object_add(o, "host_unified_memory", json_object_new_boolean(d->host_unified_memory));
        json_object_object_add(o, "compute_units", json_object_new_int64(d->compute_units));
        json_object_object_add(o, "max_clock_mhz", json_object_new_int64(d->max_clock_mhz));
        json_object_object_add(o, "global_memory_bytes", json_object_new_uint64(d->global_memory_bytes));
        json_object_object_add(o, "max_allocation_bytes", json_object_new_uint64(d->max_allocation_bytes));
        json_object_object_add(o, "local_memory_bytes", json_object_new_uint64(d->local_memory_bytes));
        json_object_object_add(o, "global_memory_cache_bytes",
                               json_object_new_uint64(d->global_memory_cache_bytes));
        json_object_object_add(o, "max_work_group_size", json_object_new_uint64(d->max_work_group_size));
        json_object_object_add(o, "driver_version", json_string_or_null(d->driver_version));
        json_object_object_add(o, "opencl_version", json_string_or_null(d->device_version));
        json_object_object_add(o, "opencl_c_version", json_string_or_null(d->opencl_c_version));
        json_object_object_add(o, "fp16_supported", json_object_new_boolean(d->fp16));
        json_object_object_add(o, "half_fp_config", fp_config_to_json(d->half_fp_config));
        json_object_object_add(o, "single_fp_config", fp_config_to_json(d->single_fp_config));

        widths = json_object_new_object();
        if (!widths)
                return NULL;
        json_object_object_add(widths, "native", widths_to_json(d->native_vector_width));
        json_object_object_add(widths, "preferred", widths_to_json(d->preferred_vector_width));
        json_object_object_add(o, "vector_widths", widths);

        json_object_object_add(o, "uuid", json_string_or_null(isempty(d->uuid) ? NULL : d->uuid));
        json_object_object_add(o, "pci_bus_id",
                               json_string_or_null(isempty(d->pci_bus_id) ? NULL : d->pci_bus_id));
        json_object_object_add(o, "extensions", json_string_or_null(d->extensions));
        return TAKE_PTR(o);
}
