/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What each box and line of the node's picture says: the figures people look for first (a link's speed
 * and width, a port's rate), then where it is, then what is wrong, in words. */
#include <math.h>

#include "linkprobectl-draw-labels.h"
#include "linkprobectl-draw.h"
#include "linkprobectl.h"

/* line with a newline put in place of the space before each width characters (UTF-8 continuation bytes
 * not counted, so a multibyte character is never split). */
static char *wrap(const char *line, size_t width) {
        char *s = strdup(line), *last_space = NULL;
        size_t column = 0;

        for (char *p = s; p && *p; p++) {
                if (((unsigned char) *p & 0xc0) == 0x80)
                        continue;
                if (*p == ' ')
                        last_space = p;
                if (++column > width && last_space) {
                        *last_space = '\n';
                        column = (size_t) (p - last_space);
                        last_space = NULL;
                }
        }
        return s;
}

char *draw_label(char **lines, size_t n, size_t width) {
        char *label = strdup("");

        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) char *wrapped = NULL;
                if (!lines[i])
                        continue;
                wrapped = label ? wrap(lines[i], width) : NULL;
                /* Each wrapped piece escaped on its own: nothing in a name can make a line of its own. */
                for (char *piece = wrapped, *next; piece && label; piece = next) {
                        _cleanup_(freep) char *escaped = NULL;
                        char *joined;

                        next = strchr(piece, '\n');
                        if (next)
                                *next++ = '\0';
                        escaped = draw_escape(piece);
                        joined = escaped ? ctl_strdupf("%s%s%s", label, *label ? "\\n" : "", escaped) : NULL;
                        free(label);
                        label = joined;
                }
                if (!wrapped) {
                        free(label);
                        label = NULL;
                }
        }
        for (size_t i = 0; i < n; i++)
                free(lines[i]);
        return label;
}

const char *draw_health_colour(json_object *o) {
        const char *health = json_string_or(o, "Health", "");

        if (streq(health, "ok"))
                return "#2e7d32";
        if (streq(health, "degraded"))
                return "#e65100";
        if (streq(health, "errors") || streq(health, "flapping"))
                return "#c62828";
        return "#757575";
}

bool draw_health_bad(json_object *o) {
        const char *health = json_string_or(o, "Health", NULL);
        return health && !streq(health, "ok");
}

char *draw_health_line(json_object *o) {
        const char *health = json_string_or(o, "Health", NULL), *reason = json_string_or(o, "HealthReason", "");

        if (!health || streq(health, "ok"))
                return NULL;
        return isempty(reason) ? ctl_strdupf("Health: %s", health) : ctl_strdupf("Health: %s: %s", health, reason);
}

static char *dup_nonempty(const char *s) {
        return isempty(s) ? NULL : strdup(s);
}

static char *format_mbps(uint64_t mbps) {
        if (mbps >= 1000)
                return ctl_strdupf(mbps % 1000 == 0 ? "%.0f Gb/s" : "%.1f Gb/s", (double) mbps / 1000);
        return ctl_strdupf("%" PRIu64 " Mb/s", mbps);
}

/* ---- PCI ---- */

static const char *port_title(const char *port_type) {
        if (streq(port_type, "root-port"))
                return "PCIe root port";
        if (streq(port_type, "upstream-port"))
                return "PCIe switch, upstream port";
        if (streq(port_type, "downstream-port"))
                return "PCIe switch, downstream port";
        return NULL;
}

char *draw_label_pci(json_object *pci) {
        const char *title = port_title(json_string_or(pci, "PortType", "")), *name = json_string_or(pci, "Name", "");
        const char *driver = json_string_or(pci, "Driver", "");

        return DRAW_LABEL(title ? strdup(title) : dup_nonempty(name), title ? dup_nonempty(name) : NULL,
                          isempty(driver) ? strdup(json_string_or(pci, "Address", "?"))
                                          : ctl_strdupf("%s (%s)", json_string_or(pci, "Address", "?"), driver),
                          isempty(name) && !title ? ctl_strdupf("class %06" PRIx64, json_int_or(pci, "Class", 0)) : NULL,
                          /* A root port has no line above it to say its Health (that of the link below). */
                          streq(json_string_or(pci, "PortType", ""), "root-port") ? draw_health_line(pci) : NULL);
}

char *draw_pci_link_text(json_object *pci) {
        double gts = json_double_or(pci, "CurrentLinkSpeed", 0);
        int64_t width = json_int_or(pci, "CurrentLinkWidth", 0);

        if (!(gts > 0) || width <= 0)
                return NULL;
        return ctl_strdupf("%.1f GT/s x%" PRId64, gts, width);
}

char *draw_label_pci_link(json_object *pci) {
        _cleanup_(freep) char *text = draw_pci_link_text(pci);
        int64_t gen = json_int_or(pci, "CurrentLinkGeneration", 0), max_gen = json_int_or(pci, "MaxLinkGeneration", 0);
        int64_t width = json_int_or(pci, "CurrentLinkWidth", 0), max_width = json_int_or(pci, "MaxLinkWidth", 0);
        double gbps = json_double_or(pci, "Gbps", 0);
        const char *reason = json_string_or(pci, "DegradedReason", "");
        char *first;

        if (!text)
                return DRAW_LINE_LABEL(strdup("no link figures"), draw_health_line(pci));
        first = gen > 0 ? ctl_strdupf("Gen%" PRId64 " %s", gen, text) : strdup(text);
        return DRAW_LINE_LABEL(first, gbps > 0 ? ctl_strdupf("%.0f Gb/s", gbps) : NULL,
                          (max_gen > gen || max_width > width) && max_gen > 0
                                  ? ctl_strdupf("of Gen%" PRId64 " x%" PRId64, max_gen, max_width)
                                  : NULL,
                          draw_health_line(pci),
                          /* The degradation in the link's own words, where Health says something else. */
                          json_bool_or(pci, "Degraded", false) && !isempty(reason) &&
                                          !strstr(json_string_or(pci, "HealthReason", ""), reason)
                                  ? ctl_strdupf("degraded: %s", reason)
                                  : NULL);
}

