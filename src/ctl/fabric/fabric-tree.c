/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The switch tree of a fabric model: what Slurm's topology/tree and topology/block, Kubernetes' topology
 * labels and `fabric verify` read. The model says which switch port each node's cables end in (LLDP,
 * InfiniBand) and which switches are cabled to which (the subnet sweep); the tree is those facts put in
 * tiers, leaves first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric-model.h"
#include "fabric-tree.h"
#include "hostlist.h"
#include "ctl/linkprobectl.h"

const char *fabric_tree_tier_name(unsigned tier, char buf[static 16]) {
        static const char *const names[] = { "leaf", "spine", "core" };

        if (tier < ELEMENTSOF(names))
                return names[tier];
        snprintf(buf, 16, "tier%u", tier);
        return buf;
}

double fabric_tree_attachment_gbps(json_object *a) {
        double rate = json_double_or(a, "RateGbps", 0);
        return rate > 0 ? rate : json_double_or(a, "BestGbps", 0);
}

double fabric_tree_capable_gbps(json_object *cable) {
        double best = json_double_or(cable, "BestGbps", 0);
        return best > 0 ? best : json_double_or(cable, "RateGbps", 0);
}

void fabric_tree_done(FabricTree *t) {
        for (size_t i = 0; i < t->n_switches; i++) {
                free(t->switches[i].name);
                free(t->switches[i].nodes);
                free(t->switches[i].children);
                free(t->switches[i].parents);
                free(t->switches[i].neighbours);
        }
        free(t->switches);
        free(t->nodes);
        free(t->order);
        *t = (FabricTree) {};
}

static int append(uint32_t **array, size_t *n, uint32_t v) {
        uint32_t *a;

        /* Grown by powers of two: the size is the count rounded up. */
        if ((*n & (*n - 1)) == 0 || *n == 0) {
                a = reallocarray(*array, *n ? *n * 2 : 4, sizeof(uint32_t));
                if (!a)
                        return -ENOMEM;
                *array = a;
        }
        (*array)[(*n)++] = v;
        return 0;
}

_printf_(2, 3) static int fail(char **ret_error, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(ret_error, format, ap);
        va_end(ap);
        if (r < 0)
                *ret_error = NULL;
        return -EINVAL;
}

static int by_hostname(const void *a, const void *b) {
        const TreeNode *x = a, *y = b;
        int c = strcmp(x->hostname, y->hostname);
        return c ? c : strcmp(x->node_id, y->node_id);
}

static int by_switch_name(const void *a, const void *b, void *userdata) {
        const FabricTree *t = userdata;
        const TreeSwitch *x = &t->switches[*(const uint32_t *) a], *y = &t->switches[*(const uint32_t *) b];
        if (x->tier != y->tier)
                return x->tier < y->tier ? -1 : 1;
        return strcmp(x->name, y->name);
}

static int by_index_name(const void *a, const void *b, void *userdata) {
        const FabricTree *t = userdata;
        return strcmp(t->switches[*(const uint32_t *) a].name, t->switches[*(const uint32_t *) b].name);
}

/* Whether a beats b as the cable a node is placed by. */
static bool better_attachment(json_object *a, json_object *b) {
        double x = fabric_tree_attachment_gbps(a), y = fabric_tree_attachment_gbps(b);
        bool ib_a = streq(json_string_or(a, "Transport", ""), "infiniband"), ib_b = streq(json_string_or(b, "Transport", ""), "infiniband");

        /* An InfiniBand port whose rate is not known still beats an Ethernet port: it is the data network
         * far more often than not. */
        if (x > 0 && y > 0 && x != y)
                return x > y;
        if (ib_a != ib_b)
                return ib_a;
        if (x != y)
                return x > y;
        return strcmp(json_string_or(a, "Switch", ""), json_string_or(b, "Switch", "")) < 0;
}

