/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * linkprobectl fabric ring: the cyclic order of the chosen nodes whose slowest hop is fastest, each hop
 * as fast as what its cables carry in the direction the ring sends (striped over up to four of them,
 * as JACCL does), rotated so that rank 0 is the coordinator; and fabric coordinator: that node and its
 * paths. Printed as a table, JSON, Graphviz, or MLX's launcher host file.
 */
#include <math.h>
#include <stdarg.h>

#include "fabric/fabric-cables.h"
#include "fabric/fabric-model.h"
#include "linkprobectl-fabric-ring.h"
#include "linkprobectl.h"
#include "shared/time-util.h"

typedef struct RingRun {
        CableTransport transport;
        RingLane *lanes;
        uint32_t *lane_cable;
        size_t n_lanes;
        RingResult res;
        bool ran;
} RingRun;

static void ring_run_done(RingRun *r) {
        free(r->lanes);
        free(r->lane_cable);
        ring_result_done(&r->res);
}

/* Which transports the ring may run over: the backend's, else --transport=, else both. */
static bool wanted(CableTransport t) {
        const char *want = arg_backend ? (streq(arg_backend, "ring") ? "tcp" : "rdma") : arg_probe_transport;
        return !want || streq(want, cable_transport_to_string(t));
}

static int run_transport(const CableSet *s, CableTransport t, RingRun *run) {
        ssize_t n = cable_set_lanes(s, t, &run->lanes, &run->lane_cable);
        int r;

        if (n < 0)
                return n;
        run->transport = t;
        run->n_lanes = (size_t) n;
        r = ring_search(s->n, run->lanes, run->n_lanes, RING_WIDTH_MAX, &run->res);
        if (r < 0)
                return r;
        run->ran = true;
        return 0;
}

/* Why there is no ring, in a sentence about the nodes. */
static void explain(const CableSet *s, const RingRun *run) {
        const RingResult *res = &run->res;
        _cleanup_(freep) char *a = escape_for_terminal(res->a < s->n ? cable_set_hostname(s, res->a) : "?"),
                              *b = escape_for_terminal(res->b < s->n ? cable_set_hostname(s, res->b) : "?");
        const char *t = cable_transport_to_string(run->transport);
        size_t cables = 0;

        fprintf(stderr, "No ring over %s through these %zu nodes: ", t, s->n);
        switch (res->verdict) {
        case RING_NO_CABLE:
                for (size_t i = 0; i < s->n_cables; i++)
                        cables += s->cables[i].u == res->a || s->cables[i].v == res->a;
                if (cables > 0)
                        fprintf(stderr, "%s has no cable that carries %s to any other of them%s.\n", strna(a), t,
                                run->transport == CABLE_RDMA ? " (no RDMA device at one end)" : "");
                else
                        fprintf(stderr, "%s has no cable to any other of them.\n", strna(a));
                return;
        case RING_NO_WAY_OUT:
        case RING_NO_WAY_IN:
                fprintf(stderr, "%s is cabled, but nothing known goes %s it over %s (neither measured nor a link rate).\n",
                        strna(a), res->verdict == RING_NO_WAY_OUT ? "out of" : "into", t);
                return;
        case RING_ONE_NEIGHBOUR:
                for (size_t i = 0; i < s->n_cables; i++)
                        cables += (s->cables[i].u == res->a || s->cables[i].v == res->a) &&
                                  cable_gbps(&s->cables[i], run->transport, res->a, NULL) > 0;
                fprintf(stderr, "%s has %zu cable%s, all to %s: a ring needs two neighbours at every node.\n", strna(a),
                        cables, cables == 1 ? "" : "s", strna(b));
                return;
        case RING_UNREACHABLE:
                fprintf(stderr, "nothing leads from %s to %s; the nodes are in separate pieces.\n", strna(a), strna(b));
                return;
        case RING_CUT_VERTEX:
                fprintf(stderr, "they fall apart without %s (%s is on one side), and a ring would pass it twice.\n",
                        strna(a), strna(b));
                return;
        case RING_NO_COVER:
                fprintf(stderr, "%s cannot be given a way in: each node that leads to it is the only way into another.\n",
                        strna(a));
                return;
        case RING_NONE:
                fprintf(stderr, "every order was tried, and none visits each node once over the cables there are.\n");
                return;
        case RING_NOT_FOUND:
                fprintf(stderr, "the search found none within its budget (none is ruled out either).\n");
                return;
        case RING_FOUND:
        case _RING_VERDICT_MAX:
                break;
        }
        fprintf(stderr, "?\n");
}

