/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CLI's JSON schema, applied in one place to everything read from D-Bus (linkprobectl(1), JSON
 * OUTPUT): named members rather than tuples, null for "no object", every timestamp twice (ISO 8601 and
 * microseconds), measured figures rounded to what the measurement can tell. */
#include <math.h>

#include "linkprobectl.h"
#include "shared/time-util.h"

/* D-Bus structs arrive as arrays; JSON readers deserve names. The members in signature order. */
static const struct {
        const char *kind;
        const char *property;
        bool single; /* one struct, not an array of them */
        const char *const *members;
} struct_members[] = {
        { "Link", "Addresses", false, (const char *const[]) { "Address", "PrefixLength", "Scope", "Class", NULL } },
        { "RdmaPort", "Gids", false, (const char *const[]) { "Index", "Gid", "Type", "NetDevice", NULL } },
        { "Switch", "Ports", false, (const char *const[]) { "Object", "PortId", "PortDescription", NULL } },
        { "Switch", "Links", false,
          (const char *const[]) { "Port", "Switch", "RemoteNodeGuid", "RemotePort", "Width", "Speed", "RateGbps", NULL } },
        { "Switch", "LinkJudgements", false,
          (const char *const[]) { "Port", "BestWidth", "BestSpeed", "BestRateGbps", "Degraded", "DegradedReason",
                                  NULL } },
        { "Summary", "FastestLink", true,
          (const char *const[]) { "Link", "Name", "ConnectionType", "SpeedMbps", NULL } },
        { "Summary", "ThunderboltPeers", false,
          (const char *const[]) { "Thunderbolt", "Name", "PathRxGbps", "PathTxGbps", "LinkClass",
                                  "NetInterfaceName", NULL } },
        { "Summary", "DegradedLinks", false, (const char *const[]) { "Object", "Name", "Reason", NULL } },
        { "Node", "Packages", false, (const char *const[]) { "Id", "Cpus", "Cores", "NumaNodes", NULL } },
        { "Node", "NumaNodes", false, (const char *const[]) { "Id", "Cpus", NULL } },
        { "Peer", "Streams", true, (const char *const[]) { "Upload", "Download", NULL } },
        { "Pci", "GpuLinks", false,
          (const char *const[]) { "Peer", "PeerAddress", "Type", "Links", "Weight", "MinBandwidthGBps",
                                  "MaxBandwidthGBps", NULL } },
        { "Summary", "BestPeerPaths", false,
          (const char *const[]) { "Address", "Peer", "UploadGbps", "DownloadGbps", "RttUsec", "Stale", NULL } },
        { "Summary", "BestNeighborPaths", false,
          (const char *const[]) { "NodeId", "Hostname", "Neighbor", "Peer", "UploadGbps", "DownloadGbps", "RttUsec",
                                  NULL } },
};

/* Decimals a figure is published with: a TCP goodput timed over 100 ms and more is good to 10 Mbit/s,
 * an RTT sampled with a microsecond clock to a tenth of one, a FLOPS figure to a GFLOPS. */
static const struct {
        const char *key;
        int decimals;
} precision[] = {
        { "UploadGbps", 2 },          { "DownloadGbps", 2 },          { "RttUsec", 1 },
        { "JitterUsec", 1 },          { "JitterRfc3550Usec", 1 },     { "Fp32Tflops", 3 },
        { "Fp16Tflops", 3 },          { "MemoryBandwidthGBps", 1 },   { "MemoryBandwidthSpread", 3 },
        { "Fp32Spread", 3 },          { "Fp16Spread", 3 },            { "Fp32BestTflops", 3 },
        { "Fp16BestTflops", 3 },      { "MemoryBandwidthBestGBps", 1 }, { "HostToDeviceGBps", 2 },
        { "DeviceToHostGBps", 2 },    { "Gbps", 2 },                  { "PathGbps", 2 },
        { "PathLimitGbps", 2 },       { "PciPathGBps", 3 },           { "RxGbps", 3 },
        { "TxGbps", 3 },
};

/* Counters the daemon publishes as 2^64-1 when the kernel has none (org.linkprobe.LinkProbe1(5)): null
 * here. */
static const char *const counters[] = {
        "AerCorrectable", "AerNonFatal", "AerFatal", "SymbolErrors", "LinkErrorRecoveries", "LinkDowned", "RcvErrors",
        "XmitDiscards",   "RxErrors",    "TxErrors", "RxCrcErrors",  "RxDropped",
};

