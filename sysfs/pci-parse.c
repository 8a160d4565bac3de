/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The formats of bus/pci attributes and names, parsed strictly: the whole string, the values the ABI
 * allows, or an error. See drivers/pci/pci-sysfs.c (current_link_speed_show() and friends) and
 * pci_speed_string() in drivers/pci/probe.c for what the kernel prints. */
#include "pci.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

/* Lowercase hex digits only: the kernel prints names with %x. */
static size_t hex_span(const char *s) {
        return strspn(s, "0123456789abcdef");
}

static unsigned hex_value(const char *s, size_t n) {
        unsigned v = 0;
        for (size_t i = 0; i < n; i++)
                v = v * 16 + (unsigned) (s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
        return v;
}

int pci_address_parse(const char *s, uint32_t *ret_domain, unsigned *ret_bus, unsigned *ret_device,
                      unsigned *ret_function) {
        size_t n;
        unsigned bus, device;

        if (!s)
                return -EINVAL;
        n = hex_span(s);
        if (n < 4 || n > 8 || s[n] != ':')
                return -EINVAL;
        uint32_t domain = 0;
        for (size_t i = 0; i < n; i++)
                domain = domain * 16 + hex_value(s + i, 1);
        s += n + 1;
        if (hex_span(s) < 2 || s[2] != ':')
                return -EINVAL;
        bus = hex_value(s, 2);
        s += 3;
        if (hex_span(s) < 2 || s[2] != '.')
                return -EINVAL;
        device = hex_value(s, 2);
        if (device > 0x1f)
                return -ERANGE;
        s += 3;
        if (s[0] < '0' || s[0] > '7' || s[1] != '\0')
                return -EINVAL;

        if (ret_domain)
                *ret_domain = domain;
        if (ret_bus)
                *ret_bus = bus;
        if (ret_device)
                *ret_device = device;
        if (ret_function)
                *ret_function = (unsigned) (s[0] - '0');
        return 0;
}

bool pci_address_is_valid(const char *s) {
        return pci_address_parse(s, NULL, NULL, NULL, NULL) >= 0;
}

bool pci_host_bridge_is_valid(const char *s) {
        size_t n;

        if (!s || !startswith(s, "pci"))
                return false;
        s += 3;
        n = hex_span(s);
        if (n < 4 || n > 8 || s[n] != ':')
                return false;
        s += n + 1;
        return hex_span(s) == 2 && s[2] == '\0';
}

static const struct {
        double gts;
        unsigned generation;
} pci_rates[] = {
        { 2.5, 1 }, { 5.0, 2 }, { 8.0, 3 }, { 16.0, 4 }, { 32.0, 5 }, { 64.0, 6 }, { 128.0, 7 },
};

unsigned pci_speed_generation(double gts) {
        for (size_t i = 0; i < ELEMENTSOF(pci_rates); i++)
                if (gts > pci_rates[i].gts - 1e-9 && gts < pci_rates[i].gts + 1e-9)
                        return pci_rates[i].generation;
        return 0;
}

int pci_parse_link_speed(const char *s, double *ret_gts, unsigned *ret_generation) {
        const char *p = s, *unit;
        double gts = 0;
        unsigned generation;

        if (!s)
                return -EINVAL;
        if (streq(s, "Unknown") || streq(s, "Unknown speed")) {
                *ret_gts = 0;
                *ret_generation = 0;
                return 0;
        }

        /* <digits>[.<digits>] GT/s[ PCIe] */
        size_t n = strspn(p, "0123456789");
        if (n == 0 || n > 3)
                return -EINVAL;
        p += n;
        if (*p == '.') {
                size_t k = strspn(p + 1, "0123456789");
                if (k == 0 || k > 2)
                        return -EINVAL;
                p += 1 + k;
        }
        unit = p;
        if (!streq(unit, " GT/s") && !streq(unit, " GT/s PCIe"))
                return -EINVAL;

        char number[8];
        if ((size_t) (unit - s) >= sizeof(number))
                return -EINVAL;
        memcpy(number, s, (size_t) (unit - s));
        number[unit - s] = '\0';
        gts = strtod(number, NULL);
        generation = pci_speed_generation(gts);
        if (generation == 0)
                return -ERANGE;

        *ret_gts = gts;
        *ret_generation = generation;
        return 0;
}

int pci_parse_link_width(const char *s, unsigned *ret) {
        uint32_t w;
        int r;

        r = parse_u32(s, &w);
        if (r < 0)
                return r;
        if (!IN_SET(w, 0u, 1u, 2u, 4u, 8u, 12u, 16u, 32u))
                return -ERANGE;
        *ret = w;
        return 0;
}

int pci_parse_numa_node(const char *s, int *ret) {
        int n, r;

        r = parse_int(s, &n);
        if (r < 0)
                return r;
        if (n < -1 || n > PCI_NUMA_NODE_MAX)
                return -ERANGE;
        *ret = n;
        return 0;
}

/* One number of a CPU list: decimal, no sign, below 65536 (no kernel has more CPUs). */
static int cpulist_number(const char **p, unsigned *ret) {
        size_t n = strspn(*p, "0123456789");
        char buf[8];
        uint32_t v;

        if (n == 0 || n >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, *p, n);
        buf[n] = '\0';
        if (parse_u32(buf, &v) < 0 || v > 65535)
                return -ERANGE;
        *p += n;
        *ret = v;
        return 0;
}

int pci_parse_cpulist_set(const char *s, cpu_set_t *ret) {
        const char *p = s;
        cpu_set_t set;
        int r;

        if (!s)
                return -EINVAL;
        CPU_ZERO(&set);
        if (*p == '\0')
                goto done;
        for (;;) {
                unsigned a, b;

                r = cpulist_number(&p, &a);
                if (r < 0)
                        return r;
                b = a;
                if (*p == '-') {
                        p++;
                        r = cpulist_number(&p, &b);
                        if (r < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                }
                for (unsigned i = a; i <= b && i < CPU_SETSIZE; i++)
                        CPU_SET(i, &set);
                if (*p == '\0')
                        goto done;
                if (*p != ',')
                        return -EINVAL;
                p++;
        }
done:
        if (ret)
                *ret = set;
        return 0;
}

int pci_parse_cpulist(const char *s) {
        return pci_parse_cpulist_set(s, NULL);
}

double pci_link_gbps(double gts, unsigned width) {
        double encoding;

        if (gts <= 0 || width == 0)
                return 0;
        if (gts <= 5.0)
                encoding = 8.0 / 10.0;
        else if (gts <= 32.0)
                encoding = 128.0 / 130.0;
        else
                encoding = 242.0 / 256.0;
        return gts * width * encoding;
}

int pci_syspath_split(const char *syspath, char **ret_function, char **ret_parent, char **ret_host_bridge,
                      unsigned *ret_depth) {
        _cleanup_(freep) char *copy = strdup_or_null(syspath);
        const char *function = NULL, *parent = NULL, *host_bridge = NULL;
        unsigned depth = 0;
        char *saveptr = NULL;

        if (syspath && !copy)
                return -ENOMEM;
        for (char *c = copy ? strtok_r(copy, "/", &saveptr) : NULL; c; c = strtok_r(NULL, "/", &saveptr)) {
                if (pci_address_is_valid(c)) {
                        if (function)
                                depth++;
                        parent = function;
                        function = c;
                } else if (!host_bridge && !function && pci_host_bridge_is_valid(c))
                        host_bridge = c;
        }

        _cleanup_(freep) char *f = strdup_or_null(function), *p = strdup_or_null(parent),
                              *h = strdup_or_null(host_bridge);
        if ((function && !f) || (parent && !p) || (host_bridge && !h))
                return -ENOMEM;
        if (ret_function)
                *ret_function = TAKE_PTR(f);
        if (ret_parent)
                *ret_parent = TAKE_PTR(p);
        if (ret_host_bridge)
                *ret_host_bridge = TAKE_PTR(h);
        if (ret_depth)
                *ret_depth = function ? depth : 0;
        return 0;
}