/* The better ring of the transports asked for (RDMA on a tie: less latency for the same speed). */
static int choose(const CableSet *s, RingRun runs[static _CABLE_TRANSPORT_MAX], RingRun **ret) {
        RingRun *best = NULL, *why = NULL;

        for (CableTransport t = 0; t < _CABLE_TRANSPORT_MAX; t++) {
                RingRun *run = &runs[t];
                int r;

                if (!wanted(t))
                        continue;
                r = run_transport(s, t, run);
                if (r < 0)
                        return log_oom_ctl();
                if (!why)
                        why = run;
                if (run->res.verdict == RING_FOUND &&
                    (!best || run->res.bottleneck_gbps >= best->res.bottleneck_gbps))
                        best = run;
        }
        if (!best) {
                explain(s, why);
                return CTL_EXIT_FAILURE;
        }
        *ret = best;
        return 0;
}

static void warn(json_object *warnings, const char *format, ...) _printf_(2, 3);
static void warn(json_object *warnings, const char *format, ...) {
        va_list ap;
        char *s;

        va_start(ap, format);
        s = ctl_strdupvf(format, ap);
        va_end(ap);
        if (!s)
                return;
        _cleanup_(freep) char *shown = escape_for_terminal(s);
        fprintf(stderr, "Warning: %s\n", strna(shown));
        json_object_array_add(warnings, json_object_new_string(s));
        free(s);
}

/* Rank 0: the coordinator over TCP (the side channels are sockets), else over the ring's transport. */
static int coordinate(const CableSet *s, CableTransport fallback, RingCoordinator *ret) {
        CableTransport order[] = { CABLE_TCP, fallback };
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(order); i++) {
                _cleanup_(freep) RingLane *lanes = NULL;
                _cleanup_(freep) uint32_t *lane_cable = NULL;
                ssize_t n = cable_set_lanes(s, order[i], &lanes, &lane_cable);

                if (n < 0)
                        return n;
                ring_coordinator_done(ret);
                r = ring_coordinator(s->n, lanes, (size_t) n, ret);
                if (r < 0 || ret->verdict == RING_FOUND)
                        return r;
        }
        return r;
}

static json_object *strings(json_object *list) {
        return list ? list : json_object_new_array();
}

static json_object *cable_doc(const RingPlan *plan, const Cable *c, uint32_t from, uint32_t to) {
        json_object *o = json_object_new_object();
        const CableRate *rate = &c->rate[plan->transport];
        int dir = from == c->u ? 0 : 1;
        bool measured;
        double gbps = cable_gbps(c, plan->transport, from, &measured);
        char iso[ISO8601_MAX];

        if (!o)
                return NULL;
        json_object_object_add(o, "Transport", json_object_new_string(cable_transport_to_string(plan->transport)));
        json_object_object_add(o, "FromInterface", json_string_or_null(cable_interface(c, from)));
        json_object_object_add(o, "ToInterface", json_string_or_null(cable_interface(c, to)));
        json_object_object_add(o, "FromAddresses", strings(ring_addresses(cable_iface(c, from))));
        json_object_object_add(o, "ToAddresses", strings(ring_addresses(cable_iface(c, to))));
        json_object_object_add(o, "FromRdmaDevice", json_string_or_null(cable_rdma_device(c, from)));
        json_object_object_add(o, "ToRdmaDevice", json_string_or_null(cable_rdma_device(c, to)));
        json_object_object_add(o, "Gbps", json_object_new_double(gbps));
        json_object_object_add(o, "Measured", json_object_new_boolean(measured));
        json_object_object_add(o, "MeasuredGbps", rate->measured[dir] > 0 ? json_object_new_double(rate->measured[dir]) : NULL);
        json_object_object_add(o, "NominalGbps", rate->nominal[dir] > 0 ? json_object_new_double(rate->nominal[dir]) : NULL);
        json_object_object_add(o, "Stale", json_object_new_boolean(measured && rate->stale));
        json_object_object_add(o, "MeasuredAt", measured && rate->measured_at ? json_object_new_string(format_iso8601(iso, rate->measured_at)) : NULL);
        json_object_object_add(o, "MeasuredAtUsec", measured && rate->measured_at ? json_object_new_uint64(rate->measured_at) : NULL);
        return o;
}

