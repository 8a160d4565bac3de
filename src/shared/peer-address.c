/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <net/if.h>

#include "peer-address.h"
#include "parse-util.h"

static int fail(const char **ret_why, const char *why) {
        if (ret_why)
                *ret_why = why;
        return -EINVAL;
}

static bool is_ifname_char(char c) {
        /* What the kernel allows, minus what no administrator uses and what reads as syntax here. */
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
               c == '.' || c == '@';
}

static int parse_scope(const char *s, size_t n, char scope[static IF_NAMESIZE], const char **ret_why) {
        if (n == 0)
                return fail(ret_why, "an empty zone after '%': give the interface name, as in fe80::1%eth0");
        if (n >= IF_NAMESIZE)
                return fail(ret_why, "the zone after '%' is longer than any interface name");
        for (size_t i = 0; i < n; i++)
                if (!is_ifname_char(s[i]))
                        return fail(ret_why, "the zone after '%' is not an interface name");
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                return fail(ret_why, "the zone after '%' is not an interface name");
        memcpy(scope, s, n);
        scope[n] = '\0';
        return 0;
}

static int parse_host(const char *s, size_t n, PeerAddress *a, const char **ret_why) {
        char host[INET6_ADDRSTRLEN];
        const char *percent = memchr(s, '%', n);
        size_t host_len = percent ? (size_t) (percent - s) : n;

        if (host_len == 0)
                return fail(ret_why, "no address given");
        if (host_len >= sizeof(host))
                return fail(ret_why, "not a numeric IPv4 or IPv6 address (host names are not supported)");
        memcpy(host, s, host_len);
        host[host_len] = '\0';

        if (inet_pton(AF_INET, host, a->bytes) == 1)
                a->family = AF_INET;
        else if (inet_pton(AF_INET6, host, a->bytes) == 1)
                a->family = AF_INET6;
        else
                return fail(ret_why, "not a numeric IPv4 or IPv6 address (host names are not supported)");

        if (percent) {
                if (!peer_address_is_link_local(a))
                        return fail(ret_why, "a zone (%interface) is allowed only on IPv6 link-local addresses");
                return parse_scope(percent + 1, n - host_len - 1, a->scope, ret_why);
        }
        return 0;
}

static int check_usable(const PeerAddress *a, PeerAddressFlags flags, const char **ret_why) {
        if (a->family == AF_INET) {
                if (a->bytes[0] >= 224 && a->bytes[0] <= 239)
                        return fail(ret_why, "a multicast address cannot be a peer");
                if (a->bytes[0] == 255 && a->bytes[1] == 255 && a->bytes[2] == 255 && a->bytes[3] == 255)
                        return fail(ret_why, "the broadcast address cannot be a peer");
        } else {
                struct in6_addr in6;
                memcpy(&in6, a->bytes, sizeof(in6));
                if (IN6_IS_ADDR_MULTICAST(&in6))
                        return fail(ret_why, "a multicast address cannot be a peer");
                if (IN6_IS_ADDR_V4MAPPED(&in6) || IN6_IS_ADDR_V4COMPAT(&in6))
                        return fail(ret_why, "an IPv4-mapped IPv6 address: give the IPv4 address itself");
        }
        if (peer_address_is_any(a) && !(flags & PEER_ADDRESS_ALLOW_ANY))
                return fail(ret_why, "the unspecified address (0.0.0.0 or ::) cannot be a peer");
        return 0;
}

