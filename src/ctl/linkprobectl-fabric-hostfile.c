/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fabric ring --hostfile=mlx: the host file MLX's launcher (mlx.launch --hostfile) reads, in the ring's
 * rank order, as mlx.distributed_config would write it had it measured the cables:
 *
 *   {"backend": "ring" | "jaccl" | "jaccl-ring", "envs": [],
 *    "hosts": [{"ssh": HOSTNAME, "ips": [...], "rdma": [...]}, ...]}
 *
 * ring: rank i listens on its "ips" and rank i - 1 connects to them, one connection per address, the
 * same number at every rank: so a rank's ips are its own addresses on the cables the hop from rank
 * i - 1 stripes over. jaccl / jaccl-ring: "rdma"[j] names the RDMA device(s) of rank i towards rank j
 * (null on the diagonal); a ring neighbour gets the hop's cables in one order at both ends, so that
 * JACCL's wire k is the same cable on both sides; another pair gets the cables it has (JACCL needs
 * them to split groups), the mesh backend one per pair. Rank 0's first address is the JACCL
 * coordinator's.
 */
#include "linkprobectl-fabric-ring.h"
#include "linkprobectl.h"

static int address_rank(json_object *a) {
        const char *address = json_string_or(a, "Address", ""), *class = json_string_or(a, "Class", "");
        bool v4 = strchr(address, '.') && !strchr(address, ':');

        if (streq(class, "loopback"))
                return -1;
        if (streq(class, "link-local") || startswith(address, "fe80:") || startswith(address, "169.254."))
                return 4 + !v4;
        return v4 ? 0 : 2;
}

json_object *ring_addresses(json_object *iface) {
        json_object *list = ctl_member(iface, "Addresses"), *ret = json_object_new_array();

        for (int rank = 0; ret && rank <= 5; rank++)
                for (size_t i = 0; i < json_array_len(list); i++) {
                        json_object *a = json_object_array_get_idx(list, i);
                        if (address_rank(a) == rank)
                                json_object_array_add(ret, json_object_new_string(json_string_or(a, "Address", "")));
                }
        return ret;
}

static bool link_local(const char *address) {
        return startswith(address, "fe80:") || startswith(address, "169.254.");
}

/* The address MLX's ring backend can use at node `at`'s end of cable c, whose other end is `other`:
 * a routable one; a link-local one only where both ends name their interface alike (the zone is the
 * interface's name, and both the listener and the connecting node use the same string). */
static int ring_address(const RingPlan *plan, const Cable *c, uint32_t at, uint32_t other, char **ret) {
        _cleanup_(json_object_putp) json_object *list = ring_addresses(cable_iface(c, at));
        const char *first = json_array_len(list) > 0 ? json_object_get_string(json_object_array_get_idx(list, 0)) : NULL;
        const char *mine = cable_interface(c, at), *theirs = cable_interface(c, other);
        _cleanup_(freep) char *a = escape_for_terminal(cable_set_hostname(plan->set, at)),
                              *b = escape_for_terminal(cable_set_hostname(plan->set, other)), *i = escape_for_terminal(strempty(mine));

        if (first && !link_local(first)) {
                *ret = strdup(first);
                return *ret ? 0 : log_oom_ctl();
        }
        if (first && strchr(first, ':') && mine && streq_ptr(mine, theirs)) {
                *ret = ctl_strdupf("%s%%%s", first, mine);
                return *ret ? 0 : log_oom_ctl();
        }
        if (!first)
                fprintf(stderr, "Cannot write the host file: %s's end of the cable from %s (%s) has no address known.\n",
                        strna(a), strna(b), mine ? strna(i) : "interface unknown");
        else
                fprintf(stderr,
                        "Cannot write the host file: %s's end of the cable from %s (%s) has only link-local addresses, "
                        "which MLX's ring backend cannot reach across differently named interfaces: give both ends an "
                        "address (as mlx.distributed_config does), or name the interfaces alike.\n",
                        strna(a), strna(b), strna(i));
        return CTL_EXIT_FAILURE;
}

/* Per node, its cables. */
typedef struct Adjacency {
        uint32_t *start, *cables;
} Adjacency;

static void adjacency_done(Adjacency *a) {
        free(a->start);
        free(a->cables);
}

static int adjacency_build(const CableSet *s, Adjacency *ret) {
        Adjacency a = { .start = new0(uint32_t, s->n + 1), .cables = new0(uint32_t, 2 * s->n_cables + 1) };
        _cleanup_(freep) uint32_t *fill = new0(uint32_t, s->n);

        if (!a.start || !a.cables || !fill) {
                adjacency_done(&a);
                return -ENOMEM;
        }
        for (size_t i = 0; i < s->n_cables; i++)
                a.start[s->cables[i].u + 1]++, a.start[s->cables[i].v + 1]++;
        for (size_t u = 0; u < s->n; u++)
                a.start[u + 1] += a.start[u];
        for (uint32_t i = 0; i < s->n_cables; i++) {
                uint32_t u = s->cables[i].u, v = s->cables[i].v;
                a.cables[a.start[u] + fill[u]++] = i;
                a.cables[a.start[v] + fill[v]++] = i;
        }
        *ret = a;
        return 0;
}