static json_object *hop_doc(const RingPlan *plan, size_t i, json_object *warnings) {
        const CableSet *s = plan->set;
        uint32_t from = plan->order[i], to = plan->order[(i + 1) % plan->n];
        json_object *o = json_object_new_object(), *cables = json_object_new_array();
        double slowest = INFINITY;
        bool all_measured = true, stale = false;
        uint64_t oldest = 0;
        char iso[ISO8601_MAX];

        if (!o || !cables) {
                json_object_put(o);
                json_object_put(cables);
                return NULL;
        }
        for (unsigned k = 0; k < plan->width; k++) {
                const Cable *c = &s->cables[plan->hop_cables[i * plan->width + k]];
                json_object *cd = cable_doc(plan, c, from, to);
                bool measured;

                slowest = MIN(slowest, cable_gbps(c, plan->transport, from, &measured));
                all_measured &= measured;
                stale |= json_bool_or(cd, "Stale", false);
                if (measured && c->rate[plan->transport].measured_at > 0)
                        oldest = oldest == 0 ? c->rate[plan->transport].measured_at : MIN(oldest, c->rate[plan->transport].measured_at);
                json_object_array_add(cables, cd);
        }
        json_object_object_add(o, "Rank", json_object_new_int64((int64_t) i));
        json_object_object_add(o, "From", json_object_new_string(cable_set_node_id(s, from)));
        json_object_object_add(o, "To", json_object_new_string(cable_set_node_id(s, to)));
        json_object_object_add(o, "FromHostname", json_object_new_string(cable_set_hostname(s, from)));
        json_object_object_add(o, "ToHostname", json_object_new_string(cable_set_hostname(s, to)));
        json_object_object_add(o, "Gbps", json_object_new_double(plan->width * slowest));
        json_object_object_add(o, "Measured", json_object_new_boolean(all_measured));
        json_object_object_add(o, "Stale", json_object_new_boolean(stale));
        json_object_object_add(o, "MeasuredAt", oldest ? json_object_new_string(format_iso8601(iso, oldest)) : NULL);
        json_object_object_add(o, "MeasuredAtUsec", oldest ? json_object_new_uint64(oldest) : NULL);
        json_object_object_add(o, "Cables", cables);
        if (!all_measured)
                warn(warnings, "hop %s -> %s: nothing measured over %s on %s, its link's nominal rate counts",
                     cable_set_hostname(s, from), cable_set_hostname(s, to), cable_transport_to_string(plan->transport),
                     plan->width == 1 ? "its cable" : "some of its cables");
        if (stale)
                warn(warnings, "hop %s -> %s: its measurement is stale (measured %s); probe it again before trusting the order",
                     cable_set_hostname(s, from), cable_set_hostname(s, to), oldest ? format_iso8601(iso, oldest) : "long ago");
        return o;
}

/* The ring rotated so that its rank 0 is the coordinator, as a plan. */
static int make_plan(const CableSet *s, const RingRun *run, uint32_t rank0, RingPlan *plan) {
        const RingResult *res = &run->res;
        size_t k = 0;

        for (size_t i = 0; i < res->n; i++)
                if (res->order[i] == rank0)
                        k = i;
        *plan = (RingPlan) { .set = s, .transport = run->transport, .width = res->width, .n = res->n };
        plan->order = new0(uint32_t, res->n);
        plan->hop_cables = new0(uint32_t, MAX(res->n * res->width, (size_t) 1));
        if (!plan->order || !plan->hop_cables)
                return -ENOMEM;
        for (size_t i = 0; i < res->n; i++) {
                size_t from = (i + k) % res->n;
                plan->order[i] = res->order[from];
                for (unsigned w = 0; w < res->width; w++)
                        plan->hop_cables[i * res->width + w] = run->lane_cable[res->hop_lanes[from * res->width + w]];
        }
        return 0;
}

