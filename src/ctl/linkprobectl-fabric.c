/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl fabric: which node is at the other end of every link, as a table, JSON or Graphviz; with
 * --prometheus=URL the whole cluster's graph, every edge seen from both ends. */
#include <math.h>
#include <stdarg.h>

#include "linkprobectl-draw.h"
#include "linkprobectl-fabric-local.h"
#include "fabric/fabric-model.h"
#include "linkprobectl-fabric-ring.h"
#include "linkprobectl-fabric-snapshots.h"
#include "linkprobectl-fabric-topology.h"
#include "linkprobectl-fabric.h"
#include "linkprobectl-prometheus.h"
#include "linkprobectl.h"
#include "shared/bus-names.h"
#include "shared/time-util.h"


/* ---- from this node's daemon ---- */

static int fabric_from_daemon(sd_bus *bus, json_object **ret) {
        static const char *const kinds[] = { "Neighbor", "Peer", "Link", "Thunderbolt", "RdmaPort", "Switch" };
        _cleanup_(json_object_putp) json_object *objects = NULL, *node = NULL, *lists = NULL, *model = NULL;
        _cleanup_(fabric_sides_done) FabricSides sides = {};
        int r;

        r = ctl_get_root_interface(bus, "Node", false, &node);
        if (r == 0)
                r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        lists = json_object_new_object();
        model = fabric_model_new("daemon");
        if (!lists || !model)
                return log_oom_ctl();
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                json_object *l = ctl_children(objects, kinds[i]);
                if (!l)
                        return log_oom_ctl();
                json_object_object_add(lists, kinds[i], l);
        }
        r = fabric_add_local_view(model, &sides, node, lists, true);
        if (r == -EADDRNOTAVAIL) {
                fprintf(stderr, "This daemon has no NodeId (no /etc/machine-id?): it names no neighbours.\n");
                return CTL_EXIT_FAILURE;
        }
        if (r >= 0)
                r = fabric_sides_merge(model, &sides);
        if (r < 0)
                return log_oom_ctl();
        *ret = TAKE_PTR(model);
        return 0;
}

/* ---- how an edge reads ---- */

static char *format_via(json_object *e, const char *key, json_object *v) {
        const char *from = json_string_or(e, "FromInterface", NULL), *to = json_string_or(e, "ToInterface", NULL);
        if (!from && !to)
                return NULL;
        return to ? ctl_strdupf("%s ↔ %s", from ?: "?", to) : strdup(from);
}

static char *format_rate(json_object *e, const char *key, json_object *v) {
        double gbps = v ? json_object_get_double(v) : NAN;
        return isfinite(gbps) && gbps > 0 ? ctl_strdupf(json_bool_or(e, "Measured", true) ? "%.2f" : "%.0f*", gbps) : NULL;
}

static char *format_rtt(json_object *e, const char *key, json_object *v) {
        double usec = v ? json_object_get_double(v) : 0;
        return usec > 0 ? ctl_format_duration_usec(e, key, v) : NULL;
}

/* ---- Graphviz ---- */

/* The label's lines, each escaped on its own, joined by DOT's "\n": nothing in a name can make a line. */
static char *dot_label(const char *const *lines, size_t n) {
        char *label = strdup("");

        for (size_t i = 0; label && i < n; i++) {
                _cleanup_(freep) char *escaped = NULL;
                char *joined;

                if (!lines[i])
                        continue;
                escaped = fabric_dot_escape(lines[i]);
                joined = escaped ? ctl_strdupf("%s%s%s", label, *label ? "\\n" : "", escaped) : NULL;
                free(label);
                label = joined;
        }
        return label;
}

static int print_dot_edge(json_object *e, FILE *f) {
        _cleanup_(freep) char *via = format_via(e, "FromInterface", NULL), *up = format_rate(e, "", ctl_member(e, "UploadGbps")),
                              *down = format_rate(e, "", ctl_member(e, "DownloadGbps")),
                              *rtt = format_rtt(e, "RttUsec", ctl_member(e, "RttUsec")), *first = NULL, *rates = NULL,
                              *rtt_line = NULL, *label = NULL, *from = fabric_dot_escape(json_string_or(e, "From", "")),
                              *to = fabric_dot_escape(json_string_or(e, "To", ""));
        const char *dis = json_string_or(e, "Disagreement", NULL);
        bool degraded = json_bool_or(e, "Degraded", false), stale = json_bool_or(e, "Stale", false);

        /* ↑ is from the edge's first node to its second. */
        first = ctl_strdupf("%s %s", json_string_or(e, "Transport", ""), strempty(via));
        rates = ctl_strdupf("↑ %s ↓ %s Gb/s", up ?: "-", down ?: "-");
        rtt_line = rtt ? ctl_strdupf("RTT %s", rtt) : NULL;
        const char *lines[] = { first, rates, rtt_line, degraded ? "degraded" : NULL, dis ? "the ends disagree" : NULL };
        label = first && rates ? dot_label(lines, ELEMENTSOF(lines)) : NULL;
        if (!label || !from || !to)
                return -ENOMEM;
        fprintf(f, "  \"%s\" -- \"%s\" [label=\"%s\"%s%s];\n", from, to, label,
                degraded || dis ? ", color=\"red\", fontcolor=\"red\"" : "", stale ? ", style=\"dashed\"" : "");
        return 0;
}

