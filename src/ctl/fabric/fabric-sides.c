/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Each node says what it measured towards each neighbour; an edge seen from both ends is merged into
 * one, and where the two ends disagree about a direction by more than --tolerance= it says so (A
 * measured 40 Gb/s to B, B measured 20 Gb/s from A). Whatever the source (the daemon, the nodes'
 * snapshots, Prometheus), the words are gathered first and then sorted, so a thousand nodes' edges
 * cost a sort, not a search per word.
 */
#include <math.h>

#include "fabric-model.h"
#include "fabric-sides.h"
#include "ctl/linkprobectl.h"
#include "shared/time-util.h"

#define SIDES_MAX ((size_t) FABRIC_EDGES_MAX * 8)

FabricSide *fabric_sides_add(FabricSides *sides, const char *from, const char *to, const char *transport,
                             const char *interface) {
        if (sides->n == sides->allocated) {
                size_t n = MAX(sides->allocated * 2, (size_t) 256);
                FabricSide *grown;

                if (n > SIDES_MAX || !(grown = reallocarray(sides->s, n, sizeof(FabricSide))))
                        return NULL;
                sides->s = grown;
                sides->allocated = n;
        }
        sides->s[sides->n] = (FabricSide) { .from = from, .to = to, .transport = transport,
                                            .interface = strempty(interface), .measured = true };
        return &sides->s[sides->n++];
}

void fabric_sides_done(FabricSides *sides) {
        free(sides->s);
        *sides = (FabricSides) {};
}

static double bottleneck(const FabricSide *x) {
        return MIN(x->up, x->down);
}

static int compare_key(const FabricSide *x, const FabricSide *y) {
        int c = strcmp(x->from, y->from);
        if (c == 0)
                c = strcmp(x->to, y->to);
        if (c == 0)
                c = strcmp(x->transport, y->transport);
        return c;
}

/* By (from, to, transport), the fastest first, then by interface. */
static int compare_sides(const void *a, const void *b) {
        const FabricSide *x = a, *y = b;
        int c = compare_key(x, y);

        if (c != 0)
                return c;
        if (bottleneck(x) != bottleneck(y))
                return bottleneck(x) > bottleneck(y) ? -1 : 1;
        return strcmp(x->interface, y->interface);
}

static int compare_words(const void *a, const void *b) {
        const FabricSide *x = a, *y = b;
        int c = compare_key(x, y);
        return c != 0 ? c : strcmp(x->interface, y->interface);
}

static void take(FabricSide *x, const FabricSide *y, unsigned fields) {
#define TAKE(flag, member)                      \
        if (fields & (flag))                    \
                x->member = y->member
        TAKE(SIDE_UP, up);
        TAKE(SIDE_DOWN, down);
        TAKE(SIDE_RTT, rtt_usec);
        TAKE(SIDE_STALE, stale);
        TAKE(SIDE_DEGRADED, degraded);
        TAKE(SIDE_MEASURED_AT, measured_at);
        TAKE(SIDE_ADDRESS, address);
#undef TAKE
        x->fields |= fields;
}

/* Folds word y into x: what only y says is taken; where both speak (two paths over one interface,
 * two nodes with one NodeId), the live word beats a stale one, then the faster. */
static void combine(FabricSide *x, const FabricSide *y) {
        bool better = (x->stale && !y->stale) || (x->stale == y->stale && bottleneck(y) > bottleneck(x));

        take(x, y, better ? y->fields : y->fields & ~x->fields);
}

static bool differ(double a, double b) {
        double big = MAX(a, b);
        return big > 0 && fabs(a - b) > big * arg_tolerance / 100.0;
}

/* One edge from x's word, with y's (the far end's, the other way round) when there is one. The figures
 * are x's, unless x's are stale and y's live: a cable that changed since one end measured it is told by
 * the end that measured it since (y's download is x's upload). The edge is stale when the figures it
 * carries are, whichever end is read first. */
