/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-rdma.h — the responder's side of an RDMA test, run on its own thread */
#pragma once

#include "proto-bulk.h"
#include "proto.h"
#include "responder.h"

typedef struct RdmaSession RdmaSession;

/* Fills cfg->available and cfg->reason by looking for a device with an active port (cfg->device,
 * cfg->port). Returns 0 either way; a missing device is a normal state, not an error. */
int responder_rdma_detect(ResponderRdma *cfg);

/**
 * rdma_session_start() - serve one RDMA test on a thread
 * @fd: the control connection (non-blocking; the session owns it once this succeeded)
 * @client: the client's queue pair data from RDMA_CONNECT
 * @cfg: device, port and GID index to use
 * @limits: the responder's test limits
 * @done_fd: an eventfd the thread signals when it has finished
 * @ret: receives the session
 *
 * The thread opens the device, answers RDMA_CONNECT_REPLY, then serves RDMA_TEST frames until the
 * client closes, a limit is reached or rdma_session_join() is called.
 * Return: 0 or a negative errno.
 */
int rdma_session_start(int fd, const ProtoRdmaInfo *client, const ResponderRdma *cfg, const ResponderLimits *limits,
                       int done_fd, RdmaSession **ret);
bool rdma_session_finished(const RdmaSession *s);
/* Tells the thread to stop, waits for it and frees the session. NULL is fine. Returns NULL. */
RdmaSession *rdma_session_join(RdmaSession *s);
