/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl topo --svg, --png: the node as lstopo draws it and more. One frame per CPU package with
 * its cores and CPUs, in it one per NUMA node with its CPUs; in that each PCIe host bridge and the tree below it, every line labelled with the link's speed
 * and width; hanging off the functions the network links, RDMA ports, GPUs and Thunderbolt domains, and
 * below a domain its routers, docks and peers at any depth. Lines and boxes are coloured by Health, and
 * whatever is not ok says so in words. What has no PCI function (virtual links, software RDMA, a
 * Thunderbolt domain the kernel names no controller for) goes in a box of its own. */
#include "linkprobectl-draw-labels.h"
#include "linkprobectl-draw-node.h"
#include "linkprobectl-draw.h"
#include "linkprobectl.h"

/* Trees deeper than this are a broken answer (a Parent loop), not a machine. */
#define DEPTH_MAX 64
/* Boxes in the cluster of what hangs off no PCI function: a host with a thousand veths stays readable. */
#define OTHER_MAX 40

typedef enum DrawKind {
        KIND_PCI,
        KIND_LINK,
        KIND_RDMA,
        KIND_GPU,
        KIND_TBT,
        _KIND_MAX,
} DrawKind;

static const struct {
        const char *interface, *noun, *nouns, *fill;
} kinds[_KIND_MAX] = {
        [KIND_PCI] = { "Pci", "PCI function", "PCI functions", "#e3f2fd" },
        [KIND_LINK] = { "Link", "network link", "network links", "#fff8e1" },
        [KIND_RDMA] = { "RdmaPort", "RDMA port", "RDMA ports", "#f3e5f5" },
        [KIND_GPU] = { "Gpu", "GPU", "GPUs", "#e8f5e9" },
        [KIND_TBT] = { "Thunderbolt", "Thunderbolt device", "Thunderbolt devices", "#fff3e0" },
};

typedef struct Drawing {
        FILE *f;
        json_object *lists[_KIND_MAX];
        json_object *by_path;  /* path -> [kind, properties] */
        json_object *children; /* path -> [child path, ...]: PCI and Thunderbolt children, what hangs off */
        json_object *roots;    /* [path, ...] of what hangs off nothing we have */
        json_object *drawn;    /* path -> null: visited */
        json_object *shown;    /* path -> null: given a box */
        size_t n_boxes, left_out[_KIND_MAX];
        bool oom;
} Drawing;

static void drawing_done(Drawing *d) {
        for (size_t k = 0; k < _KIND_MAX; k++)
                json_object_put(d->lists[k]);
        json_object_put(d->by_path);
        json_object_put(d->children);
        json_object_put(d->roots);
        json_object_put(d->drawn);
        json_object_put(d->shown);
}

static json_object *object_of(Drawing *d, const char *path, DrawKind *ret_kind) {
        json_object *entry = NULL;

        if (!path || !json_object_object_get_ex(d->by_path, path, &entry))
                return NULL;
        if (ret_kind)
                *ret_kind = (DrawKind) json_object_get_int(json_object_array_get_idx(entry, 0));
        return json_object_array_get_idx(entry, 1);
}

/* What an object hangs off: its PCI or Thunderbolt parent, the Thunderbolt peer a link reaches, its PCI
 * function, or the link an RDMA port belongs to; NULL for a root. */
static const char *host_of(Drawing *d, DrawKind kind, json_object *o) {
        const char *candidates[3] = {};

        switch (kind) {
        case KIND_PCI:
                candidates[0] = json_string_or(o, "Parent", NULL);
                break;
        case KIND_TBT:
                candidates[0] = json_string_or(o, "Parent", NULL);
                candidates[1] = json_string_or(o, "PciDevice", NULL);
                break;
        case KIND_LINK:
                /* thunderbolt-net: the peer host it reaches says more than the controller it runs on. */
                candidates[0] = json_string_or(o, "ThunderboltPeer", NULL);
                candidates[1] = json_string_or(o, "PciDevice", NULL);
                break;
        case KIND_RDMA:
                candidates[0] = json_string_or(o, "PciDevice", NULL);
                candidates[1] = json_string_or(o, "NetInterface", NULL);
                break;
        case KIND_GPU:
                candidates[0] = json_string_or(o, "PciDevice", NULL);
                break;
        case _KIND_MAX:
                break;
        }
        for (size_t i = 0; i < ELEMENTSOF(candidates); i++)
                if (candidates[i] && !streq(candidates[i], json_string_or(o, "Path", "")) && object_of(d, candidates[i], NULL))
                        return candidates[i];
        return NULL;
}

