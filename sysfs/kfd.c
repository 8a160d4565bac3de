/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reads the GPU-to-GPU io_links of the KFD topology (drivers/gpu/drm/amd/amdkfd/kfd_topology.c prints
 * each properties file as "name value" lines). Nodes and links that cannot be read are left out and
 * named in the problems; nothing here guesses a value. */
#include <stdarg.h>

#include "kfd.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "sysfs.h"

#define TOPOLOGY_NODES "class/kfd/kfd/topology/nodes"

const char *kfd_link_type_to_string(unsigned type) {
        switch (type) {
        case 1:
                return "HyperTransport";
        case KFD_LINK_TYPE_PCIE:
                return "PCIe";
        case 5:
                return "QPI";
        case 9:
                return "InfiniBand";
        case KFD_LINK_TYPE_XGMI:
                return "XGMI";
        case 12:
                return "XGOP";
        case 13:
                return "GZ";
        case 14:
                return "Ethernet RDMA";
        case 15:
                return "RDMA";
        }
        return NULL;
}

int kfd_properties_get(const char *text, const char *key, uint64_t *ret) {
        size_t len = strlen(key);

        for (const char *line = text; line && *line;) {
                const char *end = strchrnul(line, '\n');

                if ((size_t) (end - line) > len && strneq(line, key, len) && line[len] == ' ') {
                        char value[32];
                        size_t n = (size_t) (end - line) - len - 1;

                        if (n == 0 || n >= sizeof(value))
                                return -EINVAL;
                        memcpy(value, line + len + 1, n);
                        value[n] = '\0';
                        return parse_u64(value, ret);
                }
                line = *end ? end + 1 : end;
        }
        return -ENOENT;
}

_printf_(2, 3) static int add_problem(char ***problems, const char *format, ...) {
        char *line = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&line, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return strv_consume(problems, line);
}

/* The PCI function of a GPU node, "" for a CPU node or one whose function is not known. */
typedef struct KfdNode {
        char name[16];
        char address[PCI_ADDRESS_MAX];
} KfdNode;

static int read_node(int root_fd, const char *name, KfdNode *ret, char ***problems) {
        _cleanup_(freep) char *dir = NULL, *props = NULL;
        uint64_t gpu_id = 0, location, domain = 0;
        int r;

        *ret = (KfdNode) {};
        snprintf(ret->name, sizeof(ret->name), "%s", name);
        r = sysfs_path_join(TOPOLOGY_NODES, name, &dir);
        if (r < 0)
                return r;
        /* A CPU node has gpu_id 0. */
        if (sysfs_read_u64(root_fd, dir, "gpu_id", &gpu_id) < 0 || gpu_id == 0)
                return 0;
        r = sysfs_read_string(root_fd, dir, "properties", &props);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return add_problem(problems, "nodes/%s/properties: unreadable: %s", name, strerror(-r));
        /* location_id is the PCI bus and devfn ((bus << 8) | devfn); domain came later (0 before). */
        if (kfd_properties_get(props, "location_id", &location) < 0 || location > 0xffff)
                return add_problem(problems, "nodes/%s: no valid location_id, the GPU's PCI function is unknown",
                                   name);
        r = kfd_properties_get(props, "domain", &domain);
        if ((r < 0 && r != -ENOENT) || domain > UINT32_MAX)
                return add_problem(problems, "nodes/%s: the domain property is not a PCI domain", name);
        snprintf(ret->address, sizeof(ret->address), "%04x:%02x:%02x.%x", (unsigned) domain,
                 (unsigned) (location >> 8), (unsigned) ((location >> 3) & 0x1f), (unsigned) (location & 7));
        return 0;
}

static const KfdNode *node_find(const KfdNode *nodes, size_t n, uint64_t id) {
        char name[32];

        snprintf(name, sizeof(name), "%" PRIu64, id);
        for (size_t i = 0; i < n; i++)
                if (streq(nodes[i].name, name))
                        return &nodes[i];
        return NULL;
}

