/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link.h — network interfaces as netlink and sysfs describe them (link/<ifindex> objects) */
#pragma once

#include "link-object.h"

/* Tells link objects apart from others in the publisher's queue (the derivation pass). */
extern const BusObjectType link_bus_type;

void links_init(Links *links, BusPublisher *p, int sysfs_fd);
void links_done(Links *links);
/* From now on speed and duplex are read off the loop (after READY=1: until then the picture is made
 * in one go, in place). A failure leaves them read in place. */
int links_start_speed_reader(Links *links, sd_event *event);
/* Follows the udev subsystem "net": an event re-reads that link's sysfs facts. */
int links_watch(Links *links, UdevSource *udev);

/* Finds by kernel name or, if s is a number, by index. */
Link *link_find(Links *links, const char *s);
/* The object path of link/<ifindex>. */
int link_object_path(int ifindex, char **ret);

/* The netlink handlers: one path for the initial dump, live events and resyncs. */
int link_process_netlink(Links *links, struct rtnl_link *rl, bool removed);
int link_process_address(Links *links, struct rtnl_addr *ra, bool removed);

/* A full dump: mark every link, feed every link and address, then sweep what was not seen and
 * publish only the differences. Each mark starts the collection afresh (a dump tried again after an
 * interruption). An incomplete dump (interrupted every time) is swept with complete=false: what it saw
 * is applied, nothing is removed on its word. */
void links_mark(Links *links);
void links_sweep(Links *links);
void links_mark_addresses(Links *links);
int link_sync_address(Links *links, struct rtnl_addr *ra);
void links_sweep_addresses(Links *links, bool complete);

/* The watch's reading of one link, taken at now (CLOCK_MONOTONIC usec) by the dump that started at
 * sample (a link the dump answered twice is recorded once); a link that is not in the table is ignored
 * (its removal or addition is on its way). Whether a published property changed. */
bool link_record_stats(Links *links, const LinkStats *s, uint64_t sample, uint64_t now);

/* Marks the link's sysfs facts for re-reading at the next flush (udev events, Refresh, another
 * source that saw sysfs move under it). */
void link_request_sysfs(Link *l);
void links_request_sysfs(Links *links);

const char *link_operstate_to_string(uint8_t operstate) _const_;
bool link_is_up(const Link *l);
/* What the classifiers judge the link by (classify.h). */
LinkFacts link_facts(const Link *l);
bool link_has_carrier(const Link *l);
/* Records the LLDP receiver's word on the link (NULL: none). */
int link_set_lldp_warning(Link *l, const char *warning);
