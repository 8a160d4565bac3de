/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl topo: how the devices inside the node reach each other (Manager.GetAffinity()), as a
 * matrix in the words of `nvidia-smi topo -m`, for any vendor, with each device's CPUs and NUMA node. */
#include "linkprobectl-draw-node.h"
#include "linkprobectl-draw.h"
#include "linkprobectl-output.h"
#include "linkprobectl.h"

/* One row and one column of the matrix. */
typedef struct TopoDevice {
        char *label; /* "GPU0", "eth0", "mlx5_0/1", "domain0", "gpu@c1:00_0": no dots, so it can name a member */
        char *path;
        const char *kind; /* static */
        json_object *pci; /* its pci object's properties, or NULL */
} TopoDevice;

static const struct {
        const char *relation, *meaning;
} legend[] = {
        { "X", "the same PCI function" },
        { "PIX", "through at most one PCIe switch" },
        { "PXB", "through several PCIe switches, not the host bridge" },
        { "PHB", "through a PCIe host bridge (the CPU's root complex)" },
        { "NODE", "between PCIe host bridges of one NUMA node" },
        { "SYS", "between NUMA nodes, over the SMP interconnect" },
        { "NV#", "GPUs joined by # NVLinks" },
        { "XGMI", "GPUs joined by AMD's XGMI" },
};

static char *device_label(const char *kind, json_object *props) {
        char *s;

        if (streq(kind, "Gpu"))
                s = ctl_strdupf("GPU%" PRId64, json_int_or(props, "Index", 0));
        else if (streq(kind, "Link"))
                s = strdup(json_string_or(props, "Name", "?"));
        else if (streq(kind, "RdmaPort"))
                s = ctl_strdupf("%s/%" PRId64, json_string_or(props, "Device", "?"), json_int_or(props, "Port", 0));
        else if (streq(kind, "Thunderbolt"))
                s = strdup(json_string_or(props, "SysfsName", "?"));
        else {
                /* A GPU only the kernel's GPU topology knows, by its address (domain 0 left out). */
                const char *address = json_string_or(props, "Address", "?");
                s = ctl_strdupf("gpu@%s", startswith(address, "0000:") ? address + 5 : address);
        }
        for (char *p = s; p && *p; p++)
                if (*p == '.')
                        *p = '_';
        return s;
}

static json_object *pci_object(json_object *pcis, const char *path) {
        for (size_t i = 0; path && i < json_object_array_length(pcis); i++) {
                json_object *p = json_object_array_get_idx(pcis, i);
                if (streq(json_string_or(p, "Path", ""), path))
                        return p;
        }
        return NULL;
}

static bool in_pairs(json_object *pairs, const char *path) {
        for (size_t i = 0; i < json_object_array_length(pairs); i++) {
                json_object *p = json_object_array_get_idx(pairs, i);
                if (streq(json_string_or(p, "A", ""), path) || streq(json_string_or(p, "B", ""), path))
                        return true;
        }
        return false;
}

/* GetAffinity() as [{"A", "B", "Relation", "Through"}]: 0, or an exit code after saying why not. */
static int topo_get_affinity(sd_bus *bus, json_object **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *pairs = json_object_new_array();
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *a, *b, *relation, *through;
        int r;

        if (!pairs)
                return log_oom_ctl();
        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, MANAGER_INTERFACE, "GetAffinity", &error, &reply, NULL);
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Cannot read the device affinity");
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ooss)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(ooss)", &a, &b, &relation, &through)) > 0) {
                json_object *p = json_object_new_object();
                if (!p)
                        return log_oom_ctl();
                json_object_object_add(p, "A", json_object_new_string(a));
                json_object_object_add(p, "B", json_object_new_string(b));
                json_object_object_add(p, "Relation", json_object_new_string(relation));
                json_object_object_add(p, "Through", json_string_or_null(isempty(through) ? NULL : through));
                json_object_array_add(pairs, p);
        }
        if (r < 0) {
                fprintf(stderr, "Cannot parse the device affinity: %s\n", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        *ret = TAKE_PTR(pairs);
        return 0;
}

/* The devices in the order people read them: GPUs, network links, RDMA ports, Thunderbolt domains, then
 * GPUs only the kernel's GPU topology knows. Only those with a PCI function take part. */
static void devices_free(TopoDevice *d, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(d[i].label);
                free(d[i].path);
                json_object_put(d[i].pci);
        }
        free(d);
}

