/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One walk per subnet the node is on. A node with two HCAs (or two ports) on one subnet walks it once;
 * ports on different subnets are different fabrics, each walked from a port of its own. Pure: the
 * probe enumerates the ports (libibumad) and says which GUIDs its walks found.
 */
#include <string.h>

#include "fabric-subnets.h"

/* PortInfo:PortState Init and Active. */
#define PORT_STATE_INIT 2
#define PORT_STATE_ACTIVE 4

bool fabric_port_walkable(unsigned state, const char *link_layer) {
        return state >= PORT_STATE_INIT && state <= PORT_STATE_ACTIVE &&
               (!link_layer || link_layer[0] == '\0' || strcmp(link_layer, "InfiniBand") == 0 ||
                strcmp(link_layer, "IB") == 0);
}

ssize_t fabric_next_subnet_port(const FabricLocalPort *ports, size_t n, size_t from,
                                bool (*covered)(uint64_t port_guid, void *userdata), void *userdata) {
        for (size_t i = from; i < n; i++)
                if (!covered(ports[i].port_guid, userdata))
                        return (ssize_t) i;
        return -1;
}
