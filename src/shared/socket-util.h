/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* socket-util.h — socket options we set the same way everywhere */
#pragma once

#include "macros.h"

/* Sets the receive buffer to size: SO_RCVBUFFORCE when we have CAP_NET_ADMIN, else SO_RCVBUF (which
 * the kernel caps at net.core.rmem_max). Returns the size the kernel granted, or -errno. */
int socket_set_rcvbuf(int fd, uint64_t size);
