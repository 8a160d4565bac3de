/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * linkprobectl fabric topology: the switch tree schedulers place by, as Slurm's topology.conf
 * (topology/tree or topology/block), Kubernetes node labels (NVIDIA topograph's keys) or JSON; and
 * fabric verify --slurm=FILE: an existing topology.conf against the fabric, one line per difference.
 */
#include <fcntl.h>
#include <math.h>

#include "fabric/fabric-model.h"
#include "fabric/fabric-tree.h"
#include "fabric/topology-conf.h"
#include "linkprobectl-fabric-topology.h"
#include "linkprobectl.h"
#include "shared/fileio.h"

static int build_tree(json_object *model, FabricTree *ret) {
        _cleanup_(freep) char *error = NULL;
        int r = fabric_tree_build(model, ret, &error);

        if (r == -EINVAL) {
                _cleanup_(freep) char *shown = escape_for_terminal(strna(error));
                fprintf(stderr, "Cannot write the tree: %s\n", strna(shown));
                return CTL_EXIT_FAILURE;
        }
        return r < 0 ? log_oom_ctl() : 0;
}

/* Nodes with no switch known are said, and counted, never left out unseen. */
static void report_unattached(const FabricTree *t) {
        size_t shown = 0;

        if (t->unattached == 0)
                return;
        for (size_t i = 0; i < t->n_nodes && shown < 20; i++)
                if (t->nodes[i].leaf < 0) {
                        _cleanup_(freep) char *h = escape_for_terminal(t->nodes[i].hostname);
                        fprintf(stderr, "%s%s", shown++ ? ", " : "No switch is known for ", strna(h));
                }
        fprintf(stderr, "%s: %zu node%s left out of the tree (no LLDP or InfiniBand neighbour that is a switch).\n",
                t->unattached > shown ? ", ..." : "", t->unattached, t->unattached == 1 ? "" : "s");
}

/* A node's name must be one Slurm (and Kubernetes) reads as one name. */
static int check_node_names(const FabricTree *t) {
        for (size_t i = 0; i < t->n_nodes; i++)
                if (t->nodes[i].leaf >= 0 && !slurm_name_valid(t->nodes[i].hostname)) {
                        _cleanup_(freep) char *h = escape_for_terminal(t->nodes[i].hostname);
                        fprintf(stderr,
                                "Node %s (NodeId %s) has a hostname Slurm cannot take (letters, digits, '-', '_', '.'): "
                                "give it a plain hostname.\n",
                                strna(h), t->nodes[i].node_id);
                        return CTL_EXIT_FAILURE;
                }
        return 0;
}

/* The tree as topology.conf's switches, leaves first. */
static int tree_to_conf(const FabricTree *t, TopoConf *c) {
        for (size_t i = 0; i < t->n_order; i++) {
                const TreeSwitch *s = &t->switches[t->order[i]];
                TopoSwitch *out = topology_conf_add(c, s->name);

                if (!out)
                        return -ENOMEM;
                for (size_t k = 0; k < s->n_nodes; k++)
                        if (hostlist_add(&out->nodes, t->nodes[s->nodes[k]].hostname) < 0)
                                return -ENOMEM;
                for (size_t k = 0; k < s->n_children; k++)
                        if (hostlist_add(&out->switches, t->switches[s->children[k]].name) < 0)
                                return -ENOMEM;
                if (s->link_gbps > 0 && !(out->link_speed = ctl_strdupf("%.0f", s->link_gbps)))
                        return -ENOMEM;
        }
        return 0;
}

/* The switch `tier` levels above a node's leaf, by the first of each switch's parents (in a fat tree
 * every spine serves every leaf alike, so the first by name stands for them). */
static const TreeSwitch *ancestor(const FabricTree *t, const TreeSwitch *s, unsigned tier) {
        for (unsigned k = 0; s && k < tier; k++)
                s = s->n_parents > 0 ? &t->switches[s->parents[0]] : NULL;
        return s;
}

/* Union-find over the nodes: the islands cabled node to node with Thunderbolt. */
static size_t island_root(size_t *parent, size_t i) {
        while (parent[i] != i)
                i = parent[i] = parent[parent[i]];
        return i;
}

static int find_islands(const FabricTree *t, size_t **ret) {
        _cleanup_(json_object_putp) json_object *index = json_object_new_object();
        json_object *edges = ctl_member(t->model, "Edges"), *x, *y;
        size_t *parent = calloc(t->n_nodes ?: 1, sizeof(size_t));

        if (!index || !parent) {
                free(parent);
                return -ENOMEM;
        }
        for (size_t i = 0; i < t->n_nodes; i++) {
                parent[i] = i;
                json_object_object_add(index, t->nodes[i].node_id, json_object_new_int64((int64_t) i));
        }
        for (size_t i = 0; i < json_array_len(edges); i++) {
                json_object *e = json_object_array_get_idx(edges, i);
                if (!streq(json_string_or(e, "Transport", ""), "thunderbolt") ||
                    !json_object_object_get_ex(index, json_string_or(e, "From", ""), &x) ||
                    !json_object_object_get_ex(index, json_string_or(e, "To", ""), &y))
                        continue;
                size_t a = island_root(parent, (size_t) json_object_get_int64(x)), b = island_root(parent, (size_t) json_object_get_int64(y));
                /* The root is the first by hostname: it names the island. */
                if (a < b)
                        parent[b] = a;
                else
                        parent[a] = b;
        }
        *ret = parent;
        return 0;
}

static int print_k8s_labels(const FabricTree *t) {
        _cleanup_(freep) size_t *island = NULL;
        bool *cabled = NULL;

        if (find_islands(t, &island) < 0)
                return log_oom_ctl();
        cabled = calloc(t->n_nodes ?: 1, sizeof(bool));
        if (!cabled)
                return log_oom_ctl();
        for (size_t i = 0; i < t->n_nodes; i++)
                if (island_root(island, i) != i)
                        cabled[i] = cabled[island_root(island, i)] = true;
        for (size_t i = 0; i < t->n_nodes; i++) {
                const TreeNode *n = &t->nodes[i];
                if (n->leaf < 0)
                        continue;
                printf("kubectl label node %s --overwrite", n->hostname);
                for (unsigned tier = 0; tier < 3; tier++) {
                        const TreeSwitch *s = ancestor(t, &t->switches[n->leaf], tier);
                        char buf[16];
                        if (s)
                                printf(" network.topology.nvidia.com/%s=%s", fabric_tree_tier_name(tier, buf), s->name);
                }
                /* NVLink domains are not linkprobe's to know; nodes cabled to each other with Thunderbolt (an
                 * interconnect beside the switches) are: the island is named after its first node. */
                if (cabled[i])
                        printf(" network.topology.nvidia.com/accelerator=tb-%s", t->nodes[island_root(island, i)].hostname);
                printf("\n");
        }
        free(cabled);
        return 0;
}

static json_object *names_array(const FabricTree *t, const uint32_t *idx, size_t n, bool nodes) {
        json_object *a = json_object_new_array();
        for (size_t k = 0; a && k < n; k++)
                json_object_array_add(a, json_object_new_string(nodes ? t->nodes[idx[k]].hostname : t->switches[idx[k]].name));
        return a;
}

static int print_json(const FabricTree *t) {
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
        json_object *switches = json_object_new_array(), *nodes = json_object_new_array(), *unattached = json_object_new_array();

        if (!doc || !switches || !nodes || !unattached)
                return log_oom_ctl();
        json_object_object_add(doc, "Source", json_object_get(ctl_member(t->model, "Source")));
        json_object_object_add(doc, "Tiers", json_object_new_int64(t->tiers));
        json_object_object_add(doc, "Switches", switches);
        json_object_object_add(doc, "Nodes", nodes);
        json_object_object_add(doc, "Unattached", unattached);
        for (size_t i = 0; i < t->n_order; i++) {
                const TreeSwitch *s = &t->switches[t->order[i]];
                json_object *o = json_object_new_object();
                char buf[16];
                json_object_object_add(o, "Name", json_object_new_string(s->name));
                json_object_object_add(o, "Key", json_object_new_string(s->key));
                json_object_object_add(o, "Tier", json_object_new_int64(s->tier));
                json_object_object_add(o, "Level", json_object_new_string(fabric_tree_tier_name((unsigned) s->tier, buf)));
                json_object_object_add(o, "LinkSpeedGbps", s->link_gbps > 0 ? json_object_new_double(s->link_gbps) : NULL);
                json_object_object_add(o, "Switches", names_array(t, s->children, s->n_children, false));
                json_object_object_add(o, "Nodes", names_array(t, s->nodes, s->n_nodes, true));
                json_object_object_add(o, "Parents", names_array(t, s->parents, s->n_parents, false));
                json_object_array_add(switches, o);
        }
        for (size_t i = 0; i < t->n_nodes; i++) {
                const TreeNode *n = &t->nodes[i];
                json_object *o;
                if (n->leaf < 0) {
                        json_object_array_add(unattached, json_object_new_string(n->hostname));
                        continue;
                }
                o = json_object_new_object();
                json_object_object_add(o, "Hostname", json_object_new_string(n->hostname));
                json_object_object_add(o, "NodeId", json_object_new_string(n->node_id));
                json_object_object_add(o, "Leaf", json_object_new_string(t->switches[n->leaf].name));
                json_object_object_add(o, "Interface", json_object_get(ctl_member(n->attachment, "Interface")));
                json_object_object_add(o, "SwitchPort", json_object_get(ctl_member(n->attachment, "SwitchPort")));
                json_object_object_add(o, "Transport", json_object_get(ctl_member(n->attachment, "Transport")));
                json_object_object_add(o, "RateGbps", json_object_get(ctl_member(n->attachment, "RateGbps")));
                json_object_object_add(o, "BestGbps", json_object_get(ctl_member(n->attachment, "BestGbps")));
                json_object_object_add(o, "Degraded", json_object_get(ctl_member(n->attachment, "Degraded")));
                json_object_array_add(nodes, o);
        }
        if (arg_json == JSON_OFF)
                arg_json = JSON_AUTO;
        return ctl_output_json(doc);
}

int fabric_topology(json_object *model) {
        _cleanup_(fabric_tree_done) FabricTree t = {};
        _cleanup_(topology_conf_done) TopoConf c = {};
        const char *format = arg_topology_format ?: arg_json != JSON_OFF ? "json" : "slurm";
        int r;

        r = build_tree(model, &t);
        if (r != 0)
                return r;
        report_unattached(&t);
        if (streq(format, "json"))
                return print_json(&t);
        r = check_node_names(&t);
        if (r != 0)
                return r;
        if (t.n_order == 0) {
                fprintf(stderr, "No node is known to be cabled to a switch: there is no tree to write.\n");
                return CTL_EXIT_FAILURE;
        }
        if (streq(format, "k8s-labels"))
                r = print_k8s_labels(&t);
        else {
                r = tree_to_conf(&t, &c);
                if (r < 0)
                        return log_oom_ctl();
                printf("# topology.conf for topology/%s, written by linkprobectl fabric topology from %s\n",
                       streq(format, "slurm") ? "tree" : "block", json_string_or(model, "Source", "?"));
                printf("# %zu node%s under %zu switch%s", t.n_nodes - t.unattached, t.n_nodes - t.unattached == 1 ? "" : "s",
                       t.n_order, t.n_order == 1 ? "" : "es");
                printf("%s; LinkSpeed in Gb/s\n", t.unattached ? " (nodes with no known switch left out)" : "");
                r = streq(format, "slurm") ? topology_conf_write_tree(stdout, &c) : topology_conf_write_block(stdout, &c);
                if (r < 0)
                        return r == -ENOMEM ? log_oom_ctl() : CTL_EXIT_FAILURE;
        }
        return fflush(stdout) == 0 ? 0 : CTL_EXIT_FAILURE;
}

/* ---- verify ---- */

typedef struct Verify {
        const char *file;
        size_t differences;
} Verify;

_printf_(2, 3) static void difference(Verify *v, const char *format, ...) {
        _cleanup_(freep) char *s = NULL, *shown = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&s, format, ap) < 0)
                s = NULL;
        va_end(ap);
        shown = escape_for_terminal(strna(s));
        printf("%s\n", strna(shown));
        v->differences++;
}