static void ring_plan_done(RingPlan *p) {
        free(p->order);
        free(p->hop_cables);
}

static json_object *ring_doc(const RingPlan *plan, const RingRun *run, bool have_coordinator, json_object *warnings) {
        const CableSet *s = plan->set;
        json_object *doc = json_object_new_object(), *ranks = json_object_new_array(), *hops = json_object_new_array();

        if (!doc || !ranks || !hops) {
                json_object_put(doc);
                json_object_put(ranks);
                json_object_put(hops);
                return NULL;
        }
        json_object_object_add(doc, "Source", json_object_new_string(json_string_or(s->model, "Source", "")));
        json_object_object_add(doc, "Transport", json_object_new_string(cable_transport_to_string(plan->transport)));
        json_object_object_add(doc, "Width", json_object_new_int64(plan->width));
        json_object_object_add(doc, "Exact", json_object_new_boolean(run->res.exact));
        json_object_object_add(doc, "BottleneckGbps", plan->n > 1 ? json_object_new_double(run->res.bottleneck_gbps) : NULL);
        json_object_object_add(doc, "UpperBoundGbps", plan->n > 1 ? json_object_new_double(run->res.upper_bound_gbps) : NULL);
        json_object_object_add(doc, "Coordinator", have_coordinator ? json_object_new_string(cable_set_node_id(s, plan->order[0])) : NULL);
        for (size_t i = 0; i < plan->n; i++) {
                json_object *r = json_object_new_object();
                json_object_object_add(r, "Rank", json_object_new_int64((int64_t) i));
                json_object_object_add(r, "NodeId", json_object_new_string(cable_set_node_id(s, plan->order[i])));
                json_object_object_add(r, "Hostname", json_object_new_string(cable_set_hostname(s, plan->order[i])));
                json_object_array_add(ranks, r);
        }
        json_object_object_add(doc, "Ranks", ranks);
        for (size_t i = 0; plan->n > 1 && i < plan->n; i++)
                json_object_array_add(hops, hop_doc(plan, i, warnings));
        json_object_object_add(doc, "Hops", hops);
        json_object_object_add(doc, "Warnings", json_object_get(warnings));
        return doc;
}

/* ---- how a hop reads ---- */

/* A hop's cables, one after another, ", " between them: each as print_cable() writes it. */
static char *join_cables(json_object *hop, void (*print_cable)(FILE *f, json_object *cable)) {
        json_object *cables = ctl_member(hop, "Cables");
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        if (!f)
                return NULL;
        for (size_t i = 0; i < json_array_len(cables); i++) {
                if (i > 0)
                        fputs(", ", f);
                print_cable(f, json_object_array_get_idx(cables, i));
        }
        fclose(f);
        return s;
}

static void print_via(FILE *f, json_object *c) {
        bool rdma = json_string_or(c, "FromRdmaDevice", NULL) && streq(json_string_or(c, "Transport", ""), "rdma");

        fprintf(f, "%s → %s", rdma ? json_string_or(c, "FromRdmaDevice", "?") : json_string_or(c, "FromInterface", "?"),
                rdma ? json_string_or(c, "ToRdmaDevice", "?") : json_string_or(c, "ToInterface", "?"));
}

static void print_to_address(FILE *f, json_object *c) {
        json_object *a = ctl_member(c, "ToAddresses");

        fputs(json_array_len(a) > 0 ? json_object_get_string(json_object_array_get_idx(a, 0)) : "-", f);
}

static char *format_via(json_object *hop, const char *key, json_object *v) {
        return join_cables(hop, print_via);
}

static char *format_to_address(json_object *hop, const char *key, json_object *v) {
        return join_cables(hop, print_to_address);
}

static char *format_gbps(json_object *row, const char *key, json_object *v) {
        double gbps = v ? json_object_get_double(v) : NAN;
        return isfinite(gbps) && gbps > 0 ? ctl_strdupf("%.2f", gbps) : NULL;
}

