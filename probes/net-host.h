/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* net-host.h — what the TCP probe and the responder learn about their own end of a test: the interface
 * a connection runs over, its byte counters, the CPUs local to its device, and the CPU time spent */
#pragma once

#include <sched.h>
#include <sys/socket.h>

#include "shared/macros.h"

/* The interface a connection leaves through and what is known of it. */
typedef struct NetHost {
        int ifindex;          /* 0: unknown */
        char ifname[16];      /* IF_NAMESIZE */
        cpu_set_t cpus;       /* where the data threads run: the device's local CPUs that we may use */
        unsigned n_cpus;
        bool cpus_local;      /* from the device's local_cpulist; false: all CPUs we may use */
        bool peer_is_local;   /* the peer's address is one of this host's (its responder is ours) */
} NetHost;

/* An interface's byte counters (IFLA_STATS64), as the kernel counts them for every packet. */
typedef struct NetCounters {
        bool valid;
        uint64_t rx_bytes, tx_bytes;
        uint64_t rx_packets, tx_packets;
} NetCounters;

/**
 * net_host_route_ifindex() - the interface the kernel routes a destination through
 * @dst: the peer's address (AF_INET or AF_INET6)
 * @ret: receives the outgoing interface index
 * @ret_local: set when dst is an address of this host (a local route; may be NULL)
 *
 * Asks rtnetlink (RTM_GETROUTE), so the answer is that of the caller's network namespace.
 * Return: 0, -ENETUNREACH without a route, or -errno.
 */
int net_host_route_ifindex(const struct sockaddr *dst, int *ret, bool *ret_local);

/* The 64-bit counters of ifindex (RTM_GETLINK); -ENODEV when it is gone. */
int net_host_read_counters(int ifindex, NetCounters *ret);

/**
 * net_host_setup() - the interface, and the CPUs to run on, for a connection to peer
 * @peer: where the connection goes
 * @ifname: the interface the caller bound to, or NULL to ask the routing table
 * @sysfs_fd: the sysfs root for the device's local_cpulist
 * @allowed: the CPUs the caller may use, or NULL for the calling thread's affinity
 * @ret: the result; never fails: what is not known stays unknown (ifindex 0, all CPUs we may use)
 */
void net_host_setup(const struct sockaddr *peer, const char *ifname, int sysfs_fd, const cpu_set_t *allowed,
                    NetHost *ret);

/* Moves the calling thread onto h's CPUs; 0 or -errno. */
int net_host_pin_thread(const NetHost *h);

/* "0-3,8": h's CPUs, as the kernel writes CPU lists. */
char *net_host_format_cpus(const NetHost *h, char *buf, size_t size);

/* A memfd of size bytes of filler, for net_payload_send(); -errno when there is none. */
int net_payload_fd(size_t size);

/**
 * net_payload_send() - send a frame whose payload is filler, without copying the filler
 * @sock: a non-blocking stream socket
 * @payload_fd: net_payload_fd() of at least the payload's size
 * @header: the frame's header (PROTO_HEADER_SIZE bytes), sent first
 * @frame_size: header and payload
 * @sent: how much of the frame has left already
 * @ret: bytes sent by this call
 *
 * The header goes with send(MSG_MORE), the payload with sendfile() from the memfd's pages; sendfile()
 * raises SIGPIPE on a closed connection, so the caller ignores that signal.
 * Return: 1 when bytes left, 0 when the socket is full, -errno.
 */
int net_payload_send(int sock, int payload_fd, const uint8_t *header, size_t frame_size, size_t sent, size_t *ret);

/*
 * A node's probe and its responder never run tests at the same time: both take the node's measure
 * lock (flock() on a file linkprobed names, beside its state) for as long as they move data, so two
 * nodes never measure each other in both directions at once, and neither figure is halved by the
 * other. The responder that finds the lock taken answers "busy"; the probe waits for it.
 */
/* Opens (creating) the lock file; an fd or -errno. */
int net_lock_open(const char *path);
/* 1 when taken, 0 when another process holds it, -errno. */
int net_lock_try(int fd);
/* Waits until taken (polling, so that a deadline holds): 0, -ETIME at the deadline, -errno. */
int net_lock_wait(int fd, uint64_t deadline);
void net_lock_release(int fd);

/*
 * A receiver of DATA wakes only once this much of a payload is there (SO_RCVLOWAT), not for every
 * segment: fewer wake-ups and receive calls per byte, which on a shared CPU leaves it to the sender.
 * Never more than is still to come, or the end of the payload would not wake it at all.
 */
#define NET_RCVLOWAT_MAX (256U * 1024U)
/* Sets fd's SO_RCVLOWAT to want (at least 1) when *current (0: the default, 1) differs. */
void net_set_rcvlowat(int fd, uint32_t *current, uint32_t want);

/* tcpi_bytes_retrans of a TCP socket (payload sent again, Linux 4.19 on); UINT64_MAX when unknown. */
uint64_t net_host_retrans_bytes(int fd);
/* The bytes a TCP socket's peer acknowledged (sending) or that it received (Linux 4.1 on): the
 * receiver's progress, read by either end; UINT64_MAX when unknown. */
uint64_t net_host_tcp_bytes(int fd, bool sending);

/* User plus system CPU time of the whole process so far, in microseconds. */
uint64_t net_host_cpu_usec(void);

/*
 * Bytes the interface carried beyond a test that moved test_bytes through it in the counted direction
 * (the counters' deltas for it): the headers of every packet counted are allowed for, the payload the
 * sender's TCP sent again (retrans_bytes, UINT64_MAX when the sender did not say: then up to a tenth
 * of the test), and a little more for what a host always sends (ARP, neighbour discovery). 0 when the interface carried nothing
 * notable besides the test.
 */
uint64_t net_host_cross_bytes(uint64_t counted_bytes, uint64_t counted_packets, uint64_t test_bytes,
                              uint64_t retrans_bytes);
