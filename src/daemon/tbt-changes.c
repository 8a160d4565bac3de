/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shared/string-util.h"
#include "tbt-changes.h"

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
