/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lldp.h — LLDP received on every Ethernet link that is up: the switches at the far end of the cables */
#pragma once

#include <systemd/sd-event.h>

#include "shared/lldp-parse.h"

typedef struct Links Links;
typedef struct Switches Switches;
typedef struct LldpReceiver LldpReceiver;

/* What one link may make us keep, and how fast: a switch sends one LLDPDU per neighbour every 30 s
 * (lldpd at its quickest, one a second); anything far beyond is a flood. */
#define LLDP_NEIGHBORS_PER_LINK_MAX 16
#define LLDP_FRAMES_PER_SEC 10
#define LLDP_FRAMES_BURST 50

/* Counters of what was refused, for the logs and the tests. */
typedef struct LldpCounters {
        uint64_t received;   /* frames parsed and applied */
        uint64_t malformed;  /* refused by the parser */
        uint64_t rate_limited;
        uint64_t neighbors_refused; /* past LLDP_NEIGHBORS_PER_LINK_MAX or SWITCHES_MAX */
        uint64_t expired;
        uint64_t shutdowns;  /* TTL 0 */
} LldpCounters;

/*
 * Opens one AF_PACKET socket for EtherType 0x88cc on every interface, joins the LLDP multicast
 * group on each Ethernet-like link that is up, and records every neighbour as a port of a switch
 * (switch.h) until its TTL runs out, a shutdown LLDPDU (TTL 0) comes, or the link goes down. Installs
 * itself as links' hook. Without CAP_NET_RAW the socket cannot be opened: that is logged once, each
 * link says so in LldpWarning, and everything else works.
 */
int lldp_receiver_new(sd_event *event, Links *links, Switches *switches, LldpReceiver **ret);
/* The same without a socket (the unit tests hand it frames), touching nothing of the machine's. */
int lldp_receiver_new_detached(sd_event *event, Links *links, Switches *switches, LldpReceiver **ret);
LldpReceiver *lldp_receiver_free(LldpReceiver *r);

/* One received frame on ifindex at now (CLOCK_MONOTONIC µs): the socket's handler, and the tests'. */
void lldp_receiver_process_frame(LldpReceiver *r, int ifindex, const void *frame, size_t size, uint64_t now);
/* Forgets the neighbours whose TTL ran out by now; the timer's handler, and the tests'. */
void lldp_receiver_expire(LldpReceiver *r, uint64_t now);
const LldpCounters *lldp_receiver_counters(const LldpReceiver *r);

/*
 * Whether a NIC's firmware runs an LLDP agent that takes LLDPDUs before the kernel sees them, judged
 * from its ethtool private flags (names and the GPFLAGS bitmap): i40e's "disable-fw-lldp" off, ice's
 * "fw-lldp-agent" on. Returns the flag's name, or NULL.
 */
const char *lldp_firmware_agent_flag(const char (*names)[32], size_t n, uint32_t flags);
