/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl list / show: network links. */
#include <fnmatch.h>

#include "linkprobectl.h"

#define ADDRESSES_SHOWN 2

/* "192.0.2.2/24 fd00::2/64 +1": the first few, so a line stays a line (all of them with --full). */
static char *format_address_list(json_object *row, const char *key, json_object *addresses) {
        return ctl_format_joined(row, key, addresses, " ", arg_full ? SIZE_MAX : ADDRESSES_SHOWN, ctl_format_address);
}

/* "10 Gb/s", or for a link trained below what both ends support "10 Gb/s (of 25 Gb/s)": the commonest
 * slow link there is, seen in the list without asking for it. */
static char *format_list_speed(json_object *row, const char *key, json_object *v) {
        _cleanup_(freep) char *speed = ctl_format_speed_mbps(row, key, v);
        if (!speed || !json_bool_or(row, "Degraded", false))
                return TAKE_PTR(speed);
        _cleanup_(freep) char *best = ctl_format_speed_mbps(row, "BestCommonSpeedMbps", ctl_member(row, "BestCommonSpeedMbps"));
        return best ? ctl_strdupf("%s (of %s)", speed, best) : TAKE_PTR(speed);
}

static const char *colour_list_speed(json_object *row, const char *key, json_object *v) {
        return json_bool_or(row, "Degraded", false) ? ANSI_YELLOW : NULL;
}

/* The name, its state and speed stay; the addresses (the first two and a count) shrink first. Names
 * (at most 15 characters) and words from a short list (kind, type) are never cut: "Thunder…" would
 * not say which. */
static const CtlColumn link_columns[] = {
        { ">IDX", "Index", NULL, NULL },
        { "NAME", "Name", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "KIND", "Kind", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 3 } },
        { "TYPE", "ConnectionType", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 1 } },
        { "STATE", "OperState", NULL, ctl_colour_state, { .min_width = 7 } },
        { "CARRIER", "Carrier", ctl_format_yes_no, NULL, { .optional = 2 } },
        { ">SPEED", "SpeedMbps", format_list_speed, colour_list_speed },
        { ">MTU", "Mtu", NULL, NULL, { .optional = 4 } },
        { "ADDRESSES", "Addresses", format_address_list, NULL, { .weight = 300, .min_width = 12 } },
};

/* The same with the switch port each link is cabled to, when any is: shown only then, so that a node
 * without LLDP lists what it always did. */
static const CtlColumn link_columns_with_switch[] = {
        { ">IDX", "Index", NULL, NULL },
        { "NAME", "Name", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "KIND", "Kind", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 3 } },
        { "TYPE", "ConnectionType", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 1 } },
        { "STATE", "OperState", NULL, ctl_colour_state, { .min_width = 7 } },
        { "CARRIER", "Carrier", ctl_format_yes_no, NULL, { .optional = 2 } },
        { ">SPEED", "SpeedMbps", NULL, NULL },
        { ">MTU", "Mtu", NULL, NULL, { .optional = 4 } },
        { "SWITCH PORT", "Switch", ctl_format_switch_port, NULL, { .weight = 150, .min_width = 8, .optional = 5 } },
        { "ADDRESSES", "Addresses", format_address_list, NULL, { .weight = 300, .min_width = 12 } },
};

static const CtlTableView link_table = {
        .columns = link_columns,
        .n_columns = ELEMENTSOF(link_columns),
        .noun = "link",
        .nouns = "links",
        .empty = "No links.",
};

/* The links whose name matches one of the patterns (shell globs, as networkctl takes them). */
static json_object *filter_links(json_object *links, int n_patterns, char **patterns) {
        json_object *kept = json_object_new_array();

        if (!kept)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i);
                const char *name = json_string_or(l, "Name", "");
                for (int p = 0; p < n_patterns; p++)
                        if (fnmatch(patterns[p], name, 0) == 0) {
                                json_object_array_add(kept, json_object_get(l));
                                break;
                        }
        }
        return kept;
}

/* Links and switches from one GetManagedObjects, the switches kept for the formatters. */
static int get_links(sd_bus *bus, json_object **ret_links, json_object **ret_switches) {
        _cleanup_(json_object_putp) json_object *objects = NULL;
        int r;

        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        *ret_links = ctl_children(objects, "Link");
        *ret_switches = ctl_children(objects, "Switch");
        if (!*ret_links || !*ret_switches)
                return log_oom_ctl();
        ctl_switch_context(*ret_links, *ret_switches);
        return 0;
}

