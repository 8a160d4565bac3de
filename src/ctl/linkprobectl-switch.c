/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl switches (and lldp, as networkctl names it): the switches at the far end of the cables;
 * and the switch port of a link, for list and show. */
#include "linkprobectl.h"

/* What the formatters below look things up in; they take no userdata (ctl_object_namer neither). */
static json_object *context_links, *context_switches;

void ctl_switch_context(json_object *links, json_object *switches) {
        context_links = links;
        context_switches = switches;
}

static json_object *find_by_path(json_object *rows, const char *path) {
        for (size_t i = 0; rows && path && i < json_object_array_length(rows); i++) {
                json_object *o = json_object_array_get_idx(rows, i);
                if (streq(json_string_or(o, "Path", ""), path))
                        return o;
        }
        return NULL;
}

/* A local object by its interface name when it is a link, else by its label. */
static char *local_name(const char *path) {
        json_object *l = find_by_path(context_links, path);
        return l ? strdup(json_string_or(l, "Name", "?")) : ctl_object_label(path);
}

static const char *switch_name(json_object *sw) {
        const char *name = json_string_or(sw, "Name", "");
        return isempty(name) ? json_string_or(sw, "ChassisId", "?") : name;
}

/* The port of switch sw whose far end is path, or NULL. */
static json_object *switch_port_of(json_object *sw, const char *path) {
        json_object *ports = ctl_member(sw, "Ports");
        for (size_t i = 0; ports && i < json_object_array_length(ports); i++) {
                json_object *p = json_object_array_get_idx(ports, i);
                if (streq(json_string_or(p, "Object", ""), path))
                        return p;
        }
        return NULL;
}

/* For a link: "leaf-3 port Eth1/7 (uplink to node7)"; with details the switch's address. */
static char *format_port(json_object *link, bool details) {
        const char *path = json_string_or(link, "Switch", NULL);
        json_object *sw = find_by_path(context_switches, path), *port;

        if (!sw)
                return NULL;
        port = switch_port_of(sw, json_string_or(link, "Path", ""));
        const char *id = port ? json_string_or(port, "PortId", "?") : "?";
        const char *descr = port ? json_string_or(port, "PortDescription", "") : "";
        json_object *addresses = ctl_member(sw, "ManagementAddresses");
        const char *address = addresses && json_object_array_length(addresses) > 0
                                      ? json_object_get_string(json_object_array_get_idx(addresses, 0)) : NULL;
        if (!details)
                return ctl_strdupf("%s %s", switch_name(sw), id);
        return ctl_strdupf("%s port %s%s%s%s%s%s", switch_name(sw), id, isempty(descr) ? "" : " (", descr,
                           isempty(descr) ? "" : ")", address ? ", management " : "", strempty(address));
}

char *ctl_format_switch_port(json_object *link, const char *key, json_object *v) {
        return format_port(link, false);
}

char *ctl_format_switch_port_details(json_object *link, const char *key, json_object *v) {
        return format_port(link, true);
}

bool ctl_links_have_switch(json_object *links) {
        for (size_t i = 0; links && i < json_object_array_length(links); i++)
                if (json_string_or(json_object_array_get_idx(links, i), "Switch", NULL))
                        return true;
        return false;
}

/* "eth0:Eth1/7 eth1:Eth1/8": our end, then theirs. */
static char *format_ports(json_object *sw, const char *key, json_object *ports) {
        char *s = NULL;
        size_t len = 0;
        FILE *f;

        if (!ports || json_object_array_length(ports) == 0)
                return NULL;
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
                json_object *p = json_object_array_get_idx(ports, i);
                _cleanup_(freep) char *ours = local_name(json_string_or(p, "Object", NULL));
                fprintf(f, "%s%s:%s", i > 0 ? " " : "", strna(ours), json_string_or(p, "PortId", "?"));
        }
        fclose(f);
        return s;
}

