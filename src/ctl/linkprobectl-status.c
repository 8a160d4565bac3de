/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl status: the daemon, this node, its memory, and counts of what is published. */
#include "linkprobectl.h"
#include "shared/string-util.h"

static void print_line(const char *key, const char *value) {
        _cleanup_(freep) char *escaped = escape_for_terminal(value ?: "-");
        printf("%14s: %s\n", key, strna(escaped));
}

int verb_status(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *status = NULL, *objects = NULL, *links = NULL;
        json_object *manager = NULL, *node = NULL, *memory = NULL;
        size_t up = 0;
        int r;

        r = ctl_get_root_interface(bus, "Manager", false, &manager);
        if (r != 0)
                return r;
        status = json_object_new_object();
        json_object_object_add(status, "Manager", manager);
        r = ctl_get_root_interface(bus, "Node", false, &node);
        if (r != 0)
                return r;
        json_object_object_add(status, "Node", node);
        r = ctl_get_root_interface(bus, "Memory", false, &memory);
        if (r != 0)
                return r;
        json_object_object_add(status, "Memory", memory);

        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        links = ctl_children(objects, "Link");
        for (size_t i = 0; links && i < json_object_array_length(links); i++)
                up += streq(json_string_or(json_object_array_get_idx(links, i), "OperState", ""), "up");

        json_object *counts = json_object_new_object();
        json_object_object_add(counts, "Links", json_object_new_int64((int64_t) json_object_array_length(links)));
        json_object_object_add(counts, "LinksUp", json_object_new_int64((int64_t) up));
        json_object_object_add(status, "Counts", counts);

        if (arg_json)
                return ctl_print_json(status);

        char buf[256], a[32], b[32];
        json_object *reasons;
        snprintf(buf, sizeof(buf), "%s", json_string_or(manager, "State", "?"));
        if (json_object_object_get_ex(manager, "DegradedReasons", &reasons) && json_object_array_length(reasons) > 0) {
                size_t len = strlen(buf);
                snprintf(buf + len, sizeof(buf) - len, " (%s)", json_object_to_json_string(reasons));
        }
        print_line("State", buf);
        print_line("Version", json_string_or(manager, "Version", NULL));
        print_line("Hostname", json_string_or(node, "Hostname", NULL));
        print_line("Machine ID", json_string_or(node, "MachineId", NULL));
        print_line("Boot ID", json_string_or(node, "BootId", NULL));
        snprintf(buf, sizeof(buf), "%s (%s)", json_string_or(node, "KernelRelease", "?"),
                 json_string_or(node, "Architecture", "?"));
        print_line("Kernel", buf);
        snprintf(buf, sizeof(buf), "%s, %" PRId64 " online", json_string_or(node, "CpuModel", "unknown"),
                 json_int_or(node, "CpuCount", 0));
        print_line("CPU", buf);
        snprintf(buf, sizeof(buf), "%s available of %s",
                 format_bytes(a, (uint64_t) json_int_or(memory, "AvailableBytes", 0)),
                 format_bytes(b, (uint64_t) json_int_or(memory, "TotalBytes", 0)));
        print_line("Memory", buf);
        snprintf(buf, sizeof(buf), "%zu (%zu up)", links ? json_object_array_length(links) : 0, up);
        print_line("Links", buf);
        return 0;
}
