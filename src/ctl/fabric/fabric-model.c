/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The graph `fabric` prints: nodes, edges, interfaces and problems, built from this daemon, from the
 * nodes' snapshots or from Prometheus. */
#include <stdarg.h>

#include "fabric-model.h"
#include "ctl/linkprobectl-format.h"
#include "shared/json-util.h"
#include "shared/string-util.h"

/* Nodes and interfaces by key, kept beside the model (json-c's userdata is never printed): a thousand
 * nodes' edges look their nodes up thousands of times. */
static void index_free(json_object *jso, void *userdata) {
        json_object_put(userdata);
}

json_object *fabric_model_new(const char *source) {
        json_object *m = json_object_new_object(), *index = json_object_new_object();

        if (!m || !index) {
                json_object_put(m);
                json_object_put(index);
                return NULL;
        }
        json_object_set_userdata(m, index, index_free);
        json_object_object_add(m, "Source", json_object_new_string(source));
        json_object_object_add(m, "Nodes", json_object_new_array());
        json_object_object_add(m, "Edges", json_object_new_array());
        json_object_object_add(m, "Interfaces", json_object_new_array());
        json_object_object_add(m, "Problems", json_object_new_array());
        return m;
}

static json_object *indexed(json_object *model, const char *kind, const char *a, const char *b) {
        json_object *index = json_object_get_userdata(model), *v;
        char key[512];

        snprintf(key, sizeof(key), "%s\x1f%s\x1f%s", kind, a, strempty(b));
        return index && json_object_object_get_ex(index, key, &v) ? v : NULL;
}

static void index_add(json_object *model, const char *kind, const char *a, const char *b, json_object *o) {
        json_object *index = json_object_get_userdata(model);
        char key[512];

        snprintf(key, sizeof(key), "%s\x1f%s\x1f%s", kind, a, strempty(b));
        if (index)
                json_object_object_add(index, key, json_object_get(o));
}

json_object *fabric_node(json_object *model, const char *node_id) {
        return node_id ? indexed(model, "node", node_id, NULL) : NULL;
}

int fabric_add_node(json_object *model, const char *node_id, const char *hostname, bool self) {
        json_object *nodes = ctl_member(model, "Nodes"), *n = fabric_node(model, node_id);

        if (n) {
                if (!isempty(hostname) && isempty(json_string_or(n, "Hostname", NULL)))
                        json_object_object_add(n, "Hostname", json_object_new_string(hostname));
                if (self)
                        json_object_object_add(n, "Self", json_object_new_boolean(true));
                return 0;
        }
        if (json_array_len(nodes) >= FABRIC_NODES_MAX)
                return -E2BIG;
        n = json_object_new_object();
        if (!n)
                return -ENOMEM;
        json_object_object_add(n, "NodeId", json_object_new_string(node_id));
        json_object_object_add(n, "Hostname", json_string_or_null(isempty(hostname) ? NULL : hostname));
        json_object_object_add(n, "Self", json_object_new_boolean(self));
        if (json_object_array_add(nodes, n) < 0) {
                json_object_put(n);
                return -ENOMEM;
        }
        index_add(model, "node", node_id, NULL, n);
        return 0;
}

const char *fabric_hostname(json_object *model, const char *node_id) {
        json_object *n = fabric_node(model, node_id);
        const char *h = n ? json_string_or(n, "Hostname", NULL) : NULL;
        return isempty(h) ? node_id : h;
}

json_object *fabric_add_edge(json_object *model, const char *from, const char *to, const char *transport) {
        json_object *edges = ctl_member(model, "Edges"), *e;

        if (json_array_len(edges) >= FABRIC_EDGES_MAX || !(e = json_object_new_object()))
                return NULL;
        json_object_object_add(e, "From", json_object_new_string(from));
        json_object_object_add(e, "To", json_object_new_string(to));
        json_object_object_add(e, "FromHostname", json_object_new_string(fabric_hostname(model, from)));
        json_object_object_add(e, "ToHostname", json_object_new_string(fabric_hostname(model, to)));
        json_object_object_add(e, "Transport", json_object_new_string(transport));
        json_object_array_add(edges, e);
        return e;
}

json_object *fabric_interface(json_object *model, const char *node_id, const char *name) {
        return indexed(model, "interface", node_id, name);
}

json_object *fabric_add_interface(json_object *model, const char *node_id, const char *name) {
        json_object *list = ctl_member(model, "Interfaces"), *i = fabric_interface(model, node_id, name);

        if (i)
                return i;
        if (json_array_len(list) >= FABRIC_INTERFACES_MAX || !(i = json_object_new_object()))
                return NULL;
        json_object_object_add(i, "NodeId", json_object_new_string(node_id));
        json_object_object_add(i, "Name", json_object_new_string(name));
        json_object_object_add(i, "Addresses", json_object_new_array());
        json_object_object_add(i, "SpeedGbps", NULL);
        json_object_object_add(i, "RdmaDevices", json_object_new_array());
        json_object_object_add(i, "RdmaGbps", NULL);
        if (json_object_array_add(list, i) < 0) {
                json_object_put(i);
                return NULL;
        }
        index_add(model, "interface", node_id, name, i);
        return i;
}

int fabric_interface_add_address(json_object *iface, const char *address, int64_t prefix_length, const char *class) {
        json_object *list = ctl_member(iface, "Addresses"), *a;

        for (size_t k = 0; k < json_array_len(list); k++)
                if (streq(json_string_or(json_object_array_get_idx(list, k), "Address", ""), address))
                        return 0;
        a = json_object_new_object();
        if (!a)
                return -ENOMEM;
        json_object_object_add(a, "Address", json_object_new_string(address));
        json_object_object_add(a, "PrefixLength", json_object_new_int64(prefix_length));
        json_object_object_add(a, "Class", json_string_or_null(class));
        return json_object_array_add(list, a) < 0 ? -ENOMEM : 0;
}

int fabric_interface_add_rdma(json_object *iface, const char *device, double gbps) {
        json_object *list = ctl_member(iface, "RdmaDevices");

        for (size_t k = 0; k < json_array_len(list); k++)
                if (streq(json_object_get_string(json_object_array_get_idx(list, k)), device))
                        return 0;
        if (gbps > 0 && json_double_or(iface, "RdmaGbps", 0) < gbps)
                json_object_object_add(iface, "RdmaGbps", json_object_new_double(gbps));
        return json_object_array_add(list, json_object_new_string(device)) < 0 ? -ENOMEM : 0;
}

int fabric_add_problem(json_object *model, const char *format, ...) {
        _cleanup_(freep) char *s = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return json_object_array_add(ctl_member(model, "Problems"), json_object_new_string(s)) < 0 ? -ENOMEM : 0;
}

/* Graphviz: `fabric --dot` and `fabric ring --dot` draw the model. */
char *fabric_dot_escape(const char *s) {
        char *ret = malloc(strlen(strempty(s)) * 5 + 1), *t = ret;

        if (!ret)
                return NULL;
        for (const char *p = strempty(s); *p; p++) {
                /* Graphviz reads entities in labels: "&lt;" must stay four characters. */
                if (*p == '&') {
                        t = stpcpy(t, "&amp;");
                        continue;
                }
                if (*p == '"' || *p == '\\')
                        *t++ = '\\';
                *t++ = (unsigned char) *p < 0x20 || *p == 0x7f ? '?' : *p;
        }
        *t = '\0';
        return ret;
}
