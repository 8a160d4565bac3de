/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/rtnl.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "link.h"
#include "netlink.h"
#include "status.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/socket-util.h"

/* libnl parses; the state lives in our link table alone. libnl's cache manager would keep a second
 * copy of every link and address (about 1.9 KiB per veth, most of the daemon's heap at 2000 links)
 * and search its address cache linearly on every event, for diffs our own tables already make. */
struct Netlink {
        Links *links;
        DaemonStatus *status;
        sd_event *event;
        struct nl_sock *event_sock;  /* subscribed to link and address events, non-blocking */
        struct nl_cb *event_cb;      /* event_sock's callbacks, our reference */
        struct nl_sock *sync_sock;   /* dumps, blocking */
        sd_event_source *io;
        struct nl_cb *stats_cb;      /* the watch's dumps of statistics on sync_sock */
        bool stats_by_getlink;       /* the kernel has no RTM_GETSTATS (before 4.7) */
        uint64_t n_overruns;
        bool dumping_addresses;      /* a dump's addresses are collected, then swept as a whole */
        sd_event_source *resync_timer; /* a full dump again, after one the kernel kept interrupting */
        uint64_t resync_delay;         /* the next wait for it; doubles while dumps stay interrupted */
        uint64_t n_interrupted;        /* full dumps accepted as interrupted */
        /* For the tests: this many link and address dumps are taken as interrupted, as the kernel
         * interrupts them only by luck ($LINKPROBE_TEST_INTERRUPT_DUMPS). */
        uint32_t test_interruptions;
};

/* Recv calls per wake-up before the loop gets a turn (the bus flush, other sources); the socket is
 * level-triggered, so the rest is read on the next iteration. */
#define NETLINK_RECV_BUDGET 64

/* The kernel's largest dump datagram (netlink_dump() caps an skb at 32 KiB). */
#define NETLINK_DUMP_BUF_SIZE (32 * 1024)

/* Interrupted dumps are retried; the kernel interrupts one only when the table changed under it
 * (NLM_F_DUMP_INTR: an entry may have been skipped or seen twice). Under a steady stream of changes
 * (2000 links coming up, each with IPv6 duplicate address detection) every try may be interrupted: the
 * last try's result then stands, nothing is removed on its word, the changes that interrupted it
 * arrive as events anyway, and a fresh dump follows after a pause that doubles while it stays
 * interrupted. A start never fails for it. */
#define NETLINK_DUMP_ATTEMPTS 5
#define NETLINK_RESYNC_DELAY_USEC (100 * USEC_PER_MSEC)
#define NETLINK_RESYNC_DELAY_MAX_USEC (10 * USEC_PER_SEC)

/* libnl's errors are its own small positive numbers; translate once, here, at the edge. */
static int nl_to_errno(int nlerr) {
        switch (abs(nlerr)) {
        case 0:
                return 0;
        case NLE_NOMEM:
                return -ENOMEM;
        case NLE_AGAIN:
                return -EAGAIN;
        case NLE_PERM:
                return -EPERM;
        case NLE_NOACCESS:
                return -EACCES;
        case NLE_INVAL:
                return -EINVAL;
        case NLE_RANGE:
                return -ERANGE;
        case NLE_NODEV:
                return -ENODEV;
        case NLE_BAD_SOCK:
                return -ENOTSOCK;
        case NLE_OPNOTSUPP:
                return -EOPNOTSUPP;
        case NLE_AF_NOSUPPORT:
        case NLE_PROTO_MISMATCH:
                return -EPROTONOSUPPORT;
        case NLE_DUMP_INTR:
                return -EINTR;
        }
        return -EIO;
}

/* Bridges send a second kind of RTM_NEWLINK/RTM_DELLINK, of family AF_BRIDGE, about port state (a
 * port leaving is an RTM_DELLINK of that family, not a deletion of the port). Only messages of
 * family AF_UNSPEC describe interfaces. */
static bool message_is_interface(const struct nlmsghdr *h) {
        if (h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK)
                return true;
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
                return false;
        return ((const struct ifinfomsg *) NLMSG_DATA(h))->ifi_family == AF_UNSPEC;
}