/* The switches as vertices of their own (their keys cannot clash with a NodeId: they hold a colon), a
 * node's cable into a switch port and the cables between switches as edges; degraded ones red. */
static int print_dot_switches(json_object *model, FILE *f) {
        json_object *switches = ctl_member(model, "Switches"), *attachments = ctl_member(model, "Attachments"),
                    *links = ctl_member(model, "SwitchLinks");

        for (size_t i = 0; i < json_array_len(switches); i++) {
                json_object *sw = json_object_array_get_idx(switches, i);
                const char *key = json_string_or(sw, "Key", "");
                _cleanup_(freep) char *id = fabric_dot_escape(key), *name = fabric_dot_escape(fabric_switch_name(model, key));
                if (!id || !name)
                        return -ENOMEM;
                fprintf(f, "  \"%s\" [label=\"%s\", shape=hexagon];\n", id, name);
        }
        for (size_t i = 0; i < json_array_len(attachments); i++) {
                json_object *a = json_object_array_get_idx(attachments, i);
                double gbps = json_double_or(a, "RateGbps", 0);
                bool degraded = json_bool_or(a, "Degraded", false);
                _cleanup_(freep) char *first = ctl_strdupf("%s → port %s", json_string_or(a, "Interface", "?"),
                                                           json_string_or(a, "SwitchPort", "?")),
                                      *rate = gbps > 0 ? ctl_strdupf("%.0f Gb/s", gbps) : NULL, *label = NULL,
                                      *from = fabric_dot_escape(json_string_or(a, "NodeId", "")),
                                      *to = fabric_dot_escape(json_string_or(a, "Switch", ""));
                const char *lines[] = { first, rate, degraded ? "degraded" : NULL };
                label = first ? dot_label(lines, ELEMENTSOF(lines)) : NULL;
                if (!label || !from || !to)
                        return -ENOMEM;
                fprintf(f, "  \"%s\" -- \"%s\" [label=\"%s\"%s];\n", from, to, label,
                        degraded ? ", color=\"red\", fontcolor=\"red\"" : "");
        }
        for (size_t i = 0; i < json_array_len(links); i++) {
                json_object *l = json_object_array_get_idx(links, i);
                double gbps = json_double_or(l, "RateGbps", 0);
                _cleanup_(freep) char *ports = ctl_strdupf("port %s ↔ port %s", json_string_or(l, "FromPort", "?"),
                                                           json_string_or(l, "ToPort", "?")),
                                      *rate = gbps > 0 ? ctl_strdupf("%s %s %.0f Gb/s", json_string_or(l, "Width", ""),
                                                                     json_string_or(l, "Speed", ""), gbps)
                                                       : NULL,
                                      *label = NULL, *from = fabric_dot_escape(json_string_or(l, "From", "")),
                                      *to = fabric_dot_escape(json_string_or(l, "To", ""));
                bool degraded = json_bool_or(l, "Degraded", false);
                const char *lines[] = { ports, rate, degraded ? "degraded" : NULL };
                label = ports ? dot_label(lines, ELEMENTSOF(lines)) : NULL;
                if (!label || !from || !to)
                        return -ENOMEM;
                fprintf(f, "  \"%s\" -- \"%s\" [label=\"%s\", style=bold%s];\n", from, to, label,
                        degraded ? ", color=\"red\", fontcolor=\"red\"" : "");
        }
        return 0;
}

