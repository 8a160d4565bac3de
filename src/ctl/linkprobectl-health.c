/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl health: every link, RDMA port, PCI function and Thunderbolt hop that is not ok, worst
 * first, like `systemctl --failed`: exit 0 either way, one sentence when all is well. */
#include "linkprobectl.h"

/* The kinds that carry Health, and how a person names one of each. */
static const struct {
        const char *kind;
        const char *noun;
        const char *name_key;
} kinds[] = {
        { "Link", "link", "Name" },
        { "RdmaPort", "rdma", NULL },
        { "Pci", "pci", "Address" },
        { "Thunderbolt", "thunderbolt", "SysfsName" },
};

static int severity(const char *health) {
        static const char *const order[] = { "unknown", "ok", "degraded", "flapping", "errors" };
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if (streq_ptr(health, order[i]))
                        return (int) i;
        return 0;
}

static int compare_rows(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b;
        int c = severity(json_string_or(y, "Health", NULL)) - severity(json_string_or(x, "Health", NULL));

        if (c != 0)
                return c;
        c = strcmp(json_string_or(x, "Kind", ""), json_string_or(y, "Kind", ""));
        return c != 0 ? c : strcmp(json_string_or(x, "Object", ""), json_string_or(y, "Object", ""));
}

static const char *colour_health(json_object *row, const char *key, json_object *v) {
        const char *s = v ? json_object_get_string(v) : NULL;

        if (streq_ptr(s, "errors") || streq_ptr(s, "flapping"))
                return ANSI_RED;
        if (streq_ptr(s, "degraded"))
                return ANSI_YELLOW;
        return NULL;
}

/* The row of one object: its kind, what people call it, its path, its health and why. */
static json_object *health_row(const char *kind, const char *noun, const char *name_key, json_object *props) {
        _cleanup_(freep) char *object = NULL;
        json_object *row = json_object_new_object();

        if (!row)
                return NULL;
        if (name_key)
                object = ctl_strdupf("%s %s", noun, json_string_or(props, name_key, "?"));
        else
                object = ctl_strdupf("%s %s/%" PRId64, noun, json_string_or(props, "Device", "?"),
                                     json_int_or(props, "Port", 0));
        json_object_object_add(row, "Kind", json_object_new_string(kind));
        json_object_object_add(row, "Object", json_string_or_null(object));
        json_object_object_add(row, "Path", json_object_new_string(json_string_or(props, "Path", "/")));
        json_object_object_add(row, "Health", json_object_new_string(json_string_or(props, "Health", "unknown")));
        json_object_object_add(row, "HealthReason", json_object_new_string(json_string_or(props, "HealthReason", "")));
        return row;
}

/* The object (its kind and an interface, RDMA device, PCI address or Thunderbolt name: a cut one names
 * nothing) and its health (one of five words) stay whole; the reason takes what is left. */
static const CtlColumn health_columns[] = {
        { "OBJECT", "Object", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "HEALTH", "Health", NULL, colour_health, { .min_width = TEXT_WIDTH_WHOLE } },
        { "REASON", "HealthReason", NULL, NULL, { .weight = 300, .min_width = 10 } },
};

int verb_health(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *objects = NULL, *manager = NULL, *rows = NULL;
        _cleanup_(freep) char *empty = NULL;
        size_t watched = 0;
        int r;

        r = ctl_get_root_interface(bus, "Manager", false, &manager);
        if (r != 0)
                return r;
        r = ctl_get_objects(bus, &objects);
        if (r != 0)
                return r;
        rows = json_object_new_array();
        if (!rows)
                return log_oom_ctl();
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                _cleanup_(json_object_putp) json_object *children = ctl_children(objects, kinds[k].kind);
                for (size_t i = 0; children && i < json_object_array_length(children); i++) {
                        json_object *props = json_object_array_get_idx(children, i);
                        watched++;
                        if (streq(json_string_or(props, "Health", "unknown"), "ok"))
                                continue;
                        json_object *row = health_row(kinds[k].kind, kinds[k].noun, kinds[k].name_key, props);
                        if (!row)
                                return log_oom_ctl();
                        json_object_array_add(rows, row);
                }
        }
        json_object_array_sort(rows, compare_rows);

        /* With the watch off every object is unknown: that is one fact, not a list. */
        if (arg_json == JSON_OFF && json_int_or(manager, "WatchIntervalUSec", 0) == 0) {
                if (arg_legend)
                        printf("Link health is not watched: [Watch] IntervalSec=0 in linkprobed.conf.\n");
                return 0;
        }
        empty = ctl_strdupf("All %zu links, RDMA ports, PCI functions and Thunderbolt devices are ok.", watched);
        if (!empty)
                return log_oom_ctl();
        return ctl_output_table(rows, &(CtlTableView) {
                                          .columns = health_columns,
                                          .n_columns = ELEMENTSOF(health_columns),
                                          .noun = "object",
                                          .nouns = "objects",
                                          .empty = empty,
                                  });
}
