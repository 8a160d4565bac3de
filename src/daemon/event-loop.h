/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* event-loop.h — the daemon's main loop, timed per dispatch at debug level */
#pragma once

#include <systemd/sd-event.h>

/* sd_event_loop(); at debug level each dispatch that holds the loop over 1 ms is logged. Returns the
 * exit code, or a negative errno. */
int event_loop_run(sd_event *e);
