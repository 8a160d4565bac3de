/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unit-test.h — cmocka with the headers it silently expects, plus helpers for fixture-tree tests */
#pragma once

#include <fcntl.h>
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

/* A directory tree written by hand for one group of tests, shaped like sysfs and opened as its root; a
 * test writes, rewrites and removes attributes as the kernel would change them. */
typedef struct UnitTree {
        char path[64];
        int fd;
} UnitTree;

static inline int unit_tree_new(UnitTree *t, const char *name) {
        snprintf(t->path, sizeof(t->path), "/tmp/linkprobe-test-%s-XXXXXX", name);
        if (!mkdtemp(t->path))
                return -1;
        t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return t->fd < 0 ? -1 : 0;
}

static inline int unit_tree_remove(UnitTree *t) {
        char cmd[128];
        if (t->fd >= 0)
                close(t->fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->path);
        return system(cmd) == 0 ? 0 : -1;
}

/* dir/attr below the tree; dir is made as needed (mkdir -p). */
static inline void unit_tree_write(const UnitTree *t, const char *dir, const char *attr, const char *content) {
        char path[700];
        snprintf(path, sizeof(path), "mkdir -p '%s/%s'", t->path, dir);
        assert_int_equal(system(path), 0);
        snprintf(path, sizeof(path), "%s/%s/%s", t->path, dir, attr);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static inline void unit_tree_unlink(const UnitTree *t, const char *dir, const char *attr) {
        char path[700];
        snprintf(path, sizeof(path), "%s/%s/%s", t->path, dir, attr);
        assert_int_equal(unlink(path), 0);
}
