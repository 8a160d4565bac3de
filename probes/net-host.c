/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/tcp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "net-host.h"
#include "proto.h"
#include "shared/socket-util.h"
#include "shared/time-util.h"
#include "sysfs/pci.h"
#include "sysfs/sysfs.h"

/* A reply to one request is a single message: a link with its attributes, or a route. */
#define NL_BUFFER 16384

/* Sends one request and reads its one reply into buf; -errno of an NLMSG_ERROR. */
static int rtnl_call(struct nlmsghdr *req, uint8_t *buf, size_t size, struct nlmsghdr **ret) {
        _cleanup_(closep) int fd = -EBADF;
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        struct timeval tv = { .tv_sec = 1 };

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0)
                return -errno;
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        req->nlmsg_flags |= NLM_F_REQUEST;
        req->nlmsg_seq = 1;
        if (sendto(fd, req, req->nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof(kernel)) < 0)
                return -errno;
        for (;;) {
                ssize_t n = recv(fd, buf, size, 0);
                if (n < 0)
                        return errno == EINTR ? -EAGAIN : -errno;
                for (struct nlmsghdr *h = (struct nlmsghdr *) (void *) buf; NLMSG_OK_LEFT(h, n); h = NLMSG_NEXT_LEFT(h, n)) {
                        if (h->nlmsg_seq != 1)
                                continue;
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);
                                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                                        return -EBADMSG;
                                return e->error < 0 ? e->error : -ENODATA;
                        }
                        *ret = h;
                        return 0;
                }
        }
}

int net_host_route_ifindex(const struct sockaddr *dst, int *ret, bool *ret_local) {
        struct {
                struct nlmsghdr h;
                struct rtmsg r;
                uint8_t attr[RTA_SPACE(16)];
        } req = {
                .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)), .nlmsg_type = RTM_GETROUTE },
        };
        _cleanup_(freep) uint8_t *buf = malloc(NL_BUFFER);
        const void *addr;
        size_t len;
        struct nlmsghdr *reply;
        int r;

        if (!buf)
                return -ENOMEM;
        if (dst->sa_family == AF_INET) {
                addr = &((const struct sockaddr_in *) (const void *) dst)->sin_addr;
                len = 4;
        } else if (dst->sa_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) (const void *) dst;
                /* A scoped address names its interface already. */
                if (in6->sin6_scope_id != 0) {
                        *ret = (int) in6->sin6_scope_id;
                        if (ret_local)
                                *ret_local = false;
                        return 0;
                }
                addr = &in6->sin6_addr;
                len = 16;
        } else
                return -EAFNOSUPPORT;

        req.r.rtm_family = dst->sa_family;
        req.r.rtm_dst_len = (unsigned char) (len * 8);
        struct rtattr *a = (struct rtattr *) (void *) ((uint8_t *) &req + NLMSG_ALIGN(req.h.nlmsg_len));
        a->rta_type = RTA_DST;
        a->rta_len = (unsigned short) RTA_LENGTH(len);
        memcpy(RTA_DATA(a), addr, len);
        req.h.nlmsg_len = NLMSG_ALIGN(req.h.nlmsg_len) + RTA_ALIGN(a->rta_len);

        r = rtnl_call(&req.h, buf, NL_BUFFER, &reply);
        if (r < 0)
                return r;
        if (reply->nlmsg_type != RTM_NEWROUTE || reply->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
                return -EBADMSG;
        struct rtmsg *rm = NLMSG_DATA(reply);
        int rlen = (int) RTM_PAYLOAD(reply);
        for (struct rtattr *ra = RTM_RTA(rm); RTA_OK(ra, rlen); ra = RTA_NEXT(ra, rlen))
                if (ra->rta_type == RTA_OIF && RTA_PAYLOAD(ra) >= sizeof(uint32_t)) {
                        uint32_t oif;
                        memcpy(&oif, RTA_DATA(ra), sizeof(oif));
                        if (oif == 0 || oif > INT32_MAX)
                                return -EBADMSG;
                        *ret = (int) oif;
                        if (ret_local)
                                *ret_local = rm->rtm_type == RTN_LOCAL;
                        return 0;
                }
        return -ENETUNREACH;
}

