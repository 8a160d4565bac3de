/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu-topology.h"
#include "pci.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

#define CPU_DIR "devices/system/cpu"
#define NODE_DIR "devices/system/node"

/* "cpu12" → 12; "cpufreq", "cpuidle" and "cpu" are no CPUs. */
static bool entry_number(const char *name, const char *prefix, unsigned *ret) {
        const char *digits = startswith(name, prefix) ? name + strlen(prefix) : NULL;
        uint32_t v;

        if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits) || parse_u32(digits, &v) < 0)
                return false;
        *ret = v;
        return true;
}

/* One online CPU as its topology directory describes it. */
typedef struct CpuEntry {
        unsigned cpu;
        uint32_t package;
        char *core; /* what tells its core from others of the package */
} CpuEntry;

static void cpu_entries_free(CpuEntry *e, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(e[i].core);
        free(e);
}

/* 1 with *ret filled for an online CPU that names its package, 0 for one to leave out, or -errno. */
static int read_cpu(int root_fd, const char *name, unsigned cpu, CpuEntry *ret) {
        _cleanup_(freep) char *dir = NULL, *topology = NULL, *core = NULL;
        int package, die = 0, core_id = 0, r;

        if (asprintf(&dir, CPU_DIR "/%s", name) < 0)
                return -ENOMEM;
        /* cpu0 often has no online attribute: it cannot go offline. */
        r = sysfs_read_bool(root_fd, dir, "online");
        if (r == 0)
                return 0;
        if (r < 0 && r != -ENOENT)
                return r;
        r = sysfs_path_join(dir, "topology", &topology);
        if (r < 0)
                return r;
        r = sysfs_read_int(root_fd, topology, "physical_package_id", &package);
        if (r == -ENOENT)
                return 0; /* offline (its topology group went with it), or an architecture without one */
        if (r < 0)
                return r;
        if (package == -1)
                return 0; /* what kernels before 4.x print for an offline CPU */
        if (package < 0)
                return -ERANGE;
        r = sysfs_read_string(root_fd, topology, "core_cpus_list", &core);
        if (r == -ENOENT)
                r = sysfs_read_string(root_fd, topology, "thread_siblings_list", &core);
        if (r == -ENOENT) {
                /* Neither list: the die and core numbers, unique within a package together. */
                r = sysfs_read_int(root_fd, topology, "die_id", &die);
                if (r == -ENOENT)
                        die = 0, r = 0;
                if (r >= 0)
                        r = sysfs_read_int(root_fd, topology, "core_id", &core_id);
                if (r == -ENOENT)
                        core_id = (int) cpu, r = 0; /* nothing says: a core per CPU */
                if (r >= 0 && asprintf(&core, "die %d core %d", die, core_id) < 0)
                        return -ENOMEM;
        } else if (r >= 0 && pci_parse_cpulist(core) < 0)
                return -EINVAL;
        if (r < 0)
                return r;
        *ret = (CpuEntry) { .cpu = cpu, .package = (uint32_t) package, .core = TAKE_PTR(core) };
        return 1;
}

bool sysfs_cpulist_contains(const char *list, unsigned cpu) {
        const char *p = list;

        while (p && *p) {
                char *end;
                unsigned long a = strtoul(p, &end, 10), b = a;

                if (end == p)
                        return false;
                p = end;
                if (*p == '-') {
                        b = strtoul(p + 1, &end, 10);
                        if (end == p + 1)
                                return false;
                        p = end;
                }
                if (cpu >= a && cpu <= b)
                        return true;
                if (*p != ',')
                        return false;
                p++;
        }
        return false;
}

char *sysfs_cpulist_format(const unsigned *cpus, size_t n) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
                        j++;
                fprintf(f, "%s%u", i > 0 ? "," : "", cpus[i]);
                if (j > i)
                        fprintf(f, "-%u", cpus[j]);
                i = j + 1;
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static int read_numa_nodes(int root_fd, SysfsCpuTopology *t) {
        _cleanup_(strv_freep) char **entries = NULL;
        int r;

        r = sysfs_list_dir(root_fd, NODE_DIR, &entries);
        if (r == -ENOENT)
                return 0; /* a kernel built without NUMA */
        if (r < 0)
                return r;
        STRV_FOREACH(entry, entries) {
                _cleanup_(freep) char *dir = NULL, *cpus = NULL;
                unsigned id;

                if (!entry_number(*entry, "node", &id))
                        continue;
                if (asprintf(&dir, NODE_DIR "/%s", *entry) < 0)
                        return -ENOMEM;
                r = sysfs_read_string(root_fd, dir, "cpulist", &cpus);
                if (r == -ENOENT)
                        continue; /* not a node the kernel describes */
                if (r < 0)
                        return r;
                if (pci_parse_cpulist(cpus) < 0)
                        return -EINVAL;
                SysfsNumaNode *grown = reallocarray(t->numa_nodes, t->n_numa_nodes + 1, sizeof(SysfsNumaNode));
                if (!grown)
                        return -ENOMEM;
                t->numa_nodes = grown;
                t->numa_nodes[t->n_numa_nodes++] = (SysfsNumaNode) { .id = id, .cpus = TAKE_PTR(cpus) };
        }
        return 0;
}