static void add_string(Drawing *d, json_object *array, const char *s) {
        if (json_object_array_add(array, json_object_new_string(s)) < 0)
                d->oom = true;
}

static int index_objects(Drawing *d, json_object *objects) {
        d->by_path = json_object_new_object();
        d->children = json_object_new_object();
        d->roots = json_object_new_array();
        d->drawn = json_object_new_object();
        d->shown = json_object_new_object();
        if (!d->by_path || !d->children || !d->roots || !d->drawn || !d->shown)
                return -ENOMEM;
        for (size_t k = 0; k < _KIND_MAX; k++) {
                d->lists[k] = ctl_children(objects, kinds[k].interface);
                if (!d->lists[k])
                        return -ENOMEM;
                for (size_t i = 0; i < json_object_array_length(d->lists[k]); i++) {
                        json_object *o = json_object_array_get_idx(d->lists[k], i), *entry = json_object_new_array();
                        if (!entry)
                                return -ENOMEM;
                        json_object_array_add(entry, json_object_new_int((int) k));
                        json_object_array_add(entry, json_object_get(o));
                        json_object_object_add(d->by_path, json_string_or(o, "Path", ""), entry);
                }
        }
        /* What hangs off a function comes before the functions below it: the devices, then the tree. */
        for (size_t pass = 0; pass < 2; pass++)
                for (size_t k = 0; k < _KIND_MAX; k++) {
                        if ((k == KIND_PCI) != (pass == 1))
                                continue;
                        for (size_t i = 0; i < json_object_array_length(d->lists[k]); i++) {
                                json_object *o = json_object_array_get_idx(d->lists[k], i), *list = NULL;
                                const char *host = host_of(d, (DrawKind) k, o), *path = json_string_or(o, "Path", "");

                                /* The loopback link is no interconnect. */
                                if (k == KIND_LINK && streq(json_string_or(o, "Kind", ""), "loopback") && !arg_all)
                                        continue;
                                if (!host) {
                                        add_string(d, d->roots, path);
                                        continue;
                                }
                                if (!json_object_object_get_ex(d->children, host, &list)) {
                                        list = json_object_new_array();
                                        if (!list || json_object_object_add(d->children, host, list) < 0)
                                                return -ENOMEM;
                                }
                                add_string(d, list, path);
                        }
                }
        return d->oom ? -ENOMEM : 0;
}

/* ---- boxes and lines ---- */

static void emit_box(Drawing *d, DrawKind kind, json_object *o) {
        _cleanup_(freep) char *id = draw_escape(json_string_or(o, "Path", "")), *label = NULL;
        const char *fill = kinds[kind].fill;

        switch (kind) {
        case KIND_PCI:
                label = draw_label_pci(o);
                if (!streq(json_string_or(o, "PortType", "endpoint"), "endpoint") &&
                    !streq(json_string_or(o, "PortType", "endpoint"), "integrated"))
                        fill = "#eceff1";
                break;
        case KIND_LINK:
                label = draw_label_link(o);
                break;
        case KIND_RDMA:
                label = draw_label_rdma(o);
                break;
        case KIND_GPU:
                label = draw_label_gpu(o);
                break;
        case KIND_TBT:
                label = draw_label_tbt(o);
                break;
        case _KIND_MAX:
                break;
        }
        if (!id || !label) {
                d->oom = true;
                return;
        }
        fprintf(d->f, "  \"%s\" [label=\"%s\", fillcolor=\"%s\", color=\"%s\", penwidth=%s];\n", id, label, fill,
                draw_health_colour(o), draw_health_bad(o) ? "2.5" : "1");
        json_object_object_add(d->shown, json_string_or(o, "Path", ""), NULL);
        d->n_boxes++;
}

