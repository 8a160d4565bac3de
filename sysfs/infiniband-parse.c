/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>

#include "infiniband-parse.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

/* Formats checked against drivers/infiniband/core/sysfs.c (node_type_show, state_show,
 * phys_state_show, rate_show, link_layer_show, node_guid_show, show_port_gid) and
 * drivers/infiniband/core/cache.c (ib_cache_gid_type_str). */

static const char *const node_type_names[_RDMA_NODE_TYPE_MAX] = {
        [RDMA_NODE_TYPE_UNKNOWN] = "unknown",   [RDMA_NODE_TYPE_CA] = "CA",
        [RDMA_NODE_TYPE_SWITCH] = "switch",     [RDMA_NODE_TYPE_ROUTER] = "router",
        [RDMA_NODE_TYPE_RNIC] = "RNIC",         [RDMA_NODE_TYPE_USNIC] = "usNIC",
        [RDMA_NODE_TYPE_USNIC_UDP] = "usNIC UDP", [RDMA_NODE_TYPE_UNSPECIFIED] = "unspecified",
};

static const char *const port_state_names[_RDMA_PORT_STATE_MAX] = {
        [RDMA_PORT_STATE_UNKNOWN] = "unknown", [RDMA_PORT_STATE_NOP] = "NOP",
        [RDMA_PORT_STATE_DOWN] = "DOWN",       [RDMA_PORT_STATE_INIT] = "INIT",
        [RDMA_PORT_STATE_ARMED] = "ARMED",     [RDMA_PORT_STATE_ACTIVE] = "ACTIVE",
        [RDMA_PORT_STATE_ACTIVE_DEFER] = "ACTIVE_DEFER",
};

static const char *const phys_state_names[_RDMA_PHYS_STATE_MAX] = {
        [RDMA_PHYS_STATE_UNKNOWN] = "unknown",
        [RDMA_PHYS_STATE_SLEEP] = "Sleep",
        [RDMA_PHYS_STATE_POLLING] = "Polling",
        [RDMA_PHYS_STATE_DISABLED] = "Disabled",
        [RDMA_PHYS_STATE_PORT_CONFIGURATION_TRAINING] = "PortConfigurationTraining",
        [RDMA_PHYS_STATE_LINK_UP] = "LinkUp",
        [RDMA_PHYS_STATE_LINK_ERROR_RECOVERY] = "LinkErrorRecovery",
        [RDMA_PHYS_STATE_PHY_TEST] = "Phy Test",
};

static const char *const link_layer_names[_RDMA_LINK_LAYER_MAX] = {
        [RDMA_LINK_LAYER_UNKNOWN] = "unknown",
        [RDMA_LINK_LAYER_INFINIBAND] = "InfiniBand",
        [RDMA_LINK_LAYER_ETHERNET] = "Ethernet",
};

static const char *const width_names[_RDMA_WIDTH_MAX] = {
        [RDMA_WIDTH_UNKNOWN] = "unknown", [RDMA_WIDTH_1X] = "1X", [RDMA_WIDTH_2X] = "2X",
        [RDMA_WIDTH_4X] = "4X",           [RDMA_WIDTH_8X] = "8X", [RDMA_WIDTH_12X] = "12X",
};

static const unsigned width_lanes[_RDMA_WIDTH_MAX] = {
        [RDMA_WIDTH_1X] = 1, [RDMA_WIDTH_2X] = 2, [RDMA_WIDTH_4X] = 4, [RDMA_WIDTH_8X] = 8, [RDMA_WIDTH_12X] = 12,
};

static const char *const speed_names[_RDMA_SPEED_MAX] = {
        [RDMA_SPEED_UNKNOWN] = "unknown", [RDMA_SPEED_SDR] = "SDR", [RDMA_SPEED_DDR] = "DDR",
        [RDMA_SPEED_QDR] = "QDR",         [RDMA_SPEED_FDR10] = "FDR10", [RDMA_SPEED_FDR] = "FDR",
        [RDMA_SPEED_EDR] = "EDR",         [RDMA_SPEED_HDR] = "HDR",     [RDMA_SPEED_NDR] = "NDR",
        [RDMA_SPEED_XDR] = "XDR",
};

