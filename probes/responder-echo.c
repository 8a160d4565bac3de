/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A connection that asks for round trips gets a thread that waits for each request in a blocking
 * recv() and answers it with one send(), as sockperf's server does: two system calls per round trip.
 * Served by the loop, each would also cost an epoll_wait() and the event loop's own work around it,
 * about a tenth of a round trip on a quiet host (4.5 against 5.1 us over veth, both ends on one CPU),
 * which the client would measure as the link's. One connection at a time has the thread; any other
 * echoes, and everything but echoes, are served by the loop as before (responder-conn.c hands the
 * connection over and takes it back). */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "responder-echo.h"
#include "shared/time-util.h"

struct EchoSession {
        pthread_t thread;
        cpu_set_t cpus;          /* where the loop may run, and so the thread */
        int fd;
        int done_fd;
        uint32_t max_frame;
        uint64_t quiet_usec;
        atomic_bool finished;
        EchoLeftover left;
};

/* The frame at the front of what was read: 1 a whole echo request of *ret_size bytes, 0 too little
 * of one yet (or of a header), -1 anything else. */
static int front_echo(const EchoSession *s, size_t *ret_size) {
        const EchoLeftover *l = &s->left;
        ProtoHeader h;

        if (l->in_len < PROTO_HEADER_SIZE)
                return 0;
        /* The decoder bounds an echo's payload, so a whole one always fits into in[]. */
        if (proto_header_decode(l->in, s->max_frame, &h) < 0 || h.type != PROTO_ECHO_REQUEST)
                return -1;
        if (l->in_len < PROTO_HEADER_SIZE + h.length)
                return 0;
        *ret_size = PROTO_HEADER_SIZE + h.length;
        return 1;
}

/* Answers the request at the front: 1 when the reply has left, 0 when the socket did not take all of
 * it (the rest waits in out[] for the loop), -errno. */
static int echo_answer(EchoSession *s, size_t size) {
        EchoLeftover *l = &s->left;
        ssize_t n, k;

        n = proto_encode_echo(l->out, sizeof(l->out), PROTO_ECHO_REPLY, l->in + PROTO_HEADER_SIZE,
                              size - PROTO_HEADER_SIZE);
        if (n < 0)
                return (int) n;
        l->in_len -= size;
        memmove(l->in, l->in + size, l->in_len);
        l->echoes++;
        l->out_len = (size_t) n;
        l->out_sent = 0;
        do
                k = send(s->fd, l->out, l->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return errno == EAGAIN ? 0 : -errno;
        l->out_sent = (size_t) k;
        if (l->out_sent < l->out_len)
                return 0;
        l->out_len = l->out_sent = 0;
        return 1;
}

static void *echo_thread(void *userdata) {
        EchoSession *s = userdata;
        EchoLeftover *l = &s->left;
        struct timeval tv = { .tv_sec = (time_t) (s->quiet_usec / USEC_PER_SEC),
                              .tv_usec = (suseconds_t) (s->quiet_usec % USEC_PER_SEC) }, none = {};
        bool quiet = false;
        uint64_t one = 1;
        int flags;

        (void) sched_setaffinity(0, sizeof(s->cpus), &s->cpus);
        /* Blocking with a timeout: the receive that waits for a request also takes it. */
        flags = fcntl(s->fd, F_GETFL);
        if (flags >= 0 && fcntl(s->fd, F_SETFL, flags & ~O_NONBLOCK) >= 0 &&
            setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) >= 0)
                for (;;) {
                        size_t size = 0;
                        int r = front_echo(s, &size);
                        if (r < 0)
                                break;
                        if (r > 0) {
                                if (echo_answer(s, size) <= 0)
                                        break;
                                continue;
                        }
                        ssize_t k = recv(s->fd, l->in + l->in_len, sizeof(l->in) - l->in_len, 0);
                        if (k < 0 && errno == EINTR)
                                continue;
                        /* Quiet, closed or failed: the loop finds the end or the error in turn. */
                        quiet = k < 0 && errno == EAGAIN;
                        if (k <= 0)
                                break;
                        l->in_len += (size_t) k;
                }
        (void) setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
        if (flags >= 0)
                (void) fcntl(s->fd, F_SETFL, flags);
        /* Read once here rather than per round trip: the last request came before the quiet wait. */
        l->last_usec = now_usec(CLOCK_MONOTONIC) - (quiet ? s->quiet_usec : 0);
        atomic_store(&s->finished, true);
        (void) write(s->done_fd, &one, sizeof(one));
        return NULL;
}

int echo_session_start(int fd, uint32_t max_frame, uint64_t quiet_usec, int done_fd, EchoSession **ret) {
        _cleanup_(freep) EchoSession *s = new0(EchoSession, 1);
        pthread_attr_t attr;
        cpu_set_t here;
        int cpu, e;

        if (!s)
                return -ENOMEM;
        *s = (EchoSession) { .fd = fd, .done_fd = done_fd, .max_frame = max_frame, .quiet_usec = quiet_usec };
        if (sched_getaffinity(0, sizeof(s->cpus), &s->cpus) < 0)
                return -errno;
        /* The thread starts on the CPU that took the connection's packets in (SO_INCOMING_CPU: where
         * the NIC's interrupt or, over veth, the sender itself ran the receive path), and may move
         * from there (echo_thread()). Started where the scheduler puts a new thread, or where the
         * loop last ran, it stays on that CPU: each wake-up prefers a thread's idle previous CPU, and
         * waking an idle CPU of a virtual machine costs tens of microseconds, against 5 for a round
         * trip on one CPU. */
        socklen_t len = sizeof(cpu);
        if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &len) < 0 || cpu < 0 || !CPU_ISSET(cpu, &s->cpus))
                cpu = sched_getcpu();
        CPU_ZERO(&here);
        if (cpu >= 0)
                CPU_SET(cpu, &here);
        e = pthread_attr_init(&attr);
        if (e != 0)
                return -e;
        if (cpu >= 0)
                (void) pthread_attr_setaffinity_np(&attr, sizeof(here), &here);
        e = pthread_create(&s->thread, &attr, echo_thread, s);
        (void) pthread_attr_destroy(&attr);
        if (e != 0)
                return -e;
        *ret = TAKE_PTR(s);
        return 0;
}

bool echo_session_finished(const EchoSession *s) {
        return s && atomic_load(&s->finished);
}

EchoSession *echo_session_join(EchoSession *s, EchoLeftover *ret) {
        if (!s)
                return NULL;
        /* Wakes a thread blocked in recv(): only a connection that is going is stopped. */
        if (!atomic_load(&s->finished))
                (void) shutdown(s->fd, SHUT_RDWR);
        pthread_join(s->thread, NULL);
        if (ret)
                *ret = s->left;
        free(s);
        return NULL;
}
