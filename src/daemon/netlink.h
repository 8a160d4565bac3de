/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink.h — links and addresses from rtnetlink (parsed by libnl, kept only in our link table), with
 * overrun resync */
#pragma once

#include "shared/macros.h"

typedef struct Manager Manager;
typedef struct Netlink Netlink;

/*
 * Subscribes to link and address events; netlink_enumerate() then dumps (subscribe first, dump
 * second, so nothing falls between them). event_fd, if >= 0, is a NETLINK_ROUTE socket systemd created for
 * us (ListenNetlink=, with a large ReceiveBuffer= we could not set without CAP_NET_ADMIN).
 */
int netlink_new(Manager *m, int event_fd, Netlink **ret);
Netlink *netlink_free(Netlink *nl);
DEFINE_TRIVIAL_CLEANUP_FUNC(Netlink *, netlink_free);

/* Dumps every link and address into the link table, sweeping what is gone. */
int netlink_enumerate(Netlink *nl);
/* Re-dumps from the kernel and enumerates: after an overrun, and for Refresh(). */
int netlink_resync(Netlink *nl);

uint64_t netlink_overruns(const Netlink *nl);
