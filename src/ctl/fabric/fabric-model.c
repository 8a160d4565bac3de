/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The graph `fabric` prints: nodes, edges, interfaces and problems, built from this daemon, from the
 * nodes' snapshots or from Prometheus. */
#include <ctype.h>
#include <inttypes.h>
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
        json_object_object_add(m, "Switches", json_object_new_array());
        json_object_object_add(m, "Attachments", json_object_new_array());
        json_object_object_add(m, "SwitchLinks", json_object_new_array());
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

/* ---- switches ---- */

int fabric_switch_key(const char *guid, const char *chassis_id, const char *name, char *buf, size_t size) {
        if (!isempty(guid)) {
                uint64_t v = 0;
                unsigned digits = 0;
                const char *p = guid[0] == '0' && (guid[1] == 'x' || guid[1] == 'X') ? guid + 2 : guid;

                for (; *p; p++) {
                        int d = *p >= '0' && *p <= '9' ? *p - '0'
                                : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                                         : -1;
                        if (*p == ':')
                                continue;
                        if (d < 0 || ++digits > 16)
                                return -EINVAL;
                        v = v << 4 | (unsigned) d;
                }
                if (digits == 0 || v == 0)
                        return -EINVAL;
                snprintf(buf, size, "guid:%016" PRIx64, v);
                return 0;
        }
        if (!isempty(chassis_id)) {
                int n = snprintf(buf, size, "chassis:%s", chassis_id);
                for (char *q = buf; *q; q++)
                        *q = (char) tolower((unsigned char) *q);
                return n > 0 && (size_t) n < size ? 0 : -EINVAL;
        }
        if (!isempty(name)) {
                int n = snprintf(buf, size, "name:%s", name);
                return n > 0 && (size_t) n < size ? 0 : -EINVAL;
        }
        return -EINVAL;
}

json_object *fabric_switch(json_object *model, const char *key) {
        return key ? indexed(model, "switch", key, NULL) : NULL;
}

const char *fabric_switch_name(json_object *model, const char *key) {
        const char *name = json_string_or(fabric_switch(model, key), "Name", NULL);
        return isempty(name) ? key : name;
}

static int add_source(json_object *sw, const char *source) {
        json_object *sources = ctl_member(sw, "Sources");

        for (size_t k = 0; k < json_array_len(sources); k++)
                if (streq(json_object_get_string(json_object_array_get_idx(sources, k)), source))
                        return 0;
        return json_object_array_add(sources, json_object_new_string(source)) < 0 ? -ENOMEM : 0;
}

json_object *fabric_add_switch(json_object *model, const char *key, const char *name, const char *description,
                               const char *source) {
        json_object *list = ctl_member(model, "Switches"), *sw = fabric_switch(model, key);

        if (!sw) {
                if (json_array_len(list) >= FABRIC_SWITCHES_MAX || !(sw = json_object_new_object()))
                        return NULL;
                json_object_object_add(sw, "Key", json_object_new_string(key));
                json_object_object_add(sw, "Name", NULL);
                json_object_object_add(sw, "Description", NULL);
                json_object_object_add(sw, "Sources", json_object_new_array());
                if (json_object_array_add(list, sw) < 0) {
                        json_object_put(sw);
                        return NULL;
                }
                index_add(model, "switch", key, NULL, sw);
        }
        if (!isempty(name) && isempty(json_string_or(sw, "Name", NULL)))
                json_object_object_add(sw, "Name", json_object_new_string(name));
        if (!isempty(description) && isempty(json_string_or(sw, "Description", NULL)))
                json_object_object_add(sw, "Description", json_object_new_string(description));
        if (source && add_source(sw, source) < 0)
                return NULL;
        return sw;
}

