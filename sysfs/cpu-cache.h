/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu-cache.h — the CPUs' caches from devices/system/cpu/cpuN/cache/indexM (cacheinfo) */
#pragma once

#include "sysfs.h"

typedef struct SysfsCpuCache {
        unsigned level;       /* 1, 2, 3, ... */
        uint64_t bytes;       /* the largest data or unified cache of that level on any CPU */
        uint64_t total_bytes; /* all of that level's caches together, each counted once */
        unsigned instances;   /* how many there are (one per CCD, cluster or socket) */
} SysfsCpuCache;

/*
 * The last-level cache: the highest level of data or unified cache any CPU has, the largest such
 * cache (CPUs of one machine may differ, such as a hybrid design's two kinds of cores) and the sum
 * over its instances, told apart by shared_cpu_list (a machine with several chiplets or sockets has
 * one last-level cache each: code running on every CPU has all of them). Sizes are as cacheinfo
 * prints them, "<KiB>K". -ENOENT when the kernel lists no cache (some virtual machines,
 * architectures without cacheinfo), -EINVAL for a value that is not cacheinfo's.
 */
int sysfs_cpu_last_level_cache(int root_fd, SysfsCpuCache *ret);

/* Parses cacheinfo's size attribute ("32768K") into bytes; -EINVAL or -ERANGE. */
int sysfs_cache_size_parse(const char *s, uint64_t *ret);
