/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes how the daemon judges a probe's output: whatever a probe (or something in its place)
 * prints, the outcome is one of the known ones, an error always has a name, and nothing leaks; fed
 * in pieces, as reads from the pipe deliver it, the parser finds what it finds fed at once. */
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

        /* Fed in pieces of a size the first byte picks (1 to 64 bytes), the parser finds what json-c
         * finds in the whole output at once (strict: one object, white space after it): the verdict does not
         * depend on how reads split the output. */
        ProbeOutputParser pieces = {};
        size_t step = 1 + (data[0] >> 3) % 64;
        for (size_t i = 1; i < size; i += step)
                probe_output_feed(&pieces, (const char *) data + i, MIN(step, size - i));
        probe_output_finish(&pieces);

        json_tokener *tok = json_tokener_new_ex(32);
        json_object *whole = NULL;
        if (!tok)
                abort();
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        if (size > 1) {
                whole = json_tokener_parse_ex(tok, (const char *) data + 1, (int) (size - 1));
                if (whole && json_tokener_get_error(tok) == json_tokener_success) {
                        for (size_t i = 1 + json_tokener_get_parse_end(tok); i < size; i++)
                                if (!strchr(" \t\r\n", data[i])) {
                                        json_object_put(whole);
                                        whole = NULL;
                                        break;
                                }
                } else if (whole) {
                        json_object_put(whole);
                        whole = NULL;
                }
        }
        json_object *found = pieces.bad ? NULL : pieces.document;
        if (!whole != !found)
                abort();
        if (whole) {
                /* Compared as text: a NaN is not equal to itself. */
                char *a = strdup(json_object_to_json_string_ext(whole, JSON_C_TO_STRING_PLAIN));
                if (!a || strcmp(a, json_object_to_json_string_ext(found, JSON_C_TO_STRING_PLAIN)) != 0)
                        abort();
                free(a);
                json_object_put(whole);
        }
        json_tokener_free(tok);
        probe_output_parser_done(&pieces);
        return 0;
}
