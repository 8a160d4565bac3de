/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parse-util.h — strict number, boolean, duration and size parsers: the whole string or -EINVAL */
#pragma once

#include <stdint.h>

#include "macros.h"

#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define NSEC_PER_USEC UINT64_C(1000)

/* Decimal, no sign, no spaces. -EINVAL for garbage, -ERANGE for overflow. */
int parse_u64(const char *s, uint64_t *ret);
int parse_u32(const char *s, uint32_t *ret);
/* Decimal with optional '-'. */
int parse_i64(const char *s, int64_t *ret);
int parse_int(const char *s, int *ret);
/* Hexadecimal with or without "0x". */
/* One hexadecimal digit's value, either case; -EINVAL for any other character. */
int unhexchar(char c) _const_;
int parse_hex_u64(const char *s, uint64_t *ret);
int parse_hex_u32(const char *s, uint32_t *ret);
/* 1/yes/true/on and 0/no/false/off, case-insensitive. Returns 0 or 1, or -EINVAL. */
int parse_boolean(const char *s);
/* "30", "30s", "500ms", "5min", "1h", "1d" (a bare number is seconds). */
int parse_duration_usec(const char *s, uint64_t *ret);
/* "4096", "512K", "8M", "1G" (powers of 1024; "KiB"/"MiB"/"GiB" also accepted). */
int parse_size(const char *s, uint64_t *ret);
