/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <netinet/icmp6.h>
#include <linux/neighbour.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/neighbour.h>
#include <sys/epoll.h>

#include "config-peers.h"
#include "link.h"
#include "peer-discover.h"
#include "peer.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

#define PING_ATTEMPTS_MAX 5
#define PING_FIRST_RETRY_USEC (1 * USEC_PER_SEC)
#define PING_LINKS_MAX 64

typedef struct PingState {
        int ifindex;
        unsigned attempts;
        uint64_t next_at; /* CLOCK_MONOTONIC */
        bool seen;
} PingState;

struct PeerDiscovery {
        Links *links;
        Peers *peers;
        const PeersConfig *config;
        peer_discovery_changed_t changed;
        void *userdata;
        struct nl_sock *sock;
        struct nl_cache_mngr *cache_manager;
        struct nl_cache *neighbours;
        sd_event_source *io;
        PingState pings[PING_LINKS_MAX];
        size_t n_pings;
        bool resync;
};

static bool link_kind_wanted(const PeerDiscovery *d, const Link *l) {
        return strv_contains(d->config->discover_kinds, link_kind_to_string(l->kind));
}

/* The peer address a neighbour entry stands for, if it stands for one. */
static int neighbour_address(PeerDiscovery *d, struct rtnl_neigh *n, PeerAddress *ret) {
        struct nl_addr *dst = rtnl_neigh_get_dst(n);
        int state = rtnl_neigh_get_state(n);
        PeerAddress a = { .family = AF_INET6, .port = PEER_DEFAULT_PORT };
        Link *l;

        if (rtnl_neigh_get_family(n) != AF_INET6 || !dst || nl_addr_get_len(dst) != 16)
                return -EINVAL;
        /* Entries the kernel could not resolve, or made up (NOARP), are nobody. */
        if (state < 0 || (state & (NUD_FAILED | NUD_INCOMPLETE | NUD_NOARP | NUD_NONE)))
                return -EINVAL;
        memcpy(a.bytes, nl_addr_get_binary_addr(dst), 16);
        if (!peer_address_is_link_local(&a))
                return -EINVAL;
        l = link_get(d->links, rtnl_neigh_get_ifindex(n));
        if (!l || !link_kind_wanted(d, l) || !link_is_up(l) || !l->name || strlen(l->name) >= IF_NAMESIZE)
                return -EINVAL;
        snprintf(a.scope, sizeof(a.scope), "%s", l->name);
        /* The name must be writable as a zone; the parser decides, as for any address. */
        char text[PEER_ADDRESS_STRING_MAX];
        if (peer_address_parse(peer_address_format(&a, text), 0, ret, NULL) < 0)
                return -EINVAL;
        return l->ifindex;
}

static void on_neighbour_event(struct nl_cache *cache, struct nl_object *obj, int action, void *userdata) {
        PeerDiscovery *d = userdata;
        char text[PEER_ADDRESS_STRING_MAX];
        PeerAddress a;
        PeerTarget *t;
        bool usable;

        /* REACHABLE, STALE, DELAY, PROBE come and go with every conversation; a pass is needed only
         * when the set of peers moves. */
        usable = action != NL_ACT_DEL && neighbour_address(d, (struct rtnl_neigh *) obj, &a) > 0;
        if (action == NL_ACT_DEL && neighbour_address(d, (struct rtnl_neigh *) obj, &a) <= 0)
                return;
        t = peer_target_get(d->peers, peer_address_format(&a, text));
        if (usable != (t && (t->origins & PEER_ORIGIN_DISCOVERED)))
                d->changed(d->userdata);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        PeerDiscovery *d = userdata;
        int r = nl_cache_mngr_data_ready(d->cache_manager);

        if (r < 0) {
                /* An overrun lost events: re-dump at the next pass. */
                log_debug("Neighbour events lost (%s), re-reading the neighbour table.", nl_geterror(r));
                d->resync = true;
                d->changed(d->userdata);
        }
        return 0;
}

int peer_discovery_new(sd_event *event, Links *links, Peers *peers, const PeersConfig *config,
                       peer_discovery_changed_t changed, void *userdata, PeerDiscovery **ret) {
        PeerDiscovery *d;
        int r;

        d = new0(PeerDiscovery, 1);
        if (!d)
                return -ENOMEM;
        d->links = links;
        d->peers = peers;
        d->config = config;
        d->changed = changed;
        d->userdata = userdata;
        d->sock = nl_socket_alloc();
        if (!d->sock) {
                peer_discovery_free(d);
                return -ENOMEM;
        }
        r = nl_cache_mngr_alloc(d->sock, NETLINK_ROUTE, 0, &d->cache_manager);
        if (r >= 0)
                r = nl_cache_mngr_add(d->cache_manager, "route/neigh", on_neighbour_event, d, &d->neighbours);
        if (r < 0) {
                log_warning("Cannot watch the neighbour table: %s", nl_geterror(r));
                peer_discovery_free(d);
                return -EIO;
        }
        r = sd_event_add_io(event, &d->io, nl_cache_mngr_get_fd(d->cache_manager), EPOLLIN, on_io, d);
        if (r < 0) {
                peer_discovery_free(d);
                return r;
        }
        (void) sd_event_source_set_description(d->io, "neighbours");
        STRV_FOREACH(k, config->discover_kinds)
                log_info("Discovering peers on %s links.", *k);
        *ret = d;
        return 0;
}

