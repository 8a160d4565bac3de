/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl thunderbolt (tree): the Thunderbolt/USB4 tree, host -> dock -> ... -> peer. */
#include "linkprobectl.h"

/* No real chain is deeper than a handful of hops; this only bounds the work on a broken answer. */
#define TREE_DEPTH_MAX 64

typedef struct Tree {
        json_object *devices; /* the Thunderbolt objects (ctl_children) */
        json_object *links;   /* the Link objects, to name NetInterface */
        size_t n;
        size_t *order;        /* device indices, children right after their parent */
        unsigned *level;
        size_t n_order;
        bool *visited;
} Tree;

static void tree_done(Tree *t) {
        free(t->order);
        free(t->level);
        free(t->visited);
}

static const char *parent_of(json_object *d) {
        return json_string_or(d, "Parent", "/");
}

/* Natural order of the kernel's names: "0-1" before "0-301", "domain2" before "domain10". */
static int compare_sysname(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b;
        return strverscmp(json_string_or(x, "SysfsName", ""), json_string_or(y, "SysfsName", ""));
}

static ssize_t find_path(json_object *list, const char *path) {
        for (size_t i = 0; i < json_object_array_length(list); i++)
                if (streq(json_string_or(json_object_array_get_idx(list, i), "Path", ""), path))
                        return (ssize_t) i;
        return -1;
}

static bool is_root(Tree *t, json_object *d) {
        /* A parent that is not published (or "/") makes a root, so nothing is ever left out. */
        return find_path(t->devices, parent_of(d)) < 0;
}

static int tree_visit(Tree *t, size_t i, unsigned level) {
        json_object *d = json_object_array_get_idx(t->devices, i);
        const char *path = json_string_or(d, "Path", "");

        if (t->visited[i] || level > TREE_DEPTH_MAX)
                return 0;
        t->visited[i] = true;
        t->order[t->n_order] = i;
        t->level[t->n_order] = level;
        t->n_order++;

        for (size_t c = 0; c < t->n; c++)
                if (!t->visited[c] && streq(parent_of(json_object_array_get_idx(t->devices, c)), path))
                        tree_visit(t, c, level + 1);
        return 0;
}

static int tree_build(Tree *t) {
        t->n = json_object_array_length(t->devices);
        t->order = new0(size_t, t->n + 1);
        t->level = new0(unsigned, t->n + 1);
        t->visited = new0(bool, t->n + 1);
        if (!t->order || !t->level || !t->visited)
                return -ENOMEM;

        json_object_array_sort(t->devices, compare_sysname);
        for (size_t i = 0; i < t->n; i++)
                if (is_root(t, json_object_array_get_idx(t->devices, i)))
                        tree_visit(t, i, 0);
        /* A parent chain that runs in a circle has no root: show its members anyway. */
        for (size_t i = 0; i < t->n; i++)
                if (!t->visited[i])
                        tree_visit(t, i, 0);
        return 0;
}

static const char *net_interface_name(Tree *t, json_object *d) {
        ssize_t i = find_path(t->links, json_string_or(d, "NetInterface", "/"));
        return i < 0 ? NULL : json_string_or(json_object_array_get_idx(t->links, i), "Name", NULL);
}

/* ---- the model: a nested tree, which JSON prints as it is and the table walks ---- */

static json_object *node_json(Tree *t, size_t *pos) {
        size_t k = (*pos)++;
        json_object *copy = NULL, *children = json_object_new_array();
        const char *net;

        if (json_object_deep_copy(json_object_array_get_idx(t->devices, t->order[k]), &copy, NULL) < 0 || !copy ||
            !children) {
                json_object_put(copy);
                json_object_put(children);
                return NULL;
        }
        net = net_interface_name(t, json_object_array_get_idx(t->devices, t->order[k]));
        json_object_object_add(copy, "NetInterfaceName", net ? json_object_new_string(net) : NULL);
        while (*pos < t->n_order && t->level[*pos] > t->level[k]) {
                json_object *child = node_json(t, pos);
                if (child)
                        json_object_array_add(children, child);
        }
        json_object_object_add(copy, "Children", children);
        return copy;
}

static json_object *tree_json(Tree *t) {
        json_object *roots = json_object_new_array();
        size_t pos = 0;

        if (!roots)
                return NULL;
        while (pos < t->n_order) {
                json_object *node = node_json(t, &pos);
                if (node)
                        json_object_array_add(roots, node);
        }
        return roots;
}

/* ---- text ---- */

/* "40/40 Gb/s"; 0 is unknown: a direction nobody reported prints as "?". */
static char *format_rates(int64_t rx, int64_t tx) {
        if (rx <= 0 && tx <= 0)
                return NULL;
        if (rx > 0 && tx > 0)
                return ctl_strdupf("%" PRId64 "/%" PRId64 " Gb/s", rx, tx);
        if (rx > 0)
                return ctl_strdupf("%" PRId64 "/? Gb/s", rx);
        return ctl_strdupf("?/%" PRId64 " Gb/s", tx);
}

static char *format_link_rates(json_object *d, const char *key, json_object *v) {
        return format_rates(json_int_or(d, "RxGbps", 0), json_int_or(d, "TxGbps", 0));
}

static char *format_path_rates(json_object *d, const char *key, json_object *v) {
        return format_rates(json_int_or(d, "PathRxGbps", 0), json_int_or(d, "PathTxGbps", 0));
}

