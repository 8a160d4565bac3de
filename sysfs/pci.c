/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reads the functions of bus/pci/devices through the sysfs root fd. Every attribute is optional: a
 * missing one leaves its field unknown, a malformed or unreadable one also says so in problems, and
 * only a vanished function or a lack of memory fails a read. */
#include <limits.h>
#include <stdarg.h>

#include "pci.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "sysfs.h"

#define BUS_DEVICES "bus/pci/devices"
/* Bytes of a bad value quoted in a problem. */
#define PROBLEM_VALUE_MAX 48

PciDevice *pci_device_free(PciDevice *d) {
        if (!d)
                return NULL;
        free(d->address);
        free(d->syspath);
        free(d->parent);
        free(d->host_bridge);
        free(d->driver);
        free(d->local_cpus);
        strv_free(d->problems);
        return mfree(d);
}

PciDevice **pci_device_array_free(PciDevice **devices, size_t n) {
        for (size_t i = 0; devices && i < n; i++)
                pci_device_free(devices[i]);
        free(devices);
        return NULL;
}

_printf_(3, 4) static int add_problem(PciDevice *d, const char *attr, const char *format, ...) {
        _cleanup_(freep) char *why = NULL, *line = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&why, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (asprintf(&line, "%s: %s", attr, why) < 0)
                return -ENOMEM;
        return strv_consume(&d->problems, TAKE_PTR(line));
}

/* A value as a problem quotes it: bounded, control characters and invalid UTF-8 escaped. */
static int add_bad_value(PciDevice *d, const char *attr, const char *value, const char *what) {
        char head[PROBLEM_VALUE_MAX + 1];
        _cleanup_(freep) char *shown = NULL;

        snprintf(head, sizeof(head), "%s", value);
        shown = escape_for_terminal(head);
        if (!shown)
                return -ENOMEM;
        return add_problem(d, attr, "\"%s%s\" is not %s", shown, strlen(value) > PROBLEM_VALUE_MAX ? "..." : "",
                           what);
}

/*
 * Reads attr into buf. Returns 1 with a value; 0 when there is none: absent (nothing to say) or
 * unreadable (a problem recorded); -ENOMEM.
 */
static int read_attr(int root_fd, PciDevice *d, const char *attr, char *buf, size_t size) {
        int r = sysfs_read_buffer(root_fd, d->syspath, attr, buf, size);

        if (r >= 0)
                return 1;
        if (errno_is_absent(r) || r == -ENOTDIR)
                return 0;
        if (r == -ENOBUFS || r == -EFBIG)
                r = add_problem(d, attr, "too long to be a value");
        else if (r == -EBADMSG)
                r = add_problem(d, attr, "contains a NUL byte");
        else
                r = add_problem(d, attr, "unreadable: %s", strerror(-r));
        return r < 0 ? r : 0;
}

static int read_hex(int root_fd, PciDevice *d, const char *attr, uint32_t max, uint32_t *ret, bool *ret_has) {
        char buf[32];
        uint32_t v;
        int r;

        r = read_attr(root_fd, d, attr, buf, sizeof(buf));
        if (r <= 0)
                return r;
        if (parse_hex_u32(buf, &v) < 0 || v > max)
                return add_bad_value(d, attr, buf, "an id");
        *ret = v;
        *ret_has = true;
        return 0;
}

static int read_identity(int root_fd, PciDevice *d) {
        bool has_sv = false, has_sd = false;
        int r;

        r = read_hex(root_fd, d, "vendor", 0xffff, &d->vendor_id, &d->has_vendor_id);
        if (r >= 0 && d->has_vendor_id && d->vendor_id == 0xffff) {
                /* What a read of a function that is powered off or gone returns. */
                d->has_vendor_id = false;
                r = add_problem(d, "vendor", "0xffff: the function does not respond");
        }
        if (r >= 0)
                r = read_hex(root_fd, d, "device", 0xffff, &d->device_id, &d->has_device_id);
        if (r >= 0)
                r = read_hex(root_fd, d, "class", 0xffffff, &d->class_code, &d->has_class);
        if (r >= 0)
                r = read_hex(root_fd, d, "subsystem_vendor", 0xffff, &d->subsystem_vendor_id, &has_sv);
        if (r >= 0)
                r = read_hex(root_fd, d, "subsystem_device", 0xffff, &d->subsystem_device_id, &has_sd);
        if (r < 0)
                return r;
        d->has_subsystem = has_sv && has_sd;

        r = sysfs_read_link_basename(root_fd, d->syspath, "driver", &d->driver);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !utf8_is_valid(d->driver)) {
                /* Driver names are the kernel's; anything else is not one. */
                d->driver = mfree(d->driver);
                return add_problem(d, "driver", "the link's target is not a driver name");
        }
        return 0;
}