static char *format_measured(json_object *hop, const char *key, json_object *v) {
        if (!json_bool_or(hop, "Measured", false))
                return strdup("nominal");
        return ctl_format_age(hop, "MeasuredAt", ctl_member(hop, "MeasuredAt"));
}

static const char *colour_measured(json_object *hop, const char *key, json_object *v) {
        return !json_bool_or(hop, "Measured", false) || json_bool_or(hop, "Stale", false) ? ANSI_YELLOW : NULL;
}

static char *format_notes(json_object *hop, const char *key, json_object *v) {
        bool stale = json_bool_or(hop, "Stale", false), nominal = !json_bool_or(hop, "Measured", false);
        if (!stale && !nominal)
                return NULL;
        return strdup(stale && nominal ? "stale; link rate, not measured" : stale ? "stale" : "link rate, not measured");
}

/* The ring's order (each rank and its node), each hop's speed, its cables and what makes the speed
 * doubtful stay; TO (the next rank's FROM), the address and the age give way, in that order. A cluster's
 * hostnames share their start ("gpu-node-") and differ after it: 16 keeps "gpu-node-0042.e…". VIA, cut,
 * still names the first cable's interface at this end (at most 15 characters) whole. */
static const CtlColumn hop_columns[] = {
        { ">RANK", "Rank", NULL, NULL },
        { "FROM", "FromHostname", NULL, NULL, { .min_width = 16 } },
        { "TO", "ToHostname", NULL, NULL, { .min_width = 16, .optional = 3 } },
        { ">GB/S", "Gbps", format_gbps, NULL },
        { "VIA", "Cables", format_via, NULL, { .weight = 200, .min_width = 16 } },
        { "TO ADDRESS", "Cables", format_to_address, NULL, { .min_width = 12, .optional = 2 } },
        { "MEASURED", "MeasuredAt", format_measured, colour_measured,
          { .min_width = TEXT_WIDTH_WHOLE, .optional = 1 } },
        { "NOTES", "Stale", format_notes, ctl_colour_stale, { .weight = 200, .min_width = 10 } },
};

static json_object *shown_ring; /* the footer reads the ring's summary */

static char *hop_footer(json_object *rows) {
        json_object *d = shown_ring;
        double found = json_double_or(d, "BottleneckGbps", 0), bound = json_double_or(d, "UpperBoundGbps", 0);
        int64_t width = json_int_or(d, "Width", 1);
        _cleanup_(freep) char *how = json_bool_or(d, "Exact", false) ? strdup("the best there is")
                                     : bound <= found ? strdup("a search, and no ring does better")
                                                      : ctl_strdupf("a search: no ring's slowest hop beats %.2f Gb/s, %.0f%% more",
                                                                    bound, found > 0 ? (bound / found - 1) * 100 : 0);
        return ctl_strdupf("%zu nodes in a ring over %s, %" PRId64 " cable%s a hop, rank 0 first; the slowest hop %.2f Gb/s (%s)",
                           json_array_len(ctl_member(d, "Ranks")), json_string_or(d, "Transport", ""), width,
                           width == 1 ? "" : "s", found, strna(how));
}

static const CtlTableView hop_table = {
        .columns = hop_columns,
        .n_columns = ELEMENTSOF(hop_columns),
        .noun = "hop",
        .nouns = "hops",
        .empty = "A ring of one node: no hops.",
        .footer = hop_footer,
};