/* The line from host to o: a PCIe or Thunderbolt link with its figures, or a dashed "belongs to". */
static void emit_line(Drawing *d, const char *host, DrawKind host_kind, DrawKind kind, json_object *o) {
        _cleanup_(freep) char *from = draw_escape(host), *to = draw_escape(json_string_or(o, "Path", "")),
                              *label = NULL;
        bool link = kind == KIND_PCI || (kind == KIND_TBT && host_kind == KIND_TBT &&
                                         !streq(json_string_or(o, "Type", ""), "host"));
        const char *colour = draw_health_colour(o);

        if (kind == KIND_PCI)
                label = draw_label_pci_link(o);
        else if (link)
                label = draw_label_tbt_link(o);
        else
                label = strdup("");
        if (!from || !to || !label) {
                d->oom = true;
                return;
        }
        fprintf(d->f, "  \"%s\" -> \"%s\" [label=\"%s\", color=\"%s\", fontcolor=\"%s\", penwidth=%s%s];\n", from, to,
                label, colour, draw_health_bad(o) ? colour : "black", draw_health_bad(o) ? "3" : "1.5",
                link ? "" : ", style=dashed, arrowhead=none");
}

/* o and everything below it; past the budget only counted. */
static void emit_tree(Drawing *d, const char *path, unsigned depth, size_t budget) {
        json_object *children = NULL;
        DrawKind kind = KIND_PCI;
        json_object *o = object_of(d, path, &kind);
        bool shown;

        if (!o || depth > DEPTH_MAX || json_object_object_get_ex(d->drawn, path, NULL))
                return;
        json_object_object_add(d->drawn, path, NULL);
        shown = d->n_boxes < budget;
        if (shown)
                emit_box(d, kind, o);
        else
                d->left_out[kind]++;
        if (!json_object_object_get_ex(d->children, path, &children))
                return;
        for (size_t i = 0; i < json_object_array_length(children); i++) {
                const char *child = json_object_get_string(json_object_array_get_idx(children, i));
                DrawKind child_kind = KIND_PCI;
                json_object *c = object_of(d, child, &child_kind);
                bool was_drawn = json_object_object_get_ex(d->drawn, child, NULL);
                size_t before = d->n_boxes;

                emit_tree(d, child, depth + 1, budget);
                if (shown && c && !was_drawn && d->n_boxes > before)
                        emit_line(d, path, kind, child_kind, c);
        }
}

/* ---- the NUMA nodes and host bridges ---- */

/* "0000:15" for "0000:15:01.0": the root bus a root port sits on, which a host bridge leads to. */
static char *host_bridge_of(json_object *pci) {
        const char *address = json_string_or(pci, "Address", "?"), *colon = strrchr(address, ':');
        return colon ? strndup(address, (size_t) (colon - address)) : strdup(address);
}

static int compare_numa(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
        /* The functions with no NUMA node last. */
        if ((x < 0) != (y < 0))
                return x < 0 ? 1 : -1;
        return x < y ? -1 : x > y;
}

/* The NUMA node's frame with its host bridges and the trees below them. cpus: its cpulist as
 * Node.NumaNodes has it (NULL: unknown, the CPUs a function is local to are said instead). A node with
 * no PCI function is drawn only when always (a NUMA node of a package), with a line saying so. */
