/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lldp-parse.h — LLDPDUs (IEEE 802.1AB) from untrusted frames: the TLVs, bounded, and their text forms */
#pragma once

#include "macros.h"

#define LLDP_ETHERTYPE 0x88cc
#define ETHER_HEADER_SIZE 14

/* A TLV's value is at most 511 bytes (9 bits of length); the IDs at most 255 after their subtype. */
#define LLDP_ID_MAX 255
#define LLDP_TEXT_MAX 255
/* What one frame may make us keep: more management addresses than this are counted, not kept. */
#define LLDP_MANAGEMENT_ADDRESSES_MAX 4
#define LLDP_ADDRESS_MAX 31

/* The TLV types of IEEE 802.1AB-2016, table 8-1. */
enum {
        LLDP_TLV_END = 0,
        LLDP_TLV_CHASSIS_ID = 1,
        LLDP_TLV_PORT_ID = 2,
        LLDP_TLV_TTL = 3,
        LLDP_TLV_PORT_DESCRIPTION = 4,
        LLDP_TLV_SYSTEM_NAME = 5,
        LLDP_TLV_SYSTEM_DESCRIPTION = 6,
        LLDP_TLV_SYSTEM_CAPABILITIES = 7,
        LLDP_TLV_MANAGEMENT_ADDRESS = 8,
        LLDP_TLV_ORGANIZATION = 127,
};

/* Chassis ID subtypes (8.5.2.2). */
enum {
        LLDP_CHASSIS_COMPONENT = 1,
        LLDP_CHASSIS_INTERFACE_ALIAS = 2,
        LLDP_CHASSIS_PORT_COMPONENT = 3,
        LLDP_CHASSIS_MAC_ADDRESS = 4,
        LLDP_CHASSIS_NETWORK_ADDRESS = 5,
        LLDP_CHASSIS_INTERFACE_NAME = 6,
        LLDP_CHASSIS_LOCAL = 7,
};

/* Port ID subtypes (8.5.3.2). */
enum {
        LLDP_PORT_INTERFACE_ALIAS = 1,
        LLDP_PORT_COMPONENT = 2,
        LLDP_PORT_MAC_ADDRESS = 3,
        LLDP_PORT_NETWORK_ADDRESS = 4,
        LLDP_PORT_INTERFACE_NAME = 5,
        LLDP_PORT_AGENT_CIRCUIT_ID = 6,
        LLDP_PORT_LOCAL = 7,
};

/* System capabilities (8.5.8.1), bit numbers. */
enum {
        LLDP_CAP_OTHER,
        LLDP_CAP_REPEATER,
        LLDP_CAP_BRIDGE,
        LLDP_CAP_WLAN_AP,
        LLDP_CAP_ROUTER,
        LLDP_CAP_TELEPHONE,
        LLDP_CAP_DOCSIS,
        LLDP_CAP_STATION,
        LLDP_CAP_CVLAN,
        LLDP_CAP_SVLAN,
        LLDP_CAP_TPMR,
        _LLDP_CAP_MAX,
};

typedef struct LldpBytes {
        uint16_t size;
        uint8_t data[LLDP_TEXT_MAX + 1]; /* NUL after data[size-1], for text */
} LldpBytes;

typedef struct LldpId {
        uint8_t subtype;
        uint8_t size;
        uint8_t data[LLDP_ID_MAX];
} LldpId;

typedef struct LldpManagementAddress {
        uint8_t family; /* IANA address family: 1 IPv4, 2 IPv6, 6 IEEE 802 (MAC) */
        uint8_t size;
        uint8_t address[LLDP_ADDRESS_MAX];
} LldpManagementAddress;

/* Autonegotiation support/status bits of the IEEE 802.3 MAC/PHY TLV (79.3.1.1). */
#define LLDP_AUTONEG_SUPPORTED 0x01
#define LLDP_AUTONEG_ENABLED 0x02

/* One LLDPDU, as far as we understand it. has_* say whether an optional TLV came. */
typedef struct LldpFrame {
        uint8_t source_mac[6];
        LldpId chassis_id, port_id;
        uint16_t ttl; /* seconds; 0: the sender shuts down, forget it */

        bool has_port_description, has_system_name, has_system_description;
        LldpBytes port_description, system_name, system_description;
        bool has_capabilities;
        uint16_t capabilities_supported, capabilities_enabled;
        LldpManagementAddress management_addresses[LLDP_MANAGEMENT_ADDRESSES_MAX];
        unsigned n_management_addresses;

        /* IEEE 802.1 (OUI 00-80-C2) subtype 1 */
        bool has_port_vlan_id;
        uint16_t port_vlan_id;
        /* IEEE 802.3 (OUI 00-12-0F) subtypes 1 and 4 */
        bool has_mac_phy;
        uint8_t autoneg;              /* LLDP_AUTONEG_* */
        uint16_t autoneg_advertised;  /* ifMauAutoNegCapAdvertisedBits, bit 0 the most significant */
        uint16_t mau_type;            /* dot3MauType of IANA-MAU-MIB; 0 unknown */
        bool has_max_frame_size;
        uint16_t max_frame_size;

        /* Kept going past these: what a person debugging a switch may want to know. */
        unsigned n_unknown;   /* reserved types and organizations' TLVs we do not read */
        unsigned n_malformed; /* optional TLVs with a length that does not fit: skipped */
        unsigned n_repeated;  /* optional TLVs that may come once and came again: the first kept */
} LldpFrame;

/*
 * Parses one received Ethernet frame (destination, source, EtherType 0x88cc, LLDPDU) into *ret.
 * Returns 0, or -EBADMSG with *ret_reason (a constant) saying why the frame is refused: too short,
 * not LLDP, a TLV running past the end, the mandatory TLVs (Chassis ID, Port ID, TTL, in that order,
 * each once) missing, repeated or of a bad length. An optional TLV of a bad length is skipped and
 * counted; unknown TLVs are counted. Never reads past size.
 */
int lldp_parse_frame(const void *frame, size_t size, LldpFrame *ret, const char **ret_reason);

/* The destination of LLDP: nearest bridge (…0e), nearest non-TPMR bridge (…03), nearest customer
 * bridge (…00). */
bool lldp_is_destination(const uint8_t mac[6]);

/* The text forms, as lldpcli shows them. Each writes a NUL-terminated, valid UTF-8 string without
 * control characters into buf (truncated to size) and returns buf. */
#define LLDP_ID_TEXT_MAX (LLDP_ID_MAX * 4 + 1)
char *lldp_id_to_text(const LldpId *id, bool chassis, char *buf, size_t size);
/* "mac", "ifname", "ifalias", "local", "ip", "component", "circuit", or "unknown". */
const char *lldp_id_subtype_to_string(const LldpId *id, bool chassis);
char *lldp_bytes_to_text(const LldpBytes *b, char *buf, size_t size);
char *lldp_management_address_to_text(const LldpManagementAddress *a, char *buf, size_t size);
/* "bridge", "router", ... for a bit of LLDP_CAP_*; NULL for others. */
const char *lldp_capability_to_string(unsigned bit);

/* The speed in Mb/s of an operational MAU type, 0 unknown. */
uint32_t lldp_mau_type_speed_mbps(uint16_t mau_type);
/* The distinct speeds (Mb/s, ascending) the advertised autonegotiation bits name; returns how many
 * (at most 4: 10, 100, 1000 and "other" is none). */
size_t lldp_advertised_speeds_mbps(uint16_t advertised, uint32_t ret[static 4]);