static int print_ring_dot(json_object *doc, FILE *f) {
        json_object *ranks = ctl_member(doc, "Ranks"), *hops = ctl_member(doc, "Hops");

        fprintf(f, "digraph ring {\n  node [shape=box];\n");
        for (size_t i = 0; i < json_array_len(ranks); i++) {
                json_object *r = json_object_array_get_idx(ranks, i);
                _cleanup_(freep) char *id = fabric_dot_escape(json_string_or(r, "NodeId", "")),
                                      *name = fabric_dot_escape(json_string_or(r, "Hostname", ""));
                if (!id || !name)
                        return log_oom_ctl();
                fprintf(f, "  \"%s\" [label=\"%zu: %s\"%s];\n", id, i, name, i == 0 ? ", style=bold" : "");
        }
        for (size_t i = 0; i < json_array_len(hops); i++) {
                json_object *h = json_object_array_get_idx(hops, i);
                _cleanup_(freep) char *via = format_via(h, NULL, NULL), *from = fabric_dot_escape(json_string_or(h, "From", "")),
                                      *to = fabric_dot_escape(json_string_or(h, "To", "")), *v = fabric_dot_escape(via);
                if (!from || !to || !v)
                        return log_oom_ctl();
                fprintf(f, "  \"%s\" -> \"%s\" [label=\"%.2f Gb/s\\n%s\"%s];\n", from, to, json_double_or(h, "Gbps", 0), v,
                        json_bool_or(h, "Stale", false) || !json_bool_or(h, "Measured", false) ? ", style=\"dashed\"" : "");
        }
        fprintf(f, "}\n");
        return fflush(f) == 0 ? 0 : CTL_EXIT_FAILURE;
}

int fabric_ring(json_object *model) {
        _cleanup_(cable_set_done) CableSet s = {};
        _cleanup_(ring_coordinator_done) RingCoordinator coord = {};
        _cleanup_(json_object_putp) json_object *warnings = json_object_new_array(), *doc = NULL;
        RingRun runs[_CABLE_TRANSPORT_MAX] = {}, *best = NULL;
        RingPlan plan = {};
        int r;

        if (!warnings)
                return log_oom_ctl();
        r = cable_set_build(model, arg_nodes, &s);
        if (r == 0)
                r = choose(&s, runs, &best);
        if (r == 0 && coordinate(&s, best->transport, &coord) < 0)
                r = log_oom_ctl();
        if (r == 0 && coord.verdict != RING_FOUND)
                warn(warnings, "no node reaches every other over the cables known: rank 0 is the first by name");
        if (r == 0 && make_plan(&s, best, coord.verdict == RING_FOUND ? coord.node : 0, &plan) < 0)
                r = log_oom_ctl();
        if (r == 0 && !best->res.exact && best->res.upper_bound_gbps > best->res.bottleneck_gbps)
                warn(warnings, "%zu nodes are too many to try every order: a search found this ring, and no ring's "
                               "slowest hop beats %.2f Gb/s",
                     s.n, best->res.upper_bound_gbps);
        if (r == 0) {
                doc = ring_doc(&plan, best, coord.verdict == RING_FOUND, warnings);
                if (!doc)
                        r = log_oom_ctl();
        }
        if (r == 0) {
                if (arg_hostfile)
                        r = ring_hostfile_mlx(&plan, arg_backend, stdout);
                else if (arg_json != JSON_OFF)
                        r = ctl_output_json(doc);
                else if (arg_dot)
                        r = print_ring_dot(doc, stdout);
                else {
                        shown_ring = doc;
                        r = ctl_output_table(ctl_member(doc, "Hops"), &hop_table);
                        shown_ring = NULL;
                }
        }
        ring_plan_done(&plan);
        for (size_t i = 0; i < ELEMENTSOF(runs); i++)
                ring_run_done(&runs[i]);
        return r;
}

/* ---- fabric coordinator ---- */

/* Every path starts at rank 0, which the footer names: on every row it would take the room of the
 * nodes after it, so the table starts each path at its arrow ("→ b → c"); the JSON has the whole path. */
static char *format_path(json_object *row, const char *key, json_object *v) {
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        if (!f)
                return NULL;
        for (size_t i = 1; i < json_array_len(v); i++)
                fprintf(f, "%s→ %s", i > 1 ? " " : "", json_object_get_string(json_object_array_get_idx(v, i)));
        fclose(f);
        return s;
}

/* Nothing to leave out: the node, the figures and the path all stay; the path, the longest, gets the most room. */
static const CtlColumn path_columns[] = {
        { "TO", "Hostname", NULL, NULL, { .min_width = 16 } },
        { ">HOPS", "Hops", NULL, NULL },
        { ">GB/S", "Gbps", format_gbps, NULL },
        { "PATH", "Path", format_path, NULL, { .weight = 300, .min_width = 16 } },
};

