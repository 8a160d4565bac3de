/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <inttypes.h>
#include <strings.h>

#include "parse-util.h"

/* strtoull() accepts leading spaces, a sign and an empty string; the kernel's and our own formats
 * never contain those, so anything beyond plain digits is refused before calling it. */
static int parse_unsigned(const char *s, int base, uint64_t *ret) {
        const char *p = s;
        char *end;
        unsigned long long v;

        if (isempty(s))
                return -EINVAL;
        if (base == 16 && (strneq(p, "0x", 2) || strneq(p, "0X", 2)))
                p += 2;
        if (!(base == 16 ? isxdigit((unsigned char) *p) : isdigit((unsigned char) *p)))
                return -EINVAL;

        errno = 0;
        v = strtoull(p, &end, base);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end != '\0')
                return -EINVAL;

        *ret = v;
        return 0;
}

int parse_u64(const char *s, uint64_t *ret) {
        return parse_unsigned(s, 10, ret);
}

int parse_u32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r = parse_u64(s, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

int unhexchar(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

int parse_hex_u64(const char *s, uint64_t *ret) {
        return parse_unsigned(s, 16, ret);
}

int parse_hex_u32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r = parse_hex_u64(s, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

int parse_i64(const char *s, int64_t *ret) {
        uint64_t v;
        bool negative = false;
        int r;

        if (s && *s == '-') {
                negative = true;
                s++;
        }
        r = parse_u64(s, &v);
        if (r < 0)
                return r;
        if (negative) {
                if (v > (uint64_t) INT64_MAX + 1)
                        return -ERANGE;
                *ret = v == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) v;
        } else {
                if (v > INT64_MAX)
                        return -ERANGE;
                *ret = (int64_t) v;
        }
        return 0;
}

int parse_int(const char *s, int *ret) {
        int64_t v;
        int r = parse_i64(s, &v);
        if (r < 0)
                return r;
        if (v < INT32_MIN || v > INT32_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

int parse_boolean(const char *s) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

/* Splits "123unit" into the number and the suffix, which must then be one of the table's. */
static int parse_with_suffix(const char *s, const char *const *suffixes, const uint64_t *factors, size_t n,
                             bool case_insensitive, uint64_t *ret) {
        char digits[32];
        size_t len = 0;
        uint64_t v;
        int r;

        if (isempty(s))
                return -EINVAL;
        while (isdigit((unsigned char) s[len]))
                len++;
        if (len == 0 || len >= sizeof(digits))
                return len == 0 ? -EINVAL : -ERANGE;
        memcpy(digits, s, len);
        digits[len] = '\0';
        r = parse_u64(digits, &v);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++) {
                if (case_insensitive ? strcasecmp(s + len, suffixes[i]) != 0 : !streq(s + len, suffixes[i]))
                        continue;
                if (factors[i] != 0 && v > UINT64_MAX / factors[i])
                        return -ERANGE;
                *ret = v * factors[i];
                return 0;
        }
        return -EINVAL;
}

int parse_duration_usec(const char *s, uint64_t *ret) {
        static const char *const suffixes[] = { "", "s", "sec", "ms", "msec", "us", "usec",
                                                "m", "min", "h", "hour", "d", "day" };
        static const uint64_t factors[] = {
                USEC_PER_SEC, USEC_PER_SEC, USEC_PER_SEC, USEC_PER_MSEC, USEC_PER_MSEC, 1, 1,
                60 * USEC_PER_SEC, 60 * USEC_PER_SEC, 3600 * USEC_PER_SEC, 3600 * USEC_PER_SEC,
                86400 * USEC_PER_SEC, 86400 * USEC_PER_SEC,
        };
        _Static_assert(ELEMENTSOF(suffixes) == ELEMENTSOF(factors), "duration table");
        return parse_with_suffix(s, suffixes, factors, ELEMENTSOF(suffixes), false, ret);
}

int parse_size(const char *s, uint64_t *ret) {
        static const char *const suffixes[] = { "", "B", "K", "KiB", "M", "MiB", "G", "GiB" };
        static const uint64_t factors[] = { 1, 1, 1ULL << 10, 1ULL << 10, 1ULL << 20, 1ULL << 20,
                                            1ULL << 30, 1ULL << 30 };
        _Static_assert(ELEMENTSOF(suffixes) == ELEMENTSOF(factors), "size table");
        return parse_with_suffix(s, suffixes, factors, ELEMENTSOF(suffixes), false, ret);
}
