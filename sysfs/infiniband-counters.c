/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reads the counters of one RDMA port for the daemon's watch. */
#include <limits.h>

#include "infiniband-counters.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "sysfs.h"

static const char *const counter_table[_INFINIBAND_COUNTER_MAX] = {
        [INFINIBAND_SYMBOL_ERROR] = "symbol_error",
        [INFINIBAND_LINK_ERROR_RECOVERY] = "link_error_recovery",
        [INFINIBAND_LINK_DOWNED] = "link_downed",
        [INFINIBAND_PORT_RCV_ERRORS] = "port_rcv_errors",
        [INFINIBAND_PORT_XMIT_DISCARDS] = "port_xmit_discards",
        [INFINIBAND_PORT_RCV_DATA] = "port_rcv_data",
        [INFINIBAND_PORT_XMIT_DATA] = "port_xmit_data",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(infiniband_counter, InfinibandCounter, counter_table)

static bool is_data(InfinibandCounter c) {
        return c == INFINIBAND_PORT_RCV_DATA || c == INFINIBAND_PORT_XMIT_DATA;
}

int infiniband_port_counters_read(int root_fd, const char *device, unsigned port, InfinibandCounters *ret) {
        char dir[PATH_MAX];
        InfinibandCounters c;
        int n = 0, r;

        if (isempty(device) || strchr(device, '/') || streq(device, ".") || streq(device, ".."))
                return -EINVAL;
        snprintf(dir, sizeof(dir), "class/infiniband/%s/ports/%u", device, port);
        r = sysfs_exists(root_fd, dir, NULL);
        if (r == 0)
                return -ENODEV;
        if (r < 0)
                return r;

        snprintf(dir, sizeof(dir), "class/infiniband/%s/ports/%u/counters", device, port);
        for (InfinibandCounter i = 0; i < _INFINIBAND_COUNTER_MAX; i++) {
                uint64_t v;

                c.value[i] = INFINIBAND_COUNTER_UNKNOWN;
                if (sysfs_read_u64(root_fd, dir, counter_table[i], &v) < 0 || v == INFINIBAND_COUNTER_UNKNOWN)
                        continue;
                if (is_data(i)) {
                        if (v > (INFINIBAND_COUNTER_UNKNOWN - 1) / 4)
                                continue; /* no port moves that much: garbage */
                        v *= 4;
                }
                c.value[i] = v;
                n++;
        }
        *ret = c;
        return n;
}