static void on_object(struct nl_object *obj, void *userdata) {
        Netlink *nl = userdata;

        switch (nl_object_get_msgtype(obj)) {
        case RTM_NEWLINK:
        case RTM_DELLINK:
                (void) link_process_netlink(nl->links, (struct rtnl_link *) obj,
                                            nl_object_get_msgtype(obj) == RTM_DELLINK);
                break;
        case RTM_NEWADDR:
                if (nl->dumping_addresses)
                        (void) link_sync_address(nl->links, (struct rtnl_addr *) obj);
                else
                        (void) link_process_address(nl->links, (struct rtnl_addr *) obj, false);
                break;
        case RTM_DELADDR:
                (void) link_process_address(nl->links, (struct rtnl_addr *) obj, true);
                break;
        }
}

static int on_message(struct nl_msg *msg, void *userdata) {
        Netlink *nl = userdata;
        int r;

        if (!message_is_interface(nlmsg_hdr(msg)))
                return NL_SKIP;
        /* The parser hands us one object and drops it after the callback. A message libnl cannot
         * parse is one event lost, never the rest of the datagram. */
        r = nl_msg_parse(msg, on_object, nl);
        if (r < 0)
                log_debug("Ignoring netlink message of type %u: %s", nlmsg_hdr(msg)->nlmsg_type, nl_geterror(r));
        return NL_OK;
}

/* Sends one dump request (a bare rtgenmsg, or payload when given) and feeds every answer through
 * on_message(), or cb's handlers. restart, if given, is called before each try (a retried dump collects
 * afresh). Answers -EINTR when every try was interrupted; each was read to its end (libnl reads on after
 * NLM_F_DUMP_INTR), so what the last one said has been fed. */
static int netlink_dump_with(Netlink *nl, int type, const void *payload, size_t size, struct nl_cb *cb,
                             void (*restart)(Links *links)) {
        int r;

        for (int attempt = 1;; attempt++) {
                if (restart)
                        restart(nl->links);
                if (payload)
                        r = nl_send_simple(nl->sync_sock, type, NLM_F_DUMP, (void *) payload, size);
                else
                        r = nl_rtgen_request(nl->sync_sock, type, AF_UNSPEC, NLM_F_DUMP);
                if (r >= 0)
                        r = cb ? nl_recvmsgs(nl->sync_sock, cb) : nl_recvmsgs_default(nl->sync_sock);
                if (r >= 0 && restart && nl->test_interruptions > 0) {
                        nl->test_interruptions--;
                        r = -NLE_DUMP_INTR;
                }
                if (r >= 0)
                        return 0;
                if (abs(r) != NLE_DUMP_INTR || attempt == NETLINK_DUMP_ATTEMPTS)
                        return nl_to_errno(r);
                log_debug("Netlink dump %d interrupted by a change, again (%d).", type, attempt);
        }
}

/* ---- the watch's statistics ---- */

typedef struct StatsDump {
        Links *links;
        uint64_t now;
        size_t n;
} StatsDump;

static uint64_t stat_or_unknown(const struct nlattr *a, size_t offset) {
        uint64_t v;
        if (!a || offset + sizeof(v) > (size_t) nla_len(a))
                return COUNTER_UNKNOWN;
        memcpy(&v, (const uint8_t *) nla_data(a) + offset, sizeof(v));
        return v;
}

/*
 * One link's statistics: an RTM_NEWSTATS (IFLA_STATS_LINK_64) or, on kernels before 4.7, an RTM_NEWLINK
 * (IFLA_STATS64), read straight from the attributes. RTM_GETSTATS is the cheap dump: a tenth of the
 * kernel's work of RTM_GETLINK, which describes everything about every link, and a sixth of the bytes.
 * libnl's object parser is not used either: it would build a whole rtnl_link per link per interval.
 */
