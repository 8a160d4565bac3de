/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peer-address.h — the strict, canonical form of a peer's (or a listener's) address and port */
#pragma once

#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "macros.h"

/* The responder's port, and so the probes', unless an address names another. */
#define PEER_DEFAULT_PORT 7471
/* The most parallel TCP streams one test may have (the protocol's PROTO_STREAMS_MAX, the daemon's
 * TcpStreams= and MaxStreams= and ProbePeer's "Streams"). */
#define PEER_STREAMS_MAX 8
/* Longer input is refused before any parsing: "[" + IPv6 + "%" + ifname + "]:" + port fits well. */
#define PEER_ADDRESS_INPUT_MAX 96
/* Room for any canonical form. */
#define PEER_ADDRESS_STRING_MAX (INET6_ADDRSTRLEN + IF_NAMESIZE + 10)

typedef enum PeerAddressFlags {
        PEER_ADDRESS_ALLOW_ANY = 1 << 0, /* 0.0.0.0 and :: (listeners) */
} PeerAddressFlags;

typedef struct PeerAddress {
        int family;                  /* AF_INET or AF_INET6 */
        uint8_t bytes[16];           /* network order; the first 4 for IPv4 */
        uint16_t port;               /* never 0: PEER_DEFAULT_PORT when none was given */
        char scope[IF_NAMESIZE];     /* IPv6 link-local only: the interface named after '%', or "" */
} PeerAddress;

/**
 * peer_address_parse() - parse a numeric address with an optional port and IPv6 zone
 * @s: "192.0.2.7", "192.0.2.7:7472", "fe80::1%tb0", "[fe80::1%tb0]:7472", "2001:db8::1", "[2001:db8::1]:7472"
 * @flags: PeerAddressFlags
 * @ret: the parsed address
 * @ret_why: on failure, a sentence for the caller saying what is wrong (static storage)
 *
 * Only what inet_pton() accepts is an address: no host names, no shorthand IPv4 ("127.1"), no
 * IPv4-mapped IPv6. Multicast, broadcast and (without PEER_ADDRESS_ALLOW_ANY) unspecified
 * addresses are refused. A zone is allowed only on IPv6 link-local addresses and must look like an
 * interface name; whether the interface exists is for the caller to decide.
 *
 * Return: 0 or -EINVAL.
 */
int peer_address_parse(const char *s, PeerAddressFlags flags, PeerAddress *ret, const char **ret_why);

/* The canonical spelling: the port only when it is not the default, brackets around IPv6 then. */
char *peer_address_format(const PeerAddress *a, char buf[static PEER_ADDRESS_STRING_MAX]);
/* The same, always with the port ("10.0.0.2:7471", "[fe80::1%tb0]:7471"). */
char *peer_address_format_with_port(const PeerAddress *a, char buf[static PEER_ADDRESS_STRING_MAX]);

bool peer_address_is_link_local(const PeerAddress *a) _pure_;
bool peer_address_is_any(const PeerAddress *a) _pure_;

/* Parses the host part of a probe's "source" (an address with an optional zone, no port). */
int peer_address_parse_host(const char *s, PeerAddress *ret);

/* Sets the zone of an IPv6 link-local address, with the parser's rules for interface names. */
int peer_address_set_scope(PeerAddress *a, const char *ifname, const char **ret_why);

/* The socket address to connect to or bind (the port included); a zone becomes that interface's
 * index, -ENODEV when this machine has no interface of that name. */
int peer_address_to_sockaddr(const PeerAddress *a, struct sockaddr_storage *ret, socklen_t *ret_len);
