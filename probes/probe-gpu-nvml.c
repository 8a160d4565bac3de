/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVLink state and peers through NVML. The library is opened with dlopen() only when the NVIDIA
 * driver installed it: no build or package dependency, and a machine without it publishes no NVLinks
 * without calling that an error. Only the few entry points below are declared (their ABI is NVML's
 * public one, stable since the _v2/_v3 suffixes); a missing optional one is skipped. The probe runs as
 * a child with a deadline, so a driver that hangs in nvmlInit() costs a run, never the daemon.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "probe-gpu-json.h"
#include "probe-gpu-nvml.h"
#include "shared/string-util.h"
#include "sysfs/pci.h"

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_FEATURE_ENABLED 1
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_NVLINK_DEVICE_TYPE_GPU 0
#define NVML_NVLINK_DEVICE_TYPE_IBMNPU 1
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 2
#define NVML_DEVICES_MAX 64

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvml.h's nvmlPciInfo_t (the layout nvmlDeviceGetPciInfo_v3() and the _v2 remote query fill). */
typedef struct NvmlPciInfo {
        char busIdLegacy[16];
        unsigned int domain;
        unsigned int bus;
        unsigned int device;
        unsigned int pciDeviceId;
        unsigned int pciSubSystemId;
        char busId[32];
} NvmlPciInfo;
_Static_assert(sizeof(NvmlPciInfo) == 68, "nvmlPciInfo_t layout");

typedef struct Nvml {
        void *handle;
        nvmlReturn_t (*init)(void);
        nvmlReturn_t (*shutdown)(void);
        const char *(*error_string)(nvmlReturn_t);
        nvmlReturn_t (*get_count)(unsigned int *);
        nvmlReturn_t (*get_handle)(unsigned int, nvmlDevice_t *);
        nvmlReturn_t (*get_pci)(nvmlDevice_t, NvmlPciInfo *);
        nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned int, int *);
        nvmlReturn_t (*link_version)(nvmlDevice_t, unsigned int, unsigned int *);
        nvmlReturn_t (*link_remote_pci)(nvmlDevice_t, unsigned int, NvmlPciInfo *);
        nvmlReturn_t (*link_remote_type)(nvmlDevice_t, unsigned int, int *); /* optional */
} Nvml;

