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

/* The partner's word to judge by, as speeds (ascending, at most LINK_SPEEDS_MAX): what autonegotiation
 * heard (lp_advertised), else what the switch port said in LLDP. Sets the best speed both ends share. */
static LinkPartnerSource partner_word(const LinkCapabilityFacts *f, uint32_t speeds[static LINK_SPEEDS_MAX],
                                        size_t *ret_n, uint32_t *ret_best_common) {
        if (f->modes && f->modes->have_peer && link_mode_set_has_speeds(&f->modes->partner)) {
                *ret_n = link_mode_set_speeds(&f->modes->partner, speeds, LINK_SPEEDS_MAX);
                *ret_best_common = f->modes->have_ours
                        ? link_mode_sets_best_common_speed(&f->modes->supported, &f->modes->partner) : 0;
                return LINK_PARTNER_ETHTOOL;
        }
        if (f->n_lldp_partner_speeds > 0) {
                /* LLDP carries speeds, not link modes (no duplex, no media): the best common speed is the
                 * fastest one this end has a supported mode for. */
                *ret_n = MIN(f->n_lldp_partner_speeds, (size_t) LINK_SPEEDS_MAX);
                memcpy(speeds, f->lldp_partner_speeds, *ret_n * sizeof(uint32_t));
                *ret_best_common = 0;
                if (f->modes && f->modes->have_ours)
                        for (size_t i = *ret_n; i > 0; i--)
                                if (link_mode_set_has_speed(&f->modes->supported, speeds[i - 1])) {
                                        *ret_best_common = speeds[i - 1];
                                        break;
                                }
                return LINK_PARTNER_LLDP;
        }
        *ret_n = 0;
        *ret_best_common = 0;
        return LINK_PARTNER_NONE;
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
        LinkPartnerSource source = LINK_PARTNER_NONE;
        uint32_t best_common = 0;
        int r;

        if (f->asked && f->answered && f->modes_error >= 0 && f->modes && f->modes->have_ours)
                c.n_supported = link_mode_set_speeds(&f->modes->supported, supported, LINK_SPEEDS_MAX);
        if (f->asked && f->answered)
                source = partner_word(f, partner_speeds, &c.n_partner, &best_common);
        if (c.n_supported > 0)
                c.best_common_mbps = best_common;
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
        else if (source == LINK_PARTNER_NONE)
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
