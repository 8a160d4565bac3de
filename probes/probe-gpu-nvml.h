/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-gpu-nvml.h — NVLink state and peers through NVML, loaded only where the driver installed it */
#pragma once

#include <json-c/json.h>

/* The library dlopen()ed; nothing links against it and no package depends on it. */
#define NVML_LIBRARY "libnvidia-ml.so.1"

/**
 * gpu_nvml_to_json() - the document's "nvml" member
 *
 * {"status": "absent", "reason": ...} without the library (no NVIDIA driver: not an error);
 * {"status": "error", "error": {"name", "message"}} when NVML cannot be initialised;
 * {"status": "ok", "devices": [{"pci_bus_id": "0000:18:00.0", "nvlinks": [{"link": 0, "version": 4,
 * "remote_pci_bus_id": "0000:19:00.0", "remote_type": "gpu"}, ...]}]} with each GPU's active NVLinks.
 * PCI addresses are written as the kernel names them (NVML's "00000000:18:00.0" rewritten).
 *
 * Returns NULL only when out of memory.
 */
json_object *gpu_nvml_to_json(void);

/* "00000000:3B:00.0" -> "0000:3b:00.0" into buf (at least 17 bytes). -EINVAL for anything else. */
int gpu_nvml_normalize_bus_id(const char *s, char *buf, size_t size);
