/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>

#include "cpu-cache.h"
#include "shared/string-util.h"

#define CPU_DIR "devices/system/cpu"

int sysfs_cache_size_parse(const char *s, uint64_t *ret) {
        uint64_t kib = 0;
        const char *p = s;

        /* cacheinfo's size_show() prints "%uK": the size in KiB, always with the K. */
        if (!s || *p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (kib > (UINT64_MAX / 1024 - 9) / 10)
                        return -ERANGE;
                kib = kib * 10 + (uint64_t) (*p - '0');
        }
        if (!streq(p, "K"))
                return -EINVAL;
        *ret = kib * 1024;
        return 0;
}

static bool is_cpu_entry(const char *name) {
        return startswith(name, "cpu") && name[3] && strspn(name + 3, "0123456789") == strlen(name + 3);
}

typedef struct CacheScan {
        SysfsCpuCache best;
        char **instances; /* the shared_cpu_list of each cache of best.level counted so far */
} CacheScan;

/* Folds one indexM directory into the scan: a higher level starts over; each instance of the
 * highest level, named by the CPUs that share it, is counted once. */
static int read_cache_index(int root_fd, const char *dir, CacheScan *scan) {
        char type[32], size[32];
        _cleanup_(freep) char *shared = NULL;
        SysfsCpuCache *best = &scan->best;
        uint32_t level;
        uint64_t bytes;
        int r;

        r = sysfs_read_buffer(root_fd, dir, "type", type, sizeof(type));
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        if (streq(type, "Instruction"))
                return 0; /* instructions never hold the buffer's data */
        r = sysfs_read_u32(root_fd, dir, "level", &level);
        if (r >= 0)
                r = sysfs_read_buffer(root_fd, dir, "size", size, sizeof(size));
        if (r == -ENOENT)
                return 0; /* an index whose attributes the firmware did not describe */
        if (r < 0)
                return r;
        r = sysfs_cache_size_parse(size, &bytes);
        if (r < 0)
                return r;
        if (level == 0 || level < best->level)
                return level == 0 ? -EINVAL : 0;
        if (level > best->level) {
                scan->instances = strv_free(scan->instances);
                *best = (SysfsCpuCache) { .level = level };
        }
        /* Without shared_cpu_list (old kernels) each CPU's cache counts as its own. */
        r = sysfs_read_string(root_fd, dir, "shared_cpu_list", &shared);
        if (r == -ENOENT)
                r = sysfs_path_join(dir, NULL, &shared);
        if (r < 0)
                return r;
        best->bytes = MAX(best->bytes, bytes);
        if (strv_contains(scan->instances, shared))
                return 0;
        r = strv_extend_unique(&scan->instances, shared);
        if (r < 0)
                return r;
        best->total_bytes += bytes;
        best->instances++;
        return 0;
}

static void cache_scan_done(CacheScan *scan) {
        strv_free(scan->instances);
}

int sysfs_cpu_last_level_cache(int root_fd, SysfsCpuCache *ret) {
        _cleanup_(strv_freep) char **cpus = NULL;
        _cleanup_(cache_scan_done) CacheScan scan = {};
        int r;

        r = sysfs_list_dir(root_fd, CPU_DIR, &cpus);
        if (r < 0)
                return r;
        STRV_FOREACH(cpu, cpus) {
                _cleanup_(strv_freep) char **indexes = NULL;
                _cleanup_(freep) char *cache_dir = NULL;

                if (!is_cpu_entry(*cpu))
                        continue;
                if (asprintf(&cache_dir, CPU_DIR "/%s/cache", *cpu) < 0)
                        return -ENOMEM;
                r = sysfs_list_dir(root_fd, cache_dir, &indexes);
                if (r == -ENOENT)
                        continue; /* an offline CPU, or none described */
                if (r < 0)
                        return r;
                STRV_FOREACH(index, indexes) {
                        _cleanup_(freep) char *dir = NULL;

                        if (!startswith(*index, "index"))
                                continue;
                        r = sysfs_path_join(cache_dir, *index, &dir);
                        if (r < 0)
                                return r;
                        r = read_cache_index(root_fd, dir, &scan);
                        if (r < 0)
                                return r;
                }
        }
        if (scan.best.level == 0)
                return -ENOENT;
        *ret = scan.best;
        return 0;
}
