/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "link-speed.h"
#include "sysfs/net.h"

typedef struct SpeedRequest {
        int ifindex;
        uint64_t seq;
        char name[IFNAMSIZ];
} SpeedRequest;

typedef struct SpeedAnswer {
        int ifindex;
        uint64_t seq;
        int error;      /* negative errno of sysfs_net_read(), 0 on success */
        int speed_mbps; /* -1: unknown */
        char duplex[8]; /* "full", "half" or "" */
} SpeedAnswer;

struct LinkSpeedReader {
        link_speed_answer_t answer;
        void *userdata;
        /* One SOCK_SEQPACKET pair: requests and answers keep their boundaries, a full queue says
         * EAGAIN instead of blocking the loop, and MSG_NOSIGNAL spares the worker a SIGPIPE when we
         * close our end at exit. */
        int loop_fd;
        int worker_fd;
        int sysfs_fd; /* borrowed; the worker only reads through it */
        pthread_t worker;
        bool worker_started;
        sd_event_source *io;
        uint64_t seq;
};

static void *worker_main(void *userdata) {
        const LinkSpeedReader *r = userdata;
        SpeedRequest q;
        sigset_t all;

        /* Signals are the loop's (signalfd); none may land here. */
        sigfillset(&all);
        (void) pthread_sigmask(SIG_BLOCK, &all, NULL);

        for (;;) {
                ssize_t n = recv(r->worker_fd, &q, sizeof(q), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(q))
                        break; /* 0: the loop closed its end */

                q.name[sizeof(q.name) - 1] = 0;
                SysfsNetFacts f = { .speed_mbps = -1 };
                SpeedAnswer a = {
                        .ifindex = q.ifindex,
                        .seq = q.seq,
                        .error = sysfs_net_read(r->sysfs_fd, q.name, q.ifindex, SYSFS_NET_SPEED, &f),
                        .speed_mbps = f.speed_mbps,
                };
                if (f.duplex)
                        snprintf(a.duplex, sizeof(a.duplex), "%s", f.duplex);
                sysfs_net_facts_done(&f);

                while ((n = send(r->worker_fd, &a, sizeof(a), MSG_NOSIGNAL)) < 0 && errno == EINTR)
                        ;
                if (n < 0)
                        break;
        }
        return NULL;
}

static int on_answer(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        LinkSpeedReader *r = userdata;
        SpeedAnswer a;

        for (;;) {
                ssize_t n = recv(r->loop_fd, &a, sizeof(a), MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(a))
                        return 0;
                a.duplex[sizeof(a.duplex) - 1] = 0;
                r->answer(r->userdata, a.ifindex, a.seq, a.error, a.speed_mbps, a.duplex[0] ? a.duplex : NULL);
        }
}

int link_speed_reader_new(sd_event *event, int sysfs_fd, link_speed_answer_t answer, void *userdata,
                          LinkSpeedReader **ret) {
        _cleanup_(link_speed_reader_freep) LinkSpeedReader *r = NULL;
        pthread_attr_t attr;
        int fds[2], k;

        r = new0(LinkSpeedReader, 1);
        if (!r)
                return -ENOMEM;
        r->answer = answer;
        r->userdata = userdata;
        r->loop_fd = r->worker_fd = -EBADF;
        r->sysfs_fd = sysfs_fd;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                return -errno;
        r->loop_fd = fds[0];
        r->worker_fd = fds[1];

        k = sd_event_add_io(event, &r->io, r->loop_fd, EPOLLIN, on_answer, r);
        if (k < 0)
                return k;
        (void) sd_event_source_set_description(r->io, "link-speed");

        /* sysfs reads need little stack; the default would reserve 8 MiB of address space. */
        k = pthread_attr_init(&attr);
        if (k != 0)
                return -k;
        (void) pthread_attr_setstacksize(&attr, 256 * 1024);
        k = pthread_create(&r->worker, &attr, worker_main, r);
        pthread_attr_destroy(&attr);
        if (k != 0)
                return -k;
        r->worker_started = true;

        *ret = TAKE_PTR(r);
        return 0;
}

LinkSpeedReader *link_speed_reader_free(LinkSpeedReader *r) {
        if (!r)
                return NULL;
        sd_event_source_disable_unref(r->io);
        /* Closing our end ends the worker: its recv() answers 0, its send() EPIPE. */
        r->loop_fd = safe_close(r->loop_fd);
        if (r->worker_started)
                (void) pthread_join(r->worker, NULL);
        safe_close(r->worker_fd);
        return mfree(r);
}

int link_speed_reader_request(LinkSpeedReader *r, int ifindex, const char *name, uint64_t *ret_seq) {
        SpeedRequest q = { .ifindex = ifindex, .seq = ++r->seq };

        if (!name || strlen(name) >= sizeof(q.name))
                return -EINVAL;
        memcpy(q.name, name, strlen(name));
        if (send(r->loop_fd, &q, sizeof(q), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return -errno;
        *ret_seq = q.seq;
        return 0;
}
