/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ethtool's generic-netlink family (libnl-genl-3 resolves it and builds the requests; the replies are
 * read by shared/ethtool-linkmodes.c, the one parser the tests and the fuzz target also feed). One
 * worker thread asks, because the kernel answers under the RTNL lock; the loop follows the "monitor"
 * group. Shaped like link-speed.c: a SOCK_SEQPACKET pair carries fixed-size requests and answers.
 */
#include <errno.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <net/if.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "link-ethtool.h"
#include "shared/log.h"
#include "shared/socket-util.h"

link_ethtool_replay_t link_ethtool_replay = NULL;

/* A verbose reply names every bit; compact ones (what we ask for) are a few hundred bytes. */
#define ETHTOOL_REPLY_MAX (32 * 1024)
/* The kernel answers inside our sendmsg(); this only bounds a kernel that never does. */
#define ETHTOOL_REPLY_TIMEOUT_SEC 2

typedef struct EthtoolRequest {
        int ifindex;
        uint64_t seq;
        char name[IFNAMSIZ];
} EthtoolRequest;

struct LinkEthtool {
        link_ethtool_answer_t answer;
        link_ethtool_changed_t changed;
        void *userdata;
        int loop_fd;
        int worker_fd;
        pthread_t worker;
        bool worker_started;
        sd_event_source *io;
        uint64_t seq;
        /* The loop's socket in the monitor group; NULL when there is no such group. */
        struct nl_sock *monitor;
        sd_event_source *monitor_io;
        uint8_t *monitor_buf; /* ETHTOOL_REPLY_MAX */
};

/* ---- the worker: one request socket, blocking ---- */

typedef struct Asker {
        struct nl_sock *sock; /* NULL: no ethtool family */
        int family;
        uint8_t *buf;
} Asker;

static int asker_open(Asker *a) {
        a->buf = malloc(ETHTOOL_REPLY_MAX);
        if (!a->buf)
                return -ENOMEM;
        a->sock = nl_socket_alloc();
        if (!a->sock)
                return -ENOMEM;
        /* Requests are answered by their reply, or by an error: no acknowledgement to wait for. */
        nl_socket_disable_auto_ack(a->sock);
        if (genl_connect(a->sock) < 0)
                goto fail;
        a->family = genl_ctrl_resolve(a->sock, ETHTOOL_GENL_NAME);
        if (a->family < 0)
                goto fail;
        struct timeval tv = { .tv_sec = ETHTOOL_REPLY_TIMEOUT_SEC };
        (void) setsockopt(nl_socket_get_fd(a->sock), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return 0;
fail:
        nl_socket_free(a->sock);
        a->sock = NULL;
        return -EOPNOTSUPP;
}

static void asker_close(Asker *a) {
        if (a->sock)
                nl_socket_free(a->sock);
        free(a->buf);
}

/* Sends cmd for one device (ifindex > 0) or, with NLM_F_DUMP in flags, for every one (ifindex 0). */
static int asker_send(Asker *a, uint8_t cmd, int flags, int ifindex, uint32_t *ret_seq) {
        struct nl_msg *msg;
        struct nlattr *header;
        int r;

        if (!a->sock)
                return -EOPNOTSUPP;
        msg = nlmsg_alloc();
        if (!msg)
                return -ENOMEM;
        if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, a->family, 0, NLM_F_REQUEST | flags, cmd,
                         ETHTOOL_GENL_VERSION) ||
            /* Every request's header is its attribute 1 (LINKMODES_HEADER, LINKSTATE_HEADER). */
            !(header = nla_nest_start(msg, ETHTOOL_A_LINKMODES_HEADER | NLA_F_NESTED)) ||
            (ifindex > 0 && nla_put_u32(msg, ETHTOOL_A_HEADER_DEV_INDEX, (uint32_t) ifindex) < 0) ||
            nla_put_u32(msg, ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_COMPACT_BITSETS) < 0) {
                nlmsg_free(msg);
                return -ENOMEM;
        }
        nla_nest_end(msg, header);
        r = nl_send_auto(a->sock, msg);
        *ret_seq = nlmsg_hdr(msg)->nlmsg_seq;
        nlmsg_free(msg);
        return r < 0 ? -EIO : 0;
}

