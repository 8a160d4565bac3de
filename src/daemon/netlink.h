/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink.h — links and addresses from rtnetlink (parsed by libnl, kept only in our link table), with
 * overrun resync */
#pragma once

#include <systemd/sd-event.h>

#include "shared/macros.h"

typedef struct DaemonStatus DaemonStatus;
typedef struct Links Links;
typedef struct Netlink Netlink;

/*
 * Subscribes to link and address events; netlink_enumerate() then dumps (subscribe first, dump
 * second, so nothing falls between them). event_fd, if >= 0, is a NETLINK_ROUTE socket systemd created for
 * us (ListenNetlink=, with a large ReceiveBuffer= we could not set without CAP_NET_ADMIN); otherwise
 * our own socket gets rcvbuf bytes of buffer, as far as net.core.rmem_max allows. A failed resync
 * makes the daemon degraded ("netlink-resync-failed").
 */
int netlink_new(sd_event *event, Links *links, DaemonStatus *status, int event_fd, uint64_t rcvbuf,
                Netlink **ret);
Netlink *netlink_free(Netlink *nl);
DEFINE_TRIVIAL_CLEANUP_FUNC(Netlink *, netlink_free);

/* Dumps every link and address into the link table, sweeping what is gone. */
int netlink_enumerate(Netlink *nl);
/* Re-dumps from the kernel and enumerates: after an overrun, and for Refresh(). */
int netlink_resync(Netlink *nl);

uint64_t netlink_overruns(const Netlink *nl);

/* The watch: one dump of every link's statistics (RTM_GETSTATS, or RTM_GETLINK on old kernels), each recorded
 * with link_record_stats() at now (CLOCK_MONOTONIC usec), read to its end at once (start-up, old kernels;
 * link-watch.c reads the same dump in slices). ret_n: how many links answered. */
int netlink_sample_stats(Netlink *nl, uint64_t now, size_t *ret_n);

/* One link's statistics from an answer of either dump; false for any other message. */
struct nlmsghdr;
typedef struct LinkStats LinkStats;
bool netlink_parse_stats(struct nlmsghdr *h, LinkStats *ret);