static int add_merged(json_object *model, const FabricSide *x, const FabricSide *y) {
        json_object *e = fabric_add_edge(model, x->from, x->to, x->transport), *seen;
        _cleanup_(freep) char *dis = NULL;
        bool far_figures = y && x->stale && !y->stale && y->measured;
        const FabricSide *f = far_figures ? y : x;
        uint64_t at = far_figures ? y->measured_at : MAX(x->measured_at, y ? y->measured_at : 0);
        char iso[ISO8601_MAX];

        if (!e)
                return -ENOMEM;
        json_object_object_add(e, "FromInterface", json_string_or_null(isempty(x->interface) ? NULL : x->interface));
        json_object_object_add(e, "ToInterface", json_string_or_null(y && !isempty(y->interface) ? y->interface : NULL));
        json_object_object_add(e, "Address", json_string_or_null(x->address));
        json_object_object_add(e, "UploadGbps", json_object_new_double(far_figures ? y->down : x->up));
        json_object_object_add(e, "DownloadGbps", json_object_new_double(far_figures ? y->up : x->down));
        json_object_object_add(e, "RttUsec", f->measured ? json_object_new_double(f->rtt_usec) : NULL);
        json_object_object_add(e, "Measured", json_object_new_boolean(f->measured));
        json_object_object_add(e, "MeasuredAt", at > 0 ? json_object_new_string(format_iso8601(iso, at)) : NULL);
        json_object_object_add(e, "MeasuredAtUsec", at > 0 ? json_object_new_uint64(at) : NULL);
        json_object_object_add(e, "Stale", json_object_new_boolean(f->stale));
        json_object_object_add(e, "Degraded", json_object_new_boolean(x->degraded || (y && y->degraded)));
        if (y) {
                seen = json_object_new_array();
                json_object_array_add(seen, json_object_new_string(x->from));
                json_object_array_add(seen, json_object_new_string(y->from));
        } else
                seen = json_object_new_string(x->from);
        json_object_object_add(e, "SeenFrom", seen);
        /* x's upload is the direction y downloads, and the other way round. */
        if (y && (differ(x->up, y->down) || differ(x->down, y->up)) &&
            asprintf(&dis, "%s says %.2f Gb/s to %s and %.2f from it; %s says %.2f Gb/s from %s and %.2f to it",
                     fabric_hostname(model, x->from), x->up, fabric_hostname(model, x->to), x->down,
                     fabric_hostname(model, y->from), y->down, fabric_hostname(model, x->from), y->up) < 0)
                return -ENOMEM;
        json_object_object_add(e, "Disagreement", json_string_or_null(dis));
        return 0;
}

