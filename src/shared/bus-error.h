/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-error.h — every D-Bus error name the daemon returns, in one place */
#pragma once

#include <systemd/sd-bus.h>

#define BUS_ERROR_PREFIX "org.linkprobe.LinkProbe1.Error."
#define BUS_ERROR_NO_SUCH_LINK BUS_ERROR_PREFIX "NoSuchLink"
#define BUS_ERROR_RATE_LIMITED BUS_ERROR_PREFIX "RateLimited"
#define BUS_ERROR_NOT_SUPPORTED BUS_ERROR_PREFIX "NotSupported"
#define BUS_ERROR_BUSY BUS_ERROR_PREFIX "Busy"
#define BUS_ERROR_FAILED BUS_ERROR_PREFIX "Failed"
#define BUS_ERROR_NO_SUCH_PEER BUS_ERROR_PREFIX "NoSuchPeer"
#define BUS_ERROR_INHIBITED BUS_ERROR_PREFIX "Inhibited"

/* Maps our names to errno values, so sd_bus_error_get_errno() and %m work on either side. */
extern const sd_bus_error_map linkprobe_bus_error_map[];
