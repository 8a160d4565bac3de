/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl status: the daemon, this node, its memory, and counts of what is published. */
#include "linkprobectl.h"

/* "running", or "degraded (gpu-probe-failed, ...)". */
static char *format_state(json_object *status, const char *key, json_object *state) {
        json_object *reasons = ctl_member(status, "Manager.DegradedReasons");
        size_t n = reasons && json_object_is_type(reasons, json_type_array) ? json_object_array_length(reasons) : 0;
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        if (!f)
                return NULL;
        fputs(state ? json_object_get_string(state) : "?", f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%s", i == 0 ? " (" : ", ", json_object_get_string(json_object_array_get_idx(reasons, i)));
        if (n > 0)
                fputc(')', f);
        fclose(f);
        return s;
}

static char *format_kernel(json_object *status, const char *key, json_object *v) {
        return ctl_strdupf("%s (%s)", json_string_or(ctl_member(status, "Node"), "KernelRelease", "?"),
                           json_string_or(ctl_member(status, "Node"), "Architecture", "?"));
}

static char *format_cpu(json_object *status, const char *key, json_object *v) {
        json_object *node = ctl_member(status, "Node");
        return ctl_strdupf("%s, %" PRId64 " online", json_string_or(node, "CpuModel", "unknown"),
                           json_int_or(node, "CpuCount", 0));
}

static char *format_memory(json_object *status, const char *key, json_object *v) {
        _cleanup_(freep) char *available = ctl_format_bytes(status, key, ctl_member(status, "Memory.AvailableBytes")),
                              *total = ctl_format_bytes(status, key, ctl_member(status, "Memory.TotalBytes"));
        return ctl_strdupf("%s available of %s", strna(available), strna(total));
}

static char *format_links(json_object *status, const char *key, json_object *v) {
        return ctl_strdupf("%" PRId64 " (%" PRId64 " up)", ctl_int(ctl_member(status, "Counts.Links")),
                           ctl_int(ctl_member(status, "Counts.LinksUp")));
}

/* Why the last GPU probe run failed as a whole (there may be no GPU object to say it). */
static char *format_gpu_probe(json_object *status, const char *key, json_object *error) {
        const char *s = error ? json_object_get_string(error) : NULL;
        return isempty(s) ? NULL : ctl_strdupf("failed: %s", s);
}

static const CtlField status_fields[] = {
        { "State", "Manager.State", format_state, ctl_colour_state, false },
        { "Version", "Manager.Version", NULL, NULL, false },
        { "Hostname", "Node.Hostname", NULL, NULL, false },
        { "Machine ID", "Node.MachineId", NULL, NULL, false },
        { "Boot ID", "Node.BootId", NULL, NULL, false },
        { "Kernel", "Node.KernelRelease", format_kernel, NULL, false },
        { "CPU", "Node.CpuModel", format_cpu, NULL, false },
        { "Memory", "Memory", format_memory, NULL, false },
        { "Links", "Counts", format_links, NULL, false },
        { "GPU probe", "Manager.GpuProbeError", format_gpu_probe, NULL, true },
};

static const CtlDetailView status_details = {
        .fields = status_fields,
        .n_fields = ELEMENTSOF(status_fields),
};

int verb_status(sd_bus *bus, int argc, char **argv) {
        static const char *const interfaces[] = { "Manager", "Node", "Memory" };
        _cleanup_(json_object_putp) json_object *status = json_object_new_object(), *objects = NULL, *links = NULL;
        int64_t up = 0;
        int r;

        if (!status)
                return log_oom_ctl();
        for (size_t i = 0; i < ELEMENTSOF(interfaces); i++) {
                json_object *props = NULL;
                r = ctl_get_root_interface(bus, interfaces[i], false, &props);
                if (r != 0)
                        return r;
                json_object_object_add(status, interfaces[i], props);
        }

        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        links = ctl_children(objects, "Link");
        if (!links)
                return log_oom_ctl();
        for (size_t i = 0; i < json_object_array_length(links); i++)
                up += streq(json_string_or(json_object_array_get_idx(links, i), "OperState", ""), "up");

        json_object *counts = json_object_new_object();
        json_object_object_add(counts, "Links", json_object_new_int64((int64_t) json_object_array_length(links)));
        json_object_object_add(counts, "LinksUp", json_object_new_int64(up));
        json_object_object_add(status, "Counts", counts);

        return ctl_output_details(status, &status_details);
}
