/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* switch.h — the switches at the far end of this node's cables (switch/<key> objects) */
#pragma once

#include "bus-object.h"
#include "log-object.h"
#include "shared/table.h"

/* Bounds what a segment full of liars (a flood of distinct chassis) can make us keep. */
#define SWITCHES_MAX 256
/* This node's cables into one switch. */
#define SWITCH_PORTS_MAX 64
#define SWITCH_PORT_SPEEDS_MAX 4

/* Who told us of a switch. Each source adds and removes only its own ports. */
typedef enum SwitchSource {
        SWITCH_SOURCE_LLDP,       /* LLDPDUs received on an Ethernet link (lldp.c) */
        SWITCH_SOURCE_INFINIBAND, /* a directed-route MAD answered by an InfiniBand switch */
        SWITCH_SOURCE_SWEEP,      /* the subnet sweep ([Fabric] Sweep=yes, fabric-sweep.c) */
        _SWITCH_SOURCE_MAX,
        _SWITCH_SOURCE_INVALID = -EINVAL,
} SwitchSource;

/* What a source says about a switch as a whole. NULL: it says nothing of it (the field keeps what it
 * had). The lists are borrowed. */
typedef struct SwitchInfo {
        const char *chassis_id;
        const char *node_guid;
        const char *name;
        const char *description;
        char *const *capabilities;
        char *const *management_addresses;
} SwitchInfo;

/* What the switch says about its end of an Ethernet cable (LLDP's IEEE 802.1 and 802.3 TLVs). A fact
 * of its own, kept apart from what our NIC says of the partner, so both can be set side by side. */
typedef struct SwitchPortEthernet {
        bool mac_phy;                /* an IEEE 802.3 MAC/PHY TLV came */
        bool autoneg_supported, autoneg_enabled;
        uint16_t mau_type;           /* dot3MauType; 0 unknown */
        uint32_t speeds_mbps[SWITCH_PORT_SPEEDS_MAX]; /* ascending: advertised, else the operational */
        size_t n_speeds;
        uint16_t max_frame_size;     /* 0 unknown */
        uint16_t port_vlan_id;       /* 0 unknown */
} SwitchPortEthernet;

/* One of this node's cables into the switch: our end (a Link or RdmaPort object) and theirs. */
typedef struct SwitchPort {
        SwitchSource source;
        char *local_path; /* our object's path */
        char *port_id;    /* the switch's name for its port */
        char *description;
        SwitchPortEthernet ethernet;
        uint64_t last_seen; /* CLOCK_REALTIME µs */
} SwitchPort;

/* A cable from this switch to another switch, as the subnet sweep found it. Flat: compared and copied
 * whole. */
#define SWITCH_LINK_NAME_MAX 8
typedef struct SwitchLink {
        unsigned port;                          /* this switch's port */
        char remote_guid[24];                   /* the other switch's key (its node GUID) */
        unsigned remote_port;
        char width[SWITCH_LINK_NAME_MAX];       /* "4X"; "" unknown */
        char speed[SWITCH_LINK_NAME_MAX];       /* "HDR"; "" unknown */
        double rate_gbps;                       /* 0 unknown */
        /* The best both ends support and whether it trained below that (ib_link_judge(), the rule of
         * iblinkinfo's "Could be"): judged when both ends are in the sweep, else "" and 0. */
        char best_width[SWITCH_LINK_NAME_MAX];
        char best_speed[SWITCH_LINK_NAME_MAX];
        double best_rate_gbps;
        bool degraded;
        char degraded_reason[96];               /* "1X while both ends support 4X"; "" */
} SwitchLink;

/* One switch as a sweep found it (borrowed strings and links). */
typedef struct SweptSwitch {
        const char *node_guid; /* the key */
        const char *name;      /* NULL: the description is its name */
        const char *description;
        const SwitchLink *links;
        size_t n_links;
} SweptSwitch;

typedef struct Switches Switches;

typedef struct Switch {
        char *key; /* first: the table's key (LLDP: subtype and chassis ID; InfiniBand: the node GUID) */
        Switches *owner;
        BusObject bus;

        char *chassis_id, *node_guid, *name, *description;
        char **capabilities, **management_addresses;
        char **sources; /* the sources of its ports, in SwitchSource order */
        SwitchPort *ports;
        size_t n_ports;
        uint64_t last_seen; /* CLOCK_REALTIME µs: the latest of its ports', or the sweep that found it */
        /* The last complete sweep found it: it lives without a port of ours. */
        bool swept;
        uint64_t swept_at;
        uint64_t sweep_generation; /* the sweep that last found it */
        SwitchLink *links; /* sorted by port */
        size_t n_links;
} Switch;

struct Switches {
        Table table; /* Switch* by key */
        BusPublisher *publisher;
        /* A port came, went or moved: the derivation pass sets every Link's Switch again. */
        bool changed;
        bool warned_full;
        uint64_t sweep_generation; /* counts the sweeps applied */
        size_t n_swept;            /* switches the last sweep found: outside SWITCHES_MAX */
};

extern const BusObjectType switch_bus_type;

void switches_init(Switches *s, BusPublisher *p);
void switches_done(Switches *s);

Switch *switch_get(Switches *s, const char *key);
/* switch/<key>. */
int switch_object_path(const char *key, char **ret);

/*
 * Records that source sees the switch key through the port (its local_path and port_id name it;
 * its strings are copied) at now (CLOCK_REALTIME µs), with what info says of the switch. Creates
 * the switch (announced at the next flush) and the port as needed. Returns 1 when the port is new,
 * 0 when it was there, -E2BIG when SWITCHES_MAX switches (besides those the sweep found) or
 * SWITCH_PORTS_MAX ports exist already
 * (warned once), -ENOMEM, -EINVAL for a local_path that is no object path.
 */
int switch_port_set(Switches *s, SwitchSource source, const char *key, const SwitchInfo *info,
                    const SwitchPort *port, uint64_t now);
/* Forgets source's port (local_path, port_id) of the switch; a switch with no port left is removed.
 * Returns 1 when something was removed. */
int switch_port_remove(Switches *s, SwitchSource source, const char *key, const char *local_path,
                       const char *port_id);
/*
 * Replaces what the sweep said with a complete sweep's switches (at now): they are created as needed
 * (bounded by the sweep's own cap, not SWITCHES_MAX) with their names and Links; a switch the sweep no
 * longer finds loses "sweep" and its Links, and goes when no port of ours is on it. -ENOMEM leaves
 * some switches updated and the rest as they were.
 */
int switches_sweep_apply(Switches *s, const SweptSwitch *swept, size_t n, uint64_t now);
/* Switch-to-switch links the sweep published, over all switches. */
size_t switches_sweep_links(const Switches *s);

/* Forgets every port of source whose local end is local_path (the link went down or away). */
void switches_remove_local(Switches *s, SwitchSource source, const char *local_path);

const char *switch_source_to_string(SwitchSource s) _const_;

#define log_switch_full_errno(sw, level, error, ...) \
        log_object_full_errno(level, error, "SWITCH", (sw)->key, __VA_ARGS__)
#define log_switch_debug(sw, ...) (void) log_switch_full_errno(sw, LOG_DEBUG, 0, __VA_ARGS__)
#define log_switch_info(sw, ...) (void) log_switch_full_errno(sw, LOG_INFO, 0, __VA_ARGS__)
