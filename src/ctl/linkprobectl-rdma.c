/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl rdma: RDMA ports. */
#include "linkprobectl.h"
#include "shared/string-util.h"

#define GIDS_SHOWN 2

static int compare_ports(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b;
        int c = strcmp(json_string_or(x, "Device", ""), json_string_or(y, "Device", ""));

        if (c != 0)
                return c;
        int64_t px = json_int_or(x, "Port", 0), py = json_int_or(y, "Port", 0);
        return (px > py) - (px < py);
}

/* "fe80::1 ::ffff:10.0.0.1 +3": the first distinct GIDs (RoCE lists each address once per type). */
static char *format_gids(json_object *port, size_t max) {
        json_object *gids;
        size_t n_shown = 0, n_more = 0, len = 0;
        char *s = NULL;
        FILE *f;

        if (!json_object_object_get_ex(port, "Gids", &gids) || !json_object_is_type(gids, json_type_array))
                return NULL;
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(gids); i++) {
                const char *gid = json_string_or(json_object_array_get_idx(gids, i), "Gid", NULL);
                bool seen = false;

                if (!gid)
                        continue;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = streq(json_string_or(json_object_array_get_idx(gids, k), "Gid", ""), gid);
                if (seen)
                        continue;
                if (n_shown < max) {
                        fprintf(f, "%s%s", n_shown > 0 ? " " : "", gid);
                        n_shown++;
                }
                else
                        n_more++;
        }
        if (n_more > 0)
                fprintf(f, " +%zu", n_more);
        fclose(f);
        return s;
}

/* "4X HDR"; what is unknown is left out ("-" when nothing is known). */
static void format_link(char *buf, size_t size, json_object *port) {
        const char *width = json_string_or(port, "Width", "unknown"), *speed = json_string_or(port, "Speed", "unknown");
        bool w = !streq(width, "unknown"), s = !streq(speed, "unknown");

        snprintf(buf, size, "%s%s%s", w ? width : "", w && s ? " " : "", s ? speed : "");
        if (!w && !s)
                snprintf(buf, size, "-");
}

int verb_rdma(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *ports = NULL;
        _cleanup_(text_table_freep) TextTable *t = NULL;
        int r;

        r = ctl_get_children(bus, "RdmaPort", &ports);
        if (r != 0)
                return r;
        json_object_array_sort(ports, compare_ports);

        if (arg_json)
                return ctl_print_json(ports);

        t = text_table_new("DEVICE", ">PORT", "STATE", "PHYS STATE", "TRANSPORT", ">RATE", "LINK", "NETDEV", "GIDS",
                           NULL);
        if (!t)
                return CTL_EXIT_FAILURE;
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
                json_object *p = json_object_array_get_idx(ports, i), *netdevs;
                _cleanup_(freep) char *gids = format_gids(p, GIDS_SHOWN);
                const char *netdev = NULL;
                char port[16], rate[32], link[32];
                double gbps = json_double_or(p, "RateGbps", 0);

                snprintf(port, sizeof(port), "%" PRId64, json_int_or(p, "Port", 0));
                if (gbps > 0)
                        snprintf(rate, sizeof(rate), "%g Gb/s", gbps);
                else
                        snprintf(rate, sizeof(rate), "-");
                format_link(link, sizeof(link), p);
                if (json_object_object_get_ex(p, "NetDevices", &netdevs) && json_object_array_length(netdevs) > 0)
                        netdev = json_object_get_string(json_object_array_get_idx(netdevs, 0));

                r = text_table_add_row(t, json_string_or(p, "Device", NULL), port, json_string_or(p, "State", NULL),
                                       json_string_or(p, "PhysState", NULL), json_string_or(p, "Transport", NULL),
                                       rate, link, netdev, isempty(gids) ? NULL : gids);
                if (r < 0)
                        return CTL_EXIT_FAILURE;
        }
        ctl_print_table(t, "RDMA ports");
        return 0;
}