static char *format_port_descriptions(json_object *sw, const char *key, json_object *ports) {
        char *s = NULL;
        size_t len = 0;
        FILE *f;
        bool any = false;

        if (!ports || json_object_array_length(ports) == 0)
                return NULL;
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
                const char *d = json_string_or(json_object_array_get_idx(ports, i), "PortDescription", "");
                fprintf(f, "%s%s", i > 0 ? ", " : "", isempty(d) ? "-" : d);
                any = any || !isempty(d);
        }
        fclose(f);
        if (!any)
                s = mfree(s);
        return s;
}

static char *format_name(json_object *sw, const char *key, json_object *v) {
        const char *name = json_string_or(sw, "Name", "");
        return isempty(name) ? NULL : strdup(name);
}

static char *format_list(json_object *sw, const char *key, json_object *v) {
        return ctl_format_joined(sw, key, v, ",", SIZE_MAX, ctl_format_string);
}

/* "6: 1X while both ends support 12X, 7: ...": the sweep's switch-to-switch links that trained below
 * what both ends support, by this switch's port. */
static char *format_degraded_links(json_object *sw, const char *key, json_object *judgements) {
        char *s = NULL;
        size_t len = 0, n = 0;
        FILE *f;

        if (!judgements || json_object_array_length(judgements) == 0)
                return NULL;
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(judgements); i++) {
                json_object *j = json_object_array_get_idx(judgements, i);
                if (!json_bool_or(j, "Degraded", false))
                        continue;
                fprintf(f, "%s%" PRIi64 ": %s", n++ > 0 ? ", " : "", json_int_or(j, "Port", 0),
                        json_string_or(j, "DegradedReason", "?"));
        }
        fclose(f);
        if (n == 0)
                s = mfree(s);
        return s;
}

/* Which switch, and which of our links goes to which of its ports, stay; descriptions go first. */
static const CtlColumn switch_columns[] = {
        { "NAME", "Name", format_name, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "CHASSIS ID", "ChassisId", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "PORTS", "Ports", format_ports, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "PORT DESCRIPTION", "Ports", format_port_descriptions, NULL, { .weight = 200, .min_width = 8, .optional = 1 } },
        { "CAPS", "Capabilities", format_list, NULL, { .min_width = 6, .optional = 2 } },
        { "ADDRESS", "ManagementAddresses", format_list, NULL, { .min_width = 7, .optional = 3 } },
        { "SOURCE", "Source", format_list, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 4 } },
        { "DEGRADED LINKS", "LinkJudgements", format_degraded_links, NULL,
          { .weight = 200, .min_width = 8, .optional = 5 } },
};

/* What keeps a link from showing its switch: said under the table, so "nothing" is never silent. */
static void switch_notes(json_object *rows, FILE *f) {
        for (size_t i = 0; context_links && i < json_object_array_length(context_links); i++) {
                json_object *l = json_object_array_get_idx(context_links, i);
                const char *warning = json_string_or(l, "LldpWarning", "");
                if (!isempty(warning)) {
                        _cleanup_(freep) char *name = escape_for_terminal(json_string_or(l, "Name", "?")),
                                              *text = escape_for_terminal(warning);
                        fprintf(f, "%s: %s\n", strna(name), strna(text));
                }
        }
}

static const CtlTableView switch_table = {
        .columns = switch_columns,
        .n_columns = ELEMENTSOF(switch_columns),
        .noun = "switch",
        .nouns = "switches",
        .empty = "No switches seen.",
        .notes = switch_notes,
};

int verb_switches(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *objects = NULL, *links = NULL, *switches = NULL;
        int r;

        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        links = ctl_children(objects, "Link");
        switches = ctl_children(objects, "Switch");
        if (!links || !switches)
                return log_oom_ctl();
        ctl_switch_context(links, switches);
        r = ctl_output_table(switches, &switch_table);
        /* The table has no notes when it has no rows; here they say why it has none. */
        if (r == 0 && arg_json == JSON_OFF && json_object_array_length(switches) == 0) {
                switch_notes(switches, stdout);
                fflush(stdout);
        }
        ctl_switch_context(NULL, NULL);
        return r;
}
