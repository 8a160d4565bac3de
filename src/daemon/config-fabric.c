/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The values of [Fabric]. The sweep walks a whole subnet, so its interval has a floor (a sweep of a
 * large fabric sends thousands of SMPs) and its cap a ceiling (what one node publishes stays bounded).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "config-fabric.h"
#include "shared/parse-util.h"

static int parse_seconds(const char *value, unsigned min, unsigned max, uint64_t *ret) {
        uint64_t v;

        if (parse_duration_usec(value, &v) < 0 || v % USEC_PER_SEC != 0 || v < min * USEC_PER_SEC ||
            v > max * USEC_PER_SEC)
                return -EINVAL;
        *ret = v;
        return 0;
}

int config_parse_sweep_interval(const char *value, void *field, char *why, size_t n) {
        if (parse_seconds(value, FABRIC_SWEEP_INTERVAL_MIN_SEC, FABRIC_SWEEP_INTERVAL_MAX_SEC, field) < 0) {
                snprintf(why, n, "expected whole seconds from %us to %us, such as 300 or 10min",
                         FABRIC_SWEEP_INTERVAL_MIN_SEC, FABRIC_SWEEP_INTERVAL_MAX_SEC);
                return -EINVAL;
        }
        return 0;
}

int config_parse_sweep_timeout(const char *value, void *field, char *why, size_t n) {
        if (parse_seconds(value, FABRIC_SWEEP_TIMEOUT_MIN_SEC, FABRIC_SWEEP_TIMEOUT_MAX_SEC, field) < 0) {
                snprintf(why, n, "expected whole seconds from %us to %us, such as 60",
                         FABRIC_SWEEP_TIMEOUT_MIN_SEC, FABRIC_SWEEP_TIMEOUT_MAX_SEC);
                return -EINVAL;
        }
        return 0;
}

int config_parse_outstanding_smps(const char *value, void *field, char *why, size_t n) {
        uint32_t v;

        if (parse_u32(value, &v) < 0 || v < 1 || v > FABRIC_OUTSTANDING_SMPS_MAX) {
                snprintf(why, n, "expected a number of SMPs from 1 to %u", FABRIC_OUTSTANDING_SMPS_MAX);
                return -EINVAL;
        }
        *(unsigned *) field = v;
        return 0;
}

int config_parse_max_switches(const char *value, void *field, char *why, size_t n) {
        uint32_t v;

        if (parse_u32(value, &v) < 0 || v < 1 || v > FABRIC_MAX_SWITCHES_MAX) {
                snprintf(why, n, "expected a number of switches from 1 to %u", FABRIC_MAX_SWITCHES_MAX);
                return -EINVAL;
        }
        *(unsigned *) field = v;
        return 0;
}