int verb_list(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *links = NULL, *switches = NULL, *matching = NULL;
        CtlTableView view = link_table;
        int r;

        r = get_links(bus, &links, &switches);
        if (r != 0)
                return r;
        if (ctl_links_have_switch(links)) {
                view.columns = link_columns_with_switch;
                view.n_columns = ELEMENTSOF(link_columns_with_switch);
        }
        if (argc <= 1) {
                r = ctl_output_table(links, &view);
                ctl_switch_context(NULL, NULL);
                return r;
        }

        matching = filter_links(links, argc - 1, argv + 1);
        if (!matching)
                return log_oom_ctl();
        /* Not an error, as for networkctl: the answer to "which links match" may be "none". */
        view.empty = "No links match.";
        r = ctl_output_table(matching, &view);
        ctl_switch_context(NULL, NULL);
        return r;
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

static char *format_title(json_object *l, const char *key, json_object *v) {
        return ctl_strdupf("%" PRId64 ": %s", json_int_or(l, "Index", 0), json_string_or(l, "Name", "?"));
}

static char *format_state(json_object *l, const char *key, json_object *v) {
        return ctl_strdupf("%s (admin %s, carrier %s)", json_string_or(l, "OperState", "?"),
                           json_string_or(l, "AdminState", "?"), json_bool_or(l, "Carrier", false) ? "yes" : "no");
}

static char *format_speed(json_object *l, const char *key, json_object *v) {
        _cleanup_(freep) char *speed = ctl_format_speed_mbps(l, key, v);
        return ctl_strdupf("%s, %s duplex", speed ?: "unknown", json_string_or(l, "Duplex", "unknown"));
}

/* One line per address: "10.70.0.1/24 (private, scope global)". */
static char *format_address_lines(json_object *l, const char *key, json_object *addresses) {
        size_t n = addresses ? json_object_array_length(addresses) : 0;
        char *s = NULL;
        size_t len = 0;
        FILE *f;

        if (n == 0)
                return NULL;
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                json_object *a = json_object_array_get_idx(addresses, i);
                fprintf(f, "%s%s/%" PRId64 " (%s, scope %s)", i > 0 ? "\n" : "", json_string_or(a, "Address", "?"),
                        json_int_or(a, "PrefixLength", 0), json_string_or(a, "Class", "?"),
                        json_string_or(a, "Scope", "?"));
        }
        fclose(f);
        return s;
}

/* "flapping: 7 carrier changes in the last 2 min". */
static char *format_health(json_object *l, const char *key, json_object *v) {
        const char *reason = json_string_or(l, "HealthReason", "");
        return ctl_strdupf("%s%s%s", json_string_or(l, "Health", "unknown"), isempty(reason) ? "" : ": ", reason);
}

/* "rx 1.25 Gb/s, tx 0.3 Gb/s" over the watch's last interval; nothing before its second sample. */
static char *format_traffic(json_object *l, const char *key, json_object *v) {
        json_object *rx = ctl_member(l, "RxGbps"), *tx = ctl_member(l, "TxGbps");
        if (!rx || !tx)
                return NULL;
        return ctl_strdupf("rx %.3g Gb/s, tx %.3g Gb/s", json_object_get_double(rx), json_object_get_double(tx));
}

/* "rx 0, tx 0, CRC 0, dropped 12"; nothing when the kernel gives no statistics. */
static char *format_errors(json_object *l, const char *key, json_object *v) {
        if (!ctl_member(l, "RxErrors"))
                return NULL;
        return ctl_strdupf("rx %" PRId64 ", tx %" PRId64 ", CRC %" PRId64 ", dropped %" PRId64, json_int_or(l, "RxErrors", 0),
                           json_int_or(l, "TxErrors", 0), json_int_or(l, "RxCrcErrors", 0), json_int_or(l, "RxDropped", 0));
}

static const char *colour_health(json_object *l, const char *key, json_object *v) {
        const char *h = json_string_or(l, "Health", NULL);
        return streq_ptr(h, "ok") ? ANSI_GREEN : streq_ptr(h, "degraded") ? ANSI_YELLOW
             : streq_ptr(h, "errors") || streq_ptr(h, "flapping") ? ANSI_RED : NULL;
}

