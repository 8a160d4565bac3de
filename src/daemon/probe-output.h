/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-output.h — a probe's output parsed as it arrives */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* A probe's output parsed as it arrives (the runner feeds each read): exactly one JSON object, then
 * nothing but white space. A document of hundreds of KiB (the subnet sweep's) is then ready when the
 * probe exits, instead of being parsed only then. */
typedef struct ProbeOutputParser {
        json_tokener *tokener;
        json_object *document; /* once the object is complete */
        bool bad;              /* not JSON, not one value, or more than white space after it */
        char *pending;         /* the end of the last read, held until a token boundary */
        size_t n_pending, pending_allocated;
} ProbeOutputParser;

void probe_output_feed(ProbeOutputParser *p, const char *data, size_t size);
/* The output ended: parses what was held back. */
void probe_output_finish(ProbeOutputParser *p);
void probe_output_parser_done(ProbeOutputParser *p);
