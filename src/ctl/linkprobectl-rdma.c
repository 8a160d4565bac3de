/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl rdma: RDMA ports. */
#include "linkprobectl.h"

#define GIDS_SHOWN 2

static int compare_ports(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b;
        int c = strcmp(json_string_or(x, "Device", ""), json_string_or(y, "Device", ""));

        if (c != 0)
                return c;
        int64_t px = json_int_or(x, "Port", 0), py = json_int_or(y, "Port", 0);
        return (px > py) - (px < py);
}

/* "fe80::1 ::ffff:10.0.0.1 +3": the first distinct GIDs (RoCE lists each address once per type); all
 * of them with --full. */
static char *format_gids(json_object *port, const char *key, json_object *gids) {
        size_t n_shown = 0, n_more = 0, len = 0;
        char *s = NULL;
        FILE *f;

        if (!gids || !json_object_is_type(gids, json_type_array))
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
                if (n_shown < GIDS_SHOWN || arg_full) {
                        fprintf(f, "%s%s", n_shown > 0 ? " " : "", gid);
                        n_shown++;
                } else
                        n_more++;
        }
        if (n_more > 0)
                fprintf(f, " +%zu", n_more);
        fclose(f);
        if (s && isempty(s))
                s = mfree(s);
        return s;
}

/* "4X HDR"; what is unknown is left out ("-" when nothing is known). */
static char *format_link(json_object *port, const char *key, json_object *v) {
        const char *width = json_string_or(port, "Width", "unknown"), *speed = json_string_or(port, "Speed", "unknown");
        bool w = !streq(width, "unknown"), s = !streq(speed, "unknown");

        if (!w && !s)
                return NULL;
        return ctl_strdupf("%s%s%s", w ? width : "", w && s ? " " : "", s ? speed : "");
}

/* The port at the other end of the cable: "Switch1 port 2" (its GUID where it has no description);
 * "-" while it is not known. */
static char *format_remote(json_object *port, const char *key, json_object *v) {
        const char *guid = json_string_or(port, "RemoteNodeGuid", ""), *desc = json_string_or(port, "RemoteNodeDescription", "");

        if (isempty(guid))
                return NULL;
        return ctl_strdupf("%s port %" PRIi64, isempty(desc) ? guid : desc, json_int_or(port, "RemotePort", 0));
}

/* What the link could be, as iblinkinfo says it: the best width and speed both ends support, the
 * parts that differ from what it trained at; "-" when it is not degraded. */
static char *format_could_be(json_object *port, const char *key, json_object *v) {
        const char *bw = json_string_or(port, "BestWidth", ""), *bs = json_string_or(port, "BestSpeed", "");
        bool w = !isempty(bw) && !streq(bw, json_string_or(port, "Width", "")),
             s = !isempty(bs) && !streq(bs, json_string_or(port, "Speed", ""));

        if (!json_bool_or(port, "Degraded", false) || (!w && !s))
                return NULL;
        return ctl_strdupf("%s%s%s", w ? bw : "", w && s ? " " : "", s ? bs : "");
}

static char *format_netdev(json_object *port, const char *key, json_object *netdevs) {
        if (!netdevs || !json_object_is_type(netdevs, json_type_array) || json_object_array_length(netdevs) == 0)
                return NULL;
        return ctl_format_string(port, key, json_object_array_get_idx(netdevs, 0));
}

/* Which port (names whole), whether it is up, how fast and its interface stay; the GIDs give way
 * first. */
static const CtlColumn rdma_columns[] = {
        { "DEVICE", "Device", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { ">PORT", "Port", NULL, NULL },
        { "STATE", "State", NULL, ctl_colour_state, { .min_width = TEXT_WIDTH_WHOLE } },
        { "PHYS STATE", "PhysState", NULL, ctl_colour_state,
          { .min_width = TEXT_WIDTH_WHOLE, .optional = 2 } },
        { "TRANSPORT", "Transport", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 3 } },
        { ">RATE", "RateGbps", NULL, NULL },
        { "LINK", "Width", format_link, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 1 } },
        { "COULD BE", "Degraded", format_could_be, NULL, { .min_width = TEXT_WIDTH_WHOLE, .optional = 3 } },
        { "NETDEV", "NetDevices", format_netdev, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "REMOTE", "RemoteNodeGuid", format_remote, NULL, { .weight = 200, .min_width = 10, .optional = 2 } },
        { "GIDS", "Gids", format_gids, NULL, { .weight = 300, .min_width = 12, .optional = 4 } },
};

static const CtlTableView rdma_table = {
        .columns = rdma_columns,
        .n_columns = ELEMENTSOF(rdma_columns),
        .noun = "RDMA port",
        .nouns = "RDMA ports",
        .empty = "No RDMA devices.",
};

int verb_rdma(sd_bus *bus, int argc, char **argv) {
        _cleanup_(json_object_putp) json_object *ports = NULL;
        int r;

        r = ctl_get_children(bus, "RdmaPort", &ports);
        if (r != 0)
                return r;
        json_object_array_sort(ports, compare_ports);
        return ctl_output_table(ports, &rdma_table);
}
