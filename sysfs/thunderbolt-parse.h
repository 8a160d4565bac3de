/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thunderbolt-parse.h — the values of bus/thunderbolt and the names the kernel gives its devices:
 * the enums they map to, the limits that make a value impossible, and strict parsers of each. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/macros.h"

typedef enum TbtKind {
        TBT_KIND_DOMAIN,  /* DEVTYPE=thunderbolt_domain, "domainN" */
        TBT_KIND_ROUTER,  /* DEVTYPE=thunderbolt_device, "N-<route>": host, hub or device */
        TBT_KIND_PEER,    /* DEVTYPE=thunderbolt_xdomain, "N-<route>": another host (XDomain) */
        TBT_KIND_SERVICE, /* DEVTYPE=thunderbolt_service, "<peer>.<n>", e.g. thunderbolt-net */
        TBT_KIND_RETIMER, /* DEVTYPE=thunderbolt_retimer, "<router>:<port>.<index>" */
        _TBT_KIND_MAX,
        _TBT_KIND_INVALID = -EINVAL,
} TbtKind;

/* USB4_TYPE from the router's uevent; for routers without it (Thunderbolt 1-3) only the host is
 * known (route 0); whether another router is a hub is decided from its children (tbt-topology). */
typedef enum TbtRouterType {
        TBT_ROUTER_HOST,
        TBT_ROUTER_HUB,
        TBT_ROUTER_DEVICE,
        _TBT_ROUTER_TYPE_MAX,
        _TBT_ROUTER_TYPE_INVALID = -EINVAL,
} TbtRouterType;

typedef enum TbtSecurity {
        TBT_SECURITY_NONE,
        TBT_SECURITY_USER,
        TBT_SECURITY_SECURE,
        TBT_SECURITY_DPONLY,
        TBT_SECURITY_USBONLY,
        TBT_SECURITY_NOPCIE,
        _TBT_SECURITY_MAX,
        _TBT_SECURITY_INVALID = -EINVAL,
} TbtSecurity;

/* The router's "authorized" attribute: 0, 1, or 2 (authorized with a secure-connect key). */
typedef enum TbtAuthorized {
        TBT_AUTHORIZED_NO = 0,
        TBT_AUTHORIZED_YES = 1,
        TBT_AUTHORIZED_SECURE = 2,
        _TBT_AUTHORIZED_MAX,
        _TBT_AUTHORIZED_INVALID = -EINVAL,
} TbtAuthorized;

/* usb4_portN/link of a USB4 router: what the link on that port runs. For an XDomain peer this is the
 * only hint whether the far host is USB4 ("usb4") or Thunderbolt 3 ("tbt"). */
typedef enum TbtPortLink {
        TBT_PORT_LINK_NONE,
        TBT_PORT_LINK_USB4,
        TBT_PORT_LINK_TBT,
        _TBT_PORT_LINK_MAX,
        _TBT_PORT_LINK_INVALID = -EINVAL,
} TbtPortLink;

/* Limits that make values impossible rather than merely unusual. */
#define TBT_LANE_GBPS_MAX 1000u
#define TBT_LANES_MAX 3u
#define TBT_GENERATION_MAX 9u
#define TBT_ROUTE_DEPTH_MAX 8u /* a route is 64 bits, one byte per hop */

/* Each parser returns 0 or -EINVAL/-ERANGE and writes its output only on success. */
int tbt_parse_lane_speed(const char *s, unsigned *ret_gbps); /* "20.0 Gb/s" */
int tbt_parse_lanes(const char *s, unsigned *ret);           /* "1".."3" */
int tbt_parse_generation(const char *s, unsigned *ret);      /* "1".."9" */
int tbt_parse_usb4_version(const char *s, unsigned *ret);    /* "1.0", "2.0" */
int tbt_parse_authorized(const char *s, TbtAuthorized *ret); /* "0", "1", "2" */
int tbt_parse_nvm_version(const char *s);                    /* "%x.%x": 0 if valid */
bool tbt_uuid_is_valid(const char *s);
/* "0-301" -> domain 0, route 0x301. Each route byte is a port number (1..63), no gaps. */
int tbt_parse_router_name(const char *s, unsigned *ret_domain, uint64_t *ret_route);
/* "domain3" -> 3 */
int tbt_parse_domain_name(const char *s, unsigned *ret_domain);
/* "0-301.2" -> "0-301", 2 */
int tbt_parse_service_name(const char *s, char **ret_peer, unsigned *ret_index);
/* "0-0:1.1" -> "0-0", port 1, index 1 */
int tbt_parse_retimer_name(const char *s, char **ret_router, unsigned *ret_port, unsigned *ret_index);
/* "uuid,,uuid,": one entry per slot. Every non-empty entry must be a UUID. */
int tbt_parse_boot_acl(const char *s, char ***ret);
/* Number of hops a route encodes (0 for a host router); -EINVAL if it has a gap or a port > 63. */
int tbt_route_depth(uint64_t route);
/* The port of the hop at depth (1-based) in route: the parent's downstream port for depth = length. */
unsigned tbt_route_port(uint64_t route, unsigned depth);

const char *tbt_kind_to_string(TbtKind k) _const_;
TbtKind tbt_kind_from_devtype(const char *devtype) _pure_;
const char *tbt_router_type_to_string(TbtRouterType t) _const_;
TbtRouterType tbt_router_type_from_string(const char *s) _pure_;
const char *tbt_security_to_string(TbtSecurity s) _const_;
TbtSecurity tbt_security_from_string(const char *s) _pure_;
const char *tbt_authorized_to_string(TbtAuthorized a) _const_;
const char *tbt_port_link_to_string(TbtPortLink l) _const_;
TbtPortLink tbt_port_link_from_string(const char *s) _pure_;
