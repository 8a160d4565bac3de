/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Values as a person reads them: rates and sizes with units, times as local time or age, objects by
 * name. Every table, `show` block and monitor line formats through here. */
#include <math.h>
#include <stdarg.h>
#include <systemd/sd-bus.h>

#include "linkprobectl-format.h"
#include "linkprobectl-options.h"
#include "linkprobectl-terminal.h"
#include "shared/bus-names.h"
#include "shared/json-util.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

json_object *ctl_member(json_object *o, const char *key) {
        const char *dot;
        json_object *v = NULL;

        while (o && (dot = strchr(key, '.'))) {
                char head[64];
                snprintf(head, sizeof(head), "%.*s", (int) (dot - key), key);
                if (!json_object_object_get_ex(o, head, &o))
                        return NULL;
                key = dot + 1;
        }
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

char *ctl_strdupvf(const char *format, va_list ap) {
        char *s = NULL;

        if (vasprintf(&s, format, ap) < 0)
                return NULL;
        return s;
}

char *ctl_strdupf(const char *format, ...) {
        va_list ap;
        char *s;

        va_start(ap, format);
        s = ctl_strdupvf(format, ap);
        va_end(ap);
        return s;
}

int64_t ctl_int(json_object *v) {
        return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) ?
                       json_object_get_int64(v) : 0;
}

/* Timestamps are "XAt" (ISO 8601) with "XAtUsec" beside it; older data has only the number. */
uint64_t ctl_timestamp_usec(json_object *row, const char *key) {
        char usec_key[64];
        json_object *v;

        snprintf(usec_key, sizeof(usec_key), "%sUsec", key);
        v = ctl_member(row, usec_key);
        if (!v)
                v = ctl_member(row, key);
        return v && json_object_is_type(v, json_type_int) ? (uint64_t) json_object_get_int64(v) : 0;
}

char *ctl_format_string(json_object *row, const char *key, json_object *v) {
        const char *s = v ? json_object_get_string(v) : NULL;
        return isempty(s) ? NULL : strdup(s);
}

char *ctl_format_int(json_object *row, const char *key, json_object *v) {
        return v ? ctl_strdupf("%" PRId64, ctl_int(v)) : NULL;
}

char *ctl_format_yes_no(json_object *row, const char *key, json_object *v) {
        return v ? strdup(json_object_get_boolean(v) ? "yes" : "no") : NULL;
}

char *ctl_format_speed_mbps(json_object *row, const char *key, json_object *v) {
        uint64_t mbps = (uint64_t) ctl_int(v);

        if (mbps == 0)
                return NULL;
        if (mbps >= 1000 && mbps % 1000 == 0)
                return ctl_strdupf("%" PRIu64 " Gb/s", mbps / 1000);
        if (mbps >= 1000)
                return ctl_strdupf("%.1f Gb/s", (double) mbps / 1000);
        return ctl_strdupf("%" PRIu64 " Mb/s", mbps);
}

char *ctl_format_gbps(json_object *row, const char *key, json_object *v) {
        double gbps = v ? json_object_get_double(v) : 0;
        return gbps > 0 && isfinite(gbps) ? ctl_strdupf("%g Gb/s", gbps) : NULL;
}

char *ctl_format_bytes(json_object *row, const char *key, json_object *v) {
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        uint64_t bytes = (uint64_t) ctl_int(v);
        double d = (double) bytes;
        size_t u = 0;

        if (!v)
                return NULL;
        while (d >= 1024 && u + 1 < ELEMENTSOF(units)) {
                d /= 1024;
                u++;
        }
        return u == 0 ? ctl_strdupf("%" PRIu64 " B", bytes) : ctl_strdupf("%.1f %s", d, units[u]);
}

char *ctl_format_duration_usec(json_object *row, const char *key, json_object *v) {
        double usec = v ? json_object_get_double(v) : 0;

        if (!v || !isfinite(usec))
                return NULL;
        if (usec >= 10 * USEC_PER_SEC)
                return ctl_strdupf("%.1f s", usec / USEC_PER_SEC);
        if (usec >= 10000)
                return ctl_strdupf("%.1f ms", usec / 1000);
        return ctl_strdupf("%.0f us", usec);
}

