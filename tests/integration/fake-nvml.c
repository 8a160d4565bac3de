/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for libnvidia-ml.so.1 in the GPU probe's tests (test_probe_gpu_nvml.py builds it into a
 * directory of its own as libnvidia-ml.so.1 and puts that directory on LD_LIBRARY_PATH). It implements
 * the entry points the probe resolves, with NVML's ABI, for four GPUs:
 *   0000:18:00.0 and 0000:1c:00.0: four NVLink 3 links to each other, link 4 present but inactive;
 *   0000:3a:00.0 and 0000:3e:00.0: six NVLink 4 links each to NVSwitches (0000:0{1..3}:00.0);
 * FAKE_NVML_MODE: "init-fail" (nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED), "no-nvlink" (every
 * NVLink query NOT_SUPPORTED), "garbage" (remote bus ids that are not PCI addresses).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
        char busIdLegacy[16];
        unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
        char busId[32];
} nvmlPciInfo_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_DRIVER_NOT_LOADED 9

static const char *const bus_ids[] = { "00000000:18:00.0", "00000000:1C:00.0", "00000000:3A:00.0", "00000000:3E:00.0" };
static int initialized;

static const char *mode(void) {
        const char *m = getenv("FAKE_NVML_MODE");
        return m ? m : "ok";
}

static int index_of(nvmlDevice_t d) {
        long i = (long) (size_t) d - 1;
        return i >= 0 && i < 4 ? (int) i : -1;
}

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit_v2(void) {
        if (strcmp(mode(), "init-fail") == 0)
                return NVML_ERROR_DRIVER_NOT_LOADED;
        initialized = 1;
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlShutdown(void) {
        initialized = 0;
        return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r);
const char *nvmlErrorString(nvmlReturn_t r) {
        return r == NVML_ERROR_DRIVER_NOT_LOADED ? "Driver Not Loaded" : "Unknown Error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
        *count = 4;
        return initialized ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
        if (i >= 4)
                return NVML_ERROR_INVALID_ARGUMENT;
        *d = (nvmlDevice_t) (size_t) (i + 1);
        return NVML_SUCCESS;
}

static void fill(nvmlPciInfo_t *p, const char *bus_id) {
        memset(p, 0, sizeof(*p));
        snprintf(p->busId, sizeof(p->busId), "%s", bus_id);
        snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%s", bus_id + 4);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
        int i = index_of(d);
        if (i < 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        fill(p, bus_ids[i]);
        return NVML_SUCCESS;
}

static nvmlReturn_t check_link(nvmlDevice_t d, unsigned link) {
        int i = index_of(d);
        if (i < 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (strcmp(mode(), "no-nvlink") == 0)
                return NVML_ERROR_NOT_SUPPORTED;
        return link < (i < 2 ? 12u : 18u) ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

static int link_active(nvmlDevice_t d, unsigned link) {
        return index_of(d) < 2 ? link < 4 : link < 6;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active) {
        nvmlReturn_t r = check_link(d, link);
        if (r == NVML_SUCCESS)
                *active = link_active(d, link);
        return r;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int *version);
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int *version) {
        nvmlReturn_t r = check_link(d, link);
        if (r == NVML_SUCCESS)
                *version = index_of(d) < 2 ? 3 : 4;
        return r;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *p) {
        nvmlReturn_t r = check_link(d, link);
        char buf[32];
        int i = index_of(d);

        if (r != NVML_SUCCESS)
                return r;
        if (strcmp(mode(), "garbage") == 0)
                snprintf(buf, sizeof(buf), "%s", link % 2 ? "not a bus id" : "00000000:FF:40.9");
        else if (i < 2)
                snprintf(buf, sizeof(buf), "%s", bus_ids[1 - i]);
        else
                snprintf(buf, sizeof(buf), "00000000:0%u:00.0", link % 3 + 1);
        fill(p, buf);
        return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link, int *type);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link, int *type) {
        nvmlReturn_t r = check_link(d, link);
        if (r == NVML_SUCCESS)
                *type = index_of(d) < 2 ? 0 : 2;
        return r;
}
