/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unit-watch.h — an inhibitor held while systemd units run ([Inhibit] WhileUnitsActive=) */
#pragma once

#include <systemd/sd-bus.h>

#include "shared/macros.h"

typedef struct DaemonStatus DaemonStatus;
typedef struct Inhibitors Inhibitors;
typedef struct UnitWatch UnitWatch;

/*
 * Follows each unit's ActiveState on the bus systemd is on (the daemon's own, the system bus), by
 * signals: systemd's Manager.Subscribe(), the units' PropertiesChanged, UnitNew (a unit loaded again,
 * such as a transient one, is asked: systemd says nothing of what happened before that signal),
 * UnitRemoved (unloaded, so not running), and systemd coming back to the bus (it is asked again then).
 * While any unit is active, activating, reloading, deactivating or refreshing, an inhibitor of what
 * (InhibitWhat bits) is held, listed by ListInhibitors() as held by "linkprobed"
 * for those units. Until every unit's state is known, and while systemd is not on the bus, the daemon
 * is degraded ("inhibit-units-unknown"): it cannot keep the promise the configuration makes.
 */
int unit_watch_new(sd_bus *bus, char **units, unsigned what, Inhibitors *inhibitors, DaemonStatus *status,
                   UnitWatch **ret);
UnitWatch *unit_watch_free(UnitWatch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(UnitWatch *, unit_watch_free);

/* Whether ActiveState says the unit's processes run or are about to (exported for tests). */
bool unit_active_state_is_running(const char *state) _pure_;
