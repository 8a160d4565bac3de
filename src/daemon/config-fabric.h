/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-fabric.h — linkprobed.conf's [Fabric] section: the subnet sweep, its interval, timeout and cap */
#pragma once

#include <stddef.h>

/* Bounds of the values (linkprobed.conf(5) says them too). */
#define FABRIC_SWEEP_INTERVAL_DEFAULT_SEC 300
#define FABRIC_SWEEP_INTERVAL_MIN_SEC 10
#define FABRIC_SWEEP_INTERVAL_MAX_SEC 86400
#define FABRIC_SWEEP_TIMEOUT_DEFAULT_SEC 60
#define FABRIC_SWEEP_TIMEOUT_MIN_SEC 1
#define FABRIC_SWEEP_TIMEOUT_MAX_SEC 3600
#define FABRIC_MAX_SWITCHES_DEFAULT 1024
#define FABRIC_MAX_SWITCHES_MAX 8192
/* SMPs in flight at once during a walk (libibnetdisc's max_smps; ibnetdiscover -o). ibnetdiscover's
 * default is 2; 16 walks a 1,008-HCA fat tree in ibsim about a fifth faster than 8 and is still well
 * within what a subnet manager sends (OpenSM's max_wire_smps is commonly tuned to 8..32). */
#define FABRIC_OUTSTANDING_SMPS_DEFAULT 16
#define FABRIC_OUTSTANDING_SMPS_MAX 64

/* Parsers for config.c's table: 0, or -EINVAL with why filled in. */
/* SweepIntervalSec=: whole seconds, FABRIC_SWEEP_INTERVAL_MIN_SEC..MAX (a uint64_t of µs). */
int config_parse_sweep_interval(const char *value, void *field, char *why, size_t why_size);
/* SweepTimeoutSec=: whole seconds, FABRIC_SWEEP_TIMEOUT_MIN_SEC..MAX (a uint64_t of µs). */
int config_parse_sweep_timeout(const char *value, void *field, char *why, size_t why_size);
/* MaxSwitches=: 1..FABRIC_MAX_SWITCHES_MAX (an unsigned). */
int config_parse_max_switches(const char *value, void *field, char *why, size_t why_size);
/* OutstandingSmps=: 1..FABRIC_OUTSTANDING_SMPS_MAX (an unsigned). */
int config_parse_outstanding_smps(const char *value, void *field, char *why, size_t why_size);
