/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "link.h"
#include "manager.h"
#include "netlink.h"
#include "shared/log.h"
#include "shared/socket-util.h"

struct Netlink {
        Manager *manager;
        struct nl_sock *event_sock;
        struct nl_sock *sync_sock;
        struct nl_cache_mngr *cache_manager;
        struct nl_cache *links;
        struct nl_cache *addresses;
        sd_event_source *io;
        uint64_t n_overruns;
};

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
 * port leaving is an RTM_DELLINK of that family, not a deletion). libnl would file those under the
 * same key as the bridge device itself, whose family it rewrites to AF_BRIDGE from its kind, so
 * they are dropped before libnl sees them; only dumps and events of family AF_UNSPEC describe
 * interfaces. */
static int filter_message(struct nl_msg *msg, void *userdata) {
        struct nlmsghdr *h = nlmsg_hdr(msg);

        if ((h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK) &&
            h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
                const struct ifinfomsg *ifi = nlmsg_data(h);
                if (ifi->ifi_family != AF_UNSPEC)
                        return NL_SKIP;
        }
        return NL_OK;
}

static void on_link_event(struct nl_cache *cache, struct nl_object *obj, int action, void *userdata) {
        Netlink *nl = userdata;
        (void) link_process_netlink(nl->manager, (struct rtnl_link *) obj, action == NL_ACT_DEL);
}

static void on_address_event(struct nl_cache *cache, struct nl_object *obj, int action, void *userdata) {
        Netlink *nl = userdata;
        (void) link_process_address(nl->manager, (struct rtnl_addr *) obj, action == NL_ACT_DEL);
}

static void enumerate_link(struct nl_object *obj, void *userdata) {
        Netlink *nl = userdata;
        (void) link_process_netlink(nl->manager, (struct rtnl_link *) obj, false);
}

static void enumerate_address(struct nl_object *obj, void *userdata) {
        Netlink *nl = userdata;
        (void) link_sync_address(nl->manager, (struct rtnl_addr *) obj);
}

int netlink_enumerate(Netlink *nl) {
        Manager *m = nl->manager;

        links_mark(m);
        nl_cache_foreach(nl->links, enumerate_link, nl);
        links_sweep(m);
        nl_cache_foreach(nl->addresses, enumerate_address, nl);
        links_sweep_addresses(m);
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

        /* The sync socket gives libnl's caches the kernel's current truth; our own mark and sweep
         * then publishes exactly the differences, whatever libnl's object diff considers equal. */
        r = nl_cache_resync(nl->sync_sock, nl->links, NULL, NULL);
        if (r >= 0)
                r = nl_cache_resync(nl->sync_sock, nl->addresses, NULL, NULL);
        if (r < 0) {
                r = nl_to_errno(r);
                manager_set_degraded(nl->manager, "netlink-resync-failed", true);
                return log_error_errno(r, "Failed to re-dump links and addresses: %m");
        }
        manager_set_degraded(nl->manager, "netlink-resync-failed", false);
        return netlink_enumerate(nl);
}

static int on_netlink_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Netlink *nl = userdata;
        int r;

        r = nl_cache_mngr_data_ready(nl->cache_manager);
        if (r >= 0)
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

int netlink_new(Manager *m, int event_fd, Netlink **ret) {
        _cleanup_(netlink_freep) Netlink *nl = NULL;
        uint64_t rcvbuf;
        int r, fd;

        nl = new0(Netlink, 1);
        if (!nl)
                return log_oom();
        nl->manager = m;

        nl->event_sock = nl_socket_alloc();
        nl->sync_sock = nl_socket_alloc();
        if (!nl->event_sock || !nl->sync_sock)
                return log_oom();

        r = nl_socket_modify_cb(nl->event_sock, NL_CB_MSG_IN, NL_CB_CUSTOM, filter_message, NULL);
        if (r < 0)
                return log_error_errno(nl_to_errno(r), "Failed to set up netlink filtering: %s", nl_geterror(r));

        r = nl_connect(nl->sync_sock, NETLINK_ROUTE);
        if (r < 0)
                return log_error_errno(nl_to_errno(r), "Failed to open a netlink socket: %s", nl_geterror(r));

        r = nl_cache_mngr_alloc(nl->event_sock, NETLINK_ROUTE, 0, &nl->cache_manager);
        if (r < 0)
                return log_error_errno(nl_to_errno(r), "Failed to set up the netlink cache manager: %s",
                                       nl_geterror(r));
        fd = nl_cache_mngr_get_fd(nl->cache_manager);

        /* libnl insists on creating its own socket; put systemd's in its place. Group memberships are
         * added per cache below, on whichever socket sits behind the descriptor. */
        if (event_fd >= 0) {
                if (dup3(event_fd, fd, O_CLOEXEC) < 0)
                        return log_error_errno(errno, "Failed to adopt the netlink socket from systemd: %m");
                safe_close(event_fd);
                log_debug("Using the netlink socket passed by systemd.");
        } else {
                rcvbuf = m->options.netlink_rcvbuf ?: m->config.netlink_rcvbuf;
                r = socket_set_rcvbuf(fd, rcvbuf);
                if (r < 0)
                        log_warning_errno(r, "Failed to set the netlink receive buffer: %m");
                else if ((uint64_t) r < rcvbuf)
                        log_debug("Netlink receive buffer is %d bytes (asked for %" PRIu64 "; without "
                                  "CAP_NET_ADMIN net.core.rmem_max caps it).", r, rcvbuf);
        }

        r = nl_cache_mngr_add(nl->cache_manager, "route/link", on_link_event, nl, &nl->links);
        if (r >= 0)
                r = nl_cache_mngr_add(nl->cache_manager, "route/addr", on_address_event, nl, &nl->addresses);
        if (r < 0)
                return log_error_errno(nl_to_errno(r), "Failed to dump links and addresses: %s", nl_geterror(r));

        r = sd_event_add_io(m->event, &nl->io, fd, EPOLLIN, on_netlink_io, nl);
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
        /* The manager frees its caches; the sockets we allocated are ours. */
        if (nl->cache_manager)
                nl_cache_mngr_free(nl->cache_manager);
        nl_socket_free(nl->event_sock);
        nl_socket_free(nl->sync_sock);
        return mfree(nl);
}

uint64_t netlink_overruns(const Netlink *nl) {
        return nl ? nl->n_overruns : 0;
}
