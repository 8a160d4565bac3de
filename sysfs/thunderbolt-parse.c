/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict parsers for the values of bus/thunderbolt and the names the kernel gives its devices.
 * Formats from Documentation/ABI/testing/sysfs-bus-thunderbolt and drivers/thunderbolt. */
#include <ctype.h>
#include <strings.h>

#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "thunderbolt-parse.h"

static const char *const kind_table[_TBT_KIND_MAX] = {
        [TBT_KIND_DOMAIN] = "domain",   [TBT_KIND_ROUTER] = "router",   [TBT_KIND_PEER] = "peer",
        [TBT_KIND_SERVICE] = "service", [TBT_KIND_RETIMER] = "retimer",
};

static const char *const devtype_table[_TBT_KIND_MAX] = {
        [TBT_KIND_DOMAIN] = "thunderbolt_domain",   [TBT_KIND_ROUTER] = "thunderbolt_device",
        [TBT_KIND_PEER] = "thunderbolt_xdomain",    [TBT_KIND_SERVICE] = "thunderbolt_service",
        [TBT_KIND_RETIMER] = "thunderbolt_retimer",
};

static const char *const router_type_table[_TBT_ROUTER_TYPE_MAX] = {
        [TBT_ROUTER_HOST] = "host",
        [TBT_ROUTER_HUB] = "hub",
        [TBT_ROUTER_DEVICE] = "device",
};

static const char *const security_table[_TBT_SECURITY_MAX] = {
        [TBT_SECURITY_NONE] = "none",       [TBT_SECURITY_USER] = "user",
        [TBT_SECURITY_SECURE] = "secure",   [TBT_SECURITY_DPONLY] = "dponly",
        [TBT_SECURITY_USBONLY] = "usbonly", [TBT_SECURITY_NOPCIE] = "nopcie",
};

static const char *const authorized_table[_TBT_AUTHORIZED_MAX] = {
        [TBT_AUTHORIZED_NO] = "no",
        [TBT_AUTHORIZED_YES] = "yes",
        [TBT_AUTHORIZED_SECURE] = "secure",
};

