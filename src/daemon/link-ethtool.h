/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-ethtool.h — both ends' link modes and the link-down reason, asked of ethtool's netlink family off the loop */
#pragma once

#include <systemd/sd-event.h>

#include "shared/ethtool-linkmodes.h"
#include "shared/macros.h"

typedef struct LinkEthtool LinkEthtool;

/* One link's answer: LINKMODES_GET and LINKSTATE_GET, each with its own error (negative errno:
 * -EOPNOTSUPP when the driver has no such operation, -ENODEV when the link went away meanwhile). */
typedef struct LinkEthtoolAnswer {
        int ifindex;
        uint64_t seq;
        int modes_error;
        int state_error;
        EthtoolLinkModes modes;
        EthtoolLinkState state;
} LinkEthtoolAnswer;

typedef void (*link_ethtool_answer_t)(void *userdata, const LinkEthtoolAnswer *a);
/* The monitor group said a link's modes or settings changed (LINKMODES_NTF, LINKINFO_NTF); ifindex 0:
 * notifications were lost (the socket overran), ask every link again. */
typedef void (*link_ethtool_changed_t)(void *userdata, int ifindex);

/*
 * The kernel answers ethtool's requests under the RTNL lock, inside sendmsg(), as it does sysfs speed
 * reads (link-speed.h): one worker thread asks, the loop sends it requests and gets the answers through
 * answer(). A second socket on the loop follows ethtool's "monitor" multicast group, so a change made
 * with `ethtool -s` is seen without polling. Without the ethtool family (a kernel before 5.6, or built
 * without it) every answer says -EOPNOTSUPP.
 */
int link_ethtool_new(sd_event *event, link_ethtool_answer_t answer, link_ethtool_changed_t changed, void *userdata,
                     LinkEthtool **ret);
LinkEthtool *link_ethtool_free(LinkEthtool *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(LinkEthtool *, link_ethtool_free);

/* Queues both requests for the link; the answer carries *ret_seq (the caller keeps the newest).
 * -EAGAIN when the queue is full. */
int link_ethtool_request(LinkEthtool *e, int ifindex, const char *name, uint64_t *ret_seq);

/*
 * The test build's replayed source (tests/tools/ethtool-replay.c, linked only into the test program
 * linkprobed-ethtool-replay, never into linkprobed): when set, the worker asks it first, and it answers
 * from recorded kernel messages. It returns 1 with *a filled in, 0 when it has nothing for the link (the
 * kernel is asked), or a negative errno. Called on the worker thread.
 */
typedef int (*link_ethtool_replay_t)(int ifindex, const char *name, LinkEthtoolAnswer *a);
extern link_ethtool_replay_t link_ethtool_replay;

/*
 * One dump of cmd (ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_MSG_LINKSTATE_GET; want: its replies' kind) for every link of the namespace,
 * on the caller's thread, blocking: made for the start, where two dumps replace two requests a link and a
 * sysfs read of speed and duplex a link, and their answers are there before READY=1. each() gets every
 * reply the kernel gives; a link it gives none for (no such ethtool operation, or a dump cut short by an
 * error) is left to its own request. 0, or a negative errno after the replies so far (-EOPNOTSUPP
 * without ethtool's family).
 */
typedef void (*link_ethtool_each_t)(void *userdata, const EthtoolMessage *m);
int link_ethtool_dump(uint8_t cmd, EthtoolMessageKind want, link_ethtool_each_t each, void *userdata);