/* ---- what hangs off a function ---- */

char *draw_label_link(json_object *link) {
        uint64_t mbps = (uint64_t) json_int_or(link, "SpeedMbps", 0);
        const char *type = json_string_or(link, "ConnectionType", ""), *kind = json_string_or(link, "Kind", "");
        _cleanup_(freep) char *speed = mbps > 0 ? format_mbps(mbps) : NULL;

        return DRAW_LABEL(strdup(json_string_or(link, "Name", "?")),
                          ctl_strdupf("%s%s%s", isempty(type) ? kind : type, speed ? " · " : "", strempty(speed)),
                          ctl_strdupf("state %s%s", json_string_or(link, "OperState", "?"),
                                      json_bool_or(link, "Carrier", false) ? "" : ", no carrier"),
                          draw_health_line(link));
}

char *draw_label_rdma(json_object *port) {
        double rate = json_double_or(port, "RateGbps", 0);

        return DRAW_LABEL(ctl_strdupf("%s port %" PRId64, json_string_or(port, "Device", "?"), json_int_or(port, "Port", 0)),
                          ctl_strdupf("%s%s", json_string_or(port, "LinkLayer", "RDMA"),
                                      rate > 0 ? "" : ", no rate"),
                          rate > 0 ? ctl_strdupf("%g Gb/s (%s %s)", rate, json_string_or(port, "Width", ""),
                                                 json_string_or(port, "Speed", ""))
                                   : NULL,
                          ctl_strdupf("%s / %s", json_string_or(port, "State", "?"), json_string_or(port, "PhysState", "?")),
                          draw_health_line(port));
}

char *draw_label_gpu(json_object *gpu) {
        double memory = json_double_or(gpu, "GlobalMemoryBytes", 0), h2d = json_double_or(gpu, "HostToDeviceGBps", 0);

        return DRAW_LABEL(ctl_strdupf("GPU%" PRId64 ": %s", json_int_or(gpu, "Index", 0), json_string_or(gpu, "Name", "?")),
                          dup_nonempty(json_string_or(gpu, "Vendor", "")),
                          memory > 0 ? ctl_strdupf("%.0f GiB memory", memory / (1024.0 * 1024 * 1024)) : NULL,
                          h2d > 0 ? ctl_strdupf("host to device %.1f GB/s", h2d) : NULL);
}

/* ---- Thunderbolt ---- */

char *draw_label_tbt(json_object *tbt) {
        const char *type = json_string_or(tbt, "Type", ""), *name = json_string_or(tbt, "Name", "");
        const char *vendor = json_string_or(tbt, "Vendor", "");
        int64_t generation = json_int_or(tbt, "Generation", 0);
        char *title;

        if (streq(type, "domain"))
                return DRAW_LABEL(ctl_strdupf("Thunderbolt %s", json_string_or(tbt, "SysfsName", "?")),
                                  isempty(json_string_or(tbt, "SecurityLevel", ""))
                                          ? NULL
                                          : ctl_strdupf("security: %s", json_string_or(tbt, "SecurityLevel", "")),
                                  draw_health_line(tbt));
        title = isempty(name) ? strdup(json_string_or(tbt, "SysfsName", "?"))
                              : ctl_strdupf("%s%s%s", vendor, isempty(vendor) ? "" : " ", name);
        return DRAW_LABEL(title,
                          ctl_strdupf("%s %s%s", streq(type, "hub") ? "dock/hub" : type, json_string_or(tbt, "SysfsName", "?"),
                                      generation >= 4 ? ", USB4" : generation > 0 ? ", Thunderbolt" : ""),
                          generation > 0 && generation < 4 ? ctl_strdupf("generation %" PRId64, generation) : NULL,
                          streq(json_string_or(tbt, "Authorized", "yes"), "no") ? strdup("not authorized") : NULL);
}

char *draw_label_tbt_link(json_object *tbt) {
        int64_t rx = json_int_or(tbt, "RxGbps", 0), tx = json_int_or(tbt, "TxGbps", 0);
        int64_t rx_lanes = json_int_or(tbt, "RxLanes", 0), lane = json_int_or(tbt, "RxLaneGbps", 0);
        const char *reason = json_string_or(tbt, "DegradedReason", "");
        char *rates;

        if (rx <= 0 && tx <= 0)
                return DRAW_LINE_LABEL(draw_health_line(tbt));
        if (rx == tx && rx_lanes > 0 && lane > 0)
                rates = ctl_strdupf("%" PRId64 " Gb/s (%" PRId64 " × %" PRId64 " Gb/s)", rx, rx_lanes, lane);
        else
                rates = ctl_strdupf("rx %" PRId64 " / tx %" PRId64 " Gb/s", rx, tx);
        return DRAW_LINE_LABEL(rates, draw_health_line(tbt),
                          json_bool_or(tbt, "Degraded", false) && !isempty(reason) &&
                                          !strstr(json_string_or(tbt, "HealthReason", ""), reason)
                                  ? ctl_strdupf("degraded: %s", reason)
                                  : NULL);
}