static void emit_numa_node(Drawing *d, int64_t numa, const char *cpus, bool always) {
        _cleanup_(freep) char *local = NULL, *title = NULL;
        json_object *bridges = json_object_new_object();
        bool any = false;

        if (!bridges) {
                d->oom = true;
                return;
        }
        for (size_t i = 0; i < json_object_array_length(d->roots); i++) {
                DrawKind kind = KIND_PCI;
                json_object *o = object_of(d, json_object_get_string(json_object_array_get_idx(d->roots, i)), &kind);
                if (kind != KIND_PCI || json_int_or(o, "NumaNode", -1) != numa)
                        continue;
                any = true;
                if (!local && !isempty(json_string_or(o, "LocalCpus", "")))
                        local = strdup(json_string_or(o, "LocalCpus", ""));
        }
        if (!any && !always) {
                json_object_put(bridges);
                return;
        }
        if (cpus)
                title = ctl_strdupf("NUMA node %" PRId64 "%s%s", numa, *cpus ? ", CPUs " : ", no CPUs", cpus);
        else
                title = numa >= 0 ? ctl_strdupf("NUMA node %" PRId64 "%s%s", numa, local ? ", CPUs " : "", strempty(local))
                                  : strdup("No NUMA node");
        _cleanup_(freep) char *label = title ? DRAW_LABEL(strdup(title)) : NULL;
        fprintf(d->f, " subgraph \"cluster_numa%" PRId64 "\" {\n  label=\"%s\"; style=\"rounded,filled\"; "
                      "fillcolor=\"#ffffff\"; color=\"#90a4ae\";\n",
                numa, strempty(label));
        if (!any)
                /* A cluster with nothing in it is not drawn at all. */
                fprintf(d->f, "  \"numa:%" PRId64 "\" [label=\"no PCIe devices\", shape=plaintext, style=\"\", "
                              "fontcolor=\"#607d8b\"];\n",
                        numa);
        for (size_t i = 0; i < json_object_array_length(d->roots); i++) {
                const char *path = json_object_get_string(json_object_array_get_idx(d->roots, i));
                DrawKind kind = KIND_PCI;
                json_object *o = object_of(d, path, &kind);
                _cleanup_(freep) char *bridge = NULL, *id = NULL, *to = NULL;

                if (kind != KIND_PCI || json_int_or(o, "NumaNode", -1) != numa)
                        continue;
                bridge = host_bridge_of(o);
                id = bridge ? ctl_strdupf("hostbridge:%s", bridge) : NULL;
                to = draw_escape(path);
                if (!id || !to) {
                        d->oom = true;
                        break;
                }
                if (!json_object_object_get_ex(bridges, id, NULL)) {
                        _cleanup_(freep) char *escaped = draw_escape(id), *hb = DRAW_LABEL(ctl_strdupf("Host bridge %s", bridge));
                        fprintf(d->f, "  \"%s\" [label=\"%s\", fillcolor=\"#cfd8dc\"];\n", strempty(escaped), strempty(hb));
                        json_object_object_add(bridges, id, NULL);
                }
                size_t before = d->n_boxes;
                emit_tree(d, path, 0, DRAW_NODES_MAX);
                if (d->n_boxes > before) {
                        /* A root port's figures are those of the link below it; a function straight on the
                         * root bus (a VM's, or one whose bridge the kernel hides) shows its own. */
                        bool own = !streq(json_string_or(o, "PortType", ""), "root-port");
                        _cleanup_(freep) char *from = draw_escape(id), *figures = own ? draw_label_pci_link(o) : strdup("");
                        fprintf(d->f, "  \"%s\" -> \"%s\" [label=\"%s\", color=\"%s\", arrowhead=none];\n", strempty(from),
                                to, strempty(figures), own ? draw_health_colour(o) : "#90a4ae");
                }
        }
        fputs(" }\n", d->f);
        json_object_put(bridges);
}

/* Node.NumaNodes' cpulist of a NUMA node, or NULL where the daemon publishes none for it. */
static const char *numa_cpus(json_object *numa_nodes, int64_t numa) {
        for (size_t i = 0; i < json_array_len(numa_nodes); i++) {
                json_object *n = json_object_array_get_idx(numa_nodes, i);
                if (json_int_or(n, "Id", -2) == numa)
                        return json_string_or(n, "Cpus", "");
        }
        return NULL;
}

/* A NUMA node once: drawn is {"N": null} of those already framed. */
static void emit_numa_once(Drawing *d, json_object *drawn, json_object *numa_nodes, int64_t numa, bool always) {
        char key[32];

        snprintf(key, sizeof(key), "%" PRId64, numa);
        if (json_object_object_get_ex(drawn, key, NULL))
                return;
        json_object_object_add(drawn, key, NULL);
        emit_numa_node(d, numa, numa_cpus(numa_nodes, numa), always);
}