/* Sends one GET for the device and reads its reply into ret. */
static int asker_get(Asker *a, uint8_t cmd, EthtoolMessageKind want, int ifindex, EthtoolMessage *ret) {
        uint32_t seq;
        int r;

        r = asker_send(a, cmd, 0, ifindex, &seq);
        if (r < 0)
                return r;

        /* Read until the answer to this request: anything older (an answer we gave up on) is skipped. */
        for (;;) {
                ssize_t n = recv(nl_socket_get_fd(a->sock), a->buf, ETHTOOL_REPLY_MAX, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? -ETIMEDOUT : -errno;
                for (struct nlmsghdr *h = (struct nlmsghdr *) (void *) a->buf; NLMSG_OK_LEFT(h, n); h = NLMSG_NEXT_LEFT(h, n)) {
                        if (h->nlmsg_seq != seq)
                                continue;
                        r = ethtool_message_parse(h, h->nlmsg_len, ret);
                        if (r < 0)
                                return r; /* the kernel's errno, or a reply we could not read */
                        return ret->kind == want ? 0 : -EBADMSG;
                }
        }
}

static void asker_answer(Asker *a, const EthtoolRequest *q, LinkEthtoolAnswer *ans) {
        EthtoolMessage m;
        int r;

        *ans = (LinkEthtoolAnswer) { .ifindex = q->ifindex, .seq = q->seq };
        ethtool_link_modes_init(&ans->modes);
        ethtool_link_state_init(&ans->state);

        if (link_ethtool_replay) {
                r = link_ethtool_replay(q->ifindex, q->name, ans);
                if (r != 0) {
                        if (r < 0)
                                ans->modes_error = ans->state_error = r;
                        ans->ifindex = q->ifindex;
                        ans->seq = q->seq;
                        return;
                }
        }

        ans->modes_error = asker_get(a, ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_MESSAGE_LINKMODES, q->ifindex, &m);
        if (ans->modes_error >= 0)
                ans->modes = m.modes;
        ans->state_error = asker_get(a, ETHTOOL_MSG_LINKSTATE_GET, ETHTOOL_MESSAGE_LINKSTATE, q->ifindex, &m);
        if (ans->state_error >= 0)
                ans->state = m.state;
}

static void *worker_main(void *userdata) {
        const LinkEthtool *e = userdata;
        Asker a = {};
        EthtoolRequest q;
        sigset_t all;

        sigfillset(&all);
        (void) pthread_sigmask(SIG_BLOCK, &all, NULL);

        /* Opened here, not on the loop: resolving the family is a request too. Failing leaves every answer
         * -EOPNOTSUPP, which is what such a kernel means. */
        (void) asker_open(&a);

        for (;;) {
                LinkEthtoolAnswer ans;
                ssize_t n = recv(e->worker_fd, &q, sizeof(q), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(q))
                        break; /* 0: the loop closed its end */
                q.name[sizeof(q.name) - 1] = 0;
                asker_answer(&a, &q, &ans);
                while ((n = send(e->worker_fd, &ans, sizeof(ans), MSG_NOSIGNAL)) < 0 && errno == EINTR)
                        ;
                if (n < 0)
                        break;
        }
        asker_close(&a);
        return NULL;
}

static int on_answer(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        LinkEthtool *e = userdata;
        LinkEthtoolAnswer a;

        for (;;) {
                ssize_t n = recv(e->loop_fd, &a, sizeof(a), MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(a))
                        return 0;
                e->answer(e->userdata, &a);
        }
}

/* ---- the loop: the monitor group ---- */

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        LinkEthtool *e = userdata;
        uint8_t *buf = e->monitor_buf;

        /* Bounded per wake-up; the socket is level-triggered. */
        for (unsigned budget = 0; budget < 64; budget++) {
                ssize_t n = recv(fd, buf, ETHTOOL_REPLY_MAX, MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == ENOBUFS) {
                        log_debug("The ethtool monitor socket overran: asking every link again.");
                        e->changed(e->userdata, 0);
                        continue;
                }
                if (n <= 0)
                        return 0;
                for (struct nlmsghdr *h = (struct nlmsghdr *) (void *) buf; NLMSG_OK_LEFT(h, n); h = NLMSG_NEXT_LEFT(h, n)) {
                        EthtoolMessage m;
                        /* A message we cannot read is skipped; it never stops the loop. */
                        if (ethtool_message_parse(h, h->nlmsg_len, &m) < 0)
                                continue;
                        if (IN_SET(m.kind, ETHTOOL_MESSAGE_LINKMODES, ETHTOOL_MESSAGE_LINKINFO) && m.ifindex > 0)
                                e->changed(e->userdata, m.ifindex);
                }
        }
        return 0;
}

static int monitor_open(LinkEthtool *e, sd_event *event) {
        int group, r;

        e->monitor_buf = malloc(ETHTOOL_REPLY_MAX);
        e->monitor = nl_socket_alloc();
        if (!e->monitor || !e->monitor_buf)
                return -ENOMEM;
        nl_socket_disable_seq_check(e->monitor);
        if (genl_connect(e->monitor) < 0)
                return -EIO;
        group = genl_ctrl_resolve_grp(e->monitor, ETHTOOL_GENL_NAME, ETHTOOL_MCGRP_MONITOR_NAME);
        if (group < 0)
                return -EOPNOTSUPP;
        if (nl_socket_add_membership(e->monitor, group) < 0 || nl_socket_set_nonblocking(e->monitor) < 0)
                return -EIO;
        r = sd_event_add_io(event, &e->monitor_io, nl_socket_get_fd(e->monitor), EPOLLIN, on_monitor, e);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(e->monitor_io, "ethtool-monitor");
        return 0;
}

