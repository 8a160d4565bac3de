/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The judgement of both ends' capabilities, pure: the facts link.c recorded (ethtool's answer, the
 * carrier, the speed) in, SupportedSpeedsMbps, PartnerSpeedsMbps, BestCommonSpeedMbps, Degraded and its
 * reason, LinkDownReason out. No Link, no bus: the unit tests and the fuzz target call it as the pass does.
 */
#include <stdarg.h>

#include "link-capability.h"
#include "shared/string-util.h"

/* What DegradedReason says when nothing could be judged: "unknown: " and why, so a reader can tell a
 * link that is fine ("") from one nobody can tell about (a veth, a link that is down). */
#define UNKNOWN_PREFIX "unknown: "

void link_capability_done(LinkCapability *c) {
        free(c->supported_speeds);
        free(c->partner_speeds);
        free(c->trained_low_reason);
        free(c->link_down_reason);
        *c = (LinkCapability) {};
}

const char *link_capability_reason(const LinkCapability *c) {
        return c->trained_low ? strempty(c->trained_low_reason) : strempty(c->note);
}

static int speeds_dup(const uint32_t *speeds, size_t n, uint32_t **ret) {
        if (n == 0)
                return 0;
        *ret = reallocarray(NULL, n, sizeof(uint32_t));
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, speeds, n * sizeof(uint32_t));
        return 0;
}

static int set_reason(char **s, const char *format, ...) _printf_(2, 3);
static int set_reason(char **s, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(s, format, ap);
        va_end(ap);
        if (r < 0) {
                *s = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The partner's advertisement to judge by: what autonegotiation heard, else what LLDP said. */
static const LinkModeSet *partner_modes(const LinkCapabilityFacts *f, LinkPartnerSource *ret_source) {
        if (f->modes && f->modes->have_peer && link_mode_set_has_speeds(&f->modes->partner)) {
                *ret_source = LINK_PARTNER_ETHTOOL;
                return &f->modes->partner;
        }
        /* ---- the LLDP fallback (issue 26 item 1) ----
         * A switch that does not autonegotiate (a fixed-speed optical port) still says what its port can do
         * in LLDP's IEEE 802.3 MAC/PHY configuration/status TLV; the LLDP source turns that TLV's advertised
         * capabilities into link modes and records them with the link. */
        if (f->lldp_partner && link_mode_set_has_speeds(f->lldp_partner)) {
                *ret_source = LINK_PARTNER_LLDP;
                return f->lldp_partner;
        }
        *ret_source = LINK_PARTNER_NONE;
        return NULL;
}

static int judge_link_down(const LinkCapabilityFacts *f, LinkCapability *c) {
        char text[128];

        if (f->carrier || !f->answered || f->state_error < 0 || !f->state || f->state->ext_state < 0)
                return 0;
        c->link_down_reason = strdup(ethtool_link_ext_state_format(f->state->ext_state, f->state->ext_substate,
                                                                  text, sizeof(text)));
        return c->link_down_reason ? 0 : -ENOMEM;
}

int link_capability_judge(const LinkCapabilityFacts *f, LinkCapability *ret) {
        _cleanup_(link_capability_done) LinkCapability c = {};
        uint32_t supported[LINK_SPEEDS_MAX], partner_speeds[LINK_SPEEDS_MAX];
        const LinkModeSet *partner = NULL;
        LinkPartnerSource source = LINK_PARTNER_NONE;
        int r;

        if (f->asked && f->answered && f->modes_error >= 0 && f->modes && f->modes->have_ours)
                c.n_supported = link_mode_set_speeds(&f->modes->supported, supported, LINK_SPEEDS_MAX);
        if (f->asked && f->answered)
                partner = partner_modes(f, &source);
        if (partner)
                c.n_partner = link_mode_set_speeds(partner, partner_speeds, LINK_SPEEDS_MAX);
        if (c.n_supported > 0 && partner)
                c.best_common_mbps = link_mode_sets_best_common_speed(&f->modes->supported, partner);
        r = speeds_dup(supported, c.n_supported, &c.supported_speeds);
        if (r >= 0)
                r = speeds_dup(partner_speeds, c.n_partner, &c.partner_speeds);
        if (r >= 0)
                r = judge_link_down(f, &c);
        if (r < 0)
                return r;

        /* Nothing is judged without both ends' word and a link that trained: each "unknown" says which. */
        if (!f->asked)
                c.note = UNKNOWN_PREFIX "not an Ethernet link";
        else if (!f->answered)
                c.note = UNKNOWN_PREFIX "link modes not asked yet";
        else if (c.n_supported == 0)
                c.note = UNKNOWN_PREFIX "the driver reports no link modes";
        else if (!f->carrier)
                c.note = UNKNOWN_PREFIX "the link is down";
        else if (!partner)
                c.note = f->modes->autoneg == 0
                                 ? UNKNOWN_PREFIX "the link partner advertises no link modes (autonegotiation is off)"
                                 : UNKNOWN_PREFIX "the link partner advertises no link modes";
        else if (c.best_common_mbps == 0)
                c.note = UNKNOWN_PREFIX "no speed that both ends support";
        else if (f->active_speed_mbps == 0)
                c.note = UNKNOWN_PREFIX "the driver reports no speed";
        else if (f->active_speed_mbps < c.best_common_mbps) {
                c.trained_low = true;
                /* This end may hold itself back (`ethtool -s ... advertise`): say so, it is the fix. */
                bool advertised = link_mode_set_has_speed(&f->modes->advertised, c.best_common_mbps);
                r = set_reason(&c.trained_low_reason, "%" PRIu32 " Mb/s while both ends support %" PRIu32 " Mb/s%s%s",
                               f->active_speed_mbps, c.best_common_mbps,
                               source == LINK_PARTNER_LLDP ? " (the switch port's, from LLDP)" : "",
                               advertised ? "" : " (this end does not advertise it)");
                if (r < 0)
                        return r;
        }

        *ret = c;
        c = (LinkCapability) {};
        return 0;
}