static char *path_footer(json_object *rows) {
        json_object *d = shown_ring;
        int64_t hops = json_int_or(d, "WorstHops", 0);
        return ctl_strdupf("Rank 0 is %s: every node within %" PRId64 " hop%s, the slowest path %.2f Gb/s",
                           json_string_or(d, "Hostname", ""), hops, hops == 1 ? "" : "s", json_double_or(d, "WorstGbps", 0));
}

static const CtlTableView path_table = {
        .columns = path_columns,
        .n_columns = ELEMENTSOF(path_columns),
        .noun = "path",
        .nouns = "paths",
        .empty = "One node: it coordinates itself.",
        .footer = path_footer,
};

int fabric_coordinator(json_object *model) {
        _cleanup_(cable_set_done) CableSet s = {};
        _cleanup_(ring_coordinator_done) RingCoordinator c = {};
        _cleanup_(json_object_putp) json_object *doc = NULL;
        CableTransport t = arg_probe_transport && streq(arg_probe_transport, "rdma") ? CABLE_RDMA : CABLE_TCP;
        json_object *paths;
        int r;

        r = cable_set_build(model, arg_nodes, &s);
        if (r != 0)
                return r;
        {
                _cleanup_(freep) RingLane *lanes = NULL;
                _cleanup_(freep) uint32_t *lane_cable = NULL;
                ssize_t n = cable_set_lanes(&s, t, &lanes, &lane_cable);
                if (n < 0 || ring_coordinator(s.n, lanes, (size_t) n, &c) < 0)
                        return log_oom_ctl();
        }
        if (c.verdict != RING_FOUND) {
                _cleanup_(freep) char *a = escape_for_terminal(cable_set_hostname(&s, c.a)),
                                      *b = escape_for_terminal(cable_set_hostname(&s, c.b));
                fprintf(stderr, "No coordinator over %s: nothing leads from %s to %s; the nodes are in separate pieces.\n",
                        cable_transport_to_string(t), strna(a), strna(b));
                return CTL_EXIT_FAILURE;
        }
        doc = json_object_new_object();
        paths = json_object_new_array();
        if (!doc || !paths)
                return log_oom_ctl();
        json_object_object_add(doc, "Source", json_object_new_string(json_string_or(model, "Source", "")));
        json_object_object_add(doc, "Transport", json_object_new_string(cable_transport_to_string(t)));
        json_object_object_add(doc, "NodeId", json_object_new_string(cable_set_node_id(&s, c.node)));
        json_object_object_add(doc, "Hostname", json_object_new_string(cable_set_hostname(&s, c.node)));
        json_object_object_add(doc, "WorstHops", json_object_new_int64(c.worst_hops));
        json_object_object_add(doc, "WorstGbps", s.n > 1 ? json_object_new_double(c.worst_gbps) : NULL);
        for (uint32_t v = 0; v < s.n; v++) {
                json_object *p, *via;
                if (v == c.node)
                        continue;
                p = json_object_new_object();
                via = json_object_new_array();
                /* The path backwards from v, then turned round. */
                for (uint32_t x = v, steps = 0; steps <= c.hops[v]; x = c.via[x], steps++)
                        json_object_array_put_idx(via, c.hops[v] - steps, json_object_new_string(cable_set_hostname(&s, x)));
                json_object_object_add(p, "NodeId", json_object_new_string(cable_set_node_id(&s, v)));
                json_object_object_add(p, "Hostname", json_object_new_string(cable_set_hostname(&s, v)));
                json_object_object_add(p, "Hops", json_object_new_int64(c.hops[v]));
                json_object_object_add(p, "Gbps", json_object_new_double(c.gbps[v]));
                json_object_object_add(p, "Path", via);
                json_object_array_add(paths, p);
        }
        json_object_object_add(doc, "Paths", paths);
        if (arg_json != JSON_OFF)
                return ctl_output_json(doc);
        shown_ring = doc;
        r = ctl_output_table(paths, &path_table);
        shown_ring = NULL;
        return r;
}
