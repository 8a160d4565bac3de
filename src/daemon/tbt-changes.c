/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A Thunderbolt link's changes over time, for LinkChanges and the judgement of flapping: its rate or
 * lanes moved (the driver sends a change uevent then), or a router left and the same UniqueId came
 * back (a cable that does not hold). Routers that left are remembered by UniqueId, the most recent
 * TBT_DEPARTED_MAX of them, so a replugged dock keeps counting where it was.
 */
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "tbt.h"

static void count(TbtObject *o) {
        o->link_changes++;
        window_add(&o->changes, now_usec(CLOCK_MONOTONIC), 1);
        bus_object_changed(&o->bus, "LinkChanges");
}

void tbt_object_count_rate_change(TbtObject *o, unsigned rx, unsigned tx, unsigned new_rx, unsigned new_tx) {
        /* Unknown on either side is not a change: the rate was not known, or is not known now. */
        if (rx == 0 || tx == 0 || new_rx == 0 || new_tx == 0 || (rx == new_rx && tx == new_tx))
                return;
        log_tbt_debug(o, "Link changed from %u/%u to %u/%u Gb/s.", rx, tx, new_rx, new_tx);
        count(o);
}

static void departed_drop(Thunderbolt *tbt, size_t i) {
        free(tbt->departed[i].unique_id);
        memmove(tbt->departed + i, tbt->departed + i + 1, (tbt->n_departed - i - 1) * sizeof(TbtDeparted));
        tbt->n_departed--;
}

void tbt_note_departure(Thunderbolt *tbt, TbtObject *o) {
        const char *id = o->device ? o->device->unique_id : NULL;
        char *copy;

        if (!o->published || isempty(id) || !IN_SET(o->device->kind, TBT_KIND_ROUTER, TBT_KIND_PEER))
                return;
        copy = strdup(id);
        if (!copy)
                return; /* forgetting it costs one uncounted replug */
        for (size_t i = 0; i < tbt->n_departed; i++)
                if (streq(tbt->departed[i].unique_id, id)) {
                        departed_drop(tbt, i);
                        break;
                }
        if (tbt->n_departed == TBT_DEPARTED_MAX)
                departed_drop(tbt, TBT_DEPARTED_MAX - 1);
        memmove(tbt->departed + 1, tbt->departed, tbt->n_departed * sizeof(TbtDeparted));
        tbt->departed[0] = (TbtDeparted) { .unique_id = copy, .link_changes = o->link_changes, .changes = o->changes };
        tbt->n_departed++;
}

void tbt_note_arrival(Thunderbolt *tbt, TbtObject *o) {
        const char *id = o->device ? o->device->unique_id : NULL;

        if (isempty(id))
                return;
        for (size_t i = 0; i < tbt->n_departed; i++)
                if (streq(tbt->departed[i].unique_id, id)) {
                        o->link_changes = tbt->departed[i].link_changes;
                        o->changes = tbt->departed[i].changes;
                        departed_drop(tbt, i);
                        log_tbt_debug(o, "Back again: a link change.");
                        count(o);
                        return;
                }
}

void tbt_departed_done(Thunderbolt *tbt) {
        while (tbt->n_departed > 0)
                departed_drop(tbt, tbt->n_departed - 1);
}