int link_ethtool_new(sd_event *event, link_ethtool_answer_t answer, link_ethtool_changed_t changed, void *userdata,
                     LinkEthtool **ret) {
        _cleanup_(link_ethtool_freep) LinkEthtool *e = NULL;
        pthread_attr_t attr;
        int fds[2], k;

        e = new0(LinkEthtool, 1);
        if (!e)
                return -ENOMEM;
        e->answer = answer;
        e->changed = changed;
        e->userdata = userdata;
        e->loop_fd = e->worker_fd = -EBADF;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                return -errno;
        e->loop_fd = fds[0];
        e->worker_fd = fds[1];
        k = sd_event_add_io(event, &e->io, e->loop_fd, EPOLLIN, on_answer, e);
        if (k < 0)
                return k;
        (void) sd_event_source_set_description(e->io, "link-ethtool");

        /* Without the group, links are still asked on every link event: only `ethtool -s` goes unseen. */
        k = monitor_open(e, event);
        if (k < 0) {
                log_debug_errno(k, "Not following ethtool's monitor group: %m");
                e->monitor_io = sd_event_source_disable_unref(e->monitor_io);
                if (e->monitor)
                        nl_socket_free(e->monitor);
                e->monitor = NULL;
        }

        k = pthread_attr_init(&attr);
        if (k != 0)
                return -k;
        (void) pthread_attr_setstacksize(&attr, 256 * 1024);
        k = pthread_create(&e->worker, &attr, worker_main, e);
        pthread_attr_destroy(&attr);
        if (k != 0)
                return -k;
        e->worker_started = true;

        *ret = TAKE_PTR(e);
        return 0;
}

LinkEthtool *link_ethtool_free(LinkEthtool *e) {
        if (!e)
                return NULL;
        sd_event_source_disable_unref(e->io);
        sd_event_source_disable_unref(e->monitor_io);
        if (e->monitor)
                nl_socket_free(e->monitor);
        free(e->monitor_buf);
        e->loop_fd = safe_close(e->loop_fd);
        if (e->worker_started)
                (void) pthread_join(e->worker, NULL);
        safe_close(e->worker_fd);
        return mfree(e);
}

int link_ethtool_request(LinkEthtool *e, int ifindex, const char *name, uint64_t *ret_seq) {
        EthtoolRequest q = { .ifindex = ifindex, .seq = ++e->seq };

        if (!name || strlen(name) >= sizeof(q.name))
                return -EINVAL;
        memcpy(q.name, name, strlen(name));
        if (send(e->loop_fd, &q, sizeof(q), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return -errno;
        *ret_seq = q.seq;
        return 0;
}

/* ---- every link at once, for the picture READY=1 stands for ---- */

/* Reads a dump's replies until NLMSG_DONE. Its datagrams fit the asker's buffer: the kernel caps a dump's
 * skb at 32 KiB (ETHTOOL_REPLY_MAX). */
static int asker_read_dump(Asker *a, uint32_t seq, EthtoolMessageKind want, link_ethtool_each_t each, void *userdata) {
        for (;;) {
                ssize_t n = recv(nl_socket_get_fd(a->sock), a->buf, ETHTOOL_REPLY_MAX, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? -ETIMEDOUT : -errno;
                if (n == 0)
                        return -EPIPE;
                for (struct nlmsghdr *h = (struct nlmsghdr *) (void *) a->buf; NLMSG_OK_LEFT(h, n); h = NLMSG_NEXT_LEFT(h, n)) {
                        EthtoolMessage m = {};
                        int r;

                        if (h->nlmsg_seq != seq)
                                continue;
                        if (h->nlmsg_type == NLMSG_DONE)
                                return 0;
                        ethtool_link_modes_init(&m.modes);
                        ethtool_link_state_init(&m.state);
                        r = ethtool_message_parse(h, h->nlmsg_len, &m);
                        if (h->nlmsg_type == NLMSG_ERROR)
                                return r < 0 ? r : -EPROTO;
                        /* One link's reply we cannot read leaves that link to its own request. */
                        if (r >= 0 && m.kind == want && m.ifindex > 0)
                                each(userdata, &m);
                }
        }
}

int link_ethtool_dump(uint8_t cmd, EthtoolMessageKind want, link_ethtool_each_t each, void *userdata) {
        Asker a = {};
        uint32_t seq;
        int r;

        r = asker_open(&a); /* -EOPNOTSUPP: a kernel without ethtool's family (before 5.6) */
        if (r >= 0)
                r = asker_send(&a, cmd, NLM_F_DUMP, 0, &seq);
        if (r >= 0)
                r = asker_read_dump(&a, seq, want, each, userdata);
        asker_close(&a);
        return r;
}