static int read_conf(const char *file, TopoConf *ret) {
        _cleanup_(freep) char *text = NULL, *shown = escape_for_terminal(file), *error = NULL;
        unsigned line = 0;
        size_t size;
        int r;

        r = read_file_at(AT_FDCWD, file, TOPOLOGY_CONF_SIZE_MAX, &text, &size);
        if (r < 0) {
                fprintf(stderr, "Cannot read %s: %s\n", strna(shown), r == -EFBIG ? "larger than any topology.conf" : strerror(-r));
                return CTL_EXIT_USAGE;
        }
        if (strlen(text) != size) {
                fprintf(stderr, "%s holds a NUL byte: not a topology.conf.\n", strna(shown));
                return CTL_EXIT_USAGE;
        }
        r = topology_conf_parse(text, ret, &line, &error);
        if (r == -EINVAL) {
                _cleanup_(freep) char *why = escape_for_terminal(strna(error));
                fprintf(stderr, "%s:%u: %s\n", strna(shown), line, strna(why));
                return CTL_EXIT_USAGE;
        }
        return r < 0 ? log_oom_ctl() : 0;
}

/* In the file: each node's switch, each switch's parents. */
static int index_conf(const TopoConf *c, json_object *node_leaf, json_object *parents) {
        for (size_t i = 0; i < c->n; i++) {
                const TopoSwitch *s = &c->switches[i];
                for (size_t k = 0; k < s->nodes.n; k++)
                        json_object_object_add(node_leaf, s->nodes.names[k], json_object_new_string(s->name));
                for (size_t k = 0; k < s->switches.n; k++) {
                        json_object *p;
                        if (!json_object_object_get_ex(parents, s->switches.names[k], &p)) {
                                p = json_object_new_object();
                                json_object_object_add(parents, s->switches.names[k], p);
                        }
                        json_object_object_add(p, s->name, NULL);
                }
        }
        return 0;
}

