/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unit-test.h — cmocka with the headers it silently expects, plus helpers for fixture-tree tests */
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shared/macros.h"

/* The source tree's top directory (make check runs tests from there; LINKPROBE_TOP overrides). */
static inline const char *unit_top_dir(void) {
        const char *e = getenv("LINKPROBE_TOP");
        return e ?: ".";
}
