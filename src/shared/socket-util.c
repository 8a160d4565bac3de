/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <netdb.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "parse-util.h"
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

int socket_parse_listen_address(const char *listen, struct sockaddr_storage *ret, socklen_t *ret_len) {
        _cleanup_(freep) char *host = NULL;
        const char *port;
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
        struct addrinfo *ai = NULL;
        uint32_t p;

        if (isempty(listen) || strlen(listen) > 128)
                return -EINVAL;
        if (listen[0] == '[') {
                const char *end = strchr(listen, ']');
                if (!end || end[1] != ':')
                        return -EINVAL;
                host = strndup(listen + 1, (size_t) (end - listen - 1));
                port = end + 2;
        } else if (strchr(listen, ':')) {
                const char *colon = strrchr(listen, ':');
                if (strchr(listen, ':') != colon)
                        return -EINVAL; /* a bare IPv6 address needs brackets */
                host = strndup(listen, (size_t) (colon - listen));
                port = colon + 1;
        } else {
                host = strdup("::");
                port = listen;
        }
        if (!host)
                return -ENOMEM;
        if (parse_u32(port, &p) < 0 || p == 0 || p > 65535)
                return -EINVAL;
        if (getaddrinfo(isempty(host) ? NULL : host, port, &hints, &ai) != 0 || !ai)
                return -EINVAL;
        memcpy(ret, ai->ai_addr, ai->ai_addrlen);
        *ret_len = ai->ai_addrlen;
        freeaddrinfo(ai);
        return 0;
}

int socket_unix_address(const char *path, struct sockaddr_un *ret) {
        size_t n = strlen(path);

        if (n >= sizeof(ret->sun_path))
                return -ENAMETOOLONG;
        *ret = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(ret->sun_path, path, n);
        return 0;
}

int notify_socket_send(const char *message) {
        const char *e = getenv("NOTIFY_SOCKET");
        _cleanup_(closep) int fd = -EBADF;
        struct sockaddr_un sa;
        socklen_t len;

        if (isempty(e))
                return 0;
        if (e[0] != '/' && e[0] != '@')
                return -EAFNOSUPPORT;
        if (socket_unix_address(e, &sa) < 0)
                return -ENAMETOOLONG;
        /* An abstract name is its bytes, without a terminating NUL; a path is a string. */
        len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(e) + (e[0] == '/'));
        if (e[0] == '@')
                sa.sun_path[0] = 0;

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, message, strlen(message), MSG_NOSIGNAL | MSG_DONTWAIT, (struct sockaddr *) &sa, len) < 0)
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        return 1;
}