static void verify_nodes(Verify *v, const FabricTree *t, json_object *file_leaf) {
        _cleanup_(json_object_putp) json_object *seen = json_object_new_object();

        for (size_t i = 0; i < t->n_nodes; i++) {
                const TreeNode *n = &t->nodes[i];
                json_object *was;
                const char *in_file = json_object_object_get_ex(file_leaf, n->hostname, &was) ? json_object_get_string(was) : NULL;

                json_object_object_add(seen, n->hostname, NULL);
                if (n->leaf < 0) {
                        if (in_file)
                                difference(v, "node %s: under %s in %s; the fabric knows no switch for it", n->hostname, in_file, v->file);
                        continue;
                }
                const char *leaf = t->switches[n->leaf].name;
                if (!in_file)
                        difference(v, "node %s: under %s in the fabric, missing from %s", n->hostname, leaf, v->file);
                else if (!streq(in_file, leaf))
                        difference(v, "node %s: under %s in %s, under %s in the fabric (%s port %s)", n->hostname, in_file, v->file, leaf,
                                   json_string_or(n->attachment, "Interface", "?"), json_string_or(n->attachment, "SwitchPort", "?"));
                if (json_bool_or(n->attachment, "Degraded", false)) {
                        double rate = json_double_or(n->attachment, "RateGbps", 0), best = json_double_or(n->attachment, "BestGbps", 0);
                        char figures[96] = "";
                        if (rate > 0 && best > 0)
                                snprintf(figures, sizeof(figures), " (%.0f Gb/s; both ends could do %.0f Gb/s)", rate, best);
                        else if (rate > 0)
                                snprintf(figures, sizeof(figures), " (%.0f Gb/s)", rate);
                        difference(v, "node %s: its cable into %s port %s is degraded%s", n->hostname, leaf,
                                   json_string_or(n->attachment, "SwitchPort", "?"), figures);
                }
        }
        json_object_object_foreach(file_leaf, name, sw)
                if (!json_object_object_get_ex(seen, name, NULL))
                        difference(v, "node %s: under %s in %s, not in the fabric", name, json_object_get_string(sw), v->file);
}

