/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* watched.h — what the daemon's watch reads over time: a PCI function's trained link, AER counters and GPU
 * load, an RDMA port's counters */
#pragma once

#include <stdint.h>

#include "pci.h"
#include "shared/macros.h"

/* ---- PCI functions ---- */

/*
 * The attributes the kernel changes without a uevent, read by the daemon's watch every interval. A
 * function's directory is its canonical syspath (PciDevice.syspath), so no bus link is resolved per
 * read. Each reader returns 0, -ENOENT when the attribute does not exist (an older kernel, a device
 * without AER, not a GPU), -ENODEV when the function went away meanwhile, -EINVAL/-ERANGE for a value
 * the ABI does not allow; what it writes on failure is unknown.
 */

/* Unknown, as the daemon's counters say it (2^64-1). */
#define PCI_COUNTER_UNKNOWN UINT64_MAX
/* The kinds of error one AER file lists (8 correctable, 17 uncorrectable in current kernels). */
#define PCI_AER_KINDS_MAX 24
#define PCI_AER_NAME_MAX 40

typedef enum PciAerSeverity {
        PCI_AER_CORRECTABLE, /* aer_dev_correctable, TOTAL_ERR_COR */
        PCI_AER_NONFATAL,    /* aer_dev_nonfatal, TOTAL_ERR_NONFATAL */
        PCI_AER_FATAL,       /* aer_dev_fatal, TOTAL_ERR_FATAL */
        _PCI_AER_SEVERITY_MAX,
        _PCI_AER_SEVERITY_INVALID = -EINVAL,
} PciAerSeverity;

typedef struct PciAerKind {
        char name[PCI_AER_NAME_MAX]; /* "Receiver Error" ("RxErr" in older kernels) */
        uint64_t count;
} PciAerKind;

/* One AER file (Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats): a line per kind of
 * error, "<name> <count>", and a last line "TOTAL_ERR_<severity> <count>". */
typedef struct PciAerCounters {
        uint64_t total; /* the TOTAL_ line: ERR_* messages, which may each report several errors */
        size_t n_kinds;
        PciAerKind kinds[PCI_AER_KINDS_MAX];
} PciAerCounters;

const char *pci_aer_severity_to_attribute(PciAerSeverity s) _const_;

/* The current_link_speed and current_link_width of the function at syspath. A speed the kernel does
 * not know ("Unknown", as SR-IOV VFs say) is 0, as is width 0. */
int pci_read_current_link(int root_fd, const char *syspath, PciLink *ret);

/* Parses one AER file's text. -EINVAL for a line that is not "<name> <count>", a missing or
 * misplaced total line; -ERANGE for a count beyond 64 bits. Kinds beyond PCI_AER_KINDS_MAX are
 * counted in the total only. */
int pci_aer_parse(const char *text, PciAerSeverity s, PciAerCounters *ret);
int pci_aer_read(int root_fd, const char *syspath, PciAerSeverity s, PciAerCounters *ret);

/*
 * How busy a GPU is, 0..100, from gpu_busy_percent (amdgpu). A device its driver has runtime-suspended
 * (power/runtime_status "suspended") is idle: 0, and the busy attribute is not read, since reading it
 * would wake the GPU on some kernels. -ENOENT: the driver does not say.
 */
int pci_read_gpu_busy(int root_fd, const char *syspath, int *ret_percent);

/* ---- RDMA ports ---- */

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
