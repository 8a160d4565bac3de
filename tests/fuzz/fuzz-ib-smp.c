/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the SMP decoder with what a neighbour's subnet management agent may answer: the input split
 * into the five 64-byte payloads rdma-mad.c asks for (our PortInfo, the neighbour's NodeInfo,
 * NodeDescription, PortInfo and a switch's port 0 PortInfo), each decoded, and the judgement made
 * whenever the decoders accept them. What is accepted must be in range, and the reason must say what
 * Degraded says. */
#include <stdlib.h>
#include <string.h>

#include "daemon/ib-smp.h"
#include "shared/macros.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t buf[5][IB_SMP_DATA_SIZE] = {};
        IbPortInfo local, remote, port0;
        IbNodeInfo ni;
        IbLinkJudgement j;
        const char *problem = NULL;
        char *desc = NULL;

        memcpy(buf, data, MIN(size, sizeof(buf)));
        if (ib_smp_parse_node_description(buf[2], &desc) == 0) {
                if (strlen(desc) > IB_NODE_DESCRIPTION_MAX)
                        abort();
                free(desc);
        }
        if (ib_smp_parse_node_info(buf[1], &ni, &problem) == 0) {
                if (ni.node_type < RDMA_NODE_TYPE_CA || ni.node_type > RDMA_NODE_TYPE_ROUTER || ni.num_ports == 0 ||
                    ni.local_port > ni.num_ports || ni.node_guid == 0)
                        abort();
        } else if (!problem)
                abort();
        if (ib_smp_parse_port_info(buf[0], &local, NULL) < 0 || ib_smp_parse_port_info(buf[3], &remote, NULL) < 0)
                return 0;
        bool p0 = ib_smp_parse_port_info(buf[4], &port0, NULL) == 0;
        ib_link_judge(&local, &local, &remote, p0 ? &port0 : &remote, &j);
        if (j.best_width < 0 || j.best_width >= _RDMA_WIDTH_MAX || j.best_speed < 0 || j.best_speed >= _RDMA_SPEED_MAX)
                abort();
        if (j.degraded != (j.reason[0] != 0) || strnlen(j.reason, sizeof(j.reason)) >= sizeof(j.reason))
                abort();
        return 0;
}
