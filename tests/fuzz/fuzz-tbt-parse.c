/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes every parser of sysfs/thunderbolt-parse.c with the same input, as an attribute value or a
 * device name would arrive, and checks that a success only ever yields an in-range value. */
#include "shared/string-util.h"
#include "sysfs/thunderbolt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(freep) char *s = NULL;
        char *name = NULL, **acl = NULL;
        unsigned v, port, index, domain;
        TbtAuthorized a;
        uint64_t route;

        if (size > 4096) /* an attribute is at most one page */
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        if (tbt_parse_lane_speed(s, &v) >= 0 && (v == 0 || v > TBT_LANE_GBPS_MAX))
                abort();
        if (tbt_parse_lanes(s, &v) >= 0 && (v == 0 || v > TBT_LANES_MAX))
                abort();
        if (tbt_parse_generation(s, &v) >= 0 && (v == 0 || v > TBT_GENERATION_MAX))
                abort();
        if (tbt_parse_usb4_version(s, &v) >= 0 && (v == 0 || v > 9))
                abort();
        if (tbt_parse_authorized(s, &a) >= 0 && (a < 0 || a >= _TBT_AUTHORIZED_MAX))
                abort();
        (void) tbt_parse_nvm_version(s);
        if (tbt_uuid_is_valid(s) && strlen(s) != 36)
                abort();
        if (tbt_parse_router_name(s, &domain, &route) >= 0) {
                int depth = tbt_route_depth(route);
                if (depth < 0 || (unsigned) depth > TBT_ROUTE_DEPTH_MAX)
                        abort();
                for (int d = 1; d <= depth; d++)
                        if (tbt_route_port(route, (unsigned) d) == 0 || tbt_route_port(route, (unsigned) d) > 63)
                                abort();
        }
        (void) tbt_parse_domain_name(s, &domain);
        if (tbt_parse_service_name(s, &name, &index) >= 0 && !name)
                abort();
        name = mfree(name);
        if (tbt_parse_retimer_name(s, &name, &port, &index) >= 0 && (!name || port == 0 || port > 63 || index == 0))
                abort();
        free(name);
        if (tbt_parse_boot_acl(s, &acl) >= 0 && !acl)
                abort();
        strv_free(acl);

        (void) tbt_kind_from_devtype(s);
        (void) tbt_router_type_from_string(s);
        (void) tbt_security_from_string(s);
        (void) tbt_port_link_from_string(s);
        return 0;
}
