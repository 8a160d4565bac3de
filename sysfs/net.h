/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* net.h — what sysfs knows about a network interface that netlink does not say */
#pragma once

#include "sysfs.h"

typedef struct SysfsNetFacts {
        int speed_mbps;          /* -1: the kernel does not know (down, virtual, no ethtool support) */
        char *duplex;            /* "full", "half", or NULL when unknown */
        char *devtype;           /* DEVTYPE= of the interface ("wlan", "wwan", "bridge", ...) */
        char *driver;            /* driver of the backing device */
        char *device_path;       /* canonical path of the backing device; NULL for virtual links */
        char *device_subsystem;  /* its subsystem: "pci", "usb", "thunderbolt", "infiniband"... */
        bool wireless;           /* phy80211 or wireless/ exists */
} SysfsNetFacts;

typedef enum SysfsNetWhat {
        SYSFS_NET_SPEED = 1 << 0,   /* speed and duplex (fail with EINVAL while the link is down) */
        SYSFS_NET_DEVICE = 1 << 1,  /* devtype, driver, backing device, wireless */
} SysfsNetWhat;

/*
 * Reads the facts selected by what for interface ifname. The interface may have been renamed or
 * replaced since netlink named it, so its ifindex attribute is checked against ifindex first:
 * -ESTALE when it differs, -ENOENT when the interface is gone. Missing attributes stay unknown.
 */
int sysfs_net_read(int root_fd, const char *ifname, int ifindex, SysfsNetWhat what, SysfsNetFacts *ret);
void sysfs_net_facts_done(SysfsNetFacts *f);

/* Interface names are kernel bytes; refuse those that cannot be a single path component. */
bool sysfs_net_name_is_valid(const char *ifname);
