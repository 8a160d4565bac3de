/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-port-state.h — what a read of an RDMA port changes in its published object */
#pragma once

#include "rdma-object.h"

/**
 * rdma_port_status_merge() - the live status to publish from sysfs and (optionally) verbs
 * @sysfs: the port as sysfs shows it
 * @verbs: the port as ibv_query_port() saw it, or NULL
 * @ret: every field verbs knows from verbs, the rest from sysfs
 */
void rdma_port_status_merge(const RdmaPortStatus *sysfs, const RdmaPortStatus *verbs, RdmaPortStatus *ret);

/* Publishes a port's live status (rdma-remote.c: from its PortInfo, where sysfs has no such port). */
void rdma_port_set_status(RdmaPort *p, const RdmaPortStatus *s);

/**
 * rdma_port_apply_read() - publishes what a read of the port found
 * @p: the port
 * @ip: the port as sysfs shows it
 * @live: libibverbs' view of it, or NULL
 *
 * Sets the live status, transport, GID table and network interfaces; when the transport or the
 * interfaces changed, the owner is marked changed (the derivation pass links ports and links again).
 * Returns 0 or -ENOMEM.
 */
int rdma_port_apply_read(RdmaPort *p, const InfinibandPort *ip, const RdmaPortStatus *live);

void rdma_port_gids_free(RdmaPortGid *gids, size_t n);