int gpu_nvml_normalize_bus_id(const char *s, char *buf, size_t size) {
        unsigned domain, bus, device, function;
        char tail;

        if (!s || sscanf(s, "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4)
                return -EINVAL;
        if (bus > 0xff || device > 0x1f || function > 7 || strlen(s) > 31)
                return -EINVAL;
        snprintf(buf, size, "%04x:%02x:%02x.%x", domain, bus, device, function);
        return pci_address_is_valid(buf) ? 0 : -EINVAL;
}

static json_object *status_object(const char *status) {
        json_object *o = json_object_new_object();
        if (o)
                json_object_object_add(o, "status", json_object_new_string(status));
        return o;
}

static json_object *error_object(const Nvml *n, const char *call, nvmlReturn_t rc) {
        json_object *o = status_object("error");
        char name[32], message[256];

        snprintf(name, sizeof(name), "NVML_ERROR_%d", rc);
        snprintf(message, sizeof(message), "%s() failed: %s", call,
                 n->error_string ? strempty(n->error_string(rc)) : "no message");
        if (o)
                json_object_object_add(o, "error", json_error_new(name, message));
        return o;
}

static bool nvml_open(Nvml *n, char *why, size_t size) {
        *n = (Nvml) {};
        n->handle = dlopen(NVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!n->handle) {
                snprintf(why, size, "%s", strempty(dlerror()));
                return false;
        }
#define SYM(field, name) (*(void **) &n->field = dlsym(n->handle, name))
        SYM(init, "nvmlInit_v2");
        SYM(shutdown, "nvmlShutdown");
        SYM(error_string, "nvmlErrorString");
        SYM(get_count, "nvmlDeviceGetCount_v2");
        SYM(get_handle, "nvmlDeviceGetHandleByIndex_v2");
        SYM(get_pci, "nvmlDeviceGetPciInfo_v3");
        SYM(link_state, "nvmlDeviceGetNvLinkState");
        SYM(link_version, "nvmlDeviceGetNvLinkVersion");
        SYM(link_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
        SYM(link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
#undef SYM
        if (!n->init || !n->shutdown || !n->get_count || !n->get_handle || !n->get_pci || !n->link_state ||
            !n->link_remote_pci) {
                snprintf(why, size, "%s lacks the NVLink entry points", NVML_LIBRARY);
                dlclose(n->handle);
                n->handle = NULL;
                return false;
        }
        return true;
}

static const char *remote_type_name(int type) {
        switch (type) {
        case NVML_NVLINK_DEVICE_TYPE_GPU:
                return "gpu";
        case NVML_NVLINK_DEVICE_TYPE_IBMNPU:
                return "npu";
        case NVML_NVLINK_DEVICE_TYPE_SWITCH:
                return "switch";
        }
        return "unknown";
}

/* The active links of one GPU; a link NVML does not have (INVALID_ARGUMENT) or a GPU without NVLink
 * (NOT_SUPPORTED) ends the list. */
static json_object *device_links(const Nvml *n, nvmlDevice_t dev) {
        json_object *links = json_object_new_array();

        for (unsigned link = 0; links && link < NVML_NVLINK_MAX_LINKS; link++) {
                char remote[PCI_ADDRESS_MAX + 8];
                unsigned version = 0;
                int active = 0, type = -1;
                NvmlPciInfo pci = {};
                nvmlReturn_t rc = n->link_state(dev, link, &active);

                if (rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_NOT_SUPPORTED)
                        break;
                if (rc != NVML_SUCCESS || active != NVML_FEATURE_ENABLED)
                        continue;
                if (n->link_remote_pci(dev, link, &pci) != NVML_SUCCESS ||
                    gpu_nvml_normalize_bus_id(pci.busId, remote, sizeof(remote)) < 0)
                        continue;
                if (n->link_version && n->link_version(dev, link, &version) != NVML_SUCCESS)
                        version = 0;
                if (n->link_remote_type && n->link_remote_type(dev, link, &type) != NVML_SUCCESS)
                        type = -1;

                json_object *l = json_object_new_object();
                if (!l)
                        break;
                json_object_object_add(l, "link", json_object_new_int((int) link));
                json_object_object_add(l, "version", json_object_new_int((int) MIN(version, 99u)));
                json_object_object_add(l, "remote_pci_bus_id", json_object_new_string(remote));
                json_object_object_add(l, "remote_type", json_object_new_string(remote_type_name(type)));
                json_object_array_add(links, l);
        }
        return links;
}

json_object *gpu_nvml_to_json(void) {
        json_object *result = NULL, *devices;
        unsigned count = 0;
        char why[512];
        nvmlReturn_t rc;
        Nvml n;

        if (!nvml_open(&n, why, sizeof(why))) {
                result = status_object("absent");
                if (result)
                        json_object_object_add(result, "reason", json_object_new_string(why));
                return result;
        }
        rc = n.init();
        if (rc != NVML_SUCCESS) {
                result = error_object(&n, "nvmlInit_v2", rc);
                dlclose(n.handle);
                return result;
        }
        rc = n.get_count(&count);
        if (rc != NVML_SUCCESS) {
                result = error_object(&n, "nvmlDeviceGetCount_v2", rc);
                goto finish;
        }
        result = status_object("ok");
        devices = json_object_new_array();
        if (!result || !devices) {
                json_object_put(devices);
                goto finish;
        }
        json_object_object_add(result, "devices", devices);
        for (unsigned i = 0; i < MIN(count, (unsigned) NVML_DEVICES_MAX); i++) {
                char address[PCI_ADDRESS_MAX + 8];
                NvmlPciInfo pci = {};
                nvmlDevice_t dev;

                if (n.get_handle(i, &dev) != NVML_SUCCESS || n.get_pci(dev, &pci) != NVML_SUCCESS ||
                    gpu_nvml_normalize_bus_id(pci.busId, address, sizeof(address)) < 0)
                        continue;
                json_object *d = json_object_new_object();
                if (!d)
                        break;
                json_object_object_add(d, "pci_bus_id", json_object_new_string(address));
                json_object_object_add(d, "nvlinks", device_links(&n, dev));
                json_object_array_add(devices, d);
        }
finish:
        (void) n.shutdown();
        dlclose(n.handle);
        return result;
}