static int read_locality(int root_fd, PciDevice *d) {
        char buf[SYSFS_ATTR_MAX + 1];
        int r;

        r = read_attr(root_fd, d, "numa_node", buf, sizeof(buf));
        if (r > 0 && pci_parse_numa_node(buf, &d->numa_node) < 0)
                r = add_bad_value(d, "numa_node", buf, "a NUMA node");
        if (r < 0)
                return r;

        r = read_attr(root_fd, d, "local_cpulist", buf, sizeof(buf));
        if (r > 0) {
                if (pci_parse_cpulist(buf) < 0)
                        return add_bad_value(d, "local_cpulist", buf, "a CPU list");
                d->local_cpus = strdup(buf);
                if (!d->local_cpus)
                        return -ENOMEM;
        }
        return r < 0 ? r : 0;
}

static int read_speed(int root_fd, PciDevice *d, const char *attr, PciLink *link) {
        char buf[64];
        int r;

        r = read_attr(root_fd, d, attr, buf, sizeof(buf));
        if (r <= 0)
                return r;
        d->is_pcie = true;
        if (pci_parse_link_speed(buf, &link->gts, &link->generation) < 0)
                return add_bad_value(d, attr, buf, "a PCIe link speed");
        return 0;
}

static int read_width(int root_fd, PciDevice *d, const char *attr, PciLink *link) {
        char buf[64];
        int r;

        r = read_attr(root_fd, d, attr, buf, sizeof(buf));
        if (r <= 0)
                return r;
        d->is_pcie = true;
        if (pci_parse_link_width(buf, &link->width) < 0)
                return add_bad_value(d, attr, buf, "a PCIe link width");
        return 0;
}

static int read_links(int root_fd, PciDevice *d) {
        int r;

        r = read_speed(root_fd, d, "current_link_speed", &d->current);
        if (r >= 0)
                r = read_width(root_fd, d, "current_link_width", &d->current);
        if (r >= 0)
                r = read_speed(root_fd, d, "max_link_speed", &d->max);
        if (r >= 0)
                r = read_width(root_fd, d, "max_link_width", &d->max);
        return r;
}

/* "removable", "fixed" or "unknown" (Documentation/ABI/testing/sysfs-devices-removable). */
static int read_removable(int root_fd, PciDevice *d) {
        char buf[32];
        int r;

        r = read_attr(root_fd, d, "removable", buf, sizeof(buf));
        if (r <= 0)
                return r;
        if (!streq(buf, "removable") && !streq(buf, "fixed") && !streq(buf, "unknown"))
                return add_bad_value(d, "removable", buf, "removable, fixed or unknown");
        d->removable = streq(buf, "removable");
        return 0;
}

int pci_device_read(int root_fd, const char *address, PciDevice **ret) {
        _cleanup_(pci_device_freep) PciDevice *d = NULL;
        _cleanup_(freep) char *dir = NULL, *self = NULL;
        int r;

        if (!pci_address_is_valid(address))
                return -EINVAL;

        d = new0(PciDevice, 1);
        if (!d)
                return -ENOMEM;
        d->numa_node = -1;
        d->address = strdup(address);
        if (!d->address)
                return -ENOMEM;

        r = sysfs_path_join(BUS_DEVICES, address, &dir);
        if (r < 0)
                return r;
        /* Where the function really is: its ancestors are the directories above it. */
        r = sysfs_resolve(root_fd, dir, NULL, &d->syspath);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -ENODEV;
        r = pci_syspath_split(d->syspath, &self, &d->parent, &d->host_bridge, &d->depth);
        if (r < 0)
                return r;
        if (!streq_ptr(self, address))
                /* A bus entry that leads elsewhere is not this function. */
                return -ENODEV;

        r = read_identity(root_fd, d);
        if (r >= 0)
                r = read_locality(root_fd, d);
        if (r >= 0)
                r = read_links(root_fd, d);
        if (r >= 0)
                r = read_removable(root_fd, d);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(d);
        return 0;
}

int pci_enumerate(int root_fd, PciDevice ***ret, size_t *ret_n) {
        _cleanup_(strv_freep) char **names = NULL;
        PciDevice **devices = NULL;
        size_t n = 0;
        int r;

        r = sysfs_list_dir(root_fd, BUS_DEVICES, &names);
        if (r == -ENOENT || r == -ENOTDIR) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;

        devices = new0(PciDevice *, strv_length(names) + 1);
        if (!devices)
                return -ENOMEM;
        STRV_FOREACH(name, names) {
                r = pci_device_read(root_fd, *name, &devices[n]);
                if (r == -ENOMEM) {
                        pci_device_array_free(devices, n);
                        return r;
                }
                if (r >= 0)
                        n++;
        }
        *ret = devices;
        *ret_n = n;
        return 0;
}