int fabric_print_dot(json_object *model, FILE *f) {
        json_object *nodes = ctl_member(model, "Nodes"), *edges = ctl_member(model, "Edges");

        fprintf(f, "graph fabric {\n  node [shape=box];\n");
        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i);
                _cleanup_(freep) char *id = fabric_dot_escape(json_string_or(n, "NodeId", "")),
                                      *name = fabric_dot_escape(fabric_hostname(model, json_string_or(n, "NodeId", "")));
                if (!id || !name)
                        return log_oom_ctl();
                fprintf(f, "  \"%s\" [label=\"%s\"%s];\n", id, name, json_bool_or(n, "Self", false) ? ", style=bold" : "");
        }
        for (size_t i = 0; i < json_object_array_length(edges); i++)
                if (print_dot_edge(json_object_array_get_idx(edges, i), f) < 0)
                        return log_oom_ctl();
        if (print_dot_switches(model, f) < 0)
                return log_oom_ctl();
        fprintf(f, "}\n");
        return fflush(f) == 0 ? 0 : CTL_EXIT_FAILURE;
}

/* The same graph laid out and drawn (--svg, --png). */
static int fabric_draw(json_object *model) {
        _cleanup_(freep) char *dot = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&dot, &size);
        int r;

        if (!f)
                return log_oom_ctl();
        r = fabric_print_dot(model, f);
        if (fclose(f) != 0 && r == 0)
                r = log_oom_ctl();
        return r == 0 ? draw_render_dot(dot) : r;
}

/* ---- text ---- */

static char *format_seen(json_object *e, const char *key, json_object *v) {
        if (json_object_is_type(v, json_type_array))
                return strdup("both ends");
        return strdup(streq_ptr(json_object_get_string(v), json_string_or(e, "From", NULL)) ? json_string_or(e, "FromHostname", "")
                                                                                         : "?");
}

static char *format_notes(json_object *e, const char *key, json_object *v) {
        const char *dis = json_string_or(e, "Disagreement", NULL);
        bool degraded = json_bool_or(e, "Degraded", false), stale = json_bool_or(e, "Stale", false);

        if (!degraded && !stale && !dis)
                return NULL;
        return ctl_strdupf("%s%s%s%s%s%s", degraded ? "degraded" : "", degraded && (stale || dis) ? "; " : "",
                           stale ? "stale" : "", stale && dis ? "; " : "", dis ? "the ends disagree: " : "",
                           strempty(dis));
}

static const char *colour_notes(json_object *e, const char *key, json_object *v) {
        if (json_bool_or(e, "Degraded", false) || json_string_or(e, "Disagreement", NULL))
                return ANSI_RED;
        return json_bool_or(e, "Stale", false) ? ANSI_YELLOW : NULL;
}

/* Both ends, the rates and the notes (where the ends disagree) stay; how the edge was seen gives way. */
static const CtlColumn edge_columns[] = {
        { "FROM", "FromHostname", NULL, NULL, { .min_width = 10 } },
        { "TO", "ToHostname", NULL, NULL, { .min_width = 10 } },
        { "TRANSPORT", "Transport", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 3 } },
        { "VIA", "FromInterface", format_via, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 2 } },
        { ">UP GB/S", "UploadGbps", format_rate, NULL },
        { ">DOWN GB/S", "DownloadGbps", format_rate, NULL },
        { ">RTT", "RttUsec", format_rtt, NULL, { .optional = 1 } },
        { "SEEN FROM", "SeenFrom", format_seen, NULL, { .optional = 4 } },
        { "NOTES", "Disagreement", format_notes, colour_notes, { .weight = 300, .min_width = 10 } },
};

static char *edge_footer(json_object *rows) {
        size_t n = json_object_array_length(rows);
        return ctl_strdupf("%zu edge%s listed; UP is FROM to TO, * a Thunderbolt rate negotiated, not measured", n,
                           n == 1 ? "" : "s");
}

static const CtlTableView edge_table = {
        .columns = edge_columns,
        .n_columns = ELEMENTSOF(edge_columns),
        .noun = "edge",
        .nouns = "edges",
        .empty = "No neighbours: no node has answered on any link yet.",
        .footer = edge_footer,
};

static int print_problems(json_object *model) {
        json_object *problems = ctl_member(model, "Problems");

        for (size_t i = 0; i < json_object_array_length(problems); i++) {
                _cleanup_(freep) char *s = escape_for_terminal(json_object_get_string(json_object_array_get_idx(problems, i)));
                printf("%s%s\n", i == 0 ? "\nProblems:\n  " : "  ", strna(s));
        }
        return fflush(stdout) == 0 ? 0 : CTL_EXIT_FAILURE;
}

