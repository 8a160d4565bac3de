/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A link's side of ethtool's netlink family (link-ethtool.c asks, off the loop): which kinds are asked,
 * when a request goes (link.c calls link_modes_request() on every link event, link_prepare(), and every
 * notification of the monitor group), and what an answer records. A changed answer queues the link (link.c):
 * the derivation pass turns it into SpeedMbps, both ends' speeds and the structural fact the health judge
 * qualifies (derive-link.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link-modes.h"
#include "shared/log.h"

bool link_modes_kind_asked(LinkKind kind) {
        /* veth answers too (no link modes, a fixed speed): asked, so the Link says so instead of nothing. */
        return IN_SET(kind, LINK_KIND_ETHERNET, LINK_KIND_VETH);
}

bool link_modes_send(LinkModesAsker *a, LinkModes *m, int ifindex, const char *name) {
        int r;

        r = link_ethtool_request(a->ethtool, ifindex, name, &m->request);
        m->waiting = r == -EAGAIN;
        if (r == -EAGAIN)
                a->backlog = true;
        else if (r < 0)
                log_debug_errno(r, "Failed to ask for the link modes of %s: %m", name);
        return !m->waiting;
}

void link_modes_request(LinkModesAsker *a, LinkModes *m) {
        m->waiting = true;
        a->backlog = true;
        (void) sd_event_source_set_enabled(a->defer, SD_EVENT_ONESHOT);
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

int link_modes_apply(LinkModes *m, const LinkEthtoolAnswer *a) {
        const EthtoolLinkModes *modes = a->modes_error >= 0 && link_modes_any(&a->modes) ? &a->modes : NULL;
        uint32_t speed = a->modes_error >= 0 ? a->modes.speed_mbps : 0;

        m->request = 0;
        if (m->answered && m->modes_error == a->modes_error && m->state_error == a->state_error &&
            m->speed_mbps == speed && link_modes_equal(m->modes, modes) &&
            memcmp(&m->state, &a->state, sizeof(a->state)) == 0)
                return 0;
        if (modes && !m->modes) {
                m->modes = new0(EthtoolLinkModes, 1);
                if (!m->modes)
                        return -ENOMEM;
        }
        if (modes)
                *m->modes = *modes;
        else
                m->modes = mfree(m->modes);
        m->answered = true;
        m->modes_error = a->modes_error;
        m->state_error = a->state_error;
        m->speed_mbps = speed;
        m->state = a->state;
        return 1;
}

int link_modes_asker_start(LinkModesAsker *a, sd_event *event, link_ethtool_answer_t on_answer,
                           link_ethtool_changed_t on_changed, sd_event_handler_t on_defer, void *userdata) {
        int r;

        r = sd_event_add_defer(event, &a->defer, on_defer, userdata);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(a->defer, SD_EVENT_OFF);
        (void) sd_event_source_set_priority(a->defer, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_description(a->defer, "link-ethtool-requests");
        r = link_ethtool_new(event, on_answer, on_changed, userdata, &a->ethtool);
        if (r < 0)
                a->defer = sd_event_source_disable_unref(a->defer);
        return r;
}

void link_modes_asker_stop(LinkModesAsker *a) {
        a->defer = sd_event_source_disable_unref(a->defer);
        a->ethtool = link_ethtool_free(a->ethtool);
        a->backlog = false;
}

void link_modes_done(LinkModes *m) {
        m->modes = mfree(m->modes);
}