/* The kernel's rate_show() figures, in deci-Gb/s there, milli-Gb/s here. */
static const uint64_t speed_lane_mgbps[_RDMA_SPEED_MAX] = {
        [RDMA_SPEED_SDR] = 2500,    [RDMA_SPEED_DDR] = 5000,   [RDMA_SPEED_QDR] = 10000,
        [RDMA_SPEED_FDR10] = 10000, [RDMA_SPEED_FDR] = 14000,  [RDMA_SPEED_EDR] = 25000,
        [RDMA_SPEED_HDR] = 50000,   [RDMA_SPEED_NDR] = 100000, [RDMA_SPEED_XDR] = 200000,
};

static const char *const gid_type_names[_RDMA_GID_TYPE_MAX] = {
        [RDMA_GID_TYPE_UNKNOWN] = "unknown",
        [RDMA_GID_TYPE_IB_ROCE_V1] = "IB/RoCE v1",
        [RDMA_GID_TYPE_ROCE_V2] = "RoCE v2",
};

static const char *const transport_names[_RDMA_TRANSPORT_MAX] = {
        [RDMA_TRANSPORT_UNKNOWN] = "unknown", [RDMA_TRANSPORT_INFINIBAND] = "InfiniBand",
        [RDMA_TRANSPORT_ROCE] = "RoCE",       [RDMA_TRANSPORT_IWARP] = "iWARP",
        [RDMA_TRANSPORT_USNIC] = "usNIC",
};

static const char *const port_field_names[] = {
        "state", "phys_state", "link_layer", "rate", "width", "speed",
        "lid",   "sm_lid",     "lmc",        "sm_sl", "cap_mask",
};
_Static_assert(_RDMA_PORT_FIELD_ALL == (1u << ELEMENTSOF(port_field_names)) - 1, "port field names");

/* Entry 0 of a table is "unknown", which is our word, not the kernel's: never parsed. */
static int kernel_name_find(const char *const *table, size_t n, const char *s) {
        int i = string_table_lookup_from_string(table + 1, n - 1, s);
        return i < 0 ? i : i + 1;
}

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_node_type, RdmaNodeType, node_type_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_port_state, RdmaPortState, port_state_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_phys_state, RdmaPhysState, phys_state_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_link_layer, RdmaLinkLayer, link_layer_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_width, RdmaWidth, width_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_speed, RdmaSpeed, speed_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_gid_type, RdmaGidType, gid_type_names)
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(rdma_transport, RdmaTransport, transport_names)

const char *rdma_port_field_to_string(unsigned field) {
        for (size_t i = 0; i < ELEMENTSOF(port_field_names); i++)
                if (field == 1u << i)
                        return port_field_names[i];
        return NULL;
}

RdmaWidth rdma_width_from_string(const char *s) {
        int i = kernel_name_find(width_names, ELEMENTSOF(width_names), s);
        return i < 0 ? _RDMA_WIDTH_INVALID : (RdmaWidth) i;
}

RdmaSpeed rdma_speed_from_string(const char *s) {
        int i = kernel_name_find(speed_names, ELEMENTSOF(speed_names), s);
        return i < 0 ? _RDMA_SPEED_INVALID : (RdmaSpeed) i;
}

unsigned rdma_width_lanes(RdmaWidth w) {
        if (w < 0 || w >= _RDMA_WIDTH_MAX)
                return 0;
        return width_lanes[w];
}

uint64_t rdma_speed_lane_mgbps(RdmaSpeed s) {
        if (s < 0 || s >= _RDMA_SPEED_MAX)
                return 0;
        return speed_lane_mgbps[s];
}

uint64_t rdma_rate_mgbps(RdmaSpeed s, RdmaWidth w) {
        return rdma_speed_lane_mgbps(s) * rdma_width_lanes(w);
}