static void verify_switches(Verify *v, const FabricTree *t, const TopoConf *c, json_object *file_parents) {
        _cleanup_(json_object_putp) json_object *tree = json_object_new_object();

        for (size_t i = 0; i < t->n_order; i++) {
                const TreeSwitch *s = &t->switches[t->order[i]];
                json_object *p = NULL;

                json_object_object_add(tree, s->name, NULL);
                if (!topology_conf_find(c, s->name)) {
                        difference(v, "switch %s: in the fabric, missing from %s", s->name, v->file);
                        continue;
                }
                json_object_object_get_ex(file_parents, s->name, &p);
                for (size_t k = 0; k < s->n_parents; k++) {
                        const char *parent = t->switches[s->parents[k]].name;
                        if (!json_object_object_get_ex(p, parent, NULL) && topology_conf_find(c, parent))
                                difference(v, "switch %s: cabled to %s in the fabric, not under it in %s", s->name, parent, v->file);
                }
                if (!p)
                        continue;
                json_object_object_foreach(p, parent, unused) {
                        bool found = false;
                        (void) unused;
                        for (size_t k = 0; k < s->n_parents && !found; k++)
                                found = streq(t->switches[s->parents[k]].name, parent);
                        if (!found)
                                difference(v, "switch %s: under %s in %s, not cabled to it in the fabric", s->name, parent, v->file);
                }
        }
        for (size_t i = 0; i < c->n; i++)
                if (!json_object_object_get_ex(tree, c->switches[i].name, NULL))
                        difference(v, "switch %s: in %s (line %u), not in the fabric", c->switches[i].name, v->file, c->switches[i].line);
}