static const char *const port_link_table[_TBT_PORT_LINK_MAX] = {
        [TBT_PORT_LINK_NONE] = "none",
        [TBT_PORT_LINK_USB4] = "usb4",
        [TBT_PORT_LINK_TBT] = "tbt",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(tbt_kind, TbtKind, kind_table)

TbtKind tbt_kind_from_devtype(const char *devtype) {
        return string_table_lookup_from_string(devtype_table, ELEMENTSOF(devtype_table), devtype);
}

DEFINE_STRING_TABLE_LOOKUP(tbt_router_type, TbtRouterType, router_type_table)
DEFINE_STRING_TABLE_LOOKUP(tbt_security, TbtSecurity, security_table)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(tbt_authorized, TbtAuthorized, authorized_table)
DEFINE_STRING_TABLE_LOOKUP(tbt_port_link, TbtPortLink, port_link_table)

/* Parses the decimal number in s[0..len) into a u32; the span must be digits only. */
static int parse_u32_span(const char *s, size_t len, uint32_t *ret) {
        char buf[16];

        if (len == 0 || len >= sizeof(buf))
                return len == 0 ? -EINVAL : -ERANGE;
        memcpy(buf, s, len);
        buf[len] = '\0';
        return parse_u32(buf, ret);
}

int tbt_parse_lane_speed(const char *s, unsigned *ret_gbps) {
        size_t digits;
        uint32_t v;
        int r;

        /* The kernel prints "%u.0 Gb/s"; the ".0" is tolerated missing, any other fraction is not. */
        if (isempty(s))
                return -EINVAL;
        digits = strspn(s, "0123456789");
        r = parse_u32_span(s, digits, &v);
        if (r < 0)
                return r;
        s += digits;
        if (startswith(s, ".0"))
                s += 2;
        if (!streq(s, " Gb/s"))
                return -EINVAL;
        if (v == 0 || v > TBT_LANE_GBPS_MAX)
                return -ERANGE;
        *ret_gbps = v;
        return 0;
}

static int parse_u32_in_range(const char *s, uint32_t min, uint32_t max, unsigned *ret) {
        uint32_t v;
        int r = parse_u32(s, &v);
        if (r < 0)
                return r;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int tbt_parse_lanes(const char *s, unsigned *ret) {
        return parse_u32_in_range(s, 1, TBT_LANES_MAX, ret);
}

int tbt_parse_generation(const char *s, unsigned *ret) {
        return parse_u32_in_range(s, 1, TBT_GENERATION_MAX, ret);
}

int tbt_parse_authorized(const char *s, TbtAuthorized *ret) {
        unsigned v;
        int r = parse_u32_in_range(s, 0, _TBT_AUTHORIZED_MAX - 1, &v);
        if (r < 0)
                return r;
        *ret = (TbtAuthorized) v;
        return 0;
}

int tbt_parse_usb4_version(const char *s, unsigned *ret) {
        const char *dot;
        uint32_t major, minor;
        int r;

        if (isempty(s))
                return -EINVAL;
        dot = strchr(s, '.');
        if (!dot)
                return -EINVAL;
        r = parse_u32_span(s, (size_t) (dot - s), &major);
        if (r < 0)
                return r;
        r = parse_u32(dot + 1, &minor);
        if (r < 0)
                return r;
        if (major == 0 || major > 9)
                return -ERANGE;
        *ret = major;
        return 0;
}

static bool is_hex_run(const char *s, size_t len) {
        for (size_t i = 0; i < len; i++)
                if (!isxdigit((unsigned char) s[i]))
                        return false;
        return true;
}

int tbt_parse_nvm_version(const char *s) {
        const char *dot;
        size_t major_len, minor_len;

        if (isempty(s))
                return -EINVAL;
        dot = strchr(s, '.');
        if (!dot)
                return -EINVAL;
        major_len = (size_t) (dot - s);
        minor_len = strlen(dot + 1);
        if (major_len == 0 || minor_len == 0 || major_len > 8 || minor_len > 8)
                return -EINVAL;
        if (!is_hex_run(s, major_len) || !is_hex_run(dot + 1, minor_len))
                return -EINVAL;
        return 0;
}

bool tbt_uuid_is_valid(const char *s) {
        static const size_t groups[] = { 8, 4, 4, 4, 12 };

        if (!s)
                return false;
        for (size_t g = 0; g < ELEMENTSOF(groups); g++) {
                if (!is_hex_run(s, groups[g]))
                        return false;
                s += groups[g];
                if (g + 1 < ELEMENTSOF(groups)) {
                        if (*s != '-')
                                return false;
                        s++;
                }
        }
        return *s == '\0';
}

int tbt_route_depth(uint64_t route) {
        unsigned depth = 0;

        for (; depth < TBT_ROUTE_DEPTH_MAX; depth++) {
                unsigned port = tbt_route_port(route, depth + 1);
                if (port == 0)
                        break;
                /* Port numbers are six bits (TB_PORT_MASK); port 0 is the control adapter. */
                if (port > 63)
                        return -EINVAL;
        }
        if (depth < TBT_ROUTE_DEPTH_MAX && (route >> (8 * depth)) != 0)
                return -EINVAL; /* a hop after an empty one */
        return (int) depth;
}

unsigned tbt_route_port(uint64_t route, unsigned depth) {
        if (depth == 0 || depth > TBT_ROUTE_DEPTH_MAX)
                return 0;
        return (unsigned) ((route >> (8 * (depth - 1))) & 0xff);
}

int tbt_parse_router_name(const char *s, unsigned *ret_domain, uint64_t *ret_route) {
        const char *dash;
        uint32_t domain;
        uint64_t route;
        size_t route_len;
        int r;

        if (isempty(s))
                return -EINVAL;
        dash = strchr(s, '-');
        if (!dash)
                return -EINVAL;
        r = parse_u32_span(s, (size_t) (dash - s), &domain);
        if (r < 0)
                return r;
        route_len = strlen(dash + 1);
        if (route_len == 0 || route_len > 16 || !is_hex_run(dash + 1, route_len))
                return -EINVAL;
        r = parse_hex_u64(dash + 1, &route);
        if (r < 0)
                return r;
        if (tbt_route_depth(route) < 0)
                return -EINVAL;

        *ret_domain = domain;
        *ret_route = route;
        return 0;
}

int tbt_parse_domain_name(const char *s, unsigned *ret_domain) {
        uint32_t v;
        int r;

        if (!s || !startswith(s, "domain"))
                return -EINVAL;
        r = parse_u32(s + strlen("domain"), &v);
        if (r < 0)
                return r;
        *ret_domain = v;
        return 0;
}

int tbt_parse_service_name(const char *s, char **ret_peer, unsigned *ret_index) {
        _cleanup_(freep) char *peer = NULL;
        const char *dot;
        unsigned domain;
        uint64_t route;
        uint32_t index;
        int r;

        if (isempty(s))
                return -EINVAL;
        dot = strrchr(s, '.');
        if (!dot)
                return -EINVAL;
        peer = strndup(s, (size_t) (dot - s));
        if (!peer)
                return -ENOMEM;
        r = tbt_parse_router_name(peer, &domain, &route);
        if (r < 0)
                return r;
        r = parse_u32(dot + 1, &index);
        if (r < 0)
                return r;

        if (ret_peer)
                *ret_peer = TAKE_PTR(peer);
        if (ret_index)
                *ret_index = index;
        return 0;
}

int tbt_parse_retimer_name(const char *s, char **ret_router, unsigned *ret_port, unsigned *ret_index) {
        _cleanup_(freep) char *router = NULL;
        const char *colon, *dot;
        unsigned domain;
        uint64_t route;
        uint32_t port, index;
        int r;

        if (isempty(s))
                return -EINVAL;
        colon = strrchr(s, ':');
        if (!colon)
                return -EINVAL;
        dot = strchr(colon, '.');
        if (!dot)
                return -EINVAL;
        router = strndup(s, (size_t) (colon - s));
        if (!router)
                return -ENOMEM;
        r = tbt_parse_router_name(router, &domain, &route);
        if (r < 0)
                return r;
        r = parse_u32_span(colon + 1, (size_t) (dot - colon - 1), &port);
        if (r < 0)
                return r;
        r = parse_u32(dot + 1, &index);
        if (r < 0)
                return r;
        if (port == 0 || port > 63 || index == 0 || index > 255)
                return -ERANGE;

        if (ret_router)
                *ret_router = TAKE_PTR(router);
        if (ret_port)
                *ret_port = port;
        if (ret_index)
                *ret_index = index;
        return 0;
}

int tbt_parse_boot_acl(const char *s, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        size_t n = 1, i = 0;
        const char *p;

        if (!s)
                return -EINVAL;
        for (p = s; *p; p++)
                n += *p == ',';
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;

        for (p = s;; i++) {
                size_t len = strcspn(p, ",");
                l[i] = strndup(p, len);
                if (!l[i])
                        return -ENOMEM;
                if (!isempty(l[i]) && !tbt_uuid_is_valid(l[i]))
                        return -EINVAL;
                if (p[len] == '\0')
                        break;
                p += len + 1;
        }

        *ret = TAKE_PTR(l);
        return 0;
}