RdmaTransport rdma_transport_from(RdmaNodeType node_type, RdmaLinkLayer link_layer) {
        switch (node_type) {
        case RDMA_NODE_TYPE_RNIC:
                return RDMA_TRANSPORT_IWARP;
        case RDMA_NODE_TYPE_USNIC:
        case RDMA_NODE_TYPE_USNIC_UDP:
                return RDMA_TRANSPORT_USNIC;
        case RDMA_NODE_TYPE_CA:
        case RDMA_NODE_TYPE_SWITCH:
        case RDMA_NODE_TYPE_ROUTER:
        case RDMA_NODE_TYPE_UNSPECIFIED:
        case RDMA_NODE_TYPE_UNKNOWN:
                break;
        case _RDMA_NODE_TYPE_MAX:
        case _RDMA_NODE_TYPE_INVALID:
                return RDMA_TRANSPORT_UNKNOWN;
        }

        switch (link_layer) {
        case RDMA_LINK_LAYER_INFINIBAND:
                return RDMA_TRANSPORT_INFINIBAND;
        case RDMA_LINK_LAYER_ETHERNET:
                /* An "unspecified" node (EFA) on Ethernet is neither RoCE nor iWARP. */
                return node_type == RDMA_NODE_TYPE_UNSPECIFIED ? RDMA_TRANSPORT_UNKNOWN : RDMA_TRANSPORT_ROCE;
        case RDMA_LINK_LAYER_UNKNOWN:
        case _RDMA_LINK_LAYER_MAX:
        case _RDMA_LINK_LAYER_INVALID:
                break;
        }
        return RDMA_TRANSPORT_UNKNOWN;
}

/* "N: name" as node_type, state and phys_state are written: the number is the ABI, the name is for
 * people (and may contain spaces: "Phy Test", "usNIC UDP"). */
static int parse_numbered(const char *s, unsigned *ret) {
        const char *colon;
        char digits[16];
        size_t len;
        uint32_t v;
        int r;

        if (isempty(s))
                return -EINVAL;
        colon = strchr(s, ':');
        if (!colon)
                return -EINVAL;
        len = (size_t) (colon - s);
        if (len == 0 || len >= sizeof(digits))
                return -EINVAL;
        memcpy(digits, s, len);
        digits[len] = '\0';
        r = parse_u32(digits, &v);
        if (r < 0)
                return -EINVAL;
        if (colon[1] != ' ' || colon[2] == '\0' || isspace((unsigned char) colon[2]))
                return -EINVAL;
        for (const char *p = colon + 2; *p; p++)
                if (!isprint((unsigned char) *p))
                        return -EINVAL;
        *ret = v;
        return 0;
}

int rdma_parse_node_type(const char *s, RdmaNodeType *ret) {
        unsigned n;
        int r = parse_numbered(s, &n);
        if (r < 0)
                return r;
        *ret = n >= 1 && n < _RDMA_NODE_TYPE_MAX ? (RdmaNodeType) n : RDMA_NODE_TYPE_UNKNOWN;
        return 0;
}

int rdma_parse_port_state(const char *s, RdmaPortState *ret) {
        unsigned n;
        int r = parse_numbered(s, &n);
        if (r < 0)
                return r;
        /* Kernel numbers start at NOP = 0; ours at UNKNOWN = 0. */
        *ret = n + 1 < _RDMA_PORT_STATE_MAX ? (RdmaPortState) (n + 1) : RDMA_PORT_STATE_UNKNOWN;
        return 0;
}

int rdma_parse_phys_state(const char *s, RdmaPhysState *ret) {
        unsigned n;
        int r = parse_numbered(s, &n);
        if (r < 0)
                return r;
        *ret = n < _RDMA_PHYS_STATE_MAX ? (RdmaPhysState) n : RDMA_PHYS_STATE_UNKNOWN;
        return 0;
}

int rdma_parse_link_layer(const char *s, RdmaLinkLayer *ret) {
        int i;

        if (s && streq(s, "Unknown")) {
                *ret = RDMA_LINK_LAYER_UNKNOWN;
                return 0;
        }
        i = kernel_name_find(link_layer_names, ELEMENTSOF(link_layer_names), s);
        if (i < 0)
                return -EINVAL;
        *ret = (RdmaLinkLayer) i;
        return 0;
}