char *ctl_format_age(json_object *row, const char *key, json_object *v) {
        uint64_t t = ctl_timestamp_usec(row, key), now = now_usec(CLOCK_REALTIME), age;

        if (t == 0)
                return NULL;
        age = now > t ? (now - t) / USEC_PER_SEC : 0;
        if (age < 120)
                return ctl_strdupf("%" PRIu64 "s ago", age);
        if (age < 2 * 3600)
                return ctl_strdupf("%" PRIu64 "min ago", age / 60);
        if (age < 2 * 86400)
                return ctl_strdupf("%" PRIu64 "h ago", age / 3600);
        return ctl_strdupf("%" PRIu64 "d ago", age / 86400);
}

/* "Sat 2026-11-21 13:05:09 CET", as systemd prints a time for people. */
char *ctl_format_local_time(json_object *row, const char *key, json_object *v) {
        uint64_t t = ctl_timestamp_usec(row, key);
        time_t sec = (time_t) (t / USEC_PER_SEC);
        struct tm tm;
        char buf[64];

        if (t == 0 || !localtime_r(&sec, &tm) || strftime(buf, sizeof(buf), "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                return NULL;
        return strdup(buf);
}

/* "link 3", "thunderbolt 0-301": an object path as its kind and decoded label, never "_33". */
char *ctl_object_label(const char *path) {
        static const char *const kinds[] = { "link", "thunderbolt", "rdma", "gpu", "peer", "neighbor", "pci" };

        if (!path || streq(path, "/"))
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                char prefix[64];
                _cleanup_(freep) char *label = NULL;

                snprintf(prefix, sizeof(prefix), BUS_PATH "/%s", kinds[i]);
                if (sd_bus_path_decode(path, prefix, &label) > 0 && label)
                        return ctl_strdupf("%s %s", kinds[i], label);
        }
        if (streq(path, BUS_PATH))
                return strdup("daemon");
        return strdup(path);
}

CtlObjectNamer ctl_object_namer = NULL;

char *ctl_format_object(json_object *row, const char *key, json_object *v) {
        const char *path = v ? json_object_get_string(v) : NULL;
        const char *name = path && ctl_object_namer ? ctl_object_namer(path) : NULL;

        if (name)
                return strdup(name);
        return ctl_object_label(path);
}

/* The elements of the array v, each as format gives it ("?" where it gives nothing), separator between
 * them; past shown of them, " +N" says how many more there are. NULL for no array or an empty one. */
char *ctl_format_joined(json_object *row, const char *key, json_object *v, const char *separator, size_t shown,
                        CtlElementFormatter format) {
        size_t n = v && json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0, len = 0;
        char *s = NULL;
        FILE *f;

        if (n == 0)
                return NULL;
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < MIN(n, shown); i++) {
                _cleanup_(freep) char *one = format(row, key, json_object_array_get_idx(v, i));
                fprintf(f, "%s%s", i > 0 ? separator : "", one ?: "?");
        }
        if (n > shown)
                fprintf(f, " +%zu", n - shown);
        if (fclose(f) < 0)
                return mfree(s);
        return s;
}

/* One element of Addresses: "192.0.2.2/24". */
char *ctl_format_address(json_object *row, const char *key, json_object *a) {
        return ctl_strdupf("%s/%" PRId64, json_string_or(a, "Address", "?"), json_int_or(a, "PrefixLength", 0));
}

/* "192.0.2.2/24, fd00::2/64". */
char *ctl_format_addresses(json_object *row, const char *key, json_object *v) {
        return ctl_format_joined(row, key, v, ", ", SIZE_MAX, ctl_format_address);
}

