/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One Thunderbolt/USB4 link: its rate per direction, its class, and whether it runs below what both
 * ends can do. Pure logic over TbtLinkFacts (tbt-link.h). */
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "tbt-link.h"


static const char *const link_class_table[_TBT_LINK_CLASS_MAX] = {
        [TBT_LINK_CLASS_UNKNOWN] = "Unknown",
        [TBT_LINK_CLASS_TB5] = "Thunderbolt 5",
        [TBT_LINK_CLASS_TB5_ASYMMETRIC_RX] = "Thunderbolt 5 asymmetric (rx 120 Gb/s)",
        [TBT_LINK_CLASS_TB5_ASYMMETRIC_TX] = "Thunderbolt 5 asymmetric (tx 120 Gb/s)",
        [TBT_LINK_CLASS_TB5_SINGLE_LANE] = "Thunderbolt 5 single lane",
        [TBT_LINK_CLASS_TB4] = "Thunderbolt 4",
        [TBT_LINK_CLASS_TB3] = "Thunderbolt 3",
        [TBT_LINK_CLASS_TB3_OR_TB4] = "Thunderbolt 3/4",
        [TBT_LINK_CLASS_TB3_SINGLE_LANE] = "Thunderbolt 3 single lane",
        [TBT_LINK_CLASS_TB3_OR_TB4_SINGLE_LANE] = "Thunderbolt 3/4 single lane",
        [TBT_LINK_CLASS_USB4_20G] = "USB4 20G",
        [TBT_LINK_CLASS_USB4_10G] = "USB4 10G",
        [TBT_LINK_CLASS_TB2] = "Thunderbolt 2",
        [TBT_LINK_CLASS_TB1] = "Thunderbolt 1",
        [TBT_LINK_CLASS_TB1_OR_TB2] = "Thunderbolt 1/2",
        [TBT_LINK_CLASS_OTHER] = "Other",
};

DEFINE_STRING_TABLE_LOOKUP(tbt_link_class, TbtLinkClass, link_class_table)

unsigned tbt_link_class_generation(TbtLinkClass c) {
        switch (c) {
        case TBT_LINK_CLASS_TB5:
        case TBT_LINK_CLASS_TB5_ASYMMETRIC_RX:
        case TBT_LINK_CLASS_TB5_ASYMMETRIC_TX:
        case TBT_LINK_CLASS_TB5_SINGLE_LANE:
                return 5;
        case TBT_LINK_CLASS_TB4:
        case TBT_LINK_CLASS_USB4_20G:
        case TBT_LINK_CLASS_USB4_10G:
                return 4;
        case TBT_LINK_CLASS_TB3:
        case TBT_LINK_CLASS_TB3_SINGLE_LANE:
                return 3;
        case TBT_LINK_CLASS_TB3_OR_TB4:
        case TBT_LINK_CLASS_TB3_OR_TB4_SINGLE_LANE:
        case TBT_LINK_CLASS_TB2:
        case TBT_LINK_CLASS_TB1:
        case TBT_LINK_CLASS_TB1_OR_TB2:
        case TBT_LINK_CLASS_OTHER:
        case TBT_LINK_CLASS_UNKNOWN:
        case _TBT_LINK_CLASS_MAX:
        case _TBT_LINK_CLASS_INVALID:
                break;
        }
        return 0;
}

/* Which technology both ends speak, as far as the facts tell. */
typedef enum LinkFamily {
        FAMILY_UNKNOWN, /* Thunderbolt 3 or USB4: the far end is a peer and no port says which */
        FAMILY_TB1,
        FAMILY_TB2,
        FAMILY_TB3,
        FAMILY_USB4,
} LinkFamily;

