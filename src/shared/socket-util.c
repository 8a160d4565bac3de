/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sys/socket.h>

#include "socket-util.h"

int socket_set_rcvbuf(int fd, uint64_t size) {
        int v = (int) MIN(size, (uint64_t) INT32_MAX / 2), granted = 0;
        socklen_t len = sizeof(granted);

        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0 &&
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0)
                return -errno;
        if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &len) < 0)
                return -errno;
        /* The kernel reports twice what it accounts as payload room. */
        return granted / 2;
}
