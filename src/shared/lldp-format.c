/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The text forms of what an LLDPDU carries, as lldpcli shows them, and the speeds its IEEE 802.3
 * MAC/PHY TLV names. The bytes are the sender's choice: what comes out is always valid UTF-8 without
 * control characters, whatever came in. */
#include <arpa/inet.h>

#include "lldp-parse.h"
#include "string-util.h"

/* Appends to buf at *at, never past size - 1. */
static void put(char *buf, size_t size, size_t *at, const char *s, size_t n) {
        if (*at >= size)
                return;
        n = MIN(n, size - 1 - *at);
        memcpy(buf + *at, s, n);
        *at += n;
        buf[*at] = 0;
}

static bool is_plain_text(const uint8_t *d, size_t n) {
        if (n == 0 || !utf8_is_valid_n((const char *) d, n))
                return false;
        for (size_t i = 0; i < n; i++)
                if (d[i] < 0x20 || d[i] == 0x7f)
                        return false;
        return true;
}

/* Text kept as it is when it is valid UTF-8; control characters and invalid bytes become \xNN. */
static char *escape_text(const uint8_t *d, size_t n, char *buf, size_t size) {
        bool valid = utf8_is_valid_n((const char *) d, n);
        size_t at = 0;

        if (size == 0)
                return buf;
        buf[0] = 0;
        for (size_t i = 0; i < n; i++) {
                if (d[i] < 0x20 || d[i] == 0x7f || (!valid && d[i] >= 0x80)) {
                        char esc[5];
                        snprintf(esc, sizeof(esc), "\\x%02x", d[i]);
                        put(buf, size, &at, esc, 4);
                } else
                        put(buf, size, &at, (const char *) d + i, 1);
        }
        /* A cut in the middle of a character would leave invalid UTF-8: drop the partial one. */
        while (at > 0 && !utf8_is_valid_n(buf, at))
                buf[--at] = 0;
        return buf;
}

static char *hex_text(const uint8_t *d, size_t n, char *buf, size_t size) {
        size_t at = 0;

        if (size == 0)
                return buf;
        buf[0] = 0;
        for (size_t i = 0; i < n; i++) {
                char h[4];
                snprintf(h, sizeof(h), i == 0 ? "%02x" : ":%02x", d[i]);
                put(buf, size, &at, h, strlen(h));
        }
        return buf;
}

/* An IANA address family number (1 IPv4, 2 IPv6, 6 IEEE 802) with its address. */
static char *address_text(uint8_t family, const uint8_t *d, size_t n, char *buf, size_t size) {
        char text[INET6_ADDRSTRLEN];

        if ((family == 1 && n == 4 && inet_ntop(AF_INET, d, text, sizeof(text))) ||
            (family == 2 && n == 16 && inet_ntop(AF_INET6, d, text, sizeof(text)))) {
                snprintf(buf, size, "%s", text);
                return buf;
        }
        return hex_text(d, n, buf, size);
}

const char *lldp_id_subtype_to_string(const LldpId *id, bool chassis) {
        static const char *const chassis_names[] = {
                [LLDP_CHASSIS_COMPONENT] = "component", [LLDP_CHASSIS_INTERFACE_ALIAS] = "ifalias",
                [LLDP_CHASSIS_PORT_COMPONENT] = "component", [LLDP_CHASSIS_MAC_ADDRESS] = "mac",
                [LLDP_CHASSIS_NETWORK_ADDRESS] = "ip", [LLDP_CHASSIS_INTERFACE_NAME] = "ifname",
                [LLDP_CHASSIS_LOCAL] = "local",
        };
        static const char *const port_names[] = {
                [LLDP_PORT_INTERFACE_ALIAS] = "ifalias", [LLDP_PORT_COMPONENT] = "component",
                [LLDP_PORT_MAC_ADDRESS] = "mac", [LLDP_PORT_NETWORK_ADDRESS] = "ip",
                [LLDP_PORT_INTERFACE_NAME] = "ifname", [LLDP_PORT_AGENT_CIRCUIT_ID] = "circuit",
                [LLDP_PORT_LOCAL] = "local",
        };
        const char *const *names = chassis ? chassis_names : port_names;
        size_t n = chassis ? ELEMENTSOF(chassis_names) : ELEMENTSOF(port_names);

        return id->subtype < n && names[id->subtype] ? names[id->subtype] : "unknown";
}