static int compare_by_gbps(const void *a, const void *b, void *userdata) {
        const RingPlan *plan = userdata;
        const uint32_t *x = a, *y = b; /* cable, at */
        double gx = cable_gbps(&plan->set->cables[x[0]], CABLE_RDMA, x[1], NULL);
        double gy = cable_gbps(&plan->set->cables[y[0]], CABLE_RDMA, y[1], NULL);
        return gx != gy ? (gx > gy ? -1 : 1) : x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The RDMA devices at node `at` towards node `other` over the cables between them that carry RDMA,
 * the faster first, up to JACCL's width; a string for one, a list for more, null for none. */
static json_object *pair_devices(const RingPlan *plan, const Adjacency *adj, uint32_t at, uint32_t other) {
        const CableSet *s = plan->set;
        uint32_t found[16][2];
        size_t n = 0;
        json_object *list;

        for (uint32_t k = adj->start[at]; k < adj->start[at + 1] && n < ELEMENTSOF(found); k++) {
                const Cable *c = &s->cables[adj->cables[k]];
                if ((c->u == at ? c->v : c->u) == other && cable_rdma_device(c, at) && cable_gbps(c, CABLE_RDMA, at, NULL) > 0) {
                        found[n][0] = adj->cables[k];
                        found[n++][1] = at;
                }
        }
        if (n == 0)
                return NULL;
        qsort_r(found, n, sizeof(found[0]), compare_by_gbps, (void *) plan);
        if (n == 1)
                return json_object_new_string(cable_rdma_device(&s->cables[found[0][0]], at));
        list = json_object_new_array();
        for (size_t i = 0; list && i < MIN(n, (size_t) RING_WIDTH_MAX); i++)
                json_object_array_add(list, json_object_new_string(cable_rdma_device(&s->cables[found[i][0]], at)));
        return list;
}

/* A ring neighbour's devices: the hop's cables, in the hop's order, at node `at`. */
static int hop_devices(const RingPlan *plan, size_t hop, uint32_t at, json_object **ret) {
        const CableSet *s = plan->set;
        json_object *list = json_object_new_array();

        for (unsigned k = 0; list && k < plan->width; k++) {
                const Cable *c = &s->cables[plan->hop_cables[hop * plan->width + k]];
                const char *device = cable_rdma_device(c, at);
                if (!device) {
                        _cleanup_(freep) char *a = escape_for_terminal(cable_set_hostname(s, at)),
                                              *i = escape_for_terminal(strempty(cable_interface(c, at)));
                        fprintf(stderr, "Cannot write the host file: %s's end of a ring cable (%s) has no RDMA device known.\n",
                                strna(a), strna(i));
                        json_object_put(list);
                        return CTL_EXIT_FAILURE;
                }
                json_object_array_add(list, json_object_new_string(device));
        }
        if (!list)
                return log_oom_ctl();
        if (plan->width == 1) {
                *ret = json_object_get(json_object_array_get_idx(list, 0));
                json_object_put(list);
        } else
                *ret = list;
        return 0;
}

/* The address others reach a node at: on its interface with cables to the most nodes of the ring. */
static json_object *host_ips(const RingPlan *plan, const Adjacency *adj, uint32_t node) {
        const CableSet *s = plan->set;
        json_object *best = NULL, *ips = json_object_new_array();
        size_t best_count = 0;

        for (uint32_t k = adj->start[node]; k < adj->start[node + 1]; k++) {
                const Cable *c = &s->cables[adj->cables[k]];
                json_object *iface = cable_iface(c, node);
                size_t count = 0;
                if (!iface || iface == best)
                        continue;
                for (uint32_t j = adj->start[node]; j < adj->start[node + 1]; j++)
                        count += cable_iface(&s->cables[adj->cables[j]], node) == iface;
                if (count > best_count) {
                        best = iface;
                        best_count = count;
                }
        }
        _cleanup_(json_object_putp) json_object *list = ring_addresses(best);
        for (size_t i = 0; ips && i < json_array_len(list); i++) {
                const char *a = json_object_get_string(json_object_array_get_idx(list, i));
                if (!link_local(a)) {
                        json_object_array_add(ips, json_object_new_string(a));
                        break;
                }
        }
        return ips;
}

static bool full_mesh(const RingPlan *plan, const Adjacency *adj) {
        for (uint32_t i = 0; i < plan->n; i++)
                for (uint32_t j = 0; j < plan->n; j++) {
                        _cleanup_(json_object_putp) json_object *d = NULL;
                        if (i != j && !(d = pair_devices(plan, adj, plan->order[i], plan->order[j])))
                                return false;
                }
        return true;
}

static int host_doc(const RingPlan *plan, const Adjacency *adj, const char *backend, size_t i, json_object **ret) {
        const CableSet *s = plan->set;
        size_t n = plan->n, prev = (i + n - 1) % n, next = (i + 1) % n;
        uint32_t node = plan->order[i];
        _cleanup_(json_object_putp) json_object *h = json_object_new_object(), *ips = NULL, *rdma = json_object_new_array();
        int r;

        if (!h || !rdma)
                return log_oom_ctl();
        json_object_object_add(h, "ssh", json_object_new_string(cable_set_hostname(s, node)));
        if (streq(backend, "ring")) {
                ips = json_object_new_array();
                for (unsigned k = 0; ips && n > 1 && k < plan->width; k++) {
                        _cleanup_(freep) char *a = NULL;
                        const Cable *c = &s->cables[plan->hop_cables[prev * plan->width + k]];
                        r = ring_address(plan, c, node, plan->order[prev], &a);
                        if (r != 0)
                                return r;
                        json_object_array_add(ips, json_object_new_string(a));
                }
                json_object_object_add(h, "ips", TAKE_PTR(ips));
                json_object_object_add(h, "rdma", json_object_new_array());
                *ret = TAKE_PTR(h);
                return 0;
        }
        json_object_object_add(h, "ips", host_ips(plan, adj, node));
        for (size_t j = 0; j < n; j++) {
                json_object *d = NULL;
                if (j == i)
                        d = NULL;
                else if (j == next || j == prev) {
                        /* Two ranks: the one hop's cables serve both ways, so the wires line up. */
                        r = hop_devices(plan, n == 2 ? 0 : j == next ? i : prev, node, &d);
                        if (r != 0)
                                return r;
                } else {
                        d = pair_devices(plan, adj, node, plan->order[j]);
                        if (!d && streq(backend, "jaccl")) {
                                _cleanup_(freep) char *a = escape_for_terminal(cable_set_hostname(s, node)),
                                                      *b = escape_for_terminal(cable_set_hostname(s, plan->order[j]));
                                fprintf(stderr, "Cannot write the host file: %s and %s share no RDMA cable, and JACCL's "
                                                "mesh backend needs one between every pair (try --backend=jaccl-ring).\n",
                                        strna(a), strna(b));
                                return CTL_EXIT_FAILURE;
                        }
                        /* The mesh backend uses one device a pair. */
                        if (d && streq(backend, "jaccl") && json_object_is_type(d, json_type_array)) {
                                json_object *first = json_object_get(json_object_array_get_idx(d, 0));
                                json_object_put(d);
                                d = first;
                        }
                }
                json_object_array_add(rdma, d);
        }
        json_object_object_add(h, "rdma", TAKE_PTR(rdma));
        *ret = TAKE_PTR(h);
        return 0;
}

int ring_hostfile_mlx(const RingPlan *plan, const char *backend, FILE *f) {
        _cleanup_(adjacency_done) Adjacency adj = {};
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object(), *hosts = json_object_new_array();
        int r;

        if (!doc || !hosts || adjacency_build(plan->set, &adj) < 0)
                return log_oom_ctl();
        if (!backend)
                backend = plan->transport == CABLE_TCP ? "ring" : full_mesh(plan, &adj) ? "jaccl" : "jaccl-ring";
        if (streq(backend, "ring") != (plan->transport == CABLE_TCP)) {
                fprintf(stderr, "Cannot write the host file: the %s backend runs over %s, and this ring over %s.\n", backend,
                        streq(backend, "ring") ? "TCP" : "RDMA", cable_transport_to_string(plan->transport));
                return CTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < plan->n; i++) {
                json_object *h = NULL;
                r = host_doc(plan, &adj, backend, i, &h);
                if (r != 0)
                        return r;
                json_object_array_add(hosts, h);
        }
        if (!streq(backend, "ring") && json_array_len(ctl_member(json_object_array_get_idx(hosts, 0), "ips")) == 0) {
                _cleanup_(freep) char *a = escape_for_terminal(cable_set_hostname(plan->set, plan->order[0]));
                fprintf(stderr, "Cannot write the host file: rank 0 (%s) has no routable address for the JACCL "
                                "coordinator.\n",
                        strna(a));
                return CTL_EXIT_FAILURE;
        }
        json_object_object_add(doc, "backend", json_object_new_string(backend));
        json_object_object_add(doc, "envs", json_object_new_array());
        json_object_object_add(doc, "hosts", TAKE_PTR(hosts));
        fprintf(f, "%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
        return fflush(f) == 0 ? 0 : CTL_EXIT_FAILURE;
}