/* " 50 Gb/s (1X HDR)", or what of it is known. */
static void format_rate(char *buf, size_t size, json_object *l) {
        double gbps = json_double_or(l, "RateGbps", 0);
        const char *width = json_string_or(l, "Width", NULL), *speed = json_string_or(l, "Speed", NULL);

        if (gbps > 0)
                snprintf(buf, size, " %.0f Gb/s (%s %s)", gbps, width ?: "?", speed ?: "?");
        else
                *buf = '\0';
}

/* "leaf1 port 6 - leaf2 port 6": the ends by name, so a cable reads the same whichever end the source
 * named first. */
static void format_ends(char *buf, size_t size, json_object *l, const char *from, const char *to) {
        const char *from_port = json_string_or(l, "FromPort", "?"), *to_port = json_string_or(l, "ToPort", "?");

        if (strcmp(from, to) > 0)
                snprintf(buf, size, "%s port %s - %s port %s", to, to_port, from, from_port);
        else
                snprintf(buf, size, "%s port %s - %s port %s", from, from_port, to, to_port);
}

/* A cable between the tree's switches the sweep judged below what both its ends support (Degraded, from
 * Switch.LinkJudgements or linkprobe_switch_link_degraded): one line, its reason with it. */
static void verify_judged_uplink(Verify *v, json_object *l, const char *from, const char *to) {
        const char *reason = json_string_or(l, "DegradedReason", NULL);
        char rate[96], ends[512];

        format_rate(rate, sizeof(rate), l);
        format_ends(ends, sizeof(ends), l, from, to);
        difference(v, "switch link %s: degraded,%s while both ends could do %.0f Gb/s%s%s%s", ends, rate,
                   json_double_or(l, "BestGbps", 0), isempty(reason) ? "" : " (", strempty(reason), isempty(reason) ? "" : ")");
}

