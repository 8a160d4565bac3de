/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The graph `fabric` prints: nodes, edges and problems, built from this daemon or from Prometheus. */
#include <stdarg.h>

#include "linkprobectl-fabric-model.h"
#include "linkprobectl-format.h"
#include "shared/json-util.h"
#include "shared/string-util.h"

json_object *fabric_model_new(const char *source) {
        json_object *m = json_object_new_object();

        if (!m)
                return NULL;
        json_object_object_add(m, "Source", json_object_new_string(source));
        json_object_object_add(m, "Nodes", json_object_new_array());
        json_object_object_add(m, "Edges", json_object_new_array());
        json_object_object_add(m, "Problems", json_object_new_array());
        return m;
}

static json_object *find_node(json_object *model, const char *node_id) {
        json_object *nodes = ctl_member(model, "Nodes");

        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i);
                if (streq(json_string_or(n, "NodeId", ""), node_id))
                        return n;
        }
        return NULL;
}

int fabric_add_node(json_object *model, const char *node_id, const char *hostname, bool self) {
        json_object *nodes = ctl_member(model, "Nodes"), *n = find_node(model, node_id);

        if (n) {
                if (!isempty(hostname) && isempty(json_string_or(n, "Hostname", NULL)))
                        json_object_object_add(n, "Hostname", json_object_new_string(hostname));
                if (self)
                        json_object_object_add(n, "Self", json_object_new_boolean(true));
                return 0;
        }
        if (json_object_array_length(nodes) >= FABRIC_NODES_MAX)
                return -E2BIG;
        n = json_object_new_object();
        if (!n)
                return -ENOMEM;
        json_object_object_add(n, "NodeId", json_object_new_string(node_id));
        json_object_object_add(n, "Hostname", json_string_or_null(isempty(hostname) ? NULL : hostname));
        json_object_object_add(n, "Self", json_object_new_boolean(self));
        return json_object_array_add(nodes, n) < 0 ? -ENOMEM : 0;
}

const char *fabric_hostname(json_object *model, const char *node_id) {
        json_object *n = find_node(model, node_id);
        const char *h = n ? json_string_or(n, "Hostname", NULL) : NULL;
        return isempty(h) ? node_id : h;
}

json_object *fabric_add_edge(json_object *model, const char *from, const char *to, const char *transport) {
        json_object *edges = ctl_member(model, "Edges"), *e;

        if (json_object_array_length(edges) >= FABRIC_EDGES_MAX || !(e = json_object_new_object()))
                return NULL;
        json_object_object_add(e, "From", json_object_new_string(from));
        json_object_object_add(e, "To", json_object_new_string(to));
        json_object_object_add(e, "FromHostname", json_object_new_string(fabric_hostname(model, from)));
        json_object_object_add(e, "ToHostname", json_object_new_string(fabric_hostname(model, to)));
        json_object_object_add(e, "Transport", json_object_new_string(transport));
        json_object_array_add(edges, e);
        return e;
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

