/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "status.h"

static const char *const daemon_state_table[_DAEMON_STATE_MAX] = {
        [DAEMON_STARTING] = "starting",
        [DAEMON_RUNNING] = "running",
        [DAEMON_DEGRADED] = "degraded",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(daemon_state, DaemonState, daemon_state_table)

static const BusObjectType manager_bus_type = { .interface = MANAGER_INTERFACE };

int daemon_status_init(DaemonStatus *s, BusPublisher *p) {
        *s = (DaemonStatus) { .state = DAEMON_STARTING };
        return bus_object_init_root(&s->bus, p, &manager_bus_type);
}

void daemon_status_done(DaemonStatus *s) {
        bus_object_done(&s->bus);
        s->degraded_reasons = strv_free(s->degraded_reasons);
}

void daemon_status_update(DaemonStatus *s) {
        DaemonState state;

        if (!s->bus.publisher || !s->bus.publisher->name_acquired)
                state = DAEMON_STARTING;
        else
                state = strv_length(s->degraded_reasons) > 0 ? DAEMON_DEGRADED : DAEMON_RUNNING;
        bus_object_set(&s->bus, s->state, state, "State");
}

void daemon_status_set_degraded(DaemonStatus *s, const char *reason, bool on) {
        size_t n = strv_length(s->degraded_reasons);
        size_t i;

        for (i = 0; i < n; i++)
                if (streq(s->degraded_reasons[i], reason))
                        break;
        if (on == (i < n))
                return;

        if (on) {
                if (strv_consume(&s->degraded_reasons, strdup(reason)) < 0) {
                        log_oom();
                        return;
                }
                log_warning("Degraded: %s.", reason);
        } else {
                free(s->degraded_reasons[i]);
                memmove(s->degraded_reasons + i, s->degraded_reasons + i + 1, (n - i) * sizeof(char *));
                log_info("No longer degraded: %s.", reason);
        }
        bus_object_changed(&s->bus, "DegradedReasons");
        daemon_status_update(s);
}