int peer_address_parse(const char *s, PeerAddressFlags flags, PeerAddress *ret, const char **ret_why) {
        PeerAddress a = { .port = PEER_DEFAULT_PORT };
        const char *host, *port = NULL;
        size_t len, host_len;
        int r;

        if (isempty(s))
                return fail(ret_why, "no address given");
        len = strnlen(s, PEER_ADDRESS_INPUT_MAX + 1);
        if (len > PEER_ADDRESS_INPUT_MAX)
                return fail(ret_why, "too long to be an address");
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) s[i] <= ' ' || (unsigned char) s[i] >= 0x7f)
                        return fail(ret_why, "contains spaces, control characters or non-ASCII bytes");

        if (s[0] == '[') {
                const char *end = strchr(s, ']');
                if (!end)
                        return fail(ret_why, "'[' without a closing ']'");
                host = s + 1;
                host_len = (size_t) (end - host);
                if (end[1] == ':')
                        port = end + 2;
                else if (end[1] != '\0')
                        return fail(ret_why, "only \":PORT\" may follow \"[ADDRESS]\"");
        } else {
                const char *colon = strchr(s, ':');
                host = s;
                /* One colon separates a port; more make an IPv6 address, which needs brackets for one. */
                if (colon && !strchr(colon + 1, ':')) {
                        port = colon + 1;
                        host_len = (size_t) (colon - s);
                } else
                        host_len = len;
        }

        r = parse_host(host, host_len, &a, ret_why);
        if (r < 0)
                return r;
        if (s[0] == '[' && a.family != AF_INET6)
                return fail(ret_why, "brackets are for IPv6 addresses only");
        if (port) {
                uint32_t p;
                if (isempty(port) || port[0] == '0' || parse_u32(port, &p) < 0 || p == 0 || p > 65535)
                        return fail(ret_why, "the port must be a number from 1 to 65535");
                a.port = (uint16_t) p;
        }
        r = check_usable(&a, flags, ret_why);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

int peer_address_parse_host(const char *s, PeerAddress *ret) {
        PeerAddress a = { .port = PEER_DEFAULT_PORT };
        int r;

        if (isempty(s) || strlen(s) > PEER_ADDRESS_INPUT_MAX)
                return -EINVAL;
        r = parse_host(s, strlen(s), &a, NULL);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

static char *format(const PeerAddress *a, bool with_port, char buf[static PEER_ADDRESS_STRING_MAX]) {
        char host[INET6_ADDRSTRLEN] = "?";

        (void) inet_ntop(a->family, a->bytes, host, sizeof(host));
        if (!with_port)
                snprintf(buf, PEER_ADDRESS_STRING_MAX, "%s%s%s", host, a->scope[0] ? "%" : "", a->scope);
        else if (a->family == AF_INET)
                snprintf(buf, PEER_ADDRESS_STRING_MAX, "%s:%u", host, a->port);
        else
                snprintf(buf, PEER_ADDRESS_STRING_MAX, "[%s%s%s]:%u", host, a->scope[0] ? "%" : "", a->scope, a->port);
        return buf;
}

char *peer_address_format(const PeerAddress *a, char buf[static PEER_ADDRESS_STRING_MAX]) {
        return format(a, a->port != PEER_DEFAULT_PORT, buf);
}

char *peer_address_format_with_port(const PeerAddress *a, char buf[static PEER_ADDRESS_STRING_MAX]) {
        return format(a, true, buf);
}

bool peer_address_is_link_local(const PeerAddress *a) {
        return a->family == AF_INET6 && a->bytes[0] == 0xfe && (a->bytes[1] & 0xc0) == 0x80;
}

bool peer_address_is_any(const PeerAddress *a) {
        static const uint8_t zero[16] = {};
        return memcmp(a->bytes, zero, a->family == AF_INET ? 4 : 16) == 0;
}

int peer_address_set_scope(PeerAddress *a, const char *ifname, const char **ret_why) {
        if (!peer_address_is_link_local(a))
                return fail(ret_why, "a zone (%interface) is allowed only on IPv6 link-local addresses");
        if (!ifname)
                return fail(ret_why, "no interface name given");
        return parse_scope(ifname, strnlen(ifname, IF_NAMESIZE), a->scope, ret_why);
}

int peer_address_to_sockaddr(const PeerAddress *a, struct sockaddr_storage *ret, socklen_t *ret_len) {
        if (a->family == AF_INET) {
                struct sockaddr_in *in = (struct sockaddr_in *) ret;

                *ret = (struct sockaddr_storage) {};
                in->sin_family = AF_INET;
                in->sin_port = htons(a->port);
                memcpy(&in->sin_addr, a->bytes, 4);
                *ret_len = sizeof(*in);
                return 0;
        }
        if (a->family == AF_INET6) {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) ret;
                unsigned scope_id = 0;

                if (a->scope[0]) {
                        scope_id = if_nametoindex(a->scope);
                        if (scope_id == 0)
                                return -ENODEV;
                }
                *ret = (struct sockaddr_storage) {};
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(a->port);
                memcpy(&in6->sin6_addr, a->bytes, 16);
                in6->sin6_scope_id = scope_id;
                *ret_len = sizeof(*in6);
                return 0;
        }
        return -EAFNOSUPPORT;
}
