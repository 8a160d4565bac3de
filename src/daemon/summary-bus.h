/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* summary-bus.h — the org.linkprobe.LinkProbe1.Summary interface of the root object */
#pragma once

#include <systemd/sd-bus.h>

typedef struct Summary Summary;

int summary_bus_register(sd_bus *bus, Summary *s);