static int read_node_links(int root_fd, const KfdNode *nodes, size_t n_nodes, const KfdNode *node,
                           KfdLink **links, size_t *n_links, char ***problems) {
        _cleanup_(strv_freep) char **entries = NULL;
        _cleanup_(freep) char *dir = NULL;
        size_t count = 0;
        int r;

        if (asprintf(&dir, TOPOLOGY_NODES "/%s/io_links", node->name) < 0)
                return -ENOMEM;
        r = sysfs_list_dir(root_fd, dir, &entries);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;

        STRV_FOREACH(e, entries) {
                _cleanup_(freep) char *props = NULL, *link_dir = NULL;
                uint64_t type, from, to, weight = 0, min_bw = 0, max_bw = 0;
                const KfdNode *peer;

                if (++count > KFD_LINKS_PER_NODE_MAX)
                        return add_problem(problems, "nodes/%s/io_links: more than %u links, the rest left out",
                                           node->name, KFD_LINKS_PER_NODE_MAX);
                r = sysfs_path_join(dir, *e, &link_dir);
                if (r < 0)
                        return r;
                r = sysfs_read_string(root_fd, link_dir, "properties", &props);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || kfd_properties_get(props, "type", &type) < 0 ||
                    kfd_properties_get(props, "node_from", &from) < 0 ||
                    kfd_properties_get(props, "node_to", &to) < 0 || type > 255) {
                        r = add_problem(problems, "nodes/%s/io_links/%s: not a valid link description", node->name,
                                        *e);
                        if (r < 0)
                                return r;
                        continue;
                }
                /* Optional figures: a malformed one stays unknown. */
                (void) kfd_properties_get(props, "weight", &weight);
                (void) kfd_properties_get(props, "min_bandwidth", &min_bw);
                (void) kfd_properties_get(props, "max_bandwidth", &max_bw);

                peer = node_find(nodes, n_nodes, to);
                if (!peer || isempty(peer->address) || node_find(nodes, n_nodes, from) != node)
                        continue; /* to a CPU, or not from this node */

                KfdLink *grown = reallocarray(*links, *n_links + 1, sizeof(KfdLink));
                if (!grown)
                        return -ENOMEM;
                *links = grown;
                KfdLink *l = &grown[(*n_links)++];
                *l = (KfdLink) {
                        .type = (unsigned) type,
                        .weight = (uint32_t) MIN(weight, (uint64_t) UINT32_MAX),
                        .min_bandwidth_mbs = (uint32_t) MIN(min_bw, (uint64_t) UINT32_MAX),
                        .max_bandwidth_mbs = (uint32_t) MIN(max_bw, (uint64_t) UINT32_MAX),
                };
                memcpy(l->from, node->address, sizeof(l->from));
                memcpy(l->to, peer->address, sizeof(l->to));
        }
        return 0;
}

int kfd_read_links(int root_fd, KfdLink **ret, size_t *ret_n, char ***ret_problems) {
        _cleanup_(strv_freep) char **names = NULL, **problems = NULL;
        _cleanup_(freep) KfdNode *nodes = NULL;
        _cleanup_(freep) KfdLink *links = NULL;
        size_t n_nodes = 0, n_links = 0;
        int r;

        r = sysfs_list_dir(root_fd, TOPOLOGY_NODES, &names);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && strv_length(names) > 0) {
                size_t n = MIN(strv_length(names), (size_t) KFD_NODES_MAX);

                nodes = new0(KfdNode, n);
                if (!nodes)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        uint32_t id;

                        if (parse_u32(names[i], &id) < 0)
                                continue;
                        r = read_node(root_fd, names[i], &nodes[n_nodes], &problems);
                        if (r < 0)
                                return r;
                        n_nodes++;
                }
                for (size_t i = 0; i < n_nodes; i++) {
                        if (isempty(nodes[i].address))
                                continue;
                        r = read_node_links(root_fd, nodes, n_nodes, &nodes[i], &links, &n_links, &problems);
                        if (r < 0)
                                return r;
                }
        }

        *ret = TAKE_PTR(links);
        *ret_n = n_links;
        if (ret_problems)
                *ret_problems = TAKE_PTR(problems);
        return 0;
}
