/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpu-bus.h — the org.linkprobe.LinkProbe1.Gpu interface on gpu/<n> objects, and Manager.ProbeGpus() */
#pragma once

#include <systemd/sd-bus.h>

#define GPU_INTERFACE "org.linkprobe.LinkProbe1.Gpu"
#define GPU_PATH_PREFIX "/org/linkprobe/LinkProbe1/gpu"

typedef struct Manager Manager;

int gpu_object_path(unsigned number, char **ret);
/* Registers the fallback vtable and the node enumerator for every gpu object. */
int gpu_bus_register(Manager *m);

/* Manager.ProbeGpus() -> ao: privileged, rate-limited; answered when the measuring run ends. */
int bus_method_probe_gpus(sd_bus_message *message, void *userdata, sd_bus_error *error);
