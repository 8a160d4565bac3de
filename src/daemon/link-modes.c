/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A link's side of ethtool's netlink family (link-ethtool.c asks, off the loop): which links are asked,
 * when (every link event of theirs, link_prepare(); every notification of the monitor group), and what
 * their answers record in the link's state. A changed answer queues the link: the derivation pass turns it
 * into SpeedMbps, both ends' speeds and the structural fact the health judge qualifies (derive-link.c).
 */
#include "link-ethtool.h"
#include "link.h"

bool link_asks_ethtool(const Link *l) {
        /* veth answers too (no link modes, a fixed speed): asked, so the Link says so instead of nothing. */
        return IN_SET(l->kind, LINK_KIND_ETHERNET, LINK_KIND_VETH);
}

/* Sends the request now; on a full queue the link keeps waiting, and the next answer tries again. */
static void link_send_ethtool(Link *l) {
        Links *links = l->links;
        int r;

        r = link_ethtool_request(links->ethtool, l->ifindex, l->name, &l->ethtool.request);
        l->ethtool.waiting = r == -EAGAIN;
        if (r == -EAGAIN)
                links->ethtool_backlog = true;
        else if (r < 0)
                log_link_debug_errno(l, r, "Failed to ask for the link modes: %m");
}

/* Every link waiting to be asked, until the worker's queue is full (a start-up burst goes in turns). */
static void links_send_waiting(Links *links) {
        Link *l;

        links->ethtool_backlog = false;
        TABLE_FOREACH(l, &links->table) {
                if (!l->ethtool.waiting)
                        continue;
                link_send_ethtool(l);
                if (l->ethtool.waiting)
                        return; /* still full: the next answer tries again */
        }
}

static int on_ethtool_defer(sd_event_source *s, void *userdata) {
        links_send_waiting(userdata);
        return 0;
}

void link_request_ethtool(Link *l) {
        Links *links = l->links;

        if (!links->ethtool || !link_asks_ethtool(l) || !l->name)
                return;
        /* Asked once the loop is idle, after this iteration's PropertiesChanged went out: the worker then
         * takes the RTNL lock while the link's event is already published, not before. */
        l->ethtool.waiting = true;
        links->ethtool_backlog = true;
        (void) sd_event_source_set_enabled(links->ethtool_defer, SD_EVENT_ONESHOT);
}

/* Whether an answer says anything about link modes: a veth's (empty sets, a speed) does not, and is not
 * kept. */
static bool link_modes_any(const EthtoolLinkModes *m) {
        return !link_mode_set_is_empty(&m->supported) || !link_mode_set_is_empty(&m->advertised) ||
               !link_mode_set_is_empty(&m->partner);
}

static bool link_modes_equal(const EthtoolLinkModes *a, const EthtoolLinkModes *b) {
        if (!a || !b)
                return a == b;
        return a->have_ours == b->have_ours && a->have_peer == b->have_peer &&
               memcmp(&a->supported, &b->supported, sizeof(a->supported)) == 0 &&
               memcmp(&a->advertised, &b->advertised, sizeof(a->advertised)) == 0 &&
               memcmp(&a->partner, &b->partner, sizeof(a->partner)) == 0 && a->speed_mbps == b->speed_mbps &&
               a->lanes == b->lanes && a->duplex == b->duplex && a->autoneg == b->autoneg;
}

static void on_ethtool_answer(void *userdata, const LinkEthtoolAnswer *a) {
        Links *links = userdata;
        Link *l = link_get(links, a->ifindex);

        if (l && l->ethtool.request == a->seq) {
                const EthtoolLinkModes *modes = a->modes_error >= 0 && link_modes_any(&a->modes) ? &a->modes : NULL;
                uint32_t speed = a->modes_error >= 0 ? a->modes.speed_mbps : 0;

                l->ethtool.request = 0;
                if (a->modes_error < 0 && a->modes_error != -EOPNOTSUPP)
                        log_link_debug_errno(l, a->modes_error, "ethtool gave no link modes: %m");
                if (!l->ethtool.answered || l->ethtool.modes_error != a->modes_error ||
                    l->ethtool.state_error != a->state_error || l->ethtool.speed_mbps != speed ||
                    !link_modes_equal(l->ethtool.modes, modes) ||
                    memcmp(&l->ethtool.state, &a->state, sizeof(a->state)) != 0) {
                        if (modes && !l->ethtool.modes) {
                                l->ethtool.modes = new0(EthtoolLinkModes, 1);
                                if (!l->ethtool.modes) {
                                        log_oom();
                                        return;
                                }
                        }
                        if (modes)
                                *l->ethtool.modes = *modes;
                        else
                                l->ethtool.modes = mfree(l->ethtool.modes);
                        l->ethtool.answered = true;
                        l->ethtool.modes_error = a->modes_error;
                        l->ethtool.state_error = a->state_error;
                        l->ethtool.speed_mbps = speed;
                        l->ethtool.state = a->state;
                        /* The pass derives what follows (SpeedMbps, the capability, Health). */
                        bus_object_queue(&l->bus);
                }
        }
        if (links->ethtool_backlog)
                links_send_waiting(links);
}

static void on_ethtool_changed(void *userdata, int ifindex) {
        Links *links = userdata;
        Link *l;

        if (ifindex > 0) {
                l = link_get(links, ifindex);
                if (l) {
                        log_link_debug(l, "ethtool's monitor group says the link modes or settings changed.");
                        link_request_ethtool(l);
                }
                return;
        }
        TABLE_FOREACH(l, &links->table)
                link_request_ethtool(l);
}

int links_start_ethtool(Links *links, sd_event *event) {
        int r;

        r = sd_event_add_defer(event, &links->ethtool_defer, on_ethtool_defer, links);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(links->ethtool_defer, SD_EVENT_OFF);
        (void) sd_event_source_set_priority(links->ethtool_defer, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_description(links->ethtool_defer, "link-ethtool-requests");
        r = link_ethtool_new(event, on_ethtool_answer, on_ethtool_changed, links, &links->ethtool);
        if (r < 0)
                links->ethtool_defer = sd_event_source_disable_unref(links->ethtool_defer);
        return r;
}

void links_stop_ethtool(Links *links) {
        links->ethtool_defer = sd_event_source_disable_unref(links->ethtool_defer);
        links->ethtool = link_ethtool_free(links->ethtool);
}
