/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* LLDPDUs from the wire: anyone on the segment chooses these bytes, so every length is checked against
 * what is left, every copy is bounded by its buffer, and nothing is allocated. */
#include <arpa/inet.h>

#include "lldp-parse.h"
#include "string-util.h"

static const uint8_t OUI_IEEE_8021[3] = { 0x00, 0x80, 0xc2 };
static const uint8_t OUI_IEEE_8023[3] = { 0x00, 0x12, 0x0f };

bool lldp_is_destination(const uint8_t mac[6]) {
        static const uint8_t prefix[5] = { 0x01, 0x80, 0xc2, 0x00, 0x00 };
        return memcmp(mac, prefix, sizeof(prefix)) == 0 && IN_SET(mac[5], 0x0e, 0x03, 0x00);
}

static uint16_t be16(const uint8_t *p) {
        return (uint16_t) ((p[0] << 8) | p[1]);
}

/* The TLVs that may come at most once besides the mandatory ones: a repeat is counted, the first kept. */
static void parse_text(const uint8_t *v, size_t len, bool *has, LldpBytes *out, LldpFrame *f) {
        if (*has) {
                f->n_repeated++;
                return;
        }
        /* 1..255 octets; a longer one (the 9-bit length allows 511) is cut, not refused. */
        if (len == 0) {
                f->n_malformed++;
                return;
        }
        *has = true;
        out->size = (uint16_t) MIN(len, (size_t) LLDP_TEXT_MAX);
        memcpy(out->data, v, out->size);
        out->data[out->size] = 0;
}

static void parse_management_address(const uint8_t *v, size_t len, LldpFrame *f) {
        /* address string length (1) = 1 + address, subtype (1), address (1..31), interface
         * numbering subtype (1), interface number (4), OID string length (1), OID (0..128) */
        if (len < 9 || v[0] < 2 || v[0] > 32 || (size_t) v[0] + 1 + 6 > len) {
                f->n_malformed++;
                return;
        }
        size_t oid_len = v[1 + v[0] + 5];
        if ((size_t) v[0] + 1 + 6 + oid_len > len) {
                f->n_malformed++;
                return;
        }
        if (f->n_management_addresses >= LLDP_MANAGEMENT_ADDRESSES_MAX) {
                f->n_repeated++;
                return;
        }
        LldpManagementAddress *a = &f->management_addresses[f->n_management_addresses++];
        a->family = v[1];
        a->size = (uint8_t) (v[0] - 1);
        memcpy(a->address, v + 2, a->size);
}

static void parse_organization(const uint8_t *v, size_t len, LldpFrame *f) {
        if (len < 4) {
                f->n_malformed++;
                return;
        }
        const uint8_t *oui = v, subtype = v[3], *d = v + 4;
        size_t n = len - 4;

        if (memcmp(oui, OUI_IEEE_8021, 3) == 0 && subtype == 1) {
                if (n != 2) {
                        f->n_malformed++;
                        return;
                }
                if (f->has_port_vlan_id) {
                        f->n_repeated++;
                        return;
                }
                f->has_port_vlan_id = true;
                f->port_vlan_id = be16(d);
                return;
        }
        if (memcmp(oui, OUI_IEEE_8023, 3) == 0 && subtype == 1) {
                if (n != 5) {
                        f->n_malformed++;
                        return;
                }
                if (f->has_mac_phy) {
                        f->n_repeated++;
                        return;
                }
                f->has_mac_phy = true;
                f->autoneg = d[0] & (LLDP_AUTONEG_SUPPORTED | LLDP_AUTONEG_ENABLED);
                f->autoneg_advertised = be16(d + 1);
                f->mau_type = be16(d + 3);
                return;
        }
        if (memcmp(oui, OUI_IEEE_8023, 3) == 0 && subtype == 4) {
                if (n != 2) {
                        f->n_malformed++;
                        return;
                }
                if (f->has_max_frame_size) {
                        f->n_repeated++;
                        return;
                }
                f->has_max_frame_size = true;
                f->max_frame_size = be16(d);
                return;
        }
        f->n_unknown++;
}

static int parse_id(const uint8_t *v, size_t len, LldpId *id, const char **ret_reason, const char *bad) {
        /* 1 octet subtype, then 1..255 octets; subtypes 0 and 8..255 are reserved. */
        if (len < 2 || len > 1 + LLDP_ID_MAX || v[0] == 0 || v[0] > 7) {
                *ret_reason = bad;
                return -EBADMSG;
        }
        id->subtype = v[0];
        id->size = (uint8_t) (len - 1);
        memcpy(id->data, v + 1, id->size);
        return 0;
}

