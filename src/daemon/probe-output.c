/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A probe's standard output parsed as it arrives: one JSON object, then nothing but white space. */
#include <string.h>

#include "probe-output.h"
#include "shared/macros.h"

static int probe_output_pending_add(ProbeOutputParser *p, const char *data, size_t size) {
        if (p->n_pending + size > p->pending_allocated) {
                size_t n = MAX(p->pending_allocated * 2, p->n_pending + size);
                char *grown = realloc(p->pending, n);
                if (!grown) {
                        p->bad = true;
                        return -ENOMEM;
                }
                p->pending = grown;
                p->pending_allocated = n;
        }
        memcpy(p->pending + p->n_pending, data, size);
        p->n_pending += size;
        return 0;
}

static bool only_white_space(const char *data, size_t size) {
        for (size_t i = 0; i < size; i++)
                if (!strchr(" \t\r\n", data[i]))
                        return false;
        return true;
}

/* One piece to the tokener; what follows a complete document must be white space. */
static void parse_piece(ProbeOutputParser *p, const char *data, size_t size) {
        json_object *doc;
        size_t used;

        if (!p->tokener) {
                p->tokener = json_tokener_new_ex(32);
                /* Strict: comments and trailing commas, which no probe writes, would make the verdict
                 * depend on where a read ended (json-c eats a comment after the document only when it
                 * arrives with it). */
                if (p->tokener)
                        json_tokener_set_flags(p->tokener, JSON_TOKENER_STRICT);
        }
        if (size >= INT32_MAX || !p->tokener) {
                p->bad = true;
                return;
        }
        doc = json_tokener_parse_ex(p->tokener, data, (int) size);
        if (json_tokener_get_error(p->tokener) == json_tokener_continue)
                return;
        if (!doc || json_tokener_get_error(p->tokener) != json_tokener_success) {
                if (doc)
                        json_object_put(doc);
                p->bad = true;
                return;
        }
        p->document = doc;
        used = json_tokener_get_parse_end(p->tokener);
        if (!only_white_space(data + used, size - used))
                p->bad = true;
}

/* Where a piece may end: json-c 0.16 judges a malformed number ("1--") differently when it is cut
 * between two calls, so a piece never ends inside a number or a literal, only after a structural
 * character or white space (inside a string, where that is harmless, or between tokens). */
static bool piece_may_end_after(char c) {
        return strchr(" \t\r\n{}[],:\"", c) && c != '\0';
}

/* Exactly one JSON object, optionally followed by white space, and nothing else; fed in pieces as
 * they arrive, so that a large document (the subnet sweep's) is parsed while the probe still runs
 * and exits, not after. */
void probe_output_feed(ProbeOutputParser *p, const char *data, size_t size) {
        size_t cut = size;

        if (p->bad || size == 0)
                return;
        if (p->document) {
                if (!only_white_space(data, size))
                        p->bad = true;
                return;
        }
        while (cut > 0 && !piece_may_end_after(data[cut - 1]))
                cut--;
        if (cut > 0) {
                if (p->n_pending > 0) {
                        if (probe_output_pending_add(p, data, cut) < 0)
                                return;
                        parse_piece(p, p->pending, p->n_pending);
                        p->n_pending = 0;
                } else
                        parse_piece(p, data, cut);
        }
        if (p->bad || cut == size)
                return;
        if (p->document) {
                if (!only_white_space(data + cut, size - cut))
                        p->bad = true;
                return;
        }
        (void) probe_output_pending_add(p, data + cut, size - cut);
}

/* The end of the output: what waited for a piece's end is parsed now. */
void probe_output_finish(ProbeOutputParser *p) {
        if (!p->bad && p->n_pending > 0)
                parse_piece(p, p->pending, p->n_pending);
        p->n_pending = 0;
}

void probe_output_parser_done(ProbeOutputParser *p) {
        if (p->tokener)
                json_tokener_free(p->tokener);
        free(p->pending);
        if (p->document)
                json_object_put(p->document);
        *p = (ProbeOutputParser) {};
}