char *lldp_id_to_text(const LldpId *id, bool chassis, char *buf, size_t size) {
        uint8_t mac_subtype = chassis ? LLDP_CHASSIS_MAC_ADDRESS : LLDP_PORT_MAC_ADDRESS;
        uint8_t address_subtype = chassis ? LLDP_CHASSIS_NETWORK_ADDRESS : LLDP_PORT_NETWORK_ADDRESS;

        if (id->subtype == mac_subtype)
                return hex_text(id->data, id->size, buf, size);
        if (id->subtype == address_subtype && id->size >= 1)
                return address_text(id->data[0], id->data + 1, id->size - 1u, buf, size);
        /* Names, aliases, components and local IDs are text when they are text (lldpd does the same),
         * else their bytes in hex: a binary ID must stay tellable apart from another. */
        if (is_plain_text(id->data, id->size))
                return escape_text(id->data, id->size, buf, size);
        return hex_text(id->data, id->size, buf, size);
}

char *lldp_bytes_to_text(const LldpBytes *b, char *buf, size_t size) {
        return escape_text(b->data, b->size, buf, size);
}

char *lldp_management_address_to_text(const LldpManagementAddress *a, char *buf, size_t size) {
        return address_text(a->family, a->address, a->size, buf, size);
}

const char *lldp_capability_to_string(unsigned bit) {
        static const char *const names[_LLDP_CAP_MAX] = {
                [LLDP_CAP_OTHER] = "other",       [LLDP_CAP_REPEATER] = "repeater",
                [LLDP_CAP_BRIDGE] = "bridge",     [LLDP_CAP_WLAN_AP] = "wlan-ap",
                [LLDP_CAP_ROUTER] = "router",     [LLDP_CAP_TELEPHONE] = "telephone",
                [LLDP_CAP_DOCSIS] = "docsis",     [LLDP_CAP_STATION] = "station",
                [LLDP_CAP_CVLAN] = "c-vlan",      [LLDP_CAP_SVLAN] = "s-vlan",
                [LLDP_CAP_TPMR] = "tpmr",
        };
        return bit < _LLDP_CAP_MAX ? names[bit] : NULL;
}

uint32_t lldp_mau_type_speed_mbps(uint16_t mau_type) {
        /* dot3MauType of IANA-MAU-MIB (RFC 4836 and its IANA registry), by ranges of one speed. */
        static const struct {
                uint16_t first, last;
                uint32_t mbps;
        } ranges[] = {
                { 1, 13, 10 },       /* AUI .. 10BaseFLFD */
                { 14, 20, 100 },     /* 100BaseT4 .. 100BaseT2FD */
                { 21, 30, 1000 },    /* 1000BaseXHD .. 1000BaseTFD */
                { 31, 41, 10000 },   /* 10GigBaseX .. 10GigBaseCX4 */
                { 42, 42, 2 },       /* 2BaseTL */
                { 43, 43, 10 },      /* 10PassTS */
                { 44, 46, 100 },     /* 100BaseBX10D/U, 100BaseLX10 */
                { 47, 53, 1000 },    /* 1000BaseBX10D .. 1000BasePX20U */
                { 54, 55, 10000 },   /* 10GbaseT, 10GbaseLRM */
                { 56, 56, 1000 },    /* 1000baseKX */
                { 57, 69, 10000 },   /* 10GbaseKX4 .. 10GbasePRU3 (EPON: the downstream rate) */
                { 70, 74, 40000 },   /* 40GbaseKR4 .. 40GbaseLR4 */
                { 75, 78, 100000 },  /* 100GbaseCR10 .. 100GbaseER4 */
        };
        for (size_t i = 0; i < ELEMENTSOF(ranges); i++)
                if (mau_type >= ranges[i].first && mau_type <= ranges[i].last)
                        return ranges[i].mbps;
        return 0;
}

size_t lldp_advertised_speeds_mbps(uint16_t advertised, uint32_t ret[static 4]) {
        /* ifMauAutoNegCapAdvertisedBits (RFC 3636): bit 0 is the most significant. Bits 1-2 are
         * 10BASE-T, 3-7 100BASE-T4/TX/T2, 12-15 1000BASE-X/T; 8-11 are pause modes, 0 "other". */
#define BIT(n) ((uint16_t) (0x8000u >> (n)))
        static const struct {
                uint16_t mask;
                uint32_t mbps;
        } speeds[] = {
                { BIT(1) | BIT(2), 10 },
                { BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7), 100 },
                { BIT(12) | BIT(13) | BIT(14) | BIT(15), 1000 },
        };
#undef BIT
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(speeds); i++)
                if (advertised & speeds[i].mask)
                        ret[n++] = speeds[i].mbps;
        return n;
}
