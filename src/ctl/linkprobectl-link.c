/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl list / show: network links. */
#include "linkprobectl.h"
#include "shared/string-util.h"

/* "192.0.2.2/24 fd00::2/64 +1": the first few, so a line stays a line. */
static char *format_addresses(json_object *link, size_t max) {
        json_object *addresses;
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        if (!f)
                return NULL;
        if (json_object_object_get_ex(link, "Addresses", &addresses)) {
                size_t n = json_object_array_length(addresses);
                for (size_t i = 0; i < n && i < max; i++) {
                        json_object *a = json_object_array_get_idx(addresses, i);
                        fprintf(f, "%s%s/%" PRId64, i > 0 ? " " : "", json_string_or(a, "Address", "?"),
                                json_int_or(a, "PrefixLength", 0));
                }
                if (n > max)
                        fprintf(f, " +%zu", n - max);
        }
        fclose(f);
        return s;
}

static const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

int verb_list(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *links = NULL;
        _cleanup_(text_table_freep) TextTable *t = NULL;
        int r;

        r = ctl_get_children(bus, "Link", &links);
        if (r != 0)
                return r;
        if (arg_json)
                return ctl_print_json(links);

        t = text_table_new(">IDX", "NAME", "KIND", "TYPE", "STATE", "CARRIER", ">SPEED", ">MTU", "ADDRESSES", NULL);
        if (!t)
                return CTL_EXIT_FAILURE;
        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i);
                char idx[16], speed[32], mtu[16];
                _cleanup_(freep) char *addresses = format_addresses(l, 2);

                snprintf(idx, sizeof(idx), "%" PRId64, json_int_or(l, "Index", 0));
                snprintf(mtu, sizeof(mtu), "%" PRId64, json_int_or(l, "Mtu", 0));
                r = text_table_add_row(t, idx, json_string_or(l, "Name", NULL), json_string_or(l, "Kind", NULL),
                                       json_string_or(l, "ConnectionType", NULL), json_string_or(l, "OperState", NULL),
                                       yes_no(json_bool_or(l, "Carrier", false)),
                                       format_speed_mbps(speed, (uint64_t) json_int_or(l, "SpeedMbps", 0)), mtu,
                                       isempty(addresses) ? NULL : addresses);
                if (r < 0)
                        return CTL_EXIT_FAILURE;
        }
        ctl_print_table(t, "links");
        return 0;
}

static json_object *find_link(json_object *links, const char *which) {
        int64_t index = -1;
        char *end;

        errno = 0;
        long v = strtol(which, &end, 10);
        if (errno == 0 && *which != '\0' && *end == '\0' && v > 0)
                index = v;

        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i);
                if (index > 0 ? json_int_or(l, "Index", -1) == index : streq(json_string_or(l, "Name", ""), which))
                        return l;
        }
        return NULL;
}

static void show_link(json_object *l) {
        char speed[32], buf[64];
        json_object *addresses;
        _cleanup_(freep) char *name = escape_for_terminal(json_string_or(l, "Name", "?"));

        printf("%" PRId64 ": %s\n", json_int_or(l, "Index", 0), strna(name));
        ctl_print_field("Kind", json_string_or(l, "Kind", NULL));
        ctl_print_field("Connection type", json_string_or(l, "ConnectionType", NULL));
        snprintf(buf, sizeof(buf), "%s (admin %s, carrier %s)", json_string_or(l, "OperState", "?"),
                 json_string_or(l, "AdminState", "?"), yes_no(json_bool_or(l, "Carrier", false)));
        ctl_print_field("State", buf);
        snprintf(buf, sizeof(buf), "%" PRId64, json_int_or(l, "CarrierChanges", 0));
        ctl_print_field("Carrier changes", buf);
        snprintf(buf, sizeof(buf), "%" PRId64, json_int_or(l, "Mtu", 0));
        ctl_print_field("MTU", buf);
        ctl_print_field("Hardware address", isempty(json_string_or(l, "HardwareAddress", "")) ? NULL :
                                        json_string_or(l, "HardwareAddress", NULL));
        uint64_t mbps = (uint64_t) json_int_or(l, "SpeedMbps", 0);
        snprintf(buf, sizeof(buf), "%s, %s duplex", mbps > 0 ? format_speed_mbps(speed, mbps) : "unknown",
                 json_string_or(l, "Duplex", "unknown"));
        ctl_print_field("Speed", buf);
        ctl_print_field("Driver", isempty(json_string_or(l, "Driver", "")) ? NULL : json_string_or(l, "Driver", NULL));
        if (!streq(json_string_or(l, "ThunderboltPeer", "/"), "/"))
                ctl_print_field("Thunderbolt peer", json_string_or(l, "ThunderboltPeer", NULL));
        if (!streq(json_string_or(l, "RdmaPort", "/"), "/"))
                ctl_print_field("RDMA port", json_string_or(l, "RdmaPort", NULL));

        if (json_object_object_get_ex(l, "Addresses", &addresses) && json_object_array_length(addresses) > 0) {
                for (size_t i = 0; i < json_object_array_length(addresses); i++) {
                        json_object *a = json_object_array_get_idx(addresses, i);
                        snprintf(buf, sizeof(buf), "%s/%" PRId64 " (%s, scope %s)", json_string_or(a, "Address", "?"),
                                 json_int_or(a, "PrefixLength", 0), json_string_or(a, "Class", "?"),
                                 json_string_or(a, "Scope", "?"));
                        ctl_print_field(i == 0 ? "Addresses" : "", buf);
                }
        } else
                ctl_print_field("Addresses", NULL);
        ctl_print_field("Object", json_string_or(l, "Path", NULL));
}

int verb_show(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *links = NULL, *selected = NULL;
        int r;

        r = ctl_get_children(bus, "Link", &links);
        if (r != 0)
                return r;
        selected = json_object_new_array();
        if (!selected)
                return CTL_EXIT_FAILURE;

        for (int i = 1; i < argc; i++) {
                json_object *l = find_link(links, argv[i]);
                if (!l) {
                        _cleanup_(freep) char *escaped = escape_for_terminal(argv[i]);
                        fprintf(stderr, "No such link: %s\n", strna(escaped));
                        return CTL_EXIT_FAILURE;
                }
                json_object_array_add(selected, json_object_get(l));
        }

        if (arg_json)
                return ctl_print_json(selected);
        for (size_t i = 0; i < json_object_array_length(selected); i++) {
                if (i > 0)
                        putchar('\n');
                show_link(json_object_array_get_idx(selected, i));
        }
        return 0;
}