bool netlink_parse_stats(struct nlmsghdr *h, LinkStats *ret) {
        struct nlattr *tb[MAX(IFLA_MAX, IFLA_STATS_MAX) + 1];
        const struct nlattr *st;
        LinkStats s;

        if (h->nlmsg_type == RTM_NEWSTATS) {
                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct if_stats_msg)) ||
                    nlmsg_parse(h, sizeof(struct if_stats_msg), tb, IFLA_STATS_MAX, NULL) < 0)
                        return false;
                s = (LinkStats) { .ifindex = (int) ((const struct if_stats_msg *) nlmsg_data(h))->ifindex };
                st = tb[IFLA_STATS_LINK_64];
        } else if (h->nlmsg_type == RTM_NEWLINK && message_is_interface(h)) {
                if (nlmsg_parse(h, sizeof(struct ifinfomsg), tb, IFLA_MAX, NULL) < 0)
                        return false;
                s = (LinkStats) { .ifindex = ((const struct ifinfomsg *) nlmsg_data(h))->ifi_index };
                st = tb[IFLA_STATS64];
        } else
                return false;
        s.rx_bytes = stat_or_unknown(st, offsetof(struct rtnl_link_stats64, rx_bytes));
        s.tx_bytes = stat_or_unknown(st, offsetof(struct rtnl_link_stats64, tx_bytes));
        s.rx_errors = stat_or_unknown(st, offsetof(struct rtnl_link_stats64, rx_errors));
        s.tx_errors = stat_or_unknown(st, offsetof(struct rtnl_link_stats64, tx_errors));
        s.rx_crc_errors = stat_or_unknown(st, offsetof(struct rtnl_link_stats64, rx_crc_errors));
        s.rx_dropped = stat_or_unknown(st, offsetof(struct rtnl_link_stats64, rx_dropped));
        *ret = s;
        return true;
}

static int on_stats_message(struct nl_msg *msg, void *userdata) {
        StatsDump *dump = userdata;
        LinkStats s;

        if (!netlink_parse_stats(nlmsg_hdr(msg), &s))
                return NL_SKIP;
        link_record_stats(dump->links, &s, dump->now, dump->now);
        dump->n++;
        return NL_OK;
}

int netlink_sample_stats(Netlink *nl, uint64_t now, size_t *ret_n) {
        StatsDump dump = { .links = nl->links, .now = now };
        struct if_stats_msg request = {
                .family = AF_UNSPEC,
                .filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64),
        };
        int r;

        if (!nl->stats_cb) {
                nl->stats_cb = nl_cb_alloc(NL_CB_DEFAULT);
                if (!nl->stats_cb)
                        return -ENOMEM;
        }
        r = nl_cb_set(nl->stats_cb, NL_CB_VALID, NL_CB_CUSTOM, on_stats_message, &dump);
        if (r < 0)
                return nl_to_errno(r);
        if (!nl->stats_by_getlink) {
                r = netlink_dump_with(nl, RTM_GETSTATS, &request, sizeof(request), nl->stats_cb, NULL);
                if (IN_SET(r, -EOPNOTSUPP, -EINVAL, -EPROTONOSUPPORT) && dump.n == 0) {
                        log_debug_errno(r, "RTM_GETSTATS is not supported (%m), dumping links for their statistics.");
                        nl->stats_by_getlink = true;
                }
        }
        if (nl->stats_by_getlink)
                r = netlink_dump_with(nl, RTM_GETLINK, NULL, 0, nl->stats_cb, NULL);
        /* Every reading of an interrupted dump is a true one (link_record_stats() takes one per link and
         * sample); a link it skipped is read at the next sample. */
        if (r == -EINTR)
                r = 0;
        if (ret_n)
                *ret_n = dump.n;
        return r;
}

static int on_resync_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) netlink_resync(userdata);
        return 0;
}

/* After a full dump the kernel kept interrupting: another one, later. */
static void netlink_schedule_resync(Netlink *nl) {
        int r;

        nl->n_interrupted++;
        nl->resync_delay = nl->resync_delay == 0 ? NETLINK_RESYNC_DELAY_USEC
                                                 : MIN(nl->resync_delay * 2, NETLINK_RESYNC_DELAY_MAX_USEC);
        log_info("Netlink dumps were interrupted by changes %d times in a row; their result stands and the links "
                 "and addresses are read again in %" PRIu64 " ms.", NETLINK_DUMP_ATTEMPTS,
                 nl->resync_delay / USEC_PER_MSEC);
        if (nl->resync_timer)
                r = sd_event_source_set_time_relative(nl->resync_timer, nl->resync_delay);
        else {
                r = sd_event_add_time_relative(nl->event, &nl->resync_timer, CLOCK_MONOTONIC, nl->resync_delay, 0,
                                               on_resync_timer, nl);
                if (r >= 0)
                        (void) sd_event_source_set_description(nl->resync_timer, "netlink-resync");
        }
        if (r >= 0)
                r = sd_event_source_set_enabled(nl->resync_timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Failed to schedule the netlink resync, links stay as the interrupted dump "
                                     "said until the next event: %m");
}