static int compare_entries(const void *a, const void *b) {
        const CpuEntry *x = a, *y = b;
        if (x->package != y->package)
                return x->package < y->package ? -1 : 1;
        return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* The package of the entries [from, to) (one package, ascending CPUs). */
static int make_package(SysfsCpuTopology *t, const CpuEntry *e, size_t from, size_t to) {
        _cleanup_(freep) unsigned *cpus = new0(unsigned, to - from);
        _cleanup_(strv_freep) char **cores = NULL;
        SysfsCpuPackage p = { .id = e[from].package, .n_cpus = (unsigned) (to - from) };
        int r;

        if (!cpus)
                return -ENOMEM;
        for (size_t i = from; i < to; i++) {
                cpus[i - from] = e[i].cpu;
                r = strv_extend_unique(&cores, e[i].core);
                if (r < 0)
                        return r;
        }
        p.cores = (unsigned) strv_length(cores);
        p.cpus = sysfs_cpulist_format(cpus, to - from);
        p.numa_nodes = new0(uint32_t, t->n_numa_nodes + 1);
        if (!p.cpus || !p.numa_nodes) {
                free(p.cpus);
                free(p.numa_nodes);
                return -ENOMEM;
        }
        for (size_t n = 0; n < t->n_numa_nodes; n++)
                for (size_t i = 0; i < to - from; i++)
                        if (sysfs_cpulist_contains(t->numa_nodes[n].cpus, cpus[i])) {
                                p.numa_nodes[p.n_numa_nodes++] = t->numa_nodes[n].id;
                                break;
                        }
        t->packages[t->n_packages++] = p;
        return 0;
}

static int read_topology(int root_fd, SysfsCpuTopology *t) {
        _cleanup_(strv_freep) char **entries = NULL;
        CpuEntry *cpus = NULL;
        size_t n = 0;
        int r;

        r = sysfs_list_dir(root_fd, CPU_DIR, &entries);
        if (r < 0)
                return r;
        r = read_numa_nodes(root_fd, t);
        if (r < 0)
                return r;
        STRV_FOREACH(entry, entries) {
                CpuEntry e;
                unsigned cpu;

                if (!entry_number(*entry, "cpu", &cpu))
                        continue;
                r = read_cpu(root_fd, *entry, cpu, &e);
                if (r < 0)
                        break;
                if (r == 0) {
                        t->unplaced_cpus++;
                        continue;
                }
                CpuEntry *grown = reallocarray(cpus, n + 1, sizeof(CpuEntry));
                if (!grown) {
                        free(e.core);
                        r = -ENOMEM;
                        break;
                }
                cpus = grown;
                cpus[n++] = e;
        }
        if (r >= 0 && n > 0) {
                qsort(cpus, n, sizeof(CpuEntry), compare_entries);
                t->packages = new0(SysfsCpuPackage, n);
                r = t->packages ? 0 : -ENOMEM;
                for (size_t from = 0, to = 0; r >= 0 && from < n; from = to) {
                        for (to = from; to < n && cpus[to].package == cpus[from].package; to++)
                                ;
                        r = make_package(t, cpus, from, to);
                }
        }
        cpu_entries_free(cpus, n);
        return r < 0 ? r : 0;
}

int sysfs_cpu_topology_read(int root_fd, SysfsCpuTopology *ret) {
        SysfsCpuTopology t = {};
        int r;

        r = read_topology(root_fd, &t);
        if (r < 0) {
                sysfs_cpu_topology_done(&t);
                *ret = (SysfsCpuTopology) {};
                return r;
        }
        *ret = t;
        return 0;
}

void sysfs_cpu_topology_done(SysfsCpuTopology *t) {
        for (size_t i = 0; i < t->n_packages; i++) {
                free(t->packages[i].cpus);
                free(t->packages[i].numa_nodes);
        }
        free(t->packages);
        for (size_t i = 0; i < t->n_numa_nodes; i++)
                free(t->numa_nodes[i].cpus);
        free(t->numa_nodes);
        *t = (SysfsCpuTopology) {};
}