/* The link message of ifindex, with its name and counters filled in where given. */
static int read_link(int ifindex, char *ifname, size_t ifname_size, NetCounters *counters) {
        struct {
                struct nlmsghdr h;
                struct ifinfomsg i;
        } req = {
                .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)), .nlmsg_type = RTM_GETLINK },
                .i = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
        };
        _cleanup_(freep) uint8_t *buf = malloc(NL_BUFFER);
        struct nlmsghdr *reply;
        bool have_stats = false;
        int r;

        if (!buf)
                return -ENOMEM;
        if (ifindex <= 0)
                return -ENODEV;
        r = rtnl_call(&req.h, buf, NL_BUFFER, &reply);
        if (r < 0)
                return r == -ENODEV || r == -EINVAL ? -ENODEV : r;
        if (reply->nlmsg_type != RTM_NEWLINK || reply->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
                return -EBADMSG;
        struct ifinfomsg *ifi = NLMSG_DATA(reply);
        if (ifi->ifi_index != ifindex)
                return -EBADMSG;
        int len = (int) IFLA_PAYLOAD(reply);
        for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
                if (a->rta_type == IFLA_IFNAME && ifname) {
                        size_t n = strnlen(RTA_DATA(a), RTA_PAYLOAD(a));
                        if (n == 0 || n >= ifname_size)
                                return -EBADMSG;
                        memcpy(ifname, RTA_DATA(a), n);
                        ifname[n] = '\0';
                } else if (a->rta_type == IFLA_STATS64 && counters && RTA_PAYLOAD(a) >= sizeof(struct rtnl_link_stats64)) {
                        struct rtnl_link_stats64 st;
                        memcpy(&st, RTA_DATA(a), sizeof(st));
                        *counters = (NetCounters) {
                                .valid = true,
                                .rx_bytes = st.rx_bytes,
                                .tx_bytes = st.tx_bytes,
                                .rx_packets = st.rx_packets,
                                .tx_packets = st.tx_packets,
                        };
                        have_stats = true;
                }
        }
        return counters && !have_stats ? -ENODATA : 0;
}

int net_host_read_counters(int ifindex, NetCounters *ret) {
        NetCounters c = {};
        int r = read_link(ifindex, NULL, 0, &c);
        if (r < 0) {
                *ret = (NetCounters) {};
                return r;
        }
        *ret = c;
        return 0;
}

void net_host_setup(const struct sockaddr *peer, const char *ifname, int sysfs_fd, const cpu_set_t *allowed_cpus,
                    NetHost *ret) {
        NetHost h = {};
        cpu_set_t allowed;
        int r;

        CPU_ZERO(&allowed);
        if (allowed_cpus)
                allowed = *allowed_cpus;
        else if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
                CPU_SET(0, &allowed);

        /* The routing table says where the peer is, and whether it is this host; a bound interface
         * decides the way out. */
        int routed = 0;
        if (peer && net_host_route_ifindex(peer, &routed, &h.peer_is_local) < 0)
                routed = 0;
        h.ifindex = isempty(ifname) ? routed : (int) if_nametoindex(ifname);
        if (h.ifindex > 0 && read_link(h.ifindex, h.ifname, sizeof(h.ifname), NULL) < 0)
                h.ifindex = 0;

        /* Data moves fastest on the CPUs of the NIC's own NUMA node: the others cross the
         * interconnect for every buffer (Azure NDv4 measured 30 instead of 194 Gb/s). Virtual
         * interfaces (veth, loopback, bridges) have no device, and no CPUs closer than others. */
        h.cpus = allowed;
        if (h.ifindex > 0 && sysfs_fd >= 0) {
                char dir[64], *list = NULL;
                cpu_set_t local;
                snprintf(dir, sizeof(dir), "class/net/%s/device", h.ifname);
                r = sysfs_read_string(sysfs_fd, dir, "local_cpulist", &list);
                if (r >= 0 && pci_parse_cpulist_set(list, &local) >= 0) {
                        CPU_AND(&local, &local, &allowed);
                        if (CPU_COUNT(&local) > 0) {
                                h.cpus = local;
                                h.cpus_local = true;
                        }
                }
                free(list);
        }
        h.n_cpus = (unsigned) MAX(CPU_COUNT(&h.cpus), 1);
        *ret = h;
}

int net_host_pin_thread(const NetHost *h) {
        return -pthread_setaffinity_np(pthread_self(), sizeof(h->cpus), &h->cpus);
}

char *net_host_format_cpus(const NetHost *h, char *buf, size_t size) {
        size_t used = 0;

        buf[0] = '\0';
        for (int i = 0; i < CPU_SETSIZE && used < size; i++) {
                if (!CPU_ISSET(i, &h->cpus))
                        continue;
                int j = i;
                while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &h->cpus))
                        j++;
                int n = j > i ? snprintf(buf + used, size - used, "%s%d-%d", used ? "," : "", i, j)
                              : snprintf(buf + used, size - used, "%s%d", used ? "," : "", i);
                if (n < 0 || (size_t) n >= size - used) {
                        buf[used] = '\0';
                        break;
                }
                used += (size_t) n;
                i = j;
        }
        return buf;
}