int netlink_enumerate(Netlink *nl) {
        /* Without the statistics (RTEXT_FILTER_SKIP_STATS, Linux 4.20; ignored before): nothing here
         * reads them (the watch asks RTM_GETSTATS), and they are a third of a veth's message, IPv6's
         * counters included, for the kernel to gather and libnl to parse, at every start and resync. */
        struct {
                struct ifinfomsg ifi;
                struct nlattr ext_mask_header;
                uint32_t ext_mask;
        } link_request = {
                .ifi.ifi_family = AF_UNSPEC,
                .ext_mask_header = { .nla_len = NLA_HDRLEN + sizeof(uint32_t), .nla_type = IFLA_EXT_MASK },
                .ext_mask = RTEXT_FILTER_SKIP_STATS,
        };
        Links *links = nl->links;
        bool interrupted;
        int r;

        /* Mark, apply every dumped object, sweep what was not seen: the table ends equal to the
         * kernel's, and only the differences are announced. */
        r = netlink_dump_with(nl, RTM_GETLINK, &link_request, sizeof(link_request), NULL, links_mark);
        if (r < 0 && r != -EINTR)
                return log_error_errno(r, "Failed to dump links: %m");
        interrupted = r == -EINTR;
        if (!interrupted)
                links_sweep(links);

        nl->dumping_addresses = true;
        r = netlink_dump_with(nl, RTM_GETADDR, NULL, 0, NULL, links_mark_addresses);
        nl->dumping_addresses = false;
        if (r < 0 && r != -EINTR)
                return log_error_errno(r, "Failed to dump addresses: %m");
        interrupted |= r == -EINTR;
        links_sweep_addresses(links, r >= 0);
        links->enumerated = true;

        if (interrupted)
                netlink_schedule_resync(nl);
        else {
                nl->resync_delay = 0;
                (void) sd_event_source_set_enabled(nl->resync_timer, SD_EVENT_OFF);
        }
        /* The pages a dump of thousands of links freed go back with the heap keeper's trim, 10 s
         * after this work (heap.c), not here on the way to READY=1. */
        return 0;
}

/* Discards what is queued on the event socket. After an overrun the queue holds messages from
 * before the gap; applying them after a fresh dump would move state backwards with nothing left to
 * move it forward again. Bounded, so a storm cannot keep us here. */
static void netlink_drain(Netlink *nl) {
        int fd = nl_socket_get_fd(nl->event_sock);
        int rcvbuf = 0;
        socklen_t len = sizeof(rcvbuf);
        char buf[32768];
        size_t total = 0, limit;

        (void) getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);
        limit = (size_t) MAX(rcvbuf, 65536) * 4;

        while (total < limit) {
                ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
                if (k < 0) {
                        if (errno == EINTR || errno == ENOBUFS)
                                continue;
                        break;
                }
                total += (size_t) k;
        }
}

int netlink_resync(Netlink *nl) {
        int r;

        netlink_drain(nl);
        r = netlink_enumerate(nl);
        daemon_status_set_degraded(nl->status, "netlink-resync-failed", r < 0);
        return r;
}

static int on_netlink_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Netlink *nl = userdata;
        int r = 0;

        /* nl_recvmsgs_report() answers the number of messages of one datagram, and -NLE_AGAIN
         * once the socket is empty. */
        for (unsigned i = 0; i < NETLINK_RECV_BUDGET; i++) {
                r = nl_recvmsgs_report(nl->event_sock, nl->event_cb);
                if (r <= 0)
                        break;
        }
        if (r >= 0 || abs(r) == NLE_AGAIN)
                return 0;

        /* ENOBUFS arrives as -NLE_NOMEM; any other error may also have cost us messages. Either way
         * the only safe answer is a fresh dump. */
        if (abs(r) == NLE_NOMEM) {
                nl->n_overruns++;
                log_info("Netlink receive buffer overrun (%" PRIu64 " so far), re-reading links and addresses.",
                         nl->n_overruns);
        } else
                log_warning_errno(nl_to_errno(r), "Failed to process netlink messages (%s), re-reading.",
                                  nl_geterror(r));
        (void) netlink_resync(nl);
        return 0;
}