/* One CPU package (socket) as lstopo frames it: its cores and CPUs in the title, its NUMA nodes (each
 * drawn in the first package that has CPUs in it) inside, the PCIe trees in those. The functions of no
 * NUMA node go in the package when it is the only one and the kernel has no NUMA nodes at all. */
static void emit_package(Drawing *d, json_object *package, json_object *drawn, json_object *numa_nodes, bool sole) {
        json_object *nodes = ctl_member(package, "NumaNodes");
        int64_t id = json_int_or(package, "Id", 0), cores = json_int_or(package, "Cores", 0);
        const char *cpus = json_string_or(package, "Cpus", "");
        _cleanup_(freep) char *title = ctl_strdupf("Package %" PRId64 ": %" PRId64 " %s, CPUs %s", id, cores,
                                                   cores == 1 ? "core" : "cores", cpus);
        _cleanup_(freep) char *label = title ? DRAW_LABEL(strdup(title)) : NULL;

        if (!label) {
                d->oom = true;
                return;
        }
        fprintf(d->f, " subgraph \"cluster_package%" PRId64 "\" {\n  label=\"%s\"; style=\"rounded,filled\"; "
                      "fillcolor=\"#f5f5f5\"; color=\"#455a64\"; penwidth=1.5;\n",
                id, label);
        for (size_t i = 0; i < json_array_len(nodes); i++)
                emit_numa_once(d, drawn, numa_nodes, json_object_get_int64(json_object_array_get_idx(nodes, i)), true);
        if (json_array_len(nodes) == 0) {
                if (sole && json_array_len(numa_nodes) == 0)
                        emit_numa_once(d, drawn, numa_nodes, -1, true);
                else
                        fprintf(d->f, "  \"package:%" PRId64 "\" [label=\"no NUMA node\", shape=plaintext, style=\"\", "
                                      "fontcolor=\"#607d8b\"];\n",
                                id);
        }
        fputs(" }\n", d->f);
}

/* The packages (Node.Packages) with their NUMA nodes, then the NUMA nodes in no package (memory without
 * CPUs, such as a GPU's), then those only a function names; without Packages, the NUMA nodes alone. */
static void emit_pci_trees(Drawing *d, json_object *node) {
        _cleanup_(freep) int64_t *numa = new0(int64_t, json_object_array_length(d->roots) + 1);
        _cleanup_(json_object_putp) json_object *drawn = json_object_new_object();
        json_object *packages = ctl_member(node, "Packages"), *numa_nodes = ctl_member(node, "NumaNodes");
        size_t n = 0;

        if (!numa || !drawn) {
                d->oom = true;
                return;
        }
        /* Graphviz stacks frames that no line joins from the last written at the top (rankdir=LR): the
         * packages are written last first, so package 0 is on top as in lstopo. */
        for (size_t i = json_array_len(packages); i > 0; i--)
                emit_package(d, json_object_array_get_idx(packages, i - 1), drawn, numa_nodes, json_array_len(packages) == 1);
        for (size_t i = 0; i < json_array_len(numa_nodes); i++)
                emit_numa_once(d, drawn, numa_nodes, json_int_or(json_object_array_get_idx(numa_nodes, i), "Id", -1), true);
        for (size_t i = 0; i < json_object_array_length(d->roots); i++) {
                DrawKind kind = KIND_PCI;
                json_object *o = object_of(d, json_object_get_string(json_object_array_get_idx(d->roots, i)), &kind);
                int64_t node_id = json_int_or(o, "NumaNode", -1);
                bool seen = false;

                for (size_t j = 0; j < n; j++)
                        seen = seen || numa[j] == node_id;
                if (kind == KIND_PCI && !seen)
                        numa[n++] = node_id;
        }
        qsort(numa, n, sizeof(int64_t), compare_numa);
        for (size_t i = 0; i < n; i++)
                emit_numa_once(d, drawn, numa_nodes, numa[i], false);
}