int net_payload_fd(size_t size) {
        _cleanup_(closep) int fd = -EBADF;
        _cleanup_(freep) uint8_t *filler = malloc(size);

        if (!filler)
                return -ENOMEM;
        fd = memfd_create("linkprobe-payload", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* Real pages, not holes: what a disk-less sender would send. */
        memset(filler, 0x5a, size);
        for (size_t done = 0; done < size;) {
                ssize_t k = pwrite(fd, filler + done, size - done, (off_t) done);
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                done += (size_t) k;
        }
        return TAKE_FD(fd);
}

int net_payload_send(int sock, int payload_fd, const uint8_t *header, size_t frame_size, size_t sent, size_t *ret) {
        ssize_t k;

        if (sent < PROTO_HEADER_SIZE) {
                /* MSG_MORE: the header waits for the payload instead of leaving in a packet of its own;
                 * a frame without payload must leave at once (held, it would wait up to 200 ms). */
                k = send(sock, header + sent, PROTO_HEADER_SIZE - sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT | (frame_size > PROTO_HEADER_SIZE ? MSG_MORE : 0));
        } else {
                off_t offset = 0;
                k = sendfile(sock, payload_fd, &offset, frame_size - sent);
        }
        if (k < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        *ret = (size_t) k;
        return 1;
}

int net_lock_open(const char *path) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
        return fd < 0 ? -errno : fd;
}

int net_lock_try(int fd) {
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? 0 : -errno;
        return 1;
}

/* A test of the responder ends within its granted time; a few milliseconds late here cost nothing. */
#define LOCK_POLL_USEC (10 * USEC_PER_MSEC)

int net_lock_wait(int fd, uint64_t deadline) {
        for (;;) {
                int r = net_lock_try(fd);
                if (r != 0)
                        return r < 0 ? r : 0;
                if (now_usec(CLOCK_MONOTONIC) + LOCK_POLL_USEC >= deadline)
                        return -ETIME;
                usleep(LOCK_POLL_USEC);
        }
}

void net_lock_release(int fd) {
        if (fd >= 0)
                (void) flock(fd, LOCK_UN);
}

void net_set_rcvlowat(int fd, uint32_t *current, uint32_t want) {
        int v = (int) MAX(want, 1U);

        if ((uint32_t) v == MAX(*current, 1U))
                return;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)) >= 0)
                *current = (uint32_t) v;
}

/* A 64-bit field of a TCP socket's tcp_info; UINT64_MAX when the socket or the kernel has none. */
static uint64_t tcp_info_u64(int fd, size_t offset) {
        struct tcp_info ti = {};
        socklen_t len = sizeof(ti);
        uint64_t v;

        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 || len < offset + sizeof(v))
                return UINT64_MAX;
        memcpy(&v, (const uint8_t *) &ti + offset, sizeof(v));
        return v;
}

uint64_t net_host_retrans_bytes(int fd) {
        return tcp_info_u64(fd, offsetof(struct tcp_info, tcpi_bytes_retrans));
}

uint64_t net_host_tcp_bytes(int fd, bool sending) {
        return tcp_info_u64(fd, sending ? offsetof(struct tcp_info, tcpi_bytes_acked)
                                        : offsetof(struct tcp_info, tcpi_bytes_received));
}

uint64_t net_host_cpu_usec(void) {
        struct rusage ru;

        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return 0;
        return (uint64_t) ru.ru_utime.tv_sec * 1000000 + (uint64_t) ru.ru_utime.tv_usec +
               (uint64_t) ru.ru_stime.tv_sec * 1000000 + (uint64_t) ru.ru_stime.tv_usec;
}

/* Per packet the counters may hold an Ethernet, IPv6 and TCP header with timestamps: 14 + 40 + 32.
 * With segmentation offload a packet is a whole super-segment, counted with one set of headers, so
 * packets times headers is an upper bound either way. */
#define HEADER_BYTES_PER_PACKET 86
/* What a host sends anyway (ARP, neighbour discovery, a stray DNS query) is not cross traffic. */
#define CROSS_SLACK_BYTES (1024 * 1024)
#define CROSS_SLACK_SHARE 50 /* 1/50: 2 % of the test */

/* Without the sender's word on retransmissions, a loaded or lossy path may repeat this much. */
#define RETRANS_UNKNOWN_SHARE 10 /* 1/10 */

uint64_t net_host_cross_bytes(uint64_t counted_bytes, uint64_t counted_packets, uint64_t test_bytes,
                              uint64_t retrans_bytes) {
        uint64_t expected = test_bytes + counted_packets * HEADER_BYTES_PER_PACKET +
                            (retrans_bytes != UINT64_MAX ? retrans_bytes : test_bytes / RETRANS_UNKNOWN_SHARE);

        if (counted_bytes <= expected)
                return 0;
        uint64_t extra = counted_bytes - expected;
        if (extra <= MAX((uint64_t) CROSS_SLACK_BYTES, test_bytes / CROSS_SLACK_SHARE))
                return 0;
        return extra;
}