static bool is_unknown_counter(const char *key, json_object *v) {
        if (!json_object_is_type(v, json_type_int) || json_object_get_uint64(v) != UINT64_MAX)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(counters); i++)
                if (streq(key, counters[i]))
                        return true;
        return false;
}

static json_object *name_members(json_object *tuple, const char *const *members) {
        json_object *named;

        if (!json_object_is_type(tuple, json_type_array))
                return json_object_get(tuple);
        named = json_object_new_object();
        if (!named)
                return NULL;
        for (size_t m = 0; members[m]; m++) {
                json_object *v = json_object_array_get_idx(tuple, m);
                json_object_object_add(named, members[m], json_object_get(v));
        }
        return named;
}

static void name_structs(const char *kind, json_object *props) {
        for (size_t i = 0; i < ELEMENTSOF(struct_members); i++) {
                json_object *v;

                if (!streq(struct_members[i].kind, kind) ||
                    !json_object_object_get_ex(props, struct_members[i].property, &v) ||
                    !json_object_is_type(v, json_type_array))
                        continue;
                if (struct_members[i].single) {
                        json_object *named = name_members(v, struct_members[i].members);
                        /* A struct about no object (FastestLink when nothing is up) is no struct. */
                        if (named && !ctl_member(named, struct_members[i].members[0])) {
                                json_object_put(named);
                                named = NULL;
                        }
                        json_object_object_add(props, struct_members[i].property, named);
                        continue;
                }
                for (size_t k = 0; k < json_object_array_length(v); k++)
                        json_object_array_put_idx(v, k,
                                                  name_members(json_object_array_get_idx(v, k),
                                                               struct_members[i].members));
        }
}

static json_object *rounded(double d, int decimals) {
        char buf[64];
        size_t n;

        if (!isfinite(d))
                return NULL;
        snprintf(buf, sizeof(buf), "%.*f", decimals, d);
        /* "9.40" reads as 9.4; keep one decimal so it stays a float to every reader. */
        n = strlen(buf);
        while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
                buf[--n] = '\0';
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

static bool is_timestamp(const char *key, json_object *v) {
        size_t n = strlen(key);
        return n > 2 && streq(key + n - 2, "At") && json_object_is_type(v, json_type_int);
}

/* Rounds and rewrites timestamps in o and every object below it. */
static void normalize_values(json_object *o, unsigned depth) {
        if (depth > 8)
                return;
        if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        normalize_values(json_object_array_get_idx(o, i), depth + 1);
                return;
        }
        if (!json_object_is_type(o, json_type_object))
                return;

        /* Collected first: adding members while iterating is not allowed. */
        char *timestamps[32], *unknown[16];
        size_t n_timestamps = 0, n_unknown = 0;
        json_object_object_foreach(o, key, v) {
                if (is_unknown_counter(key, v)) {
                        if (n_unknown < ELEMENTSOF(unknown))
                                unknown[n_unknown++] = key;
                } else if (is_timestamp(key, v)) {
                        if (n_timestamps < ELEMENTSOF(timestamps))
                                timestamps[n_timestamps++] = key;
                } else if (json_object_is_type(v, json_type_double)) {
                        for (size_t i = 0; i < ELEMENTSOF(precision); i++)
                                if (streq(key, precision[i].key)) {
                                        json_object_object_add(o, key, rounded(json_object_get_double(v),
                                                                               precision[i].decimals));
                                        break;
                                }
                } else
                        normalize_values(v, depth + 1);
        }
        for (size_t i = 0; i < n_unknown; i++)
                json_object_object_add(o, unknown[i], NULL);
        for (size_t i = 0; i < n_timestamps; i++) {
                _cleanup_(freep) char *name = strdup(timestamps[i]), *usec_key = NULL;
                uint64_t usec;
                char iso[ISO8601_MAX];

                if (!name || asprintf(&usec_key, "%sUsec", name) < 0)
                        continue;
                usec = (uint64_t) json_int_or(o, name, 0);
                /* 0 is "never": null in both. */
                json_object_object_add(o, usec_key, usec > 0 ? json_object_new_uint64(usec) : NULL);
                json_object_object_add(o, name, usec > 0 ? json_object_new_string(format_iso8601(iso, usec)) : NULL);
        }
}

void ctl_normalize_properties(const char *kind, json_object *props) {
        name_structs(kind, props);
        normalize_values(props, 0);
}