/* What hangs off no PCI function, at most OTHER_MAX boxes of it. */
static void emit_others(Drawing *d) {
        size_t budget = MIN(d->n_boxes + OTHER_MAX, (size_t) DRAW_NODES_MAX + OTHER_MAX);
        bool any = false;

        for (size_t i = 0; i < json_object_array_length(d->roots); i++) {
                const char *path = json_object_get_string(json_object_array_get_idx(d->roots, i));
                if (json_object_object_get_ex(d->drawn, path, NULL))
                        continue;
                if (!any)
                        fputs(" subgraph \"cluster_other\" {\n  label=\"Not behind a PCI function\"; style=\"rounded,dashed\"; "
                              "color=\"#90a4ae\";\n",
                              d->f);
                any = true;
                emit_tree(d, path, 0, budget);
        }
        if (any)
                fputs(" }\n", d->f);
}

/* The GPUs' own links (NVLink, XGMI) as GetAffinity() words them ("NV18"), between the GPUs' boxes;
 * they do not rank the tree (constraint=false): the PCIe tree keeps its shape. */
static void emit_gpu_links(Drawing *d, json_object *pairs) {
        for (size_t i = 0; i < json_array_len(pairs); i++) {
                json_object *p = json_object_array_get_idx(pairs, i);
                const char *a = json_string_or(p, "A", ""), *b = json_string_or(p, "B", ""),
                           *relation = json_string_or(p, "Relation", "");
                DrawKind ka = KIND_PCI, kb = KIND_PCI;
                _cleanup_(freep) char *from = NULL, *to = NULL, *label = NULL;

                if (!startswith(relation, "NV") && !streq(relation, "XGMI"))
                        continue;
                if (!object_of(d, a, &ka) || !object_of(d, b, &kb) || ka != KIND_GPU || kb != KIND_GPU ||
                    !json_object_object_get_ex(d->shown, a, NULL) || !json_object_object_get_ex(d->shown, b, NULL))
                        continue;
                from = draw_escape(a);
                to = draw_escape(b);
                label = draw_escape(relation);
                if (!from || !to || !label) {
                        d->oom = true;
                        return;
                }
                fprintf(d->f, "  \"%s\" -> \"%s\" [label=\"%s\", dir=none, constraint=false, color=\"#6a1b9a\", "
                              "fontcolor=\"#6a1b9a\", penwidth=2];\n",
                        from, to, label);
        }
}

/* ---- the frame ---- */

static char *format_bytes(double bytes) {
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        size_t u = 0;

        while (bytes >= 1024 && u + 1 < ELEMENTSOF(units)) {
                bytes /= 1024;
                u++;
        }
        return ctl_strdupf("%.*f %s", bytes < 10 && u > 0 ? 1 : 0, bytes, units[u]);
}

/* s for a Graphviz HTML-like label: control characters and invalid UTF-8 as "\xNN", markup as entities. */
static char *html_escape(const char *s) {
        _cleanup_(freep) char *shown = escape_for_terminal(strempty(s));
        char *ret, *t;

        if (!shown)
                return NULL;
        ret = t = malloc(strlen(shown) * 6 + 1);
        for (const char *p = shown; ret && *p; p++)
                switch (*p) {
                case '&':
                        t = stpcpy(t, "&amp;");
                        break;
                case '<':
                        t = stpcpy(t, "&lt;");
                        break;
                case '>':
                        t = stpcpy(t, "&gt;");
                        break;
                case '"':
                        t = stpcpy(t, "&quot;");
                        break;
                default:
                        *t++ = *p;
                }
        if (ret)
                *t = '\0';
        return ret;
}

/* The title (the node: hostname, CPUs, memory) and under it the colours' meanings, each in words: the
 * picture is read without colour too. One HTML-like label, so the legend takes no column of its own. */
