/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-modes.h — a link's side of ethtool's netlink family: which kinds are asked, one link's request
 * waiting to be sent, and what an answer records. It knows links only as the state below: link.c finds
 * the link, iterates the table and announces what changed. */
#pragma once

#include <systemd/sd-event.h>

#include "classify.h"
#include "link-ethtool.h"

/* One link's modes and state as ethtool last answered. */
typedef struct LinkModes {
        uint64_t request; /* the answer we wait for; 0: none */
        bool waiting;     /* to be asked when the loop is idle, or once the worker's queue has room */
        bool answered;
        int modes_error, state_error; /* negative errno of each request; 0 answered */
        uint32_t speed_mbps;          /* the answer's speed; 0 unknown */
        /* The answer's link modes; NULL when it had none at all (a veth): 2000 of those cost no bitsets. */
        EthtoolLinkModes *modes;
        EthtoolLinkState state;
} LinkModes;

/* The worker that asks, for every link, and the idle-time source that sends what waits. */
typedef struct LinkModesAsker {
        LinkEthtool *ethtool;  /* NULL: link modes are not asked (the worker did not start) */
        sd_event_source *defer; /* sends the waiting requests once the loop is idle */
        bool backlog;           /* some links wait to be asked */
} LinkModesAsker;

/* Whether links of this kind are asked (Ethernet, veth): the one predicate for the asking and for the
 * derivation pass, which says "not an Ethernet link" for the others. */
bool link_modes_kind_asked(LinkKind kind) _const_;

/* Starts the worker; on_defer runs once the loop is idle after link_modes_request(). A failure leaves
 * the asker stopped (modes unknown). */
int link_modes_asker_start(LinkModesAsker *a, sd_event *event, link_ethtool_answer_t on_answer,
                           link_ethtool_changed_t on_changed, sd_event_handler_t on_defer, void *userdata);
void link_modes_asker_stop(LinkModesAsker *a);

/* Marks the link's request as waiting, sent once the loop is idle (after this iteration's
 * PropertiesChanged went out: the worker then takes the RTNL lock while the event is already published). */
void link_modes_request(LinkModesAsker *a, LinkModes *m);
/* Sends a waiting request; false if the worker's queue is full (it keeps waiting, the next answer tries
 * again). */
bool link_modes_send(LinkModesAsker *a, LinkModes *m, int ifindex, const char *name);
/* Records an answer (already known to be this link's, for its pending request): 1 if anything changed,
 * 0 if not, -ENOMEM. */
int link_modes_apply(LinkModes *m, const LinkEthtoolAnswer *answer);
void link_modes_done(LinkModes *m);
