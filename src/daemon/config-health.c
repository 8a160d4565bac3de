/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The values of [Health]. Numbers with decimals are read with strtod() in the C locale's format the
 * daemon runs in (no locale is set): "0.5", "1e-12"; no sign, nothing after the number, nothing that is
 * not finite.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "config-health.h"
#include "health.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

static int parse_decimal(const char *value, double min, double max, double *ret) {
        char *end;
        double v;

        if (isempty(value) || value[0] == '-' || value[0] == '+' || value[0] == ' ')
                return -EINVAL;
        errno = 0;
        v = strtod(value, &end);
        if (errno != 0 || *end != '\0' || !isfinite(v) || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int config_parse_health_window(const char *value, void *field, char *why, size_t n) {
        uint64_t v;

        if (parse_duration_usec(value, &v) < 0 || v < HEALTH_WINDOW_MIN_USEC || v > HEALTH_WINDOW_MAX_USEC ||
            v % USEC_PER_SEC != 0) {
                snprintf(why, n, "expected whole seconds from %us to %us (the counts are kept over the last %us)",
                         (unsigned) (HEALTH_WINDOW_MIN_USEC / USEC_PER_SEC),
                         (unsigned) (HEALTH_WINDOW_MAX_USEC / USEC_PER_SEC),
                         (unsigned) (HEALTH_WINDOW_MAX_USEC / USEC_PER_SEC));
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

int config_parse_per_minute(const char *value, void *field, char *why, size_t n) {
        if (parse_decimal(value, 0, 1e6, field) < 0) {
                snprintf(why, n, "expected a number of events per minute from 0 to 1000000, such as 8 or 0.5");
                return -EINVAL;
        }
        return 0;
}

int config_parse_bit_error_rate(const char *value, void *field, char *why, size_t n) {
        double v;

        if (parse_decimal(value, 0, 1, &v) < 0 || v <= 0 || v >= 1) {
                snprintf(why, n, "expected a bit error rate above 0 and below 1, such as 1e-12");
                return -EINVAL;
        }
        *(double *) field = v;
        return 0;
}

int config_parse_share_percent(const char *value, void *field, char *why, size_t n) {
        double v;

        if (parse_decimal(value, 0, 100, &v) < 0) {
                snprintf(why, n, "expected a percentage from 0 to 100, such as 10 or 2.5");
                return -EINVAL;
        }
        *(double *) field = v / 100;
        return 0;
}

int config_parse_gbps(const char *value, void *field, char *why, size_t n) {
        if (parse_decimal(value, 0, 1e5, field) < 0) {
                snprintf(why, n, "expected Gb/s from 0 to 100000, such as 1 or 0.5");
                return -EINVAL;
        }
        return 0;
}

int config_parse_escalation_window(const char *value, void *field, char *why, size_t n) {
        uint64_t v;

        if (parse_duration_usec(value, &v) < 0 || v < HEALTH_ESCALATION_WINDOW_MIN_USEC ||
            v > HEALTH_ESCALATION_WINDOW_MAX_USEC || v % USEC_PER_SEC != 0) {
                snprintf(why, n, "expected whole seconds from %us to %us (a week), such as 86400 or 24h",
                         (unsigned) (HEALTH_ESCALATION_WINDOW_MIN_USEC / USEC_PER_SEC),
                         (unsigned) (HEALTH_ESCALATION_WINDOW_MAX_USEC / USEC_PER_SEC));
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

int config_parse_escalation_events(const char *value, void *field, char *why, size_t n) {
        uint32_t v;

        if (parse_u32(value, &v) < 0 || v > HEALTH_EVENTS_MAX) {
                snprintf(why, n, "expected a whole number from 0 (never escalate) to %u", HEALTH_EVENTS_MAX);
                return -EINVAL;
        }
        *(unsigned *) field = v;
        return 0;
}
