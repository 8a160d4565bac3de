/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes every parser of sysfs/infiniband-parse.c with the same input, as a class/infiniband attribute
 * would arrive (one page at most, newline stripped): node_type, state, phys_state, link_layer, rate,
 * node_guid, GID entries and GID types. A success must yield an in-range value, and what we print
 * for it (the text on the bus) must parse back to the same value. */
#include <math.h>

#include "shared/string-util.h"
#include "sysfs/infiniband-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_rate(const RdmaRate *r) {
        char buf[RDMA_RATE_STRING_MAX];

        if (r->width < 0 || r->width >= _RDMA_WIDTH_MAX || r->speed < 0 || r->speed >= _RDMA_SPEED_MAX)
                abort();
        /* A parsed rate is what the kernel computes from width and speed, or the bare figure of an
         * unnamed speed; either way a number and a text for it. */
        if (r->speed != RDMA_SPEED_UNKNOWN && r->width != RDMA_WIDTH_UNKNOWN &&
            r->mgbps != rdma_rate_mgbps(r->speed, r->width))
                abort();
        if (!rdma_format_rate(r, buf) || strlen(buf) >= sizeof(buf))
                abort();
        /* The figure is whatever the attribute said (the kernel's own arithmetic bounds it, a
         * hostile tree does not), but always a finite number, the same as the integer. */
        double gbps = rdma_rate_gbps(r);
        if (!isfinite(gbps) || gbps < 0 || (r->mgbps == 0) != (gbps == 0))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(freep) char *s = NULL;
        char buf[MAX(RDMA_GID_STRING_MAX, RDMA_GUID_STRING_MAX)];
        RdmaNodeType node_type;
        RdmaPortState state;
        RdmaPhysState phys;
        RdmaLinkLayer link_layer;
        RdmaGidType gid_type;
        RdmaRate rate;
        uint64_t guid;
        uint8_t gid[16], again[16];

        if (size > 4096) /* an attribute is at most one page */
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        if (rdma_parse_node_type(s, &node_type) >= 0 &&
            (node_type < 0 || node_type >= _RDMA_NODE_TYPE_MAX || !rdma_node_type_to_string(node_type)))
                abort();
        if (rdma_parse_port_state(s, &state) >= 0 &&
            (state < 0 || state >= _RDMA_PORT_STATE_MAX || !rdma_port_state_to_string(state)))
                abort();
        if (rdma_parse_phys_state(s, &phys) >= 0 &&
            (phys < 0 || phys >= _RDMA_PHYS_STATE_MAX || !rdma_phys_state_to_string(phys)))
                abort();
        if (rdma_parse_link_layer(s, &link_layer) >= 0 &&
            (link_layer < 0 || link_layer >= _RDMA_LINK_LAYER_MAX || !rdma_link_layer_to_string(link_layer)))
                abort();
        if (rdma_parse_gid_type(s, &gid_type) >= 0 &&
            (gid_type < 0 || gid_type >= _RDMA_GID_TYPE_MAX || !rdma_gid_type_to_string(gid_type)))
                abort();
        if (rdma_parse_rate(s, &rate) >= 0)
                check_rate(&rate);

        /* GUIDs and GIDs: what we print parses back to the same bits. */
        if (rdma_parse_guid(s, &guid) >= 0) {
                uint64_t back;
                if (!rdma_format_guid(guid, buf) || rdma_parse_guid(buf, &back) < 0 || back != guid)
                        abort();
        }
        if (rdma_parse_gid(s, gid) >= 0) {
                if (!rdma_format_gid(gid, buf) || rdma_parse_gid(buf, again) < 0 || memcmp(gid, again, 16) != 0)
                        abort();
                (void) rdma_gid_is_zero(gid);
                (void) rdma_gid_is_ipv4_mapped(gid);
                (void) rdma_gid_is_link_local(gid);
        }

        (void) rdma_width_from_string(s);
        (void) rdma_speed_from_string(s);
        return 0;
}