/* Cables between the tree's switches that are degraded: as the sweep judged them where it could (the far
 * end swept too); a cable it could not judge, where it runs below the fastest cable of either of its
 * switches. */
static void verify_uplinks(Verify *v, const FabricTree *t) {
        json_object *links = ctl_member(t->model, "SwitchLinks");
        _cleanup_(json_object_putp) json_object *best = json_object_new_object(), *tree = json_object_new_object();

        for (size_t i = 0; i < t->n_order; i++)
                json_object_object_add(tree, t->switches[t->order[i]].key, json_object_new_string(t->switches[t->order[i]].name));
        for (unsigned pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < json_array_len(links); i++) {
                        json_object *l = json_object_array_get_idx(links, i), *a, *b, *was;
                        const char *ends[2] = { json_string_or(l, "From", ""), json_string_or(l, "To", "") };
                        double gbps = json_double_or(l, "RateGbps", 0), fastest = 0;
                        bool judged = json_double_or(l, "BestGbps", 0) > 0;
                        unsigned faster = 0;
                        char rate[96], ends_text[512];

                        if (!json_object_object_get_ex(tree, ends[0], &a) || !json_object_object_get_ex(tree, ends[1], &b))
                                continue;
                        if (pass == 1 && judged) {
                                if (json_bool_or(l, "Degraded", false))
                                        verify_judged_uplink(v, l, json_object_get_string(a), json_object_get_string(b));
                                continue;
                        }
                        if (gbps <= 0)
                                continue;
                        for (unsigned end = 0; end < 2; end++) {
                                double f = json_object_object_get_ex(best, ends[end], &was) ? json_object_get_double(was) : 0;
                                if (pass == 0 && gbps > f)
                                        json_object_object_add(best, ends[end], json_object_new_double(gbps));
                                if (f > fastest) {
                                        fastest = f;
                                        faster = end;
                                }
                        }
                        if (pass == 1 && gbps < fastest) {
                                format_rate(rate, sizeof(rate), l);
                                format_ends(ends_text, sizeof(ends_text), l, json_object_get_string(a), json_object_get_string(b));
                                difference(v, "switch link %s: degraded,%s while the fastest of %s runs at %.0f Gb/s", ends_text, rate,
                                           json_object_get_string(faster ? b : a), fastest);
                        }
                }
}

int fabric_verify(json_object *model, const char *file) {
        _cleanup_(fabric_tree_done) FabricTree t = {};
        _cleanup_(topology_conf_done) TopoConf c = {};
        _cleanup_(json_object_putp) json_object *file_leaf = json_object_new_object(), *file_parents = json_object_new_object();
        _cleanup_(freep) char *shown = escape_for_terminal(file);
        Verify v = { .file = shown };
        int r;

        if (!file_leaf || !file_parents || !shown)
                return log_oom_ctl();
        r = read_conf(file, &c);
        if (r != 0)
                return r;
        r = build_tree(model, &t);
        if (r != 0)
                return r;
        index_conf(&c, file_leaf, file_parents);
        verify_nodes(&v, &t, file_leaf);
        verify_switches(&v, &t, &c, file_parents);
        verify_uplinks(&v, &t);
        if (fflush(stdout) != 0)
                return CTL_EXIT_FAILURE;
        if (v.differences > 0) {
                fprintf(stderr, "%zu difference%s between %s and the fabric.\n", v.differences, v.differences == 1 ? "" : "s", strna(shown));
                return CTL_EXIT_FAILURE;
        }
        fprintf(stderr, "%s agrees with the fabric: %zu nodes, %zu switches.\n", strna(shown), t.n_nodes - t.unattached, t.n_order);
        return 0;
}