static int collect(json_object *objects, json_object *pairs, TopoDevice **ret, size_t *ret_n) {
        static const char *const kinds[] = { "Gpu", "Link", "RdmaPort", "Thunderbolt", "Pci" };
        _cleanup_(json_object_putp) json_object *pcis = ctl_children(objects, "Pci");
        TopoDevice *d = NULL;
        size_t n = 0;

        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                _cleanup_(json_object_putp) json_object *list = ctl_children(objects, kinds[k]);
                for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                        json_object *props = json_object_array_get_idx(list, i);
                        const char *path = json_string_or(props, "Path", NULL);
                        json_object *pci = streq(kinds[k], "Pci") ? props
                                                                   : pci_object(pcis, json_string_or(props, "PciDevice", NULL));

                        if (!path || !pci || (streq(kinds[k], "Pci") && !in_pairs(pairs, path)))
                                continue;
                        TopoDevice *grown = reallocarray(d, n + 1, sizeof(TopoDevice));
                        if (!grown)
                                break;
                        d = grown;
                        d[n] = (TopoDevice) { .label = device_label(kinds[k], props), .kind = kinds[k],
                                              .path = strdup(path), .pci = json_object_get(pci) };
                        n++;
                        if (!d[n - 1].label || !d[n - 1].path)
                                break;
                }
        }
        if (n > 0 && (!d[n - 1].label || !d[n - 1].path)) {
                devices_free(d, n);
                return log_oom_ctl();
        }
        *ret = d;
        *ret_n = n;
        return 0;
}

static const char *relation_of(json_object *pairs, const char *a, const char *b) {
        if (streq(a, b))
                return "X";
        for (size_t i = 0; i < json_object_array_length(pairs); i++) {
                json_object *p = json_object_array_get_idx(pairs, i);
                const char *x = json_string_or(p, "A", ""), *y = json_string_or(p, "B", "");
                if ((streq(x, a) && streq(y, b)) || (streq(x, b) && streq(y, a)))
                        return json_string_or(p, "Relation", NULL);
        }
        return NULL;
}

/* The model: one row per device, its relation to every device by label. */
static json_object *build_rows(const TopoDevice *d, size_t n, json_object *pairs) {
        json_object *rows = json_object_new_array();

        for (size_t i = 0; rows && i < n; i++) {
                json_object *row = json_object_new_object(), *relations = json_object_new_object();
                if (!row || !relations) {
                        json_object_put(row);
                        json_object_put(relations);
                        return json_object_put(rows), NULL;
                }
                json_object_object_add(row, "Device", json_object_new_string(d[i].label));
                json_object_object_add(row, "Kind", json_object_new_string(d[i].kind));
                json_object_object_add(row, "Object", json_object_new_string(d[i].path));
                json_object_object_add(row, "PciAddress", json_string_or_null(json_string_or(d[i].pci, "Address", NULL)));
                json_object_object_add(row, "NumaNode", json_object_new_int((int) json_int_or(d[i].pci, "NumaNode", -1)));
                json_object_object_add(row, "LocalCpus",
                                       json_string_or_null(isempty(json_string_or(d[i].pci, "LocalCpus", "")) ? NULL
                                                           : json_string_or(d[i].pci, "LocalCpus", NULL)));
                for (size_t j = 0; j < n; j++)
                        json_object_object_add(relations, d[j].label,
                                               json_string_or_null(relation_of(pairs, d[i].path, d[j].path)));
                json_object_object_add(row, "Relations", relations);
                json_object_array_add(rows, row);
        }
        return rows;
}

static char *format_numa(json_object *row, const char *key, json_object *v) {
        return v && json_object_get_int(v) >= 0 ? ctl_strdupf("%d", json_object_get_int(v)) : NULL;
}

/* What the matrix's words mean, for those it uses. */
static void topo_notes(json_object *rows, FILE *f) {
        _cleanup_(json_object_putp) json_object *used = json_object_new_object();

        if (!used || !arg_legend)
                return;
        for (size_t r = 0; r < json_object_array_length(rows); r++) {
                json_object *relations = ctl_member(json_object_array_get_idx(rows, r), "Relations");
                if (!relations)
                        continue;
                json_object_object_foreach(relations, k, v) {
                        (void) k;
                        if (v)
                                json_object_object_add(used, startswith(json_object_get_string(v), "NV") ? "NV#"
                                                                                                        : json_object_get_string(v),
                                                       NULL);
                }
        }
        fputs("\nLegend:\n", f);
        for (size_t l = 0; l < ELEMENTSOF(legend); l++)
                if (json_object_object_get_ex(used, legend[l].relation, NULL))
                        fprintf(f, "  %-5s %s\n", legend[l].relation, legend[l].meaning);
}

static char *format_numa_nodes(json_object *row, const char *key, json_object *v) {
        _cleanup_(freep) char *s = strdup("");

        for (size_t i = 0; s && i < json_array_len(v); i++) {
                char *more = ctl_strdupf("%s%s%d", s, i > 0 ? "," : "", json_object_get_int(json_object_array_get_idx(v, i)));
                free(s);
                s = more;
        }
        return s && *s ? TAKE_PTR(s) : NULL;
}

