/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>

#include "event-loop.h"
#include "shared/log.h"
#include "shared/time-util.h"

/* The loop of sd_event_loop(), each dispatch timed: at debug level, one that held the loop for more
 * than a millisecond says so (with its CPU time; the wall time includes being preempted), so that what
 * keeps bus calls and link events waiting can be found (bench/bench-links reads these lines). */
#define LOOP_HELD_LOG_USEC 1000

static int loop_timed(sd_event *e) {
        int code = 0, r;

        while (sd_event_get_state(e) != SD_EVENT_FINISHED) {
                r = sd_event_prepare(e);
                if (r == 0)
                        r = sd_event_wait(e, UINT64_MAX);
                if (r <= 0) {
                        if (r < 0)
                                return r;
                        continue;
                }
                uint64_t wall = now_usec(CLOCK_MONOTONIC), cpu = now_usec(CLOCK_THREAD_CPUTIME_ID);
                r = sd_event_dispatch(e);
                if (r < 0)
                        return r;
                wall = now_usec(CLOCK_MONOTONIC) - wall;
                cpu = now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu;
                if (wall > LOOP_HELD_LOG_USEC)
                        log_debug("Event loop: one dispatch held the loop for %" PRIu64 " us (%" PRIu64 " us of CPU).",
                                  wall, cpu);
        }
        r = sd_event_get_exit_code(e, &code);
        return r < 0 ? r : code;
}

int event_loop_run(sd_event *e) {
        return log_get_max_level() >= LOG_DEBUG ? loop_timed(e) : sd_event_loop(e);
}