/* Anything else: null as nothing, lists joined, structures as "Member value". */
static char *format_generic(json_object *row, const char *key, json_object *v) {
        char *s = NULL;
        size_t len = 0;
        FILE *f;

        if (!v)
                return NULL;
        switch (json_object_get_type(v)) {
        case json_type_null:
                return NULL;
        case json_type_boolean:
                return ctl_format_yes_no(row, key, v);
        case json_type_int:
                return ctl_format_int(row, key, v);
        case json_type_double:
                return ctl_strdupf("%g", json_object_get_double(v));
        case json_type_string:
                if (startswith(json_object_get_string(v), BUS_PATH))
                        return ctl_format_object(row, key, v);
                return ctl_format_string(row, key, v);
        case json_type_array:
        case json_type_object:
                break;
        }
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        if (json_object_is_type(v, json_type_array))
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        _cleanup_(freep) char *e = format_generic(row, key, json_object_array_get_idx(v, i));
                        fprintf(f, "%s%s", i > 0 ? ", " : "", e ?: "-");
                }
        else {
                const char *sep = "";
                json_object_object_foreach(v, member, value) {
                        _cleanup_(freep) char *e = ctl_format_value(v, member, value);
                        fprintf(f, "%s%s %s", sep, member, e ?: "-");
                        sep = " ";
                }
        }
        fclose(f);
        if (s && isempty(s))
                s = mfree(s);
        return s;
}

/* By unit suffix: the name says what the number is (DESIGN: "Units are in names"). */
static char *format_mhz(json_object *row, const char *key, json_object *v) {
        return v ? ctl_strdupf("%" PRId64 " MHz", ctl_int(v)) : NULL;
}

static char *format_gbytes_per_sec(json_object *row, const char *key, json_object *v) {
        return v ? ctl_strdupf("%.1f GB/s", json_object_get_double(v)) : NULL;
}

static char *format_tflops(json_object *row, const char *key, json_object *v) {
        double d = v ? json_object_get_double(v) : 0;
        return v ? ctl_strdupf(d < 10 ? "%.3f TFLOPS" : "%.1f TFLOPS", d) : NULL;
}

static char *format_seconds(json_object *row, const char *key, json_object *v) {
        return v ? ctl_strdupf("%" PRId64 " s", ctl_int(v)) : NULL;
}

static const struct {
        const char *suffix;
        CtlFormat format;
} suffixes[] = {
        { "Mbps", ctl_format_speed_mbps },
        { "Gbps", ctl_format_gbps },
        { "GBps", format_gbytes_per_sec },
        { "Tflops", format_tflops },
        { "MHz", format_mhz },
        { "Usec", ctl_format_duration_usec },
        { "Sec", format_seconds },
        { "Bytes", ctl_format_bytes },
        { "At", ctl_format_local_time },
};

static CtlFormat format_for_key(const char *key) {
        const char *last = strrchr(key, '.');
        size_t n;

        key = last ? last + 1 : key;
        if (streq(key, "Addresses"))
                return ctl_format_addresses;
        n = strlen(key);
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t k = strlen(suffixes[i].suffix);
                if (n > k && streq(key + n - k, suffixes[i].suffix))
                        return suffixes[i].format;
        }
        return format_generic;
}

char *ctl_format_value(json_object *row, const char *key, json_object *v) {
        return format_for_key(key)(row, key, v);
}

/* "SpeedMbps" reads as "Speed", "MeasuredAt" as "Measured": the unit goes to the value. */
char *ctl_property_label(const char *key) {
        size_t n = strlen(key);
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t k = strlen(suffixes[i].suffix);
                if (n > k && streq(key + n - k, suffixes[i].suffix))
                        return strndup(key, n - k);
        }
        return strdup(key);
}

/* Green for what works, yellow for what works less well than it could, red for what does not. */
const char *ctl_colour_state(json_object *row, const char *key, json_object *v) {
        static const char *const good[] = { "up", "ok", "active", "running", "link-up", "yes" };
        static const char *const fair[] = { "degraded", "stale", "dormant", "probing", "queued", "pending",
                                            "starting", "polling", "unsupported" };
        static const char *const bad[] = { "down", "failed", "lowerlayerdown", "notpresent", "disabled",
                                           "no", "error" };
        const char *s = v ? json_object_get_string(v) : NULL;

        if (!s || !json_object_is_type(v, json_type_string))
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                if (streq(s, good[i]))
                        return ANSI_GREEN;
        for (size_t i = 0; i < ELEMENTSOF(fair); i++)
                if (streq(s, fair[i]))
                        return ANSI_YELLOW;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (streq(s, bad[i]))
                        return ANSI_RED;
        return NULL;
}

const char *ctl_colour_stale(json_object *row, const char *key, json_object *v) {
        return json_bool_or(row, "Stale", false) ? ANSI_YELLOW : NULL;
}
