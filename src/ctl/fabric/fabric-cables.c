/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * From the fabric's edges to cables. The fabric has one edge per (pair of nodes, transport, interface):
 * a Thunderbolt cable with thunderbolt-net shows up as a negotiated Thunderbolt edge and a measured TCP
 * edge over the same interface, a RoCE port as an RDMA edge beside a TCP one. A cable is what those
 * share: one interface at each end. What it carries over TCP is the TCP goodput measured, else what the
 * link negotiated (the Thunderbolt path, or the slower end's link speed); over RDMA, the RDMA goodput
 * measured, else the slower end's port rate, when both ends have an RDMA device.
 */
#include <math.h>

#include "fabric-cables.h"
#include "fabric-model.h"
#include "ctl/linkprobectl.h"

const char *cable_transport_to_string(CableTransport t) {
        switch (t) {
        case CABLE_TCP:
                return "tcp";
        case CABLE_RDMA:
                return "rdma";
        case _CABLE_TRANSPORT_MAX:
                break;
        }
        return NULL;
}

void cable_set_done(CableSet *s) {
        free(s->nodes);
        free(s->cables);
        *s = (CableSet) {};
}

const char *cable_set_node_id(const CableSet *s, uint32_t node) {
        return json_string_or(s->nodes[node], "NodeId", "");
}

const char *cable_set_hostname(const CableSet *s, uint32_t node) {
        const char *h = json_string_or(s->nodes[node], "Hostname", NULL);
        return isempty(h) ? cable_set_node_id(s, node) : h;
}

static int compare_nodes(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b;
        const char *hx = json_string_or(x, "Hostname", NULL), *hy = json_string_or(y, "Hostname", NULL);
        int c = strcmp(isempty(hx) ? "\x7f" : hx, isempty(hy) ? "\x7f" : hy);
        return c != 0 ? c : strcmp(json_string_or(x, "NodeId", ""), json_string_or(y, "NodeId", ""));
}

/* The node a name (a hostname or a NodeId) stands for: 0, or an exit code after saying why not. */
static int resolve(json_object *model, const char *name, json_object **ret) {
        json_object *nodes = ctl_member(model, "Nodes"), *found = fabric_node(model, name), *second = NULL;
        _cleanup_(freep) char *shown = escape_for_terminal(name);
        size_t n = json_array_len(nodes);

        for (size_t i = 0; !found && i < n; i++) {
                json_object *x = json_object_array_get_idx(nodes, i);
                if (streq(json_string_or(x, "Hostname", ""), name)) {
                        found = x;
                        for (size_t k = i + 1; k < n && !second; k++)
                                if (streq(json_string_or(json_object_array_get_idx(nodes, k), "Hostname", ""), name))
                                        second = json_object_array_get_idx(nodes, k);
                }
        }
        if (second) {
                fprintf(stderr, "\"%s\" is the hostname of more than one node (NodeIds %s, %s): name it by its NodeId.\n",
                        strna(shown), json_string_or(found, "NodeId", ""), json_string_or(second, "NodeId", ""));
                return CTL_EXIT_FAILURE;
        }
        if (!found) {
                fprintf(stderr, "Unknown node \"%s\": the fabric has %zu node%s", strna(shown), n, n == 1 ? "" : "s");
                for (size_t i = 0; i < MIN(n, (size_t) 8); i++) {
                        json_object *x = json_object_array_get_idx(nodes, i);
                        _cleanup_(freep) char *h = escape_for_terminal(fabric_hostname(model, json_string_or(x, "NodeId", "")));
                        fprintf(stderr, "%s%s", i == 0 ? " (" : ", ", strna(h));
                }
                fprintf(stderr, "%s.\n", n > 8 ? ", ...)" : n > 0 ? ")" : "");
                return CTL_EXIT_FAILURE;
        }
        if (json_bool_or(found, "Clashing", false)) {
                fprintf(stderr, "Node \"%s\" cannot be placed: two nodes answer with its NodeId %s (a cloned machine "
                                "ID?); give each node its own /etc/machine-id.\n",
                        strna(shown), json_string_or(found, "NodeId", ""));
                return CTL_EXIT_FAILURE;
        }
        *ret = found;
        return 0;
}

static int select_nodes(json_object *model, const char *names, CableSet *s) {
        json_object *nodes = ctl_member(model, "Nodes");
        size_t max = json_array_len(nodes);

        s->nodes = new0(json_object *, MAX(max, (size_t) 1));
        if (!s->nodes)
                return log_oom_ctl();
        if (!names) {
                for (size_t i = 0; i < max; i++) {
                        json_object *n = json_object_array_get_idx(nodes, i);
                        if (!json_bool_or(n, "Clashing", false)) {
                                s->nodes[s->n++] = n;
                                continue;
                        }
                        _cleanup_(freep) char *h = escape_for_terminal(json_string_or(n, "Hostname", "?"));
                        fprintf(stderr, "Warning: leaving out %s: two nodes answer with its NodeId %s.\n", strna(h),
                                json_string_or(n, "NodeId", ""));
                }
        } else {
                _cleanup_(freep) char *copy = strdup(names);
                char *state = NULL;

                if (!copy)
                        return log_oom_ctl();
                for (char *w = strtok_r(copy, ",", &state); w; w = strtok_r(NULL, ",", &state)) {
                        json_object *n = NULL;
                        int r;

                        w += strspn(w, " ");
                        w[strcspn(w, " ")] = '\0';
                        if (isempty(w))
                                continue;
                        r = resolve(model, w, &n);
                        if (r != 0)
                                return r;
                        for (size_t i = 0; i < s->n; i++)
                                if (s->nodes[i] == n)
                                        n = NULL;
                        if (n && s->n < max)
                                s->nodes[s->n++] = n;
                }
        }
        if (s->n == 0) {
                fprintf(stderr, names ? "--nodes= names no node.\n" : "The fabric has no nodes.\n");
                return CTL_EXIT_FAILURE;
        }
        qsort(s->nodes, s->n, sizeof(json_object *), compare_nodes);
        return 0;
}

/* The cable an edge runs over, found by either end's interface, or a new one. */
static Cable *find_cable(CableSet *s, json_object *keys, size_t *allocated, uint32_t u, const char *if_u, uint32_t v,
                         const char *if_v) {
        char ku[512], kv[512];
        json_object *idx = NULL;
        Cable *c;

        snprintf(ku, sizeof(ku), "%u\x1f%s\x1f%u", u, strempty(if_u), v);
        snprintf(kv, sizeof(kv), "%u\x1f%s\x1f%u", v, strempty(if_v), u);
        if ((if_u && json_object_object_get_ex(keys, ku, &idx)) || (if_v && json_object_object_get_ex(keys, kv, &idx)))
                c = &s->cables[json_object_get_int(idx)];
        else {
                if (s->n_cables == *allocated) {
                        size_t n = MAX(*allocated * 2, (size_t) 64);
                        Cable *grown = reallocarray(s->cables, n, sizeof(Cable));
                        if (!grown)
                                return NULL;
                        s->cables = grown;
                        *allocated = n;
                }
                c = &s->cables[s->n_cables++];
                *c = (Cable) { .u = u, .v = v };
        }
        if (!c->if_u)
                c->if_u = if_u;
        if (!c->if_v)
                c->if_v = if_v;
        if (c->if_u)
                json_object_object_add(keys, ku, json_object_new_int((int) (c - s->cables)));
        if (c->if_v)
                json_object_object_add(keys, kv, json_object_new_int((int) (c - s->cables)));
        return c;
}

static void add_measured(CableRate *r, json_object *e, bool forward) {
        double up = json_figure(e, "UploadGbps"), down = json_figure(e, "DownloadGbps");
        double a = forward ? up : down, b = forward ? down : up;
        bool stale = json_bool_or(e, "Stale", false), have = r->measured[0] > 0 || r->measured[1] > 0;

        /* Two edges over one cable (two paths the merge could not tell apart): as when the two ends of an
         * edge are joined, the live word beats a stale one (measured before the cable changed), then the
         * better counts. */
        if (have && (r->stale != stale ? stale : MIN(a, b) <= MIN(r->measured[0], r->measured[1])))
                return;
        r->edge = true;
        r->measured[0] = a;
        r->measured[1] = b;
        r->stale = stale;
        r->measured_at = ctl_timestamp_usec(e, "MeasuredAt");
}

static double slower_known(double a, double b) {
        return a > 0 && b > 0 ? MIN(a, b) : MAX(a, b);
}

/* What the cable's links negotiated, where no Thunderbolt edge said so already. */
static void add_nominal(CableSet *s, Cable *c) {
        CableRate *tcp = &c->rate[CABLE_TCP], *rdma = &c->rate[CABLE_RDMA];
        json_object *a = c->iface_u, *b = c->iface_v;
        double speed = slower_known(json_figure(a, "SpeedGbps"), json_figure(b, "SpeedGbps"));

        if (tcp->nominal[0] <= 0 && tcp->nominal[1] <= 0)
                tcp->nominal[0] = tcp->nominal[1] = speed;
        /* RDMA needs a device at both ends (one end unknown: its word was not heard, take the other's). */
        if ((a && json_array_len(ctl_member(a, "RdmaDevices")) == 0) ||
            (b && json_array_len(ctl_member(b, "RdmaDevices")) == 0) || (!a && !b)) {
                if (!rdma->edge)
                        return;
        }
        rdma->edge = true;
        rdma->nominal[0] = rdma->nominal[1] = slower_known(json_figure(a, "RdmaGbps"), json_figure(b, "RdmaGbps"));
}

int cable_set_build(json_object *model, const char *names, CableSet *ret) {
        _cleanup_(json_object_putp) json_object *index = json_object_new_object(), *keys = json_object_new_object();
        json_object *edges = ctl_member(model, "Edges");
        CableSet s = { .model = model };
        size_t allocated = 0;
        int r;

        if (!index || !keys)
                return log_oom_ctl();
        r = select_nodes(model, names, &s);
        if (r != 0) {
                cable_set_done(&s);
                return r;
        }
        for (uint32_t i = 0; i < s.n; i++)
                json_object_object_add(index, cable_set_node_id(&s, i), json_object_new_int((int) i));
        for (size_t i = 0; i < json_array_len(edges); i++) {
                json_object *e = json_object_array_get_idx(edges, i), *x, *y;
                const char *transport = json_string_or(e, "Transport", "");
                uint32_t from, to;
                Cable *c;

                if (!json_object_object_get_ex(index, json_string_or(e, "From", ""), &x) ||
                    !json_object_object_get_ex(index, json_string_or(e, "To", ""), &y))
                        continue;
                from = (uint32_t) json_object_get_int(x);
                to = (uint32_t) json_object_get_int(y);
                if (from == to)
                        continue;
                bool forward = from < to;
                const char *if_from = json_string_or(e, "FromInterface", NULL), *if_to = json_string_or(e, "ToInterface", NULL);
                /* A Thunderbolt peer without thunderbolt-net (named by its sysname, no network interface
                 * at either end) carries no TCP, nor anything else a ring could use. */
                if (streq(transport, "thunderbolt") && !(if_from && fabric_interface(model, cable_set_node_id(&s, from), if_from)) &&
                    !(if_to && fabric_interface(model, cable_set_node_id(&s, to), if_to)))
                        continue;
                c = forward ? find_cable(&s, keys, &allocated, from, if_from, to, if_to)
                            : find_cable(&s, keys, &allocated, to, if_to, from, if_from);
                if (!c) {
                        cable_set_done(&s);
                        return log_oom_ctl();
                }
                if (streq(transport, "tcp"))
                        add_measured(&c->rate[CABLE_TCP], e, forward);
                else if (streq(transport, "rdma"))
                        add_measured(&c->rate[CABLE_RDMA], e, forward);
                else if (streq(transport, "thunderbolt")) {
                        /* TCP over thunderbolt-net rides the Thunderbolt path as negotiated. */
                        double up = json_figure(e, "UploadGbps"), down = json_figure(e, "DownloadGbps");
                        c->rate[CABLE_TCP].edge = true;
                        c->rate[CABLE_TCP].nominal[0] = forward ? up : down;
                        c->rate[CABLE_TCP].nominal[1] = forward ? down : up;
                }
        }
        for (size_t i = 0; i < s.n_cables; i++) {
                Cable *c = &s.cables[i];
                c->iface_u = c->if_u ? fabric_interface(model, cable_set_node_id(&s, c->u), c->if_u) : NULL;
                c->iface_v = c->if_v ? fabric_interface(model, cable_set_node_id(&s, c->v), c->if_v) : NULL;
                add_nominal(&s, c);
        }
        *ret = s;
        return 0;
}

double cable_gbps(const Cable *c, CableTransport t, uint32_t from, bool *ret_measured) {
        const CableRate *r = &c->rate[t];
        int dir = from == c->u ? 0 : 1;

        if (ret_measured)
                *ret_measured = false;
        if (!r->edge)
                return 0;
        if (r->measured[dir] > 0) {
                if (ret_measured)
                        *ret_measured = true;
                return r->measured[dir];
        }
        return r->nominal[dir];
}

const char *cable_interface(const Cable *c, uint32_t at) {
        return at == c->u ? c->if_u : c->if_v;
}

json_object *cable_iface(const Cable *c, uint32_t at) {
        return at == c->u ? c->iface_u : c->iface_v;
}

const char *cable_rdma_device(const Cable *c, uint32_t at) {
        json_object *devices = ctl_member(cable_iface(c, at), "RdmaDevices");
        return json_array_len(devices) > 0 ? json_object_get_string(json_object_array_get_idx(devices, 0)) : NULL;
}

ssize_t cable_set_lanes(const CableSet *s, CableTransport t, RingLane **ret_lanes, uint32_t **ret_lane_cable) {
        _cleanup_(freep) RingLane *lanes = new0(RingLane, 2 * s->n_cables + 1);
        _cleanup_(freep) uint32_t *lane_cable = new0(uint32_t, 2 * s->n_cables + 1);
        size_t n = 0;

        if (!lanes || !lane_cable)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_cables; i++) {
                const Cable *c = &s->cables[i];
                for (int dir = 0; dir < 2; dir++) {
                        uint32_t from = dir == 0 ? c->u : c->v, to = dir == 0 ? c->v : c->u;
                        double gbps = cable_gbps(c, t, from, NULL);
                        if (gbps > 0 && isfinite(gbps)) {
                                lanes[n] = (RingLane) { from, to, gbps };
                                lane_cable[n++] = (uint32_t) i;
                        }
                }
        }
        *ret_lanes = TAKE_PTR(lanes);
        *ret_lane_cable = TAKE_PTR(lane_cable);
        return (ssize_t) n;
}
