/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infiniband-counters.h — an RDMA port's error and data counters (class/infiniband/DEV/ports/N/counters) */
#pragma once

#include <stdint.h>

#include "shared/macros.h"

/*
 * The PortCounters of the InfiniBand performance management agent as the kernel shows them
 * (Documentation/ABI/stable/sysfs-class-infiniband). On mlx5 each read asks the firmware. Counters of
 * the PMA's 16- and 32-bit set saturate rather than wrap: one pinned at its maximum no longer rises.
 * Soft devices (rxe, siw) and some drivers have no counters directory at all.
 */

/* Unknown, as the daemon's counters say it (2^64-1). */
#define INFINIBAND_COUNTER_UNKNOWN UINT64_MAX

typedef enum InfinibandCounter {
        INFINIBAND_SYMBOL_ERROR,        /* symbol_error: minor link errors */
        INFINIBAND_LINK_ERROR_RECOVERY, /* link_error_recovery: successful link retrainings */
        INFINIBAND_LINK_DOWNED,         /* link_downed: retrainings that failed, the link went down */
        INFINIBAND_PORT_RCV_ERRORS,     /* port_rcv_errors: packets received with errors */
        INFINIBAND_PORT_XMIT_DISCARDS,  /* port_xmit_discards: outbound packets dropped (down, congestion) */
        INFINIBAND_PORT_RCV_DATA,       /* port_rcv_data: data received, in bytes here (the file counts 4-byte words) */
        INFINIBAND_PORT_XMIT_DATA,      /* port_xmit_data: data sent, likewise */
        _INFINIBAND_COUNTER_MAX,
        _INFINIBAND_COUNTER_INVALID = -EINVAL,
} InfinibandCounter;

typedef struct InfinibandCounters {
        uint64_t value[_INFINIBAND_COUNTER_MAX]; /* INFINIBAND_COUNTER_UNKNOWN when missing or malformed */
} InfinibandCounters;

/* The file's name in counters/. */
const char *infiniband_counter_to_string(InfinibandCounter c) _const_;

/**
 * infiniband_port_counters_read() - read a port's counters
 * @root_fd: the sysfs root
 * @device: the device's name in class/infiniband
 * @port: the port number
 * @ret: every counter, unknown where its file is missing, unreadable or not a number
 *
 * Return: how many counters were read, 0 when none was (no counters directory); -ENODEV when the
 * port itself is gone; -EINVAL for a bad device name.
 */
int infiniband_port_counters_read(int root_fd, const char *device, unsigned port, InfinibandCounters *ret);
