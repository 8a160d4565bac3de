/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reads what changes over time for the daemon's watch: a PCI function's trained link, its AER counters
 * and a GPU's load; an RDMA port's counters. Strict: a value the ABI does not allow is an error or
 * unknown, never a guess. */
#include <limits.h>

#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "sysfs.h"
#include "watched.h"

/* ---- PCI functions ---- */

static const char *const aer_attribute_table[_PCI_AER_SEVERITY_MAX] = {
        [PCI_AER_CORRECTABLE] = "aer_dev_correctable",
        [PCI_AER_NONFATAL] = "aer_dev_nonfatal",
        [PCI_AER_FATAL] = "aer_dev_fatal",
};
const char *pci_aer_severity_to_attribute(PciAerSeverity s) {
        return string_table_lookup_to_string(aer_attribute_table, ELEMENTSOF(aer_attribute_table), (int) s);
}

static const char *const aer_total_table[_PCI_AER_SEVERITY_MAX] = {
        [PCI_AER_CORRECTABLE] = "TOTAL_ERR_COR",
        [PCI_AER_NONFATAL] = "TOTAL_ERR_NONFATAL",
        [PCI_AER_FATAL] = "TOTAL_ERR_FATAL",
};

/* A function that went away leaves its directory, or answers ENODEV from a held attribute. */
static int gone_or(int r) {
        return r == -ENODEV || r == -ENXIO ? -ENODEV : r;
}

int pci_read_current_link(int root_fd, const char *syspath, PciLink *ret) {
        char speed[64], width[64];
        PciLink l = {};
        int r;

        if (isempty(syspath))
                return -EINVAL;
        r = sysfs_read_buffer(root_fd, syspath, "current_link_speed", speed, sizeof(speed));
        if (r >= 0)
                r = sysfs_read_buffer(root_fd, syspath, "current_link_width", width, sizeof(width));
        if (r == -ENOBUFS || r == -EBADMSG || r == -EFBIG)
                return -EINVAL;
        if (r < 0)
                return gone_or(r);
        r = pci_parse_link_speed(speed, &l.gts, &l.generation);
        if (r >= 0)
                r = pci_parse_link_width(width, &l.width);
        if (r < 0)
                return r;
        *ret = l;
        return 0;
}

/* "Receiver Error 2": the name is everything before the last space. */
static int parse_line(char *line, char **ret_name, uint64_t *ret_count) {
        char *space = strrchr(line, ' ');
        int r;

        if (!space || space == line)
                return -EINVAL;
        r = parse_u64(space + 1, ret_count);
        if (r < 0)
                return r;
        *space = '\0';
        /* Names are the kernel's words: printable ASCII. */
        for (const char *p = line; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
                        return -EINVAL;
        *ret_name = line;
        return 0;
}

int pci_aer_parse(const char *text, PciAerSeverity s, PciAerCounters *ret) {
        _cleanup_(freep) char *copy = NULL;
        PciAerCounters c = { .total = PCI_COUNTER_UNKNOWN };
        char *save = NULL;
        int r;

        if (!text || s < 0 || s >= _PCI_AER_SEVERITY_MAX)
                return -EINVAL;
        copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *name;
                uint64_t count;

                if (c.total != PCI_COUNTER_UNKNOWN)
                        return -EINVAL; /* nothing comes after the total */
                r = parse_line(line, &name, &count);
                if (r < 0)
                        return r;
                if (streq(name, aer_total_table[s])) {
                        if (count == PCI_COUNTER_UNKNOWN)
                                return -ERANGE;
                        c.total = count;
                        continue;
                }
                if (c.n_kinds >= PCI_AER_KINDS_MAX || strlen(name) >= PCI_AER_NAME_MAX)
                        continue;
                snprintf(c.kinds[c.n_kinds].name, PCI_AER_NAME_MAX, "%s", name);
                c.kinds[c.n_kinds++].count = count;
        }
        if (c.total == PCI_COUNTER_UNKNOWN)
                return -EINVAL;
        *ret = c;
        return 0;
}

int pci_aer_read(int root_fd, const char *syspath, PciAerSeverity s, PciAerCounters *ret) {
        char buf[SYSFS_ATTR_MAX + 1];
        int r;

        if (isempty(syspath) || s < 0 || s >= _PCI_AER_SEVERITY_MAX)
                return -EINVAL;
        r = sysfs_read_buffer(root_fd, syspath, aer_attribute_table[s], buf, sizeof(buf));
        if (r == -ENOBUFS || r == -EBADMSG || r == -EFBIG)
                return -EINVAL;
        if (r < 0)
                return gone_or(r);
        return pci_aer_parse(buf, s, ret);
}

int pci_read_gpu_busy(int root_fd, const char *syspath, int *ret_percent) {
        char status[32];
        uint32_t v;
        int r;

        if (isempty(syspath))
                return -EINVAL;
        r = sysfs_read_buffer(root_fd, syspath, "power/runtime_status", status, sizeof(status));
        if (r >= 0 && streq(status, "suspended")) {
                *ret_percent = 0;
                return 0;
        }
        r = sysfs_read_u32(root_fd, syspath, "gpu_busy_percent", &v);
        if (r < 0)
                return gone_or(r);
        if (v > 100)
                return -ERANGE;
        *ret_percent = (int) v;
        return 0;
}

/* ---- RDMA ports ---- */

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
