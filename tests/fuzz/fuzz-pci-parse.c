/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes every parser of sysfs/pci-parse.c and the KFD properties reader with the same input, as an
 * attribute value or a device path would arrive, and checks that a success only ever yields a value
 * the ABI allows; the input is also a GPU probe document whose "nvml" member the daemon reads, and an AER
 * counters file (aer_dev_*) of each severity. */
#include "daemon/gpu.h"
#include "shared/string-util.h"
#include "sysfs/kfd.h"
#include "sysfs/watched.h"
#include "sysfs/pci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A parsed AER file has its total, never the unknown value, and names that fit. */
static void fuzz_aer(const char *s) {
        for (PciAerSeverity sev = 0; sev < _PCI_AER_SEVERITY_MAX; sev++) {
                PciAerCounters c;
                if (pci_aer_parse(s, sev, &c) < 0)
                        continue;
                if (c.total == PCI_COUNTER_UNKNOWN || c.n_kinds > PCI_AER_KINDS_MAX)
                        abort();
                for (size_t i = 0; i < c.n_kinds; i++)
                        if (strlen(c.kinds[i].name) >= PCI_AER_NAME_MAX)
                                abort();
        }
}

static void fuzz_nvml(const char *s) {
        json_object *doc = json_tokener_parse(s);
        GpuNvLink *links = NULL;
        size_t n = 0;

        if (!doc)
                return;
        if (gpu_nvlinks_from_json(doc, &links, &n) > 0)
                for (size_t i = 0; i < n; i++)
                        if (!pci_address_is_valid(links[i].local) || !pci_address_is_valid(links[i].remote) ||
                            links[i].count == 0)
                                abort();
        free(links);
        json_object_put(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(freep) char *s = NULL, *function = NULL, *parent = NULL, *host_bridge = NULL;
        unsigned generation, width, bus, dev, fn, depth;
        uint32_t domain;
        uint64_t v;
        double gts;
        int node;

        if (size > 4096) /* an attribute is at most one page */
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        if (pci_parse_link_speed(s, &gts, &generation) >= 0 &&
            (generation != pci_speed_generation(gts) || (gts != 0) != (generation != 0)))
                abort();
        if (pci_parse_link_width(s, &width) >= 0 && width > 32)
                abort();
        if (pci_parse_numa_node(s, &node) >= 0 && (node < -1 || node > PCI_NUMA_NODE_MAX))
                abort();
        (void) pci_parse_cpulist(s);
        if (pci_address_parse(s, &domain, &bus, &dev, &fn) >= 0 && (bus > 0xff || dev > 0x1f || fn > 7))
                abort();
        (void) pci_host_bridge_is_valid(s);
        if (pci_syspath_split(s, &function, &parent, &host_bridge, &depth) >= 0) {
                if ((function && !pci_address_is_valid(function)) || (parent && !pci_address_is_valid(parent)) ||
                    (host_bridge && !pci_host_bridge_is_valid(host_bridge)) || (parent && !function))
                        abort();
        }
        (void) kfd_properties_get(s, "location_id", &v);
        (void) kfd_properties_get(s, "", &v);
        fuzz_nvml(s);
        fuzz_aer(s);
        return 0;
}
