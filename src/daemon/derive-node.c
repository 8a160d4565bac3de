/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What identifies this node on the wire, gathered from the other kinds: the unique_id of each
 * Thunderbolt domain's host router (the kernel announces it to every XDomain peer, so a neighbour
 * sees it as its peer's unique_id), the node GUID of each RDMA device, the hardware addresses of its
 * physical links; and from those the identity its responder hands out (Node.derived.identity, which
 * linkprobed writes for linkprobe-responder whenever identity_generation moves).
 */
#include "derive-neighbor.h"
#include "link.h"
#include "node.h"
#include "rdma.h"
#include "shared/string-util.h"
#include "tbt.h"

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static void strv_sort(char **l) {
        size_t n = strv_length(l);
        if (n > 1)
                qsort(l, n, sizeof(char *), compare_strings);
}

/* The host routers' UUIDs, normalized (lower case, dashes), sorted; at most what an identity holds. */
static int thunderbolt_hosts(Thunderbolt *tbt, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        TbtObject *o;
        int r;

        TABLE_FOREACH(o, &tbt->objects) {
                char text[NODE_UUID_STRING_MAX];
                uint8_t uuid[16];

                if (o->type != TBT_NODE_HOST || !o->device || node_uuid_from_string(o->device->unique_id, uuid) < 0)
                        continue;
                if (strv_length(l) >= NODE_IDENTITY_THUNDERBOLT_MAX)
                        break;
                r = strv_extend_unique(&l, node_uuid_to_string(uuid, text));
                if (r < 0)
                        return r;
        }
        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

static int rdma_guids(Rdma *rdma, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        RdmaPort *p;
        int r;

        TABLE_FOREACH(p, &rdma->ports) {
                char text[NODE_GUID_STRING_MAX];

                if (p->node_guid == 0)
                        continue;
                if (strv_length(l) >= NODE_IDENTITY_RDMA_MAX)
                        break;
                r = strv_extend_unique(&l, node_guid_to_string(p->node_guid, text));
                if (r < 0)
                        return r;
        }
        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

/* Of links a person would call a connection (not virtual, loopback or VPN): a neighbour sees these
 * in its neighbour table. */
static int hardware_addresses(Links *links, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        Link *link;
        int r;

        TABLE_FOREACH(link, &links->table) {
                if (isempty(link->hw_address) || !connection_type_is_physical(link->derived.connection_type) ||
                    streq(link->hw_address, "00:00:00:00:00:00"))
                        continue;
                r = strv_extend_unique(&l, link->hw_address);
                if (r < 0)
                        return r;
        }
        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

static void build_identity(Node *n, NodeIdentity *ret) {
        NodeIdentity id = { .booted_at = n->booted_at };

        memcpy(id.node_id, n->node_id_bytes, NODE_ID_SIZE);
        memcpy(id.boot_id, n->boot_id_bytes, NODE_ID_SIZE);
        node_hostname_sanitize(n->hostname, id.hostname);
        STRV_FOREACH(u, n->derived.thunderbolt_host_uuids)
                if (id.n_thunderbolt < NODE_IDENTITY_THUNDERBOLT_MAX &&
                    node_uuid_from_string(*u, id.thunderbolt[id.n_thunderbolt]) >= 0)
                        id.n_thunderbolt++;
        STRV_FOREACH(g, n->derived.rdma_node_guids)
                if (id.n_rdma < NODE_IDENTITY_RDMA_MAX && node_guid_from_string(*g, &id.rdma[id.n_rdma]) >= 0)
                        id.n_rdma++;
        *ret = id;
}

void derive_node_identity(DeriveNeighbors *d) {
        _cleanup_(strv_freep) char **hosts = NULL, **guids = NULL, **macs = NULL;
        Node *n = d->node;
        NodeIdentity id;

        d->node_derived = true;
        if (thunderbolt_hosts(d->thunderbolt, &hosts) < 0 || rdma_guids(d->rdma, &guids) < 0 ||
            hardware_addresses(d->links, &macs) < 0) {
                log_oom();
                return;
        }
        (void) bus_object_set_strv(&n->bus, &n->derived.thunderbolt_host_uuids, &hosts, "ThunderboltHostUuids");
        (void) bus_object_set_strv(&n->bus, &n->derived.rdma_node_guids, &guids, "RdmaNodeGuids");
        (void) bus_object_set_strv(&n->bus, &n->derived.hardware_addresses, &macs, "HardwareAddresses");

        /* Without a machine ID there is no NodeId, and nothing to hand out. */
        if (!n->node_id)
                return;
        build_identity(n, &id);
        if (n->derived.has_identity && node_identity_equal(&n->derived.identity, &id))
                return;
        n->derived.identity = id;
        n->derived.has_identity = true;
        n->derived.identity_generation++;
}