static LinkFamily link_family(const TbtLinkFacts *f) {
        unsigned lowest = 0;

        if (f->near_generation > 0)
                lowest = f->near_generation;
        if (f->far_generation > 0 && (lowest == 0 || f->far_generation < lowest))
                lowest = f->far_generation;

        if (lowest == 1)
                return FAMILY_TB1;
        if (lowest == 2)
                return FAMILY_TB2;
        /* The kernel calls every USB4 router generation 4, so a USB4 router's port that runs "tbt" is
         * the only sign of a Thunderbolt 3 far end a peer gives. */
        if (lowest == 3 || f->port_link == TBT_PORT_LINK_TBT)
                return FAMILY_TB3;
        if (f->port_link == TBT_PORT_LINK_USB4 || (f->near_generation >= 4 && f->far_generation >= 4))
                return FAMILY_USB4;
        return FAMILY_UNKNOWN;
}

static TbtLinkClass classify(const TbtLinkFacts *f) {
        unsigned speed = f->rx.lane_gbps, rx = f->rx.lanes, tx = f->tx.lanes;
        LinkFamily family;

        if (speed == 0 || rx == 0 || tx == 0)
                return TBT_LINK_CLASS_UNKNOWN;
        /* One speed attribute backs both rx_speed and tx_speed in the kernel; different values are
         * not something we know how to name. */
        if (f->tx.lane_gbps != speed)
                return TBT_LINK_CLASS_OTHER;

        if (speed == 40) {
                if (rx == 2 && tx == 2)
                        return TBT_LINK_CLASS_TB5;
                if (rx == 3 && tx == 1)
                        return TBT_LINK_CLASS_TB5_ASYMMETRIC_RX;
                if (rx == 1 && tx == 3)
                        return TBT_LINK_CLASS_TB5_ASYMMETRIC_TX;
                if (rx == 1 && tx == 1)
                        return TBT_LINK_CLASS_TB5_SINGLE_LANE;
                return TBT_LINK_CLASS_OTHER;
        }

        family = link_family(f);
        if (family == FAMILY_TB1)
                return TBT_LINK_CLASS_TB1;
        if (family == FAMILY_TB2)
                return TBT_LINK_CLASS_TB2;
        if (rx != tx)
                return TBT_LINK_CLASS_OTHER; /* asymmetric links exist only at 40 per lane */

        switch (family) {
        case FAMILY_TB3:
                if (speed == 20)
                        return rx == 2 ? TBT_LINK_CLASS_TB3 : TBT_LINK_CLASS_TB3_SINGLE_LANE;
                /* Thunderbolt 3 runs 20 per lane; at 10 on one lane the far end, whose generation a peer
                 * or an adapter's device does not tell, is a Thunderbolt 1 or 2 router. */
                if (speed == 10 && rx == 1 && f->far_generation != 3)
                        return TBT_LINK_CLASS_TB1_OR_TB2;
                break;
        case FAMILY_USB4:
                if (speed == 20)
                        return rx == 2 ? TBT_LINK_CLASS_TB4 : TBT_LINK_CLASS_USB4_20G;
                if (speed == 10)
                        return rx == 2 ? TBT_LINK_CLASS_USB4_20G : TBT_LINK_CLASS_USB4_10G;
                break;
        case FAMILY_UNKNOWN:
                if (speed == 20)
                        return rx == 2 ? TBT_LINK_CLASS_TB3_OR_TB4 : TBT_LINK_CLASS_TB3_OR_TB4_SINGLE_LANE;
                break;
        case FAMILY_TB1:
        case FAMILY_TB2:
                break;
        }
        return TBT_LINK_CLASS_OTHER;
}

/* Thunderbolt 3 and every USB4 port have two lanes; generations 1 and 2 do not bond them. */
static bool both_ends_dual_lane(const TbtLinkFacts *f) {
        if (f->near_generation >= 3 && f->far_generation >= 3)
                return true;
        /* A peer: its generation is unknown, but a USB4 port that sees a USB4 or Thunderbolt 3 link
         * knows the far end has two lanes as well. */
        return f->near_generation >= 3 && f->far_generation == 0 &&
               (f->port_link == TBT_PORT_LINK_USB4 || f->port_link == TBT_PORT_LINK_TBT);
}