/* Decimal with at most three fractional digits, to milli-units. Advances *p past it. */
static int parse_milli(const char **p, uint64_t *ret) {
        const char *s = *p;
        uint64_t v = 0;
        unsigned frac_digits = 0;

        if (!isdigit((unsigned char) *s))
                return -EINVAL;
        for (; isdigit((unsigned char) *s); s++) {
                if (v > (UINT64_MAX / 10000))
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        v *= 1000;
        if (*s == '.') {
                uint64_t scale = 100;
                s++;
                if (!isdigit((unsigned char) *s))
                        return -EINVAL;
                for (; isdigit((unsigned char) *s); s++) {
                        if (++frac_digits > 3)
                                return -EINVAL;
                        v += (uint64_t) (*s - '0') * scale;
                        scale /= 10;
                }
        }
        *p = s;
        *ret = v;
        return 0;
}

static RdmaSpeed speed_from_lane_rate(uint64_t lane_mgbps) {
        /* FDR10 is left out on purpose: see rdma_parse_rate(). */
        static const RdmaSpeed candidates[] = {
                RDMA_SPEED_SDR, RDMA_SPEED_DDR, RDMA_SPEED_QDR, RDMA_SPEED_FDR, RDMA_SPEED_EDR,
                RDMA_SPEED_HDR, RDMA_SPEED_NDR, RDMA_SPEED_XDR,
        };
        for (size_t i = 0; i < ELEMENTSOF(candidates); i++)
                if (speed_lane_mgbps[candidates[i]] == lane_mgbps)
                        return candidates[i];
        return RDMA_SPEED_UNKNOWN;
}

int rdma_parse_rate(const char *s, RdmaRate *ret) {
        static const char unit[] = " Gb/sec (";
        const char *p = s;
        char width_text[8], speed_text[16];
        RdmaRate rate = {};
        size_t len;
        int r;

        if (isempty(s))
                return -EINVAL;
        r = parse_milli(&p, &rate.mgbps);
        if (r < 0)
                return -EINVAL;
        if (!startswith(p, unit))
                return -EINVAL;
        p += strlen(unit);

        /* Width: digits followed by 'X'. */
        len = 0;
        while (isdigit((unsigned char) p[len]))
                len++;
        if (len == 0 || p[len] != 'X' || len + 2 > sizeof(width_text))
                return -EINVAL;
        memcpy(width_text, p, len + 1);
        width_text[len + 1] = '\0';
        rate.width = rdma_width_from_string(width_text);
        if (rate.width < 0)
                return -EINVAL;
        p += len + 1;

        /* Optional " NAME", then ")" and nothing more. */
        if (*p == ' ') {
                p++;
                len = 0;
                while (isupper((unsigned char) p[len]) || isdigit((unsigned char) p[len]))
                        len++;
                if (len == 0 || len >= sizeof(speed_text))
                        return -EINVAL;
                memcpy(speed_text, p, len);
                speed_text[len] = '\0';
                p += len;
                rate.speed = rdma_speed_from_string(speed_text);
                if (rate.speed < 0)
                        rate.speed = RDMA_SPEED_UNKNOWN; /* a name from a newer kernel */
                else if (rdma_rate_mgbps(rate.speed, rate.width) != rate.mgbps)
                        return -EINVAL;
        } else {
                unsigned lanes = rdma_width_lanes(rate.width);
                rate.speed = rate.mgbps % lanes == 0 ? speed_from_lane_rate(rate.mgbps / lanes)
                                                     : RDMA_SPEED_UNKNOWN;
        }
        if (!streq(p, ")"))
                return -EINVAL;
        if (rate.mgbps == 0)
                return -EINVAL;

        *ret = rate;
        return 0;
}

int rdma_parse_guid(const char *s, uint64_t *ret) {
        uint64_t v = 0;

        /* Exactly four groups of four hex digits. */
        if (!s || strlen(s) != 19)
                return -EINVAL;
        for (size_t i = 0; i < 19; i++) {
                if (i % 5 == 4) {
                        if (s[i] != ':')
                                return -EINVAL;
                        continue;
                }
                if (!isxdigit((unsigned char) s[i]))
                        return -EINVAL;
                v = (v << 4) | (uint64_t) (isdigit((unsigned char) s[i]) ? s[i] - '0'
                                                                          : tolower((unsigned char) s[i]) - 'a' + 10);
        }
        *ret = v;
        return 0;
}

int rdma_parse_gid(const char *s, uint8_t ret[static 16]) {
        uint8_t buf[16];

        if (isempty(s) || strlen(s) >= RDMA_GID_STRING_MAX)
                return -EINVAL;
        /* inet_pton() takes the kernel's uncompressed form and the compressed one alike, and refuses
         * everything else (no zone, no prefix, no spaces). */
        if (inet_pton(AF_INET6, s, buf) != 1)
                return -EINVAL;
        memcpy(ret, buf, sizeof(buf));
        return 0;
}

int rdma_parse_gid_type(const char *s, RdmaGidType *ret) {
        int i = kernel_name_find(gid_type_names, ELEMENTSOF(gid_type_names), s);
        if (i < 0)
                return -EINVAL;
        *ret = (RdmaGidType) i;
        return 0;
}

char *rdma_format_guid(uint64_t guid, char buf[static RDMA_GUID_STRING_MAX]) {
        snprintf(buf, RDMA_GUID_STRING_MAX, "%04x:%04x:%04x:%04x", (unsigned) (guid >> 48) & 0xffff,
                 (unsigned) (guid >> 32) & 0xffff, (unsigned) (guid >> 16) & 0xffff, (unsigned) guid & 0xffff);
        return buf;
}

char *rdma_format_gid(const uint8_t gid[static 16], char buf[static RDMA_GID_STRING_MAX]) {
        if (!inet_ntop(AF_INET6, gid, buf, RDMA_GID_STRING_MAX))
                snprintf(buf, RDMA_GID_STRING_MAX, "invalid");
        return buf;
}

char *rdma_format_rate(const RdmaRate *rate, char buf[static RDMA_RATE_STRING_MAX]) {
        char number[32];
        uint64_t whole = rate->mgbps / 1000, frac = rate->mgbps % 1000;

        if (rate->mgbps == 0) {
                snprintf(buf, RDMA_RATE_STRING_MAX, "unknown");
                return buf;
        }
        if (frac == 0)
                snprintf(number, sizeof(number), "%" PRIu64, whole);
        else if (frac % 100 == 0)
                snprintf(number, sizeof(number), "%" PRIu64 ".%" PRIu64, whole, frac / 100);
        else if (frac % 10 == 0)
                snprintf(number, sizeof(number), "%" PRIu64 ".%02" PRIu64, whole, frac / 10);
        else
                snprintf(number, sizeof(number), "%" PRIu64 ".%03" PRIu64, whole, frac);

        if (rate->width != RDMA_WIDTH_UNKNOWN && rate->speed != RDMA_SPEED_UNKNOWN)
                snprintf(buf, RDMA_RATE_STRING_MAX, "%s Gb/s (%s %s)", number, rdma_width_to_string(rate->width),
                         rdma_speed_to_string(rate->speed));
        else if (rate->width != RDMA_WIDTH_UNKNOWN)
                snprintf(buf, RDMA_RATE_STRING_MAX, "%s Gb/s (%s)", number, rdma_width_to_string(rate->width));
        else
                snprintf(buf, RDMA_RATE_STRING_MAX, "%s Gb/s", number);
        return buf;
}

double rdma_rate_gbps(const RdmaRate *rate) {
        return (double) rate->mgbps / 1000.0;
}

bool rdma_gid_is_zero(const uint8_t gid[static 16]) {
        for (size_t i = 0; i < 16; i++)
                if (gid[i] != 0)
                        return false;
        return true;
}

bool rdma_gid_is_ipv4_mapped(const uint8_t gid[static 16]) {
        static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

bool rdma_gid_is_link_local(const uint8_t gid[static 16]) {
        static const uint8_t prefix[8] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0 };
        return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

unsigned rdma_port_status_diff(const RdmaPortStatus *a, const RdmaPortStatus *b) {
        unsigned both = a->known & b->known, diff = 0;

#define DIFF(field, bit)                         \
        if ((both & (bit)) && a->field != b->field) \
                diff |= (bit)
        DIFF(state, RDMA_PORT_FIELD_STATE);
        DIFF(phys_state, RDMA_PORT_FIELD_PHYS_STATE);
        DIFF(link_layer, RDMA_PORT_FIELD_LINK_LAYER);
        DIFF(rate.mgbps, RDMA_PORT_FIELD_RATE);
        DIFF(rate.width, RDMA_PORT_FIELD_WIDTH);
        DIFF(rate.speed, RDMA_PORT_FIELD_SPEED);
        DIFF(lid, RDMA_PORT_FIELD_LID);
        DIFF(sm_lid, RDMA_PORT_FIELD_SM_LID);
        DIFF(lmc, RDMA_PORT_FIELD_LMC);
        DIFF(sm_sl, RDMA_PORT_FIELD_SM_SL);
        DIFF(cap_mask, RDMA_PORT_FIELD_CAP_MASK);
#undef DIFF
        return diff;
}

int rdma_port_fields_to_string(unsigned fields, char **ret) {
        char buf[128] = "";
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(port_field_names); i++) {
                if (!(fields & (1u << i)))
                        continue;
                n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s%s", n > 0 ? "," : "", port_field_names[i]);
        }
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}