/* The CPU packages (Node.Packages) under the matrix: which CPUs and NUMA nodes each holds, so the
 * matrix's NUMA column reads as sockets. Text only: --json gives the matrix; `status --json` the Node. */
static int topo_packages(sd_bus *bus) {
        _cleanup_(json_object_putp) json_object *node = NULL;
        static const CtlColumn columns[] = {
                { ">PACKAGE", "Id", NULL, NULL, {} },
                { "CPUS", "Cpus", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
                { ">CORES", "Cores", NULL, NULL, {} },
                { "NUMA NODES", "NumaNodes", format_numa_nodes, NULL, {} },
        };
        static const CtlTableView view = {
                .columns = columns,
                .n_columns = ELEMENTSOF(columns),
                .noun = "package",
                .nouns = "packages",
                .matrix = true,
        };
        json_object *packages;
        int r;

        r = ctl_get_root_interface(bus, "Node", true, &node);
        if (r != 0)
                return r;
        packages = ctl_member(node, "Packages");
        if (json_array_len(packages) == 0)
                return 0;
        putchar('\n');
        return ctl_output_table(packages, &view);
}

/* The picture (linkprobectl-draw-node.c lays it out from what is read here): the whole tree, the root
 * object's Node and Memory, and the affinity pairs for the GPUs' own links. */
static int topo_draw(sd_bus *bus) {
        _cleanup_(json_object_putp) json_object *objects = NULL, *node = NULL, *memory = NULL, *pairs = NULL;
        _cleanup_(freep) char *dot = NULL;
        int r;

        r = ctl_get_objects(bus, &objects);
        if (r == 0)
                r = topo_get_affinity(bus, &pairs);
        if (r == 0)
                r = ctl_get_root_interface(bus, "Node", true, &node);
        if (r == 0)
                r = ctl_get_root_interface(bus, "Memory", true, &memory);
        if (r != 0)
                return r;
        dot = draw_node_dot(objects, node, memory, pairs);
        if (!dot)
                return log_oom_ctl();
        if (arg_dot) {
                fputs(dot, stdout);
                return fflush(stdout) == 0 ? 0 : CTL_EXIT_FAILURE;
        }
        return draw_render_dot(dot);
}

int verb_topo(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *objects = NULL, *pairs = NULL, *rows = NULL;
        _cleanup_(freep) CtlColumn *columns = NULL;
        TopoDevice *d = NULL;
        size_t n = 0;
        int r;

        if (arg_draw != DRAW_NONE || arg_dot)
                return topo_draw(bus);
        r = topo_get_affinity(bus, &pairs);
        if (r != 0)
                return r;
        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        r = collect(objects, pairs, &d, &n);
        if (r == 0)
                rows = build_rows(d, n, pairs);
        columns = new0(CtlColumn, n + 3);
        if (!rows || !columns)
                r = log_oom_ctl();
        if (r == 0) {
                /* The matrix is the point: the device names and relations stay whole; a cut CPU list
                 * would name other CPUs, so it goes as a whole when the matrix needs the room. */
                columns[0] = (CtlColumn) { "DEVICE", "Device", NULL, NULL,
                                           { .min_width = TEXT_WIDTH_WHOLE } };
                for (size_t i = 0; i < n; i++)
                        columns[i + 1] = (CtlColumn) { d[i].label, NULL, NULL, NULL,
                                                       { .min_width = TEXT_WIDTH_WHOLE } };
                columns[n + 1] = (CtlColumn) { "CPU AFFINITY", "LocalCpus", NULL, NULL,
                                               { .min_width = TEXT_WIDTH_WHOLE, .optional = 1 } };
                columns[n + 2] = (CtlColumn) { ">NUMA", "NumaNode", format_numa, NULL };
                /* "Relations.<label>": the labels have no dots. */
                for (size_t i = 0; i < n && r == 0; i++)
                        if (!(columns[i + 1].key = ctl_strdupf("Relations.%s", d[i].label)))
                                r = log_oom_ctl();
        }
        if (r == 0) {
                const CtlTableView view = {
                        .columns = columns,
                        .n_columns = n + 3,
                        .noun = "device",
                        .nouns = "devices",
                        .empty = "No devices with a PCI function.",
                        .notes = topo_notes,
                        .matrix = true,
                };
                r = ctl_output_table(rows, &view);
        }
        if (r == 0 && arg_json == JSON_OFF)
                r = topo_packages(bus);
        for (size_t i = 0; columns && i < n; i++)
                free((char *) columns[i + 1].key);
        devices_free(d, n);
        return r;
}