int fabric_add_attachment(json_object *model, const char *node_id, const char *interface, const char *transport,
                          const char *switch_key, const char *port, double rate, double best, bool degraded) {
        json_object *list = ctl_member(model, "Attachments"), *a;
        char ids[256];

        snprintf(ids, sizeof(ids), "%s\x1e%s", strempty(interface), switch_key);
        if (indexed(model, "attachment", node_id, ids))
                return 0;
        if (json_array_len(list) >= FABRIC_ATTACHMENTS_MAX)
                return -E2BIG;
        a = json_object_new_object();
        if (!a)
                return -ENOMEM;
        json_object_object_add(a, "NodeId", json_object_new_string(node_id));
        json_object_object_add(a, "Interface", json_string_or_null(interface));
        json_object_object_add(a, "Switch", json_object_new_string(switch_key));
        json_object_object_add(a, "SwitchPort", json_string_or_null(port));
        json_object_object_add(a, "Transport", json_object_new_string(transport));
        json_object_object_add(a, "RateGbps", rate > 0 ? json_object_new_double(rate) : NULL);
        json_object_object_add(a, "BestGbps", best > 0 ? json_object_new_double(best) : NULL);
        json_object_object_add(a, "Degraded", json_object_new_boolean(degraded));
        if (json_object_array_add(list, a) < 0) {
                json_object_put(a);
                return -ENOMEM;
        }
        index_add(model, "attachment", node_id, ids, a);
        return 0;
}

/* What a judgement adds to a switch link: the best where none was known yet, degraded where an end says
 * so (the two ends of one cable judge it alike, but an end may be left unjudged). */
static void judge_switch_link(json_object *l, const FabricLinkJudgement *j) {
        if (!j || j->best <= 0)
                return;
        if (json_double_or(l, "BestGbps", 0) <= 0) {
                json_object_object_add(l, "BestWidth", json_string_or_null(isempty(j->best_width) ? NULL : j->best_width));
                json_object_object_add(l, "BestSpeed", json_string_or_null(isempty(j->best_speed) ? NULL : j->best_speed));
                json_object_object_add(l, "BestGbps", json_object_new_double(j->best));
        }
        if (j->degraded && !json_bool_or(l, "Degraded", false)) {
                json_object_object_add(l, "Degraded", json_object_new_boolean(true));
                json_object_object_add(l, "DegradedReason", json_string_or_null(isempty(j->reason) ? NULL : j->reason));
        }
}

int fabric_add_switch_link(json_object *model, const char *from, const char *from_port, const char *to,
                           const char *to_port, const char *width, const char *speed, double rate,
                           const FabricLinkJudgement *judgement) {
        json_object *list = ctl_member(model, "SwitchLinks"), *l;
        char a[256], b[256];

        /* One cable whichever end names it: keyed by its ends in order. */
        snprintf(a, sizeof(a), "%s\x1e%s", from, strempty(from_port));
        snprintf(b, sizeof(b), "%s\x1e%s", to, strempty(to_port));
        l = indexed(model, "switchlink", strcmp(a, b) < 0 ? a : b, strcmp(a, b) < 0 ? b : a);
        if (l) {
                judge_switch_link(l, judgement);
                return 0;
        }
        if (json_array_len(list) >= FABRIC_EDGES_MAX)
                return -E2BIG;
        l = json_object_new_object();
        if (!l)
                return -ENOMEM;
        json_object_object_add(l, "From", json_object_new_string(from));
        json_object_object_add(l, "FromPort", json_string_or_null(from_port));
        json_object_object_add(l, "To", json_object_new_string(to));
        json_object_object_add(l, "ToPort", json_string_or_null(to_port));
        json_object_object_add(l, "Width", json_string_or_null(isempty(width) ? NULL : width));
        json_object_object_add(l, "Speed", json_string_or_null(isempty(speed) ? NULL : speed));
        json_object_object_add(l, "RateGbps", rate > 0 ? json_object_new_double(rate) : NULL);
        json_object_object_add(l, "BestWidth", NULL);
        json_object_object_add(l, "BestSpeed", NULL);
        json_object_object_add(l, "BestGbps", NULL);
        json_object_object_add(l, "Degraded", json_object_new_boolean(false));
        json_object_object_add(l, "DegradedReason", NULL);
        judge_switch_link(l, judgement);
        if (json_object_array_add(list, l) < 0) {
                json_object_put(l);
                return -ENOMEM;
        }
        index_add(model, "switchlink", strcmp(a, b) < 0 ? a : b, strcmp(a, b) < 0 ? b : a, l);
        return 0;
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