static char *switch_name(json_object *model, const char *key, char **ret_error, int *ret) {
        const char *name = json_string_or(fabric_switch(model, key), "Name", NULL);
        char *s;

        if (!isempty(name)) {
                if (!slurm_name_valid(name)) {
                        *ret = fail(ret_error,
                                    "switch %s is named \"%s\": not a name Slurm takes (letters, digits, '-', '_', '.'); "
                                    "rename it on the switch",
                                    key, name);
                        return NULL;
                }
                s = strdup(name);
        } else {
                /* "guid:0002c903000a1b2c" -> "sw-0002c903000a1b2c"; a chassis ID's colons become dashes. */
                const char *colon = strchr(key, ':');
                s = ctl_strdupf("sw-%s", colon ? colon + 1 : key);
                for (char *p = s ? s + 3 : NULL; p && *p; p++)
                        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_'))
                                *p = '-';
        }
        if (!s)
                *ret = -ENOMEM;
        return s;
}

int fabric_tree_build(json_object *model, FabricTree *ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *node_index = json_object_new_object(), *switch_index = json_object_new_object(),
                                               *names = json_object_new_object();
        json_object *nodes = ctl_member(model, "Nodes"), *switches = ctl_member(model, "Switches"),
                    *attachments = ctl_member(model, "Attachments"), *links = ctl_member(model, "SwitchLinks"), *v;
        FabricTree t = { .model = model };
        _cleanup_(freep) uint32_t *queue = NULL;
        size_t head = 0, tail = 0;
        int r = -ENOMEM;

        *ret_error = NULL;
        if (!node_index || !switch_index || !names)
                return -ENOMEM;
        t.n_nodes = json_array_len(nodes);
        t.n_switches = json_array_len(switches);
        t.nodes = calloc(t.n_nodes ?: 1, sizeof(TreeNode));
        t.switches = calloc(t.n_switches ?: 1, sizeof(TreeSwitch));
        queue = calloc(t.n_switches ?: 1, sizeof(uint32_t));
        if (!t.nodes || !t.switches || !queue)
                goto fail;
        for (size_t i = 0; i < t.n_nodes; i++) {
                json_object *n = json_object_array_get_idx(nodes, i);
                t.nodes[i] = (TreeNode) { .node_id = json_string_or(n, "NodeId", ""), .leaf = -1 };
                t.nodes[i].hostname = fabric_hostname(model, t.nodes[i].node_id);
        }
        qsort(t.nodes, t.n_nodes, sizeof(TreeNode), by_hostname);
        for (size_t i = 0; i < t.n_nodes; i++)
                json_object_object_add(node_index, t.nodes[i].node_id, json_object_new_int64((int64_t) i));
        for (size_t i = 0; i < t.n_switches; i++) {
                t.switches[i].key = json_string_or(json_object_array_get_idx(switches, i), "Key", "");
                t.switches[i].tier = -1;
                json_object_object_add(switch_index, t.switches[i].key, json_object_new_int64((int64_t) i));
        }

        /* Each node's leaf: the switch of its fastest cable into one. */
        for (size_t i = 0; i < json_array_len(attachments); i++) {
                json_object *a = json_object_array_get_idx(attachments, i);
                TreeNode *n;

                if (!json_object_object_get_ex(node_index, json_string_or(a, "NodeId", ""), &v))
                        continue;
                n = &t.nodes[json_object_get_int64(v)];
                if (!json_object_object_get_ex(switch_index, json_string_or(a, "Switch", ""), NULL))
                        continue;
                if (!n->attachment || better_attachment(a, n->attachment))
                        n->attachment = a;
        }
        for (size_t i = 0; i < t.n_nodes; i++) {
                TreeNode *n = &t.nodes[i];
                TreeSwitch *s;
                double gbps;

                if (!n->attachment) {
                        t.unattached++;
                        continue;
                }
                json_object_object_get_ex(switch_index, json_string_or(n->attachment, "Switch", ""), &v);
                n->leaf = (int32_t) json_object_get_int64(v);
                s = &t.switches[n->leaf];
                if (append(&s->nodes, &s->n_nodes, (uint32_t) i) < 0)
                        goto fail;
                gbps = fabric_tree_capable_gbps(n->attachment);
                if (gbps > s->link_gbps)
                        s->link_gbps = gbps;
                if (s->tier < 0) {
                        s->tier = 0;
                        queue[tail++] = (uint32_t) n->leaf;
                }
        }

        /* The cables between switches, each pair once, then the tiers upward from the leaves. */
        for (size_t i = 0; i < json_array_len(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *x, *y;
                uint32_t a, b;
                bool known = false;

                if (!json_object_object_get_ex(switch_index, json_string_or(l, "From", ""), &x) ||
                    !json_object_object_get_ex(switch_index, json_string_or(l, "To", ""), &y))
                        continue;
                a = (uint32_t) json_object_get_int64(x);
                b = (uint32_t) json_object_get_int64(y);
                if (a == b)
                        continue;
                for (size_t k = 0; k < t.switches[a].n_neighbours && !known; k++)
                        known = t.switches[a].neighbours[k] == b;
                if (known)
                        continue;
                if (append(&t.switches[a].neighbours, &t.switches[a].n_neighbours, b) < 0 ||
                    append(&t.switches[b].neighbours, &t.switches[b].n_neighbours, a) < 0)
                        goto fail;
        }
        while (head < tail) {
                uint32_t u = queue[head++];
                TreeSwitch *s = &t.switches[u];

                for (size_t k = 0; k < s->n_neighbours; k++) {
                        TreeSwitch *up = &t.switches[s->neighbours[k]];
                        if (up->tier < 0) {
                                up->tier = s->tier + 1;
                                queue[tail++] = s->neighbours[k];
                        }
                        if (up->tier == s->tier + 1 &&
                            (append(&up->children, &up->n_children, u) < 0 || append(&s->parents, &s->n_parents, s->neighbours[k]) < 0))
                                goto fail;
                }
        }
        /* A switch's LinkSpeed above the leaves: the best of its cables down, judged as a leaf's are. */
        for (size_t i = 0; i < json_array_len(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *x, *y;
                double gbps = fabric_tree_capable_gbps(l);
                TreeSwitch *a, *b;

                if (!json_object_object_get_ex(switch_index, json_string_or(l, "From", ""), &x) ||
                    !json_object_object_get_ex(switch_index, json_string_or(l, "To", ""), &y))
                        continue;
                a = &t.switches[json_object_get_int64(x)];
                b = &t.switches[json_object_get_int64(y)];
                if (a->tier < 0 || b->tier < 0 || a->tier == b->tier)
                        continue;
                if (b->tier > a->tier)
                        a = b;
                if (gbps > a->link_gbps)
                        a->link_gbps = gbps;
        }

        /* Names, which must be Slurm's and one per switch. */
        t.order = calloc(tail ?: 1, sizeof(uint32_t));
        if (!t.order)
                goto fail;
        for (size_t i = 0; i < tail; i++) {
                TreeSwitch *s = &t.switches[queue[i]];
                s->name = switch_name(model, s->key, ret_error, &r);
                if (!s->name)
                        goto fail;
                if (json_object_object_get_ex(names, s->name, &v)) {
                        r = fail(ret_error, "two switches are named %s (%s and %s): a tree needs one name per switch", s->name,
                                 json_object_get_string(v), s->key);
                        goto fail;
                }
                json_object_object_add(names, s->name, json_object_new_string(s->key));
                t.order[t.n_order++] = queue[i];
                if ((unsigned) s->tier + 1 > t.tiers)
                        t.tiers = (unsigned) s->tier + 1;
        }
        qsort_r(t.order, t.n_order, sizeof(uint32_t), by_switch_name, &t);
        for (size_t i = 0; i < t.n_order; i++) {
                TreeSwitch *s = &t.switches[t.order[i]];
                /* (No array at all where there are none: qsort() must not be given NULL.) */
                if (s->n_children > 1)
                        qsort_r(s->children, s->n_children, sizeof(uint32_t), by_index_name, &t);
                if (s->n_parents > 1)
                        qsort_r(s->parents, s->n_parents, sizeof(uint32_t), by_index_name, &t);
        }
        *ret = t;
        return 0;
fail:
        fabric_tree_done(&t);
        return r;
}
