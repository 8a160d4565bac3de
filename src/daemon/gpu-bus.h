/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpu-bus.h — the org.linkprobe.LinkProbe1.Gpu interface on gpu/<n> objects, and Manager.ProbeGpus() */
#pragma once

#include <systemd/sd-bus.h>

typedef struct BusRegistry BusRegistry;
typedef struct GpuProber GpuProber;
typedef struct Gpus Gpus;

/* Registers the fallback vtable and the node enumerator for every gpu object, and answers the
 * prober's waiting ProbeGpus() calls (prober NULL: GPU probing is off). */
int gpu_bus_register(BusRegistry *registry, Gpus *gpus, GpuProber *prober);

/* Manager.ProbeGpus() -> ao: privileged, rate-limited; answered when the measuring run ends
 * (userdata: the Manager). */
int bus_method_probe_gpus(sd_bus_message *message, void *userdata, sd_bus_error *error);
