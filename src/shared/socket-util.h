/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* socket-util.h — socket options we set the same way everywhere */
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include "macros.h"

/* Walking a received netlink buffer, with the bytes left as a signed count:
 *   for (h = buf; NLMSG_OK_LEFT(h, left); h = NLMSG_NEXT_LEFT(h, left))
 * NLMSG_NEXT() subtracts the aligned length, which takes "left" below zero after a last message whose
 * length is not aligned, where a size_t would wrap to a huge count; and its step casts a char pointer,
 * which clang's -Wcast-align flags, where the step through void * says the kernel aligned it. */
#define NLMSG_OK_LEFT(h, left) ((left) >= (ssize_t) sizeof(struct nlmsghdr) && NLMSG_OK((h), (size_t) (left)))
#define NLMSG_NEXT_LEFT(h, left)                                                                         \
        ((left) -= (ssize_t) NLMSG_ALIGN((h)->nlmsg_len),                                                \
         (struct nlmsghdr *) (void *) ((uint8_t *) (h) + NLMSG_ALIGN((h)->nlmsg_len)))

/* Sets the receive buffer to size: SO_RCVBUFFORCE when we have CAP_NET_ADMIN, else SO_RCVBUF (which
 * the kernel caps at net.core.rmem_max). Returns the size the kernel granted, or -errno. */
int socket_set_rcvbuf(int fd, uint64_t size);

/* Parses a listen address "PORT" (every address, IPv6 and IPv4), "IPV4:PORT" or "[IPV6]:PORT", with
 * numeric addresses only (no name lookups in a daemon's config). -EINVAL otherwise. */
int socket_parse_listen_address(const char *listen, struct sockaddr_storage *ret, socklen_t *ret_len);

/* The address of the AF_UNIX socket at path (a file system path); -ENAMETOOLONG when it does not fit. */
int socket_unix_address(const char *path, struct sockaddr_un *ret);

/* Sends message to the service manager's $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace)
 * as sd_notify() does, but never waits: sd_notify() blocks while the manager's queue is full (a busy
 * PID 1, or a supervisor that reads now and then, whose queue holds net.unix.max_dgram_qlen, 10, messages),
 * and with it the daemon's whole loop. Returns 1 sent, 0 without $NOTIFY_SOCKET, -EAGAIN when the queue
 * is full (the caller says it again later), another -errno. */
int notify_socket_send(const char *message);
