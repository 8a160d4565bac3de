/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tcp-report.h — what linkprobe-probe-tcp says about a measured direction beyond its goodput: the CPU
 * time of both ends (and whether CPUs rather than the link set the figure), and cross traffic */
#pragma once

#include <json-c/json.h>

#include "net-streams.h"

/* A CPU counts as fully used from this share of the test's time on. */
#define TCP_REPORT_CPU_FULL 0.9

/**
 * tcp_report_direction() - add the costs and disturbances of one direction to its JSON object
 * @o: the direction's object ("upload" or "download")
 * @warnings: the document's warnings
 * @upload: which direction
 * @t: what the test moved and measured
 * @host: our end's interface and CPUs
 *
 * Adds "cpu" {probe_usec, probe_threads, probe_cpus, responder_usec, responder_threads, responder_cpus}
 * (the responder's members only when it sent its side), "cpu_limited" (who was: "sender", "receiver",
 * "both" or null) and "cross_traffic_gbps", and a warning for each.
 *
 * Return: the cross traffic in Gbit/s, 0 when none was seen (or the counters were unknown).
 */
double tcp_report_direction(json_object *o, json_object *warnings, bool upload, const NetTransfer *t,
                            const NetHost *host);
