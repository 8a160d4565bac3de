/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thunderbolt.h — reader of bus/thunderbolt: domains, routers, XDomain peers and services, retimers */
#pragma once

#include <stdint.h>

#include "shared/macros.h"
#include "thunderbolt-parse.h"

/*
 * Every field that the kernel did not provide, or provided in a form the ABI does not allow (missing,
 * empty, "abc Gb/s", negative, out of range), is "unknown": NULL for strings, 0 for counts and rates,
 * -1 for tri-state booleans, _..._INVALID for enums, has_* false for ids. A bad attribute never fails
 * the whole device. See Documentation/ABI/testing/sysfs-bus-thunderbolt for the formats.
 */

/* One direction of a router's or peer's upstream link, as the device sees it: rx is what the device
 * receives (host -> device, downstream), tx what it sends (upstream). */
typedef struct TbtLinkDirection {
        unsigned lanes;     /* 1..3 (3 only in asymmetric USB4 v2 links); 0 unknown */
        unsigned lane_gbps; /* per-lane rate, "N.0 Gb/s": 10, 20, 40; 0 unknown */
} TbtLinkDirection;

typedef struct TbtPort {
        unsigned number; /* the lane adapter number, as used in route strings */
        TbtPortLink link;
} TbtPort;

typedef struct TbtDevice {
        TbtKind kind;
        char *sysname; /* "domain0", "0-301", "0-301.0", "0-0:1.1" */
        char *syspath; /* canonical path relative to the sysfs root ("devices/pci0000:00/...") */
        char *parent;  /* sysname of the nearest ancestor on the thunderbolt bus; NULL for domains */

        int domain_index; /* N of "domainN" / "N-<route>"; -1 unknown */
        bool has_route;   /* routers and peers: the route from the name */
        uint64_t route;

        /* Routers, peers, retimers */
        bool has_vendor_id, has_device_id;
        uint32_t vendor_id, device_id;
        char *vendor_name, *device_name; /* from the DROM (routers) or XDomain properties (peers) */
        char *unique_id;                 /* UUID as the kernel prints it (%pUb) */
        char *nvm_version;               /* "major.minor" (hex digits) */

        /* Routers and peers: the link to the parent router */
        TbtLinkDirection rx, tx;

        /* Routers */
        TbtRouterType router_type;
        unsigned generation;   /* 1..3 Thunderbolt generation, 4 for every USB4 router; 0 unknown */
        unsigned usb4_version; /* major of USB4_VERSION ("2.0" -> 2); 0 not USB4 or unknown (older
                                * kernels leave it out for v2 routers: see tbt-topology) */
        TbtAuthorized authorized;
        int boot; /* authorized by the firmware at boot (boot_acl); -1 unknown */
        TbtPort *ports;
        size_t n_ports;

        /* Peers */
        unsigned max_hop_id; /* 0 unknown */

        /* Services */
        char *service_key;                                       /* "network" for thunderbolt-net */
        int64_t protocol_id, protocol_version, protocol_revision; /* -1 unknown */
        int64_t protocol_settings;                               /* prtcstns; -1 unknown */
        char *driver;                                            /* DRIVER= of the uevent */
        char *net_interface;                                     /* the interface below net/ */

        /* Retimers */
        unsigned retimer_port, retimer_index; /* from the name; the router is the parent */

        /* Domains */
        char *controller; /* the host interface (NHI) device's name, e.g. "0000:00:0d.2" */
        TbtSecurity security;
        int iommu_dma_protection; /* -1 unknown */
        int deauthorization;      /* -1 unknown */
        char **boot_acl;          /* one entry per slot, "" for a free slot; NULL unknown */
} TbtDevice;

/**
 * tbt_device_read() - read one device of bus/thunderbolt
 * @root_fd: the sysfs root directory
 * @sysname: the device's name below bus/thunderbolt/devices (udev's sysname)
 * @ret: the device, owned by the caller (tbt_device_free())
 *
 * Used for enumeration and for udev add/change events alike. Attributes that are missing or malformed
 * leave their field unknown.
 *
 * Returns 0, -ENODEV when the device is not (or no longer) there, -EINVAL for a name that cannot be a
 * device, -EPROTONOSUPPORT for a DEVTYPE this reader does not know, -ENOMEM.
 */
int tbt_device_read(int root_fd, const char *sysname, TbtDevice **ret);
TbtDevice *tbt_device_free(TbtDevice *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(TbtDevice *, tbt_device_free);

/**
 * tbt_enumerate() - read every device of bus/thunderbolt
 * @root_fd: the sysfs root directory
 * @ret: array of devices in natural name order, owned by the caller (tbt_device_array_free())
 * @ret_n: number of devices
 *
 * Devices that vanish between listing and reading (unplugged mid-enumeration) and devices of unknown
 * types are skipped. A system without the thunderbolt bus yields an empty array.
 *
 * Returns 0, -ENOMEM, or the error listing the bus failed with.
 */
int tbt_enumerate(int root_fd, TbtDevice ***ret, size_t *ret_n);
TbtDevice **tbt_device_array_free(TbtDevice **devices, size_t n);

/**
 * tbt_peer_for_net_interface() - the XDomain peer a thunderbolt-net interface reaches
 * @root_fd: the sysfs root directory
 * @ifname: network interface name
 * @ret_peer: sysname of the peer ("0-301"), may be NULL
 * @ret_service: sysname of the XDomain service the interface belongs to ("0-301.0"), may be NULL
 *
 * Follows class/net/<ifname>/device to the service and the service to its parent peer.
 *
 * Returns 0, -ENOENT when there is no such interface, -ENXIO when it does not sit on an XDomain
 * service, -EINVAL for an impossible name, -ENOMEM.
 */
int tbt_peer_for_net_interface(int root_fd, const char *ifname, char **ret_peer, char **ret_service);
