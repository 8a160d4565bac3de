/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "bus-error.h"

const sd_bus_error_map linkprobe_bus_error_map[] = {
        SD_BUS_ERROR_MAP(BUS_ERROR_NO_SUCH_LINK, ENXIO),
        SD_BUS_ERROR_MAP(BUS_ERROR_RATE_LIMITED, EBUSY),
        SD_BUS_ERROR_MAP(BUS_ERROR_NOT_SUPPORTED, EOPNOTSUPP),
        SD_BUS_ERROR_MAP(BUS_ERROR_BUSY, EBUSY),
        SD_BUS_ERROR_MAP(BUS_ERROR_FAILED, EIO),
        SD_BUS_ERROR_MAP(BUS_ERROR_NO_SUCH_PEER, ENOENT),
        SD_BUS_ERROR_MAP(BUS_ERROR_INHIBITED, EAGAIN),
        SD_BUS_ERROR_MAP_END,
};