static unsigned direction_gbps(const TbtLinkDirection *d) {
        return d->lanes * d->lane_gbps; /* both bounded by the parser: no overflow */
}

static int append_reason(char **reasons, const char *reason) {
        char *joined;

        if (!*reasons) {
                *reasons = strdup(reason);
                return *reasons ? 0 : -ENOMEM;
        }
        if (asprintf(&joined, "%s; %s", *reasons, reason) < 0)
                return -ENOMEM;
        free(*reasons);
        *reasons = joined;
        return 0;
}

int tbt_link_evaluate(const TbtLinkFacts *f, TbtLinkInfo *ret) {
        _cleanup_(freep) char *reasons = NULL;
        unsigned speed = f->rx.lane_gbps ?: f->tx.lane_gbps;
        TbtLinkClass link_class = classify(f);
        int r;

        if (f->near_usb4_version >= 2 && f->far_usb4_version >= 2 && speed > 0 && speed < 40) {
                char buf[160];
                snprintf(buf, sizeof(buf),
                         "both ends are USB4 v2 (40 Gb/s per lane) but the link runs at %u Gb/s per lane",
                         speed);
                r = append_reason(&reasons, buf);
                if (r < 0)
                        return r;
        }
        /* A Thunderbolt 1/2 far end has one lane to give, whatever the near port could bond. */
        if (f->rx.lanes == 1 && f->tx.lanes == 1 && both_ends_dual_lane(f) && link_class != TBT_LINK_CLASS_TB1_OR_TB2) {
                r = append_reason(&reasons, "one lane although both ends support two");
                if (r < 0)
                        return r;
        }

        *ret = (TbtLinkInfo) {
                .rx_gbps = direction_gbps(&f->rx),
                .tx_gbps = direction_gbps(&f->tx),
                .link_class = link_class,
                .degraded = reasons != NULL,
                .degraded_reason = TAKE_PTR(reasons),
        };
        return 0;
}

/* ---- a link over time: its changes, and the routers that left ---- */

void tbt_link_changes_add(TbtLinkChanges *c, uint64_t now) {
        if (c->count < UINT32_MAX)
                c->count++;
        window_add(&c->window, now, 1);
}

bool tbt_rate_changed(unsigned rx, unsigned tx, unsigned new_rx, unsigned new_tx) {
        /* Unknown on either side is no change: the rate was not known, or is not known now. */
        return rx > 0 && tx > 0 && new_rx > 0 && new_tx > 0 && (rx != new_rx || tx != new_tx);
}

static void drop(TbtDepartures *d, size_t i) {
        free(d->list[i].unique_id);
        memmove(d->list + i, d->list + i + 1, (d->n - i - 1) * sizeof(TbtDeparted));
        d->n--;
}

int tbt_departures_remember(TbtDepartures *d, const char *unique_id, const TbtLinkChanges *c) {
        char *copy;

        if (isempty(unique_id))
                return 0;
        copy = strdup(unique_id);
        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->list[i].unique_id, unique_id)) {
                        drop(d, i);
                        break;
                }
        if (d->n == TBT_DEPARTED_MAX)
                drop(d, TBT_DEPARTED_MAX - 1);
        memmove(d->list + 1, d->list, d->n * sizeof(TbtDeparted));
        d->list[0] = (TbtDeparted) { .unique_id = copy, .changes = *c };
        d->n++;
        return 0;
}

bool tbt_departures_take(TbtDepartures *d, const char *unique_id, TbtLinkChanges *ret) {
        if (isempty(unique_id))
                return false;
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->list[i].unique_id, unique_id)) {
                        *ret = d->list[i].changes;
                        drop(d, i);
                        return true;
                }
        return false;
}

void tbt_departures_done(TbtDepartures *d) {
        while (d->n > 0)
                drop(d, d->n - 1);
}