/* One degraded cable into or between switches: where, at what, what both ends could do, why. */
static char *format_degraded_cable(json_object *model, json_object *o, bool is_link) {
        double rate = json_double_or(o, "RateGbps", 0), best = json_double_or(o, "BestGbps", 0);
        const char *reason = json_string_or(o, "DegradedReason", NULL);
        char *s = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&s, &size);

        if (!f)
                return NULL;
        if (is_link)
                fprintf(f, "%s port %s ↔ %s port %s: %s %s", fabric_switch_name(model, json_string_or(o, "From", "")),
                        json_string_or(o, "FromPort", "?"), fabric_switch_name(model, json_string_or(o, "To", "")),
                        json_string_or(o, "ToPort", "?"), json_string_or(o, "Width", "?"), json_string_or(o, "Speed", "?"));
        else
                fprintf(f, "%s %s → %s port %s:", fabric_hostname(model, json_string_or(o, "NodeId", "")),
                        json_string_or(o, "Interface", "?"), fabric_switch_name(model, json_string_or(o, "Switch", "")),
                        json_string_or(o, "SwitchPort", "?"));
        if (rate > 0)
                fprintf(f, " %.0f Gb/s", rate);
        if (best > 0)
                fprintf(f, ", both ends could do %.0f Gb/s", best);
        if (!isempty(reason))
                fprintf(f, " (%s)", reason);
        if (fclose(f) != 0)
                return mfree(s);
        return s;
}

/* The cables into and between switches that trained below what both their ends support (the model's
 * Attachments and SwitchLinks with Degraded): not edges between nodes, said under the table. */
static int print_degraded_switch_cables(json_object *model) {
        json_object *lists[2] = { ctl_member(model, "Attachments"), ctl_member(model, "SwitchLinks") };
        size_t n = 0;

        for (unsigned k = 0; k < 2; k++)
                for (size_t i = 0; i < json_array_len(lists[k]); i++) {
                        json_object *o = json_object_array_get_idx(lists[k], i);
                        _cleanup_(freep) char *line = NULL, *shown = NULL;

                        if (!json_bool_or(o, "Degraded", false))
                                continue;
                        line = format_degraded_cable(model, o, k == 1);
                        shown = line ? escape_for_terminal(line) : NULL;
                        if (!shown)
                                return log_oom_ctl();
                        printf("%s%s\n", n++ == 0 ? "\nDegraded switch cables:\n  " : "  ", shown);
                }
        return fflush(stdout) == 0 ? 0 : CTL_EXIT_FAILURE;
}

/* "ring", "coordinator", "topology" or "verify" after "fabric", or NULL. */
static const char *fabric_command(int argc, char **argv) {
        return argc > 1 && (streq(argv[1], "ring") || streq(argv[1], "coordinator") || streq(argv[1], "topology") ||
                            streq(argv[1], "verify"))
                       ? argv[1]
                       : NULL;
}

/* topology and verify read the tree, which one node's daemon has too (its own switches). */
static bool command_is_tree(const char *command) {
        return streq_ptr(command, "topology") || streq_ptr(command, "verify");
}

static int usage(const char *message) {
        fprintf(stderr, "%s\n", message);
        return CTL_EXIT_USAGE;
}

