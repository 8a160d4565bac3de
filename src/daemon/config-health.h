/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-health.h — linkprobed.conf's [Health] section: the judge's windows, rates and counts */
#pragma once

#include <stddef.h>

/* Parsers for config.c's table: 0, or -EINVAL with why filled in. Each checks one value; how the values go
 * together (the windows against the buckets they are kept in) is health_limits_check()'s. */
int config_parse_health_window(const char *value, void *field, char *why, size_t why_size);
/* Events per minute, a decimal number from 0 (any event counts) to 1000000. */
int config_parse_per_minute(const char *value, void *field, char *why, size_t why_size);
/* A bit error rate: 1e-12, 0.000001; above 0, below 1. */
int config_parse_bit_error_rate(const char *value, void *field, char *why, size_t why_size);
/* A percentage with decimals, 0 to 100, stored as a share (10 -> 0.10). */
int config_parse_share_percent(const char *value, void *field, char *why, size_t why_size);
/* Gb/s, a decimal number from 0 to 100000. */
int config_parse_gbps(const char *value, void *field, char *why, size_t why_size);
/* Whole seconds from a minute to a week: the window degradation events are counted over. */
int config_parse_escalation_window(const char *value, void *field, char *why, size_t why_size);
/* 0 (never escalate) to HEALTH_EVENTS_MAX degradation events. */
int config_parse_escalation_events(const char *value, void *field, char *why, size_t why_size);