static void emit_title(Drawing *d, json_object *node, json_object *memory) {
        static const struct {
                const char *health, *meaning;
        } legend[] = {
                { "ok", "ok (no Health line)" },
                { "degraded", "degraded: slower than both ends can go" },
                { "errors", "errors or flapping" },
                { "unknown", "unknown: nothing to judge yet" },
        };
        double total = json_double_or(memory, "TotalBytes", 0);
        int64_t cpus = json_int_or(node, "CpuCount", 0);
        _cleanup_(freep) char *bytes = total > 0 ? format_bytes(total) : NULL,
                              *count = cpus > 0 ? ctl_strdupf("%" PRId64 " CPUs", cpus) : NULL,
                              *host = html_escape(json_string_or(node, "Hostname", "this node")),
                              *model = html_escape(json_string_or(node, "CpuModel", ""));

        if (!host || !model) {
                d->oom = true;
                return;
        }
        fprintf(d->f, "  label=<<table border=\"0\" cellspacing=\"6\"><tr><td colspan=\"%zu\"><font point-size=\"18\">%s</font>"
                      "<br/>%s%s%s%s%s</td></tr><tr>",
                ELEMENTSOF(legend), host, model, !isempty(model) && count ? ", " : "", strempty(count),
                bytes ? ", memory " : "", strempty(bytes));
        for (size_t i = 0; i < ELEMENTSOF(legend); i++) {
                _cleanup_(json_object_putp) json_object *o = json_object_new_object();
                if (!o)
                        break;
                json_object_object_add(o, "Health", json_object_new_string(legend[i].health));
                fprintf(d->f, "<td border=\"2\" color=\"%s\" style=\"rounded\"><font color=\"%s\" point-size=\"11\">%s</font></td>",
                        draw_health_colour(o), draw_health_colour(o), legend[i].meaning);
        }
        fputs("</tr></table>>;\n", d->f);
}

/* What the budget left out, counted by kind; or that there is nothing at all. */
static void emit_note(Drawing *d) {
        _cleanup_(freep) char *text = strdup("");
        bool any = false;

        for (size_t k = 0; k < _KIND_MAX && text; k++) {
                char *more;
                if (d->left_out[k] == 0)
                        continue;
                more = ctl_strdupf("%s%s%zu %s", text, any ? ", " : "", d->left_out[k],
                                   d->left_out[k] == 1 ? kinds[k].noun : kinds[k].nouns);
                free(text);
                text = more;
                any = true;
        }
        if (!text) {
                d->oom = true;
                return;
        }
        if (any) {
                _cleanup_(freep) char *label = DRAW_LABEL(ctl_strdupf("Left out to keep the picture readable: %s "
                                                                      "(linkprobectl list, health and --json show every one)",
                                                                      text));
                fprintf(d->f, "  \"note:left-out\" [label=\"%s\", shape=note, fillcolor=\"#fffde7\"];\n", strempty(label));
        } else if (d->n_boxes == 0)
                fputs("  \"note:empty\" [label=\"linkprobed publishes no devices, links or ports yet.\", shape=note, "
                      "fillcolor=\"#fffde7\"];\n",
                      d->f);
}

char *draw_node_dot(json_object *objects, json_object *node, json_object *memory, json_object *pairs) {
        Drawing d = {};
        char *buf = NULL;
        size_t size = 0;

        d.f = open_memstream(&buf, &size);
        if (!d.f)
                return NULL;
        if (index_objects(&d, objects) < 0)
                d.oom = true;
        /* Left to right: a deep tree grows across a wide screen, its many leaves down it. */
        fputs("digraph linkprobe_node {\n"
              "  graph [rankdir=LR, labelloc=t, fontname=\"DejaVu Sans\", fontsize=16, nodesep=0.15, ranksep=0.45, "
              "newrank=true, outputorder=edgesfirst];\n"
              "  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\", fontsize=11, margin=\"0.1,0.04\"];\n"
              "  edge [fontname=\"DejaVu Sans\", fontsize=10, arrowsize=0.6];\n",
              d.f);
        emit_title(&d, node, memory);
        if (!d.oom) {
                emit_pci_trees(&d, node);
                emit_others(&d);
                emit_gpu_links(&d, pairs);
                emit_note(&d);
        }
        fputs("}\n", d.f);
        if (fclose(d.f) != 0)
                d.oom = true;
        drawing_done(&d);
        if (d.oom) {
                free(buf);
                return NULL;
        }
        return buf;
}
