/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the LLDPDU parser with whole received frames, and every text form of what it accepts: each
 * must be a valid UTF-8 string without control characters, within its buffer. */
#include "shared/lldp-parse.h"
#include "shared/string-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s, size_t size) {
        size_t n = strnlen(s, size);
        if (n >= size || !utf8_is_valid_n(s, n))
                abort();
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char text[LLDP_ID_TEXT_MAX], small[7];
        const char *reason = NULL;
        uint32_t speeds[4];
        LldpFrame f;

        if (size > 9216) /* a jumbo frame: nothing bigger reaches a packet socket */
                return 0;
        if (lldp_parse_frame(data, size, &f, &reason) < 0) {
                if (!reason)
                        abort();
                return 0;
        }
        if (f.chassis_id.size == 0 || f.port_id.size == 0 ||
            f.n_management_addresses > LLDP_MANAGEMENT_ADDRESSES_MAX)
                abort();
        check_text(lldp_id_to_text(&f.chassis_id, true, text, sizeof(text)), sizeof(text));
        check_text(lldp_id_to_text(&f.port_id, false, text, sizeof(text)), sizeof(text));
        check_text(lldp_id_to_text(&f.port_id, false, small, sizeof(small)), sizeof(small));
        check_text(lldp_bytes_to_text(&f.port_description, text, sizeof(text)), sizeof(text));
        check_text(lldp_bytes_to_text(&f.system_name, small, sizeof(small)), sizeof(small));
        check_text(lldp_bytes_to_text(&f.system_description, text, sizeof(text)), sizeof(text));
        for (unsigned i = 0; i < f.n_management_addresses; i++)
                check_text(lldp_management_address_to_text(&f.management_addresses[i], text, sizeof(text)),
                           sizeof(text));
        if (lldp_advertised_speeds_mbps(f.autoneg_advertised, speeds) > 4)
                abort();
        (void) lldp_mau_type_speed_mbps(f.mau_type);
        return 0;
}