PeerDiscovery *peer_discovery_free(PeerDiscovery *d) {
        if (!d)
                return NULL;
        sd_event_source_disable_unref(d->io);
        if (d->cache_manager)
                nl_cache_mngr_free(d->cache_manager);
        nl_socket_free(d->sock);
        return mfree(d);
}

/* One ICMPv6 echo request to all nodes on the link: whoever answers must resolve our address first,
 * and its neighbour solicitation puts it in our table. Replies are not read. */
static int ping_all_nodes(int ifindex) {
        struct icmp6_hdr echo = { .icmp6_type = ICMP6_ECHO_REQUEST, .icmp6_id = htons(0x4c50) };
        struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_scope_id = (uint32_t) ifindex };
        int hops = 1, loop = 0;
        _cleanup_(closep) int fd = -EBADF;

        /* An unprivileged ping socket where ping_group_range allows one, else a raw socket. */
        fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_ICMPV6);
        if (fd < 0)
                fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_ICMPV6);
        if (fd < 0)
                return -errno;
        (void) inet_pton(AF_INET6, "ff02::1", &to.sin6_addr);
        (void) setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex));
        (void) setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops));
        (void) setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &loop, sizeof(loop));
        if (sendto(fd, &echo, sizeof(echo), 0, (struct sockaddr *) &to, sizeof(to)) < 0)
                return -errno;
        return 0;
}

static PingState *ping_state(PeerDiscovery *d, int ifindex) {
        for (size_t i = 0; i < d->n_pings; i++)
                if (d->pings[i].ifindex == ifindex)
                        return &d->pings[i];
        if (d->n_pings >= PING_LINKS_MAX)
                return NULL;
        d->pings[d->n_pings] = (PingState) { .ifindex = ifindex };
        return &d->pings[d->n_pings++];
}

typedef struct Collect {
        PeerDiscovery *d;
        int found[PING_LINKS_MAX];
        size_t n_found;
} Collect;

static void collect_neighbour(struct nl_object *obj, void *userdata) {
        Collect *c = userdata;
        PeerTarget *t;
        PeerAddress a;
        int ifindex, r;

        ifindex = neighbour_address(c->d, (struct rtnl_neigh *) obj, &a);
        if (ifindex <= 0)
                return;
        r = peer_target_add(c->d->peers, &a, PEER_ORIGIN_DISCOVERED, &t);
        if (r < 0) {
                log_debug_errno(r, "Cannot add a discovered peer: %m");
                return;
        }
        t->seen = true;
        if (c->n_found < PING_LINKS_MAX)
                c->found[c->n_found++] = ifindex;
}

uint64_t peer_discovery_update(PeerDiscovery *d, uint64_t now) {
        Peers *peers = d->peers;
        Collect c = { .d = d };
        uint64_t wake = UINT64_MAX;
        PeerTarget *t;
        Link *l;
        int r;

        if (d->resync) {
                r = nl_cache_refill(d->sock, d->neighbours);
                if (r < 0)
                        log_debug("Cannot re-read the neighbour table: %s", nl_geterror(r));
                d->resync = false;
        }

        /* Mark and sweep: what the table holds now is all that is discovered. */
        TABLE_FOREACH(t, &peers->targets)
                t->seen = false;
        nl_cache_foreach(d->neighbours, collect_neighbour, &c);
        TABLE_FOREACH_SAFE(t, &peers->targets)
                if ((t->origins & PEER_ORIGIN_DISCOVERED) && !t->seen)
                        (void) peer_target_drop(peers, t, PEER_ORIGIN_DISCOVERED);

        for (size_t i = 0; i < d->n_pings; i++)
                d->pings[i].seen = false;
        TABLE_FOREACH(l, &d->links->table) {
                PingState *p;
                bool found = false;

                if (!link_kind_wanted(d, l) || !link_is_up(l))
                        continue;
                p = ping_state(d, l->ifindex);
                if (!p)
                        continue;
                p->seen = true;
                for (size_t i = 0; i < c.n_found; i++)
                        found = found || c.found[i] == l->ifindex;
                if (found) {
                        /* Should it go, ask again at once. */
                        p->attempts = 0;
                        p->next_at = 0;
                        continue;
                }
                if (p->attempts >= PING_ATTEMPTS_MAX)
                        continue;
                if (p->next_at <= now) {
                        r = ping_all_nodes(l->ifindex);
                        if (r < 0)
                                log_link_debug_errno(l, r, "Cannot ping all nodes: %m");
                        p->next_at = now + (PING_FIRST_RETRY_USEC << p->attempts);
                        p->attempts++;
                }
                wake = MIN(wake, p->next_at);
        }
        /* A link that went down or away starts over when it is back. */
        for (size_t i = 0; i < d->n_pings;)
                if (!d->pings[i].seen)
                        d->pings[i] = d->pings[--d->n_pings];
                else
                        i++;
        return wake;
}
