/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes how the daemon judges a probe's output: whatever a probe (or something in its place)
 * prints, the outcome is one of the known ones, an error always has a name, and nothing leaks. */
#include "daemon/probe-runner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1 || size > PROBE_OUTPUT_MAX)
                return 0;
        /* The first byte picks how the child ended; the rest is what it printed. */
        bool exited = data[0] & 1;
        int status = (data[0] >> 1) % 4;
        ProbeResult r = {};

        probe_result_from_output(&r, (const char *) data + 1, size - 1, exited, exited ? status : 11);
        if (r.outcome < 0 || r.outcome >= _PROBE_OUTCOME_MAX)
                abort();
        if ((r.outcome == PROBE_OUTCOME_ERROR || r.outcome == PROBE_OUTCOME_CRASHED) && !r.error_name)
                abort();
        if (r.outcome == PROBE_OUTCOME_OK && (!r.document || !exited || status != 0))
                abort();
        probe_result_done(&r);
        return 0;
}
