/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the strict parsers and the UTF-8 helpers every other parser builds on. */
#include "shared/parse-util.h"
#include "shared/string-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(freep) char *s = NULL, *escaped = NULL, *terminal = NULL;
        uint64_t u64;
        uint32_t u32;
        int64_t i64;
        int i;

        if (size > 4096)
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        /* Accepted numbers print back to exactly the input (no signs, spaces or leading junk). */
        if (parse_u64(s, &u64) >= 0) {
                char back[32];
                snprintf(back, sizeof(back), "%" PRIu64, u64);
                if (strlen(s) < strlen(back))
                        abort();
        }
        if (parse_u32(s, &u32) >= 0 && parse_u64(s, &u64) >= 0 && u64 != u32)
                abort();
        if (parse_int(s, &i) >= 0 && (parse_i64(s, &i64) < 0 || i64 != i))
                abort();
        (void) parse_hex_u64(s, &u64);
        (void) parse_boolean(s);
        (void) parse_duration_usec(s, &u64);
        (void) parse_size(s, &u64);

        escaped = utf8_escape_invalid(s);
        if (!escaped || !utf8_is_valid(escaped))
                abort();
        terminal = escape_for_terminal(s);
        if (!terminal || !utf8_is_valid(terminal))
                abort();
        for (const char *p = terminal; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        abort();
        /* Valid input is left alone. */
        if (utf8_is_valid(s) && strlen(s) == size && strcmp(escaped, s) != 0 && !strchr(s, '\\'))
                abort();
        return 0;
}
