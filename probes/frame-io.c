/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <poll.h>
#include <sys/socket.h>

#include "frame-io.h"
#include "shared/time-util.h"

int fio_wait(int fd, short events, uint64_t deadline) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = events };
                int timeout = -1;

                if (deadline != FIO_NO_DEADLINE) {
                        uint64_t now = now_usec(CLOCK_MONOTONIC);
                        if (now >= deadline)
                                return -ETIME;
                        /* Round up so that we never wake just before the deadline and spin. */
                        uint64_t ms = (deadline - now + 999) / 1000;
                        timeout = (int) MIN(ms, (uint64_t) INT32_MAX);
                }
                int r = poll(&p, 1, timeout);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (r == 0)
                        continue;  /* the deadline check above decides */
                if (p.revents & POLLNVAL)
                        return -EBADF;
                /* POLLERR/POLLHUP: the next read or write reports the precise error. */
                return 0;
        }
}

int fio_writev_all(int fd, struct iovec *iov, int n, uint64_t deadline) {
        while (n > 0) {
                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t) n };
                ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                return -errno;
                        int r = fio_wait(fd, POLLOUT, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                size_t left = (size_t) k;
                while (n > 0 && left >= iov->iov_len) {
                        left -= iov->iov_len;
                        iov++;
                        n--;
                }
                if (n > 0) {
                        iov->iov_base = (uint8_t *) iov->iov_base + left;
                        iov->iov_len -= left;
                }
        }
        return 0;
}

int fio_write_all(int fd, const void *buf, size_t n, uint64_t deadline) {
        struct iovec iov = { .iov_base = (void *) buf, .iov_len = n };
        return fio_writev_all(fd, &iov, 1, deadline);
}

int fio_read_all(int fd, void *buf, size_t n, uint64_t deadline) {
        uint8_t *p = buf;

        while (n > 0) {
                ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                return -errno;
                        int r = fio_wait(fd, POLLIN, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (k == 0)
                        return -ECONNRESET;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int fio_read_frame(int fd, uint32_t max_frame, ProtoHeader *ret_header, uint8_t payload[static PROTO_CONTROL_MAX],
                   uint64_t deadline) {
        uint8_t buf[PROTO_HEADER_SIZE];
        ProtoHeader h;
        int r;

        r = fio_read_all(fd, buf, sizeof(buf), deadline);
        if (r < 0)
                return r;
        r = proto_header_decode(buf, max_frame, &h);
        if (r < 0)
                return r;
        if (h.type != PROTO_DATA) {
                if (h.length > PROTO_CONTROL_MAX)
                        return -EMSGSIZE;
                r = fio_read_all(fd, payload, h.length, deadline);
                if (r < 0)
                        return r;
        }
        *ret_header = h;
        return 0;
}