static char *format_name(json_object *d, const char *key, json_object *v) {
        const char *vendor = json_string_or(d, "Vendor", ""), *name = json_string_or(d, "Name", "");
        int64_t vendor_id = json_int_or(d, "VendorId", 0), device_id = json_int_or(d, "DeviceId", 0);
        char *s = NULL;

        /* A peer's name is its hostname; the vendor of its controller says little. */
        if (streq(json_string_or(d, "Type", ""), "peer") && !isempty(name))
                return strdup(name);
        if (!isempty(vendor) && !isempty(name))
                return asprintf(&s, "%s %s", vendor, name) < 0 ? NULL : s;
        if (!isempty(vendor) || !isempty(name))
                return strdup(isempty(name) ? vendor : name);
        /* Without a DROM (or on retimers) the ids are all there is, as lspci prints them. */
        if (vendor_id > 0 || device_id > 0)
                return asprintf(&s, "[%04" PRIx64 ":%04" PRIx64 "]", vendor_id, device_id) < 0 ? NULL : s;
        return NULL;
}

static char *format_notes(json_object *d, const char *key, json_object *v) {
        const char *type = json_string_or(d, "Type", ""), *net = json_string_or(d, "NetInterfaceName", NULL);
        json_object *problems;
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);
        const char *sep = "";

        if (!f)
                return NULL;
        if (streq(type, "domain") && !isempty(json_string_or(d, "SecurityLevel", ""))) {
                fprintf(f, "%ssecurity %s", sep, json_string_or(d, "SecurityLevel", ""));
                sep = "; ";
        }
        if (streq(json_string_or(d, "Authorized", ""), "no")) {
                fprintf(f, "%snot authorized", sep);
                sep = "; ";
        }
        if (net) {
                fprintf(f, "%snet %s", sep, net);
                sep = "; ";
        }
        if (json_bool_or(d, "Degraded", false)) {
                fprintf(f, "%sdegraded: %s", sep, json_string_or(d, "DegradedReason", "?"));
                sep = "; ";
        }
        if (json_object_object_get_ex(d, "Problems", &problems))
                for (size_t i = 0; i < json_object_array_length(problems); i++) {
                        fprintf(f, "%s%s", sep, json_object_get_string(json_object_array_get_idx(problems, i)));
                        sep = "; ";
                }
        fclose(f);
        if (s && isempty(s))
                s = mfree(s);
        return s;
}

static void count(json_object *nodes, size_t *devices, size_t *peers, unsigned depth) {
        for (size_t i = 0; depth < TREE_DEPTH_MAX && i < json_object_array_length(nodes); i++) {
                json_object *d = json_object_array_get_idx(nodes, i);
                (*devices)++;
                *peers += streq(json_string_or(d, "Type", ""), "peer");
                count(ctl_member(d, "Children"), devices, peers, depth + 1);
        }
}

static size_t n_hidden = 0;

/* "6 devices, 2 peers". */
static char *tree_footer(json_object *roots) {
        size_t devices = 0, peers = 0;
        _cleanup_(freep) char *hidden = NULL;

        count(roots, &devices, &peers, 0);
        if (n_hidden > 0)
                hidden = ctl_strdupf(" (%zu retimer%s not shown; -a shows them)", n_hidden, n_hidden == 1 ? "" : "s");
        return ctl_strdupf("%zu device%s, %zu peer%s%s", devices, devices == 1 ? "" : "s", peers, peers == 1 ? "" : "s",
                           strempty(hidden));
}

static const char *colour_degraded(json_object *d, const char *key, json_object *v) {
        return json_bool_or(d, "Degraded", false) ? ANSI_YELLOW : NULL;
}

/* The tree (its first column holds the indentation, never cut), each device's name, its link's rate and
 * its problems stay; the router type, the path's rate and then the link class (whole or not at all:
 * "Thunderbolt …" would not say which) give way. */
static const CtlColumn tree_columns[] = {
        { "DEVICE", "SysfsName", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "TYPE", "Type", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 2 } },
        { "NAME", "Name", format_name, NULL, { .weight = 200, .min_width = 10 } },
        { "CLASS", "LinkClass", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 1 } },
        { ">LINK RX/TX", "RxGbps", format_link_rates, NULL },
        { ">PATH RX/TX", "PathRxGbps", format_path_rates, NULL, { .optional = 1 } },
        { "NOTES", "Problems", format_notes, colour_degraded, { .weight = 300, .min_width = 10 } },
};

static const CtlTableView tree_table = {
        .columns = tree_columns,
        .n_columns = ELEMENTSOF(tree_columns),
        .empty = "No Thunderbolt/USB4 devices.",
        .children = "Children",
        .footer = tree_footer,
};

/* Retimers sit inside the host and the cable; like boltctl's host routers they are shown with -a. */
static json_object *shown_devices(json_object *devices) {
        json_object *shown = json_object_new_array();

        if (!shown)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(devices); i++) {
                json_object *d = json_object_array_get_idx(devices, i);
                if (!arg_all && streq(json_string_or(d, "Type", ""), "retimer")) {
                        n_hidden++;
                        continue;
                }
                json_object_array_add(shown, json_object_get(d));
        }
        return shown;
}

int verb_thunderbolt(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *objects = NULL, *all = NULL, *devices = NULL, *links = NULL,
                                                *roots = NULL;
        _cleanup_(tree_done) Tree t = {};
        int r;

        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        all = ctl_children(objects, "Thunderbolt");
        links = ctl_children(objects, "Link");
        devices = all ? shown_devices(all) : NULL;
        if (!devices || !links)
                return log_oom_ctl();

        t.devices = devices;
        t.links = links;
        if (tree_build(&t) < 0)
                return log_oom_ctl();
        roots = tree_json(&t);
        if (!roots)
                return log_oom_ctl();
        return ctl_output_table(roots, &tree_table);
}
