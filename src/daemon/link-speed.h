/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-speed.h — speed and duplex read off the event loop: those sysfs reads wait for the RTNL lock */
#pragma once

#include "shared/macros.h"

#include <systemd/sd-event.h>

typedef struct LinkSpeedReader LinkSpeedReader;

/* An answer: error is sysfs_net_read()'s (0 on success); speed_mbps -1 for unknown; duplex NULL. */
typedef void (*link_speed_answer_t)(void *userdata, int ifindex, uint64_t seq, int error, int speed_mbps,
                                    const char *duplex);

/*
 * The kernel answers /sys/class/net/<if>/speed and duplex under the RTNL lock, which it holds while
 * it brings links up and down (milliseconds, around synchronize_net()). Read on the event loop,
 * every flap of one link would hold up every event of all the others. One worker thread does those
 * reads below the sysfs root sysfs_fd (borrowed: it must outlive the reader); the loop sends it
 * requests and gets the answers through answer().
 */
int link_speed_reader_new(sd_event *event, int sysfs_fd, link_speed_answer_t answer, void *userdata,
                          LinkSpeedReader **ret);
LinkSpeedReader *link_speed_reader_free(LinkSpeedReader *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(LinkSpeedReader *, link_speed_reader_free);

/* Queues a read of the interface's speed and duplex and returns the request's sequence number, which
 * its answer carries (the caller keeps the newest and ignores older answers). -EAGAIN when the queue
 * is full (the caller reads in place). */
int link_speed_reader_request(LinkSpeedReader *r, int ifindex, const char *name, uint64_t *ret_seq);