static int netlink_socket_new(Netlink *nl, struct nl_sock **ret) {
        struct nl_sock *sock;
        int r;

        sock = nl_socket_alloc();
        if (!sock)
                return -ENOMEM;
        r = nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, on_message, nl);
        if (r >= 0)
                r = nl_connect(sock, NETLINK_ROUTE);
        if (r < 0) {
                nl_socket_free(sock);
                return nl_to_errno(r);
        }
        *ret = sock;
        return 0;
}

int netlink_new(sd_event *event, Links *links, DaemonStatus *status, int event_fd, uint64_t rcvbuf,
                Netlink **ret) {
        _cleanup_(netlink_freep) Netlink *nl = NULL;
        int r, fd;

        nl = new0(Netlink, 1);
        if (!nl)
                return log_oom();
        nl->links = links;
        nl->status = status;
        nl->event = event;
        const char *e = secure_getenv("LINKPROBE_TEST_INTERRUPT_DUMPS");
        if (e && parse_u32(e, &nl->test_interruptions) < 0)
                log_warning("Ignoring LINKPROBE_TEST_INTERRUPT_DUMPS=%s: not a number.", e);

        r = netlink_socket_new(nl, &nl->sync_sock);
        if (r >= 0)
                r = netlink_socket_new(nl, &nl->event_sock);
        if (r < 0)
                return log_error_errno(r, "Failed to open a netlink socket: %m");
        /* Dumps are read 32 KiB at a time, one recvmsg() each: the kernel fills a dump's datagrams up to
         * the largest buffer its reader offered, and libnl's default (a page, peeked first to size it)
         * made the first dumps at 2001 links some 1400 recvmsg() of 4 KiB. */
        nl_socket_disable_msg_peek(nl->sync_sock);
        r = nl_socket_set_msg_buf_size(nl->sync_sock, NETLINK_DUMP_BUF_SIZE);
        if (r < 0)
                return log_error_errno(nl_to_errno(r), "Failed to size the netlink dump buffer: %s", nl_geterror(r));
        nl->event_cb = nl_socket_get_cb(nl->event_sock);
        /* Events are not answers to anything we sent. */
        nl_socket_disable_seq_check(nl->event_sock);
        fd = nl_socket_get_fd(nl->event_sock);

        /* Put systemd's socket in the place of ours: group memberships are added below, on whichever
         * socket sits behind the descriptor. */
        if (event_fd >= 0) {
                if (dup3(event_fd, fd, O_CLOEXEC) < 0)
                        return log_error_errno(errno, "Failed to adopt the netlink socket from systemd: %m");
                safe_close(event_fd);
                log_debug("Using the netlink socket passed by systemd.");
        } else {
                r = socket_set_rcvbuf(fd, rcvbuf);
                if (r < 0)
                        log_warning_errno(r, "Failed to set the netlink receive buffer: %m");
                else if ((uint64_t) r < rcvbuf)
                        log_debug("Netlink receive buffer is %d bytes (asked for %" PRIu64 "; without "
                                  "CAP_NET_ADMIN net.core.rmem_max caps it).", r, rcvbuf);
        }

        /* Subscribed before the first dump (netlink_enumerate()), so nothing falls between them. */
        r = nl_socket_add_memberships(nl->event_sock, RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
                                      RTNLGRP_NONE);
        if (r >= 0)
                r = nl_socket_set_nonblocking(nl->event_sock);
        if (r < 0)
                return log_error_errno(nl_to_errno(r), "Failed to subscribe to link and address events: %s",
                                       nl_geterror(r));

        r = sd_event_add_io(event, &nl->io, fd, EPOLLIN, on_netlink_io, nl);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the netlink socket: %m");
        (void) sd_event_source_set_description(nl->io, "netlink");

        *ret = TAKE_PTR(nl);
        return 0;
}

Netlink *netlink_free(Netlink *nl) {
        if (!nl)
                return NULL;
        sd_event_source_disable_unref(nl->io);
        sd_event_source_disable_unref(nl->resync_timer);
        if (nl->event_cb)
                nl_cb_put(nl->event_cb);
        if (nl->stats_cb)
                nl_cb_put(nl->stats_cb);
        nl_socket_free(nl->event_sock);
        nl_socket_free(nl->sync_sock);
        return mfree(nl);
}

uint64_t netlink_overruns(const Netlink *nl) {
        return nl ? nl->n_overruns : 0;
}