int lldp_parse_frame(const void *frame, size_t size, LldpFrame *ret, const char **ret_reason) {
        const uint8_t *p = frame, *end;
        unsigned index = 0;
        int r;

        *ret = (LldpFrame) {};
        if (size < ETHER_HEADER_SIZE + 2) {
                *ret_reason = "frame too short for an LLDPDU";
                return -EBADMSG;
        }
        if (be16(p + 12) != LLDP_ETHERTYPE) {
                *ret_reason = "not LLDP (EtherType is not 0x88cc)";
                return -EBADMSG;
        }
        memcpy(ret->source_mac, p + 6, 6);
        end = p + size;
        p += ETHER_HEADER_SIZE;

        for (;; index++) {
                if (p == end) {
                        /* The End TLV is optional since 802.1AB-2009, but the first three are not. */
                        if (index < 3)
                                break;
                        return 0;
                }
                if (end - p < 2) {
                        *ret_reason = "truncated TLV header";
                        return -EBADMSG;
                }
                unsigned type = p[0] >> 1;
                size_t len = ((size_t) (p[0] & 1) << 8) | p[1];
                const uint8_t *v = p + 2;
                if ((size_t) (end - v) < len) {
                        *ret_reason = "TLV length runs past the end of the frame";
                        return -EBADMSG;
                }
                p = v + len;

                /* The mandatory TLVs come first, in this order, each once (8.2). */
                if (index == 0 && type != LLDP_TLV_CHASSIS_ID) {
                        *ret_reason = type == LLDP_TLV_END ? "no Chassis ID TLV" : "first TLV is not Chassis ID";
                        return -EBADMSG;
                }
                if (index == 1 && type != LLDP_TLV_PORT_ID) {
                        *ret_reason = type == LLDP_TLV_CHASSIS_ID ? "repeated Chassis ID TLV"
                                      : type == LLDP_TLV_END       ? "no Port ID TLV"
                                                                   : "second TLV is not Port ID";
                        return -EBADMSG;
                }
                if (index == 2 && type != LLDP_TLV_TTL) {
                        *ret_reason = type == LLDP_TLV_CHASSIS_ID ? "repeated Chassis ID TLV"
                                      : type == LLDP_TLV_PORT_ID  ? "repeated Port ID TLV"
                                      : type == LLDP_TLV_END      ? "no Time To Live TLV"
                                                                  : "third TLV is not Time To Live";
                        return -EBADMSG;
                }

                switch (type) {
                case LLDP_TLV_END:
                        if (len != 0) {
                                *ret_reason = "End of LLDPDU TLV is not empty";
                                return -EBADMSG;
                        }
                        /* What follows is the Ethernet padding. */
                        return 0;
                case LLDP_TLV_CHASSIS_ID:
                        if (index != 0) {
                                *ret_reason = "repeated Chassis ID TLV";
                                return -EBADMSG;
                        }
                        r = parse_id(v, len, &ret->chassis_id, ret_reason, "bad Chassis ID TLV (length or subtype)");
                        if (r < 0)
                                return r;
                        break;
                case LLDP_TLV_PORT_ID:
                        if (index != 1) {
                                *ret_reason = "repeated Port ID TLV";
                                return -EBADMSG;
                        }
                        r = parse_id(v, len, &ret->port_id, ret_reason, "bad Port ID TLV (length or subtype)");
                        if (r < 0)
                                return r;
                        break;
                case LLDP_TLV_TTL:
                        if (index != 2) {
                                *ret_reason = "repeated Time To Live TLV";
                                return -EBADMSG;
                        }
                        if (len != 2) {
                                *ret_reason = "Time To Live TLV is not 2 octets";
                                return -EBADMSG;
                        }
                        ret->ttl = be16(v);
                        break;
                case LLDP_TLV_PORT_DESCRIPTION:
                        parse_text(v, len, &ret->has_port_description, &ret->port_description, ret);
                        break;
                case LLDP_TLV_SYSTEM_NAME:
                        parse_text(v, len, &ret->has_system_name, &ret->system_name, ret);
                        break;
                case LLDP_TLV_SYSTEM_DESCRIPTION:
                        parse_text(v, len, &ret->has_system_description, &ret->system_description, ret);
                        break;
                case LLDP_TLV_SYSTEM_CAPABILITIES:
                        if (len != 4)
                                ret->n_malformed++;
                        else if (ret->has_capabilities)
                                ret->n_repeated++;
                        else {
                                ret->has_capabilities = true;
                                ret->capabilities_supported = be16(v);
                                ret->capabilities_enabled = be16(v + 2);
                        }
                        break;
                case LLDP_TLV_MANAGEMENT_ADDRESS:
                        parse_management_address(v, len, ret);
                        break;
                case LLDP_TLV_ORGANIZATION:
                        parse_organization(v, len, ret);
                        break;
                default:
                        /* Reserved types 9..126: skipped by their length, as 9.2.7.7.2 says. */
                        ret->n_unknown++;
                        break;
                }
        }

        *ret_reason = index == 0 ? "no Chassis ID TLV" : index == 1 ? "no Port ID TLV" : "no Time To Live TLV";
        return -EBADMSG;
}