/* "1 Gb/s, 10 Gb/s, 25 Gb/s": SupportedSpeedsMbps, PartnerSpeedsMbps or what the switch port says it can
 * do (LldpPartnerSpeedsMbps); nothing when empty. */
static char *format_speed_list(json_object *l, const char *key, json_object *speeds) {
        return ctl_format_joined(l, key, speeds, ", ", SIZE_MAX, ctl_format_speed_mbps);
}

static char *format_lldp_warning(json_object *l, const char *key, json_object *v) {
        const char *w = v ? json_object_get_string(v) : NULL;
        return isempty(w) ? NULL : strdup(w);
}

/* "yes: 10000 Mb/s while both ends support 25000 Mb/s", "no", or why nothing could be judged. */
static char *format_degraded(json_object *l, const char *key, json_object *v) {
        const char *reason = json_string_or(l, "DegradedReason", "");
        if (json_bool_or(l, "Degraded", false))
                return ctl_strdupf("yes%s%s", isempty(reason) ? "" : ": ", reason);
        return ctl_strdupf("%s", isempty(reason) ? "no" : reason);
}

static const char *colour_degraded(json_object *l, const char *key, json_object *v) {
        return json_bool_or(l, "Degraded", false) ? ANSI_YELLOW : NULL;
}

static const CtlField link_fields[] = {
        { "Kind", "Kind", NULL, NULL, false },
        { "Connection type", "ConnectionType", NULL, NULL, false },
        { "State", "OperState", format_state, ctl_colour_state, false },
        { "Carrier changes", "CarrierChanges", NULL, NULL, false },
        { "MTU", "Mtu", NULL, NULL, false },
        { "Hardware address", "HardwareAddress", NULL, NULL, false },
        { "Speed", "SpeedMbps", format_speed, NULL, false },
        { "Driver", "Driver", NULL, NULL, false },
        { "Supported speeds", "SupportedSpeedsMbps", format_speed_list, NULL, true },
        { "Partner speeds", "PartnerSpeedsMbps", format_speed_list, NULL, true },
        { "Best common", "BestCommonSpeedMbps", ctl_format_speed_mbps, NULL, true },
        { "Degraded", "Degraded", format_degraded, colour_degraded, true },
        { "Link down", "LinkDownReason", NULL, NULL, true },
        { "Health", "Health", format_health, colour_health, false },
        { "Traffic", "RxGbps", format_traffic, NULL, true },
        { "Errors", "RxErrors", format_errors, NULL, true },
        { "Thunderbolt peer", "ThunderboltPeer", ctl_format_object, NULL, true },
        { "RDMA port", "RdmaPort", ctl_format_object, NULL, true },
        { "Switch port", "Switch", ctl_format_switch_port_details, NULL, true },
        { "Switch port speeds", "LldpPartnerSpeedsMbps", format_speed_list, NULL, true },
        { "LLDP", "LldpWarning", format_lldp_warning, NULL, true },
        { "Addresses", "Addresses", format_address_lines, NULL, false },
        { "Object", "Path", ctl_format_string, NULL, false },
};

static const CtlDetailView link_details = {
        .fields = link_fields,
        .n_fields = ELEMENTSOF(link_fields),
        .title = format_title,
        .empty = "No links.",
};

int check_show_args(int argc, char **argv) {
        if (argc < 2 && !arg_all) {
                fprintf(stderr, "\"show\" needs more arguments: a link's name or index, or -a for every link. See --help.\n");
                return CTL_EXIT_USAGE;
        }
        return 0;
}

int verb_show(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *links = NULL, *switches = NULL, *selected = NULL;
        int r;

        r = get_links(bus, &links, &switches);
        if (r != 0)
                return r;
        if (argc < 2) { /* -a */
                r = ctl_output_details(links, &link_details);
                ctl_switch_context(NULL, NULL);
                return r;
        }

        selected = json_object_new_array();
        if (!selected)
                return log_oom_ctl();
        for (int i = 1; i < argc; i++) {
                json_object *l = find_link(links, argv[i]);
                if (!l) {
                        _cleanup_(freep) char *escaped = escape_for_terminal(argv[i]);
                        fprintf(stderr, "No such link: %s\n", strna(escaped));
                        ctl_switch_context(NULL, NULL);
                        return CTL_EXIT_FAILURE;
                }
                json_object_array_add(selected, json_object_get(l));
        }
        r = ctl_output_details(selected, &link_details);
        ctl_switch_context(NULL, NULL);
        return r;
}