/* The first word of the group (from, to, transport) in the sorted words, or n. */
static size_t group_start(const FabricSides *sides, const char *from, const char *to, const char *transport) {
        FabricSide key = { .from = from, .to = to, .transport = transport };
        size_t lo = 0, hi = sides->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (compare_key(&sides->s[mid], &key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

void fabric_address_host(const char *address, char *buf, size_t size) {
        const char *p = address + (address[0] == '[');
        size_t n = strcspn(p, "%]");

        /* "10.0.0.2:7472": IPv4 with a port (one colon); IPv6 has two or more. */
        if (address[0] != '[' && strchr(p, ':') == strrchr(p, ':') && strchr(p, ':'))
                n = MIN(n, (size_t) (strchr(p, ':') - p));
        snprintf(buf, size, "%.*s", (int) n, p);
}

/* node\x1faddress -> the node's interface that holds the address. */
static json_object *address_index(json_object *model) {
        json_object *index = json_object_new_object(), *ifaces = ctl_member(model, "Interfaces");

        for (size_t i = 0; index && i < json_array_len(ifaces); i++) {
                json_object *iface = json_object_array_get_idx(ifaces, i), *addresses = ctl_member(iface, "Addresses");
                for (size_t k = 0; k < json_array_len(addresses); k++) {
                        char key[512];
                        snprintf(key, sizeof(key), "%s\x1f%s", json_string_or(iface, "NodeId", ""),
                                 json_string_or(json_object_array_get_idx(addresses, k), "Address", ""));
                        json_object_object_add(index, key, json_object_get(ctl_member(iface, "Name")));
                }
        }
        return index;
}

static void resolve_far(FabricSide *x, json_object *index) {
        char host[256], key[512];
        json_object *name;

        if (!x->address)
                return;
        fabric_address_host(x->address, host, sizeof(host));
        snprintf(key, sizeof(key), "%s\x1f%s", x->to, host);
        if (json_object_object_get_ex(index, key, &name))
                x->far = json_object_get_string(name);
}

/* How far apart two ends' figures are: x's upload is y's download, and the other way round. */
static double disagreement(const FabricSide *x, const FabricSide *y) {
        double a = MAX(MAX(x->up, y->down), 1e-9), b = MAX(MAX(x->down, y->up), 1e-9);
        return fabs(x->up - y->down) / a + fabs(x->down - y->up) / b;
}

/* The far end's word about the same cable as x, from the group (x->to, x->from, x->transport). */
static FabricSide *partner(FabricSides *sides, const FabricSide *x) {
        FabricSide *best = NULL;
        double best_d = INFINITY;

        for (int round = 0; round < 3 && !best; round++)
                for (size_t j = group_start(sides, x->to, x->from, x->transport); j < sides->n; j++) {
                        FabricSide *c = &sides->s[j];
                        if (!streq(c->from, x->to) || !streq(c->to, x->from) || !streq(c->transport, x->transport))
                                break;
                        if (c->used)
                                continue;
                        /* Known by address either way first; then the figures that agree best. */
                        if (round == 0 && x->far && streq(x->far, c->interface) && (!c->far || streq(c->far, x->interface)))
                                return c;
                        if (round == 1 && c->far && streq(c->far, x->interface) && !x->far)
                                return c;
                        if (round == 2 && (!x->far || !c->far) && disagreement(x, c) < best_d) {
                                best = c;
                                best_d = disagreement(x, c);
                        }
                }
        return best;
}

static int compare_edges(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b;
        static const char *const keys[] = { "FromHostname", "ToHostname", "From", "To", "Transport", "FromInterface" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                int c = strcmp(json_string_or(x, keys[i], ""), json_string_or(y, keys[i], ""));
                if (c != 0)
                        return c;
        }
        return 0;
}

int fabric_sides_merge(json_object *model, FabricSides *sides) {
        _cleanup_(json_object_putp) json_object *index = address_index(model);
        size_t k = 0;
        int r;

        if (!index)
                return -ENOMEM;
        /* One word per (from, to, transport, interface); an address alone is no edge. */
        if (sides->n > 1)
                qsort(sides->s, sides->n, sizeof(FabricSide), compare_words);
        for (size_t i = 0; i < sides->n; i++) {
                if (k > 0 && compare_words(&sides->s[k - 1], &sides->s[i]) == 0)
                        combine(&sides->s[k - 1], &sides->s[i]);
                else
                        sides->s[k++] = sides->s[i];
        }
        sides->n = 0;
        for (size_t i = 0; i < k; i++)
                if (sides->s[i].fields != SIDE_ADDRESS)
                        sides->s[sides->n++] = sides->s[i];
        for (size_t i = 0; i < sides->n; i++)
                resolve_far(&sides->s[i], index);
        if (sides->n > 1)
                qsort(sides->s, sides->n, sizeof(FabricSide), compare_sides);
        for (size_t i = 0; i < sides->n; i++) {
                FabricSide *x = &sides->s[i], *y;

                if (x->used)
                        continue;
                x->used = true;
                y = partner(sides, x);
                if (y)
                        y->used = true;
                r = add_merged(model, x, y);
                if (r < 0)
                        return r;
        }
        json_object_array_sort(ctl_member(model, "Edges"), compare_edges);
        return 0;
}