int check_fabric_args(int argc, char **argv) {
        const char *command = fabric_command(argc, argv);
        int files = argc - 1 - !!command;

        if (arg_dot && arg_json != JSON_OFF)
                return usage("--dot and --json are two ways to print the graph: pick one.");
        if (arg_prometheus && !startswith(arg_prometheus, "http://") && !startswith(arg_prometheus, "https://")) {
                _cleanup_(freep) char *shown = escape_for_terminal(arg_prometheus);
                fprintf(stderr, "--prometheus= takes an http:// or https:// URL, not \"%s\".\n", strna(shown));
                return CTL_EXIT_USAGE;
        }
        if (!arg_prometheus && (arg_prometheus_ca_file || arg_prometheus_user || arg_prometheus_password_file ||
                                arg_prometheus_token_file))
                return usage("--prometheus-ca-file=, -user=, -password-file= and -token-file= belong to --prometheus=URL.");
        if (!!arg_prometheus_user != !!arg_prometheus_password_file)
                return usage("--prometheus-user= and --prometheus-password-file= go together.");
        if (arg_prometheus_user && arg_prometheus_token_file)
                return usage("--prometheus-user= (basic) and --prometheus-token-file= (bearer): pick one.");
        if (arg_prometheus && arg_snapshots)
                return usage("--prometheus= and --snapshots are two sources of the cluster's graph: pick one.");
        if (!command && files > 0 && !arg_snapshots) {
                _cleanup_(freep) char *shown = escape_for_terminal(argv[1]);
                fprintf(stderr, "Unknown fabric command \"%s\": ring, coordinator, topology or verify (or --snapshots FILE...).\n",
                        strna(shown));
                return CTL_EXIT_USAGE;
        }
        if (arg_snapshots && files == 0)
                return usage("--snapshots needs the files, one per node, from \"linkprobectl snapshot\".");
        if (arg_topology_format && !streq_ptr(command, "topology"))
                return usage("--format= belongs to fabric topology.");
        if (arg_slurm && !streq_ptr(command, "verify"))
                return usage("--slurm= belongs to fabric verify.");
        if (streq_ptr(command, "verify") && !arg_slurm)
                return usage("fabric verify compares a topology.conf with the fabric: give it with --slurm=FILE.");
        if (command_is_tree(command) && (arg_dot || arg_draw != DRAW_NONE))
                return usage("fabric topology and verify print text: --dot, --svg and --png do not apply.");
        if (streq_ptr(command, "topology") && arg_json != JSON_OFF && arg_topology_format && !streq(arg_topology_format, "json"))
                return usage("--json is --format=json: pick one format.");
        if (streq_ptr(command, "verify") && arg_json != JSON_OFF)
                return usage("fabric verify prints one line per difference: --json does not apply (fabric topology --format=json).");
        if (command && !command_is_tree(command) && !arg_prometheus && !arg_snapshots) {
                fprintf(stderr, "fabric %s needs the whole cluster: --prometheus=URL or --snapshots FILE...\n", command);
                return CTL_EXIT_USAGE;
        }
        if (arg_nodes && (!command || command_is_tree(command)))
                return usage("--nodes= belongs to fabric ring and fabric coordinator.");
        if (arg_hostfile && !streq_ptr(command, "ring"))
                return usage("--hostfile= belongs to fabric ring.");
        if (arg_backend && !arg_hostfile)
                return usage("--backend= says which host file to write: give --hostfile=mlx with it.");
        if (arg_hostfile && (arg_dot || arg_json != JSON_OFF))
                return usage("--hostfile= prints the host file: --dot and --json do not apply.");
        if (arg_dot && streq_ptr(command, "coordinator"))
                return usage("fabric coordinator prints no graph: --dot does not apply.");
        if (arg_backend && arg_probe_transport && streq(arg_backend, "ring") != streq(arg_probe_transport, "tcp")) {
                fprintf(stderr, "--backend=%s runs over %s, not --transport=%s.\n", arg_backend,
                        streq(arg_backend, "ring") ? "tcp" : "rdma", arg_probe_transport);
                return CTL_EXIT_USAGE;
        }
        return 0;
}

bool fabric_needs_no_bus(void) {
        return arg_prometheus || arg_snapshots;
}

int verb_fabric(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *model = NULL;
        const char *command = fabric_command(argc, argv);
        int first = command ? 2 : 1, r;

        if (arg_prometheus)
                r = fabric_from_prometheus(arg_prometheus,
                                           &(HttpAuth) { .ca_file = arg_prometheus_ca_file, .user = arg_prometheus_user,
                                                         .password_file = arg_prometheus_password_file,
                                                         .token_file = arg_prometheus_token_file },
                                           arg_timeout_usec ?: 10 * USEC_PER_SEC, command ? arg_nodes : NULL, &model);
        else if (arg_snapshots)
                r = fabric_from_snapshots(argv + first, (size_t) (argc - first), &model);
        else
                r = fabric_from_daemon(bus, &model);
        if (r != 0)
                return r;
        if (streq_ptr(command, "ring"))
                return fabric_ring(model);
        if (streq_ptr(command, "coordinator"))
                return fabric_coordinator(model);
        if (streq_ptr(command, "topology"))
                return fabric_topology(model);
        if (streq_ptr(command, "verify"))
                return fabric_verify(model, arg_slurm);
        if (arg_json != JSON_OFF)
                return ctl_output_json(model);
        if (arg_dot)
                return fabric_print_dot(model, stdout);
        if (arg_draw != DRAW_NONE)
                return fabric_draw(model);
        r = ctl_output_table(ctl_member(model, "Edges"), &edge_table);
        if (r == 0 && arg_legend)
                r = print_degraded_switch_cables(model);
        if (r == 0 && arg_legend)
                r = print_problems(model);
        return r;
}
