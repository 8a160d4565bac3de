/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tcp-ramp.h — how long linkprobe-probe-tcp's search for its number of streams may take: the probe
 * plans with it and linkprobed allows for it in the probe's deadline */
#pragma once

#include "macros.h"
#include "time-util.h"

/* Steps of 1, 2, 4 and 8 streams at most. */
#define TCP_RAMP_STEPS_MAX 4
/* What ends each bulk phase beyond its granted time: the last frames and the result. */
#define TCP_PHASE_OVERHEAD_USEC (150 * USEC_PER_MSEC)

/* One step is a short test: a tenth of the duration, from 20 to 75 ms, so that the default probe
 * (1 s each way) stays within 3 s with all four steps in both directions. */
static inline uint64_t tcp_ramp_step_usec(uint64_t duration_usec) {
        return CLAMP(duration_usec / 10, 20 * USEC_PER_MSEC, 75 * USEC_PER_MSEC);
}

/* A step's goodput is read in slices as the receiver's TCP takes the data; the step counts for the
 * median slice, which a start-up transient or a burst shorter than half the step does not move. */
#define TCP_RAMP_SLICES 15

static inline uint64_t tcp_ramp_slice_usec(uint64_t duration_usec) {
        return tcp_ramp_step_usec(duration_usec) / TCP_RAMP_SLICES;
}

/* The longest the ramp of one direction takes. */
static inline uint64_t tcp_ramp_max_usec(uint64_t duration_usec) {
        return TCP_RAMP_STEPS_MAX * (tcp_ramp_step_usec(duration_usec) + TCP_PHASE_OVERHEAD_USEC);
}
